"""Make the screenshots of docs/workbench.md: the workbench on the shipped HaluEval examples,
answered by the test suite's stand-in judge (word overlap), photographed in headless chromium
at each step of the tuning loop, at 1280x800 and in a narrow window: a check, the preview, a
run in progress, its results, the 0/1-labelled example with its confusion matrix, the
comparison, an item, the calibrated threshold, the diff of a save, a conflict between two
tabs, the versions and a failed run.

    python docs/make_workbench_screenshots.py     # needs `.[test]` installed and Debian's chromium
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
sys.path.insert(0, str(ROOT / "tests"))

from helpers.scripted import between, claims_of, script_word_overlap  # noqa: E402
from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

from engine.testing import JudgeServer, Reply, Request  # noqa: E402
from engine.workbench.server import Workbench  # noqa: E402

ANALYZE = "prompts/hallucination/analyze.j2"
PAIRS = "examples/halueval_qa_pairs.jsonl"
NUMERIC = "examples/halueval_qa.jsonl"


def edit(page: Page, pane: str, path: str, old: str, new: str) -> None:
    page.select_option(f"#{pane} .file-pick", path)
    area = page.locator(f"#{pane} textarea")
    area.fill(area.input_value().replace(old, new))


def shoot(page: Page, name: str) -> None:
    page.wait_for_timeout(300)
    page.screenshot(path=str(IMAGES / name))


def opened(browser: Browser, workbench: Workbench, width: int = 1280, height: int = 800) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
    page.set_default_timeout(120_000)
    page.goto(workbench.url)
    page.wait_for_function("window.workbenchReady === true")
    return page


def sample(page: Page, size: int) -> None:
    page.click("#tab-run")
    page.fill("#size", str(size))
    page.dispatch_event("#size", "change")
    page.wait_for_selector(f"#estimate:has-text('{size} items')")


def tuning_loop(browser: Browser, workbench: Workbench, judge: JudgeServer) -> None:
    page = opened(browser, workbench)
    page.select_option("#scorer", "hallucination")
    page.wait_for_selector("#prompts section[data-step='preprocess']")

    # A misspelt name in a template: checked as typed, at its line.
    edit(page, "pane-b", ANALYZE, "preprocess.claims | length }})", "preprocess.clams | length }})")
    page.wait_for_selector("#problems .problem")
    page.locator("#pane-b textarea").evaluate("area => { area.scrollTop = 200; area.dispatchEvent(new Event('scroll')); }")
    shoot(page, "workbench-check.png")
    edit(page, "pane-b", ANALYZE, "preprocess.clams", "preprocess.claims")
    page.wait_for_selector("#problems-title:text('Checks: no problems')")

    # Before any run: the first step, and the offer to run this one item.
    page.wait_for_selector("#run-item")
    shoot(page, "workbench-preview-first.png")

    # A run in progress: the stand-in judge takes its time.
    judge.on("Claims", lambda request: Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, delay=0.6))
    sample(page, 40)
    page.click("#run")
    page.wait_for_function("document.querySelector('#progress').value >= 8")
    shoot(page, "workbench-run.png")
    page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
    script_word_overlap(judge)

    page.click("#tab-preview")
    page.wait_for_selector("#prompts section[data-step='analyze']")
    page.locator("#prompts section[data-step='preprocess'] summary h3").click()  # folded: the next step shows
    shoot(page, "workbench-preview.png")

    edit(page, "pane-b", ANALYZE, "Decide, for each claim", "When you hesitate, answer yes. Decide, for each claim")
    page.wait_for_selector("#problems-title:text('Checks: no problems')")
    page.click("#tab-run")
    page.click("#run")
    page.wait_for_selector("#comparison-box:not([hidden])")
    shoot(page, "workbench-results.png")
    page.locator("#comparison-box").scroll_into_view_if_needed()
    shoot(page, "workbench-compare.png")

    page.locator("#fixed button.link").first.click()
    page.locator("#item-dialog").wait_for()
    page.locator("#item-dialog section.step[data-step='analyze'] summary").click()
    shoot(page, "workbench-item.png")
    page.click("#item-close")

    page.click("#calibrate")
    page.locator("#apply-threshold").click()
    page.wait_for_function("document.querySelector('#pane-a textarea').value.includes('threshold:')")
    page.wait_for_selector("#problems-title:text('Checks: no problems')")
    page.locator("#origins-box summary").click()
    page.locator("#calibrate-box").evaluate("box => box.scrollIntoView({block: 'center'})")
    shoot(page, "workbench-calibrate.png")

    page.keyboard.press("Control+s")
    page.locator("#diffs .diff").first.wait_for()
    shoot(page, "workbench-save.png")

    # Meanwhile another tab saved the same template: the save shows both, and the base.
    other = opened(browser, workbench)
    edit(other, "pane-b", ANALYZE, "Decide, for each claim", "Only what the context states counts. Decide, for each claim")
    other.keyboard.press("Control+s")
    other.click("#save-confirm")
    other.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
    other.wait_for_function("document.querySelector('#progress-text').textContent.includes('Recording the version complete')")
    other.close()
    page.click("#save-confirm")
    page.locator("#conflict-dialog[open]").wait_for()
    shoot(page, "workbench-conflict.png")
    page.click("#conflict-mine")
    page.wait_for_selector("#view-versions:not([hidden]) #versions tr[data-version='2']")
    shoot(page, "workbench-versions.png")

    narrow = opened(browser, workbench, 420, 860)
    narrow.wait_for_selector("#prompts section[data-step='preprocess']")
    shoot(narrow, "workbench-narrow.png")


def numeric_labels(browser: Browser, workbench: Workbench) -> None:
    page = opened(browser, workbench)
    page.select_option("#data", NUMERIC)
    sample(page, 20)
    page.click("#run")
    page.wait_for_selector("#view-results:not([hidden]) #confusion [data-cell='true_positive']")
    shoot(page, "workbench-labels.png")


def failed_run(browser: Browser, workbench: Workbench, judge: JudgeServer) -> None:
    answered = itertools.count()

    def refused_after_the_first(request: Request) -> Reply:
        if next(answered):
            return Reply.fail(400, "The request was refused by the provider's content policy")
        return Reply(answer={"claims": claims_of(between(request.prompt, "output"))})

    judge.on("Claims", refused_after_the_first)
    page = opened(browser, workbench)
    sample(page, 20)
    page.fill("#seed", "7")
    page.dispatch_event("#seed", "change")
    page.click("#run")
    page.wait_for_selector("#view-results:not([hidden]) #results-head:has-text('failed')")
    shoot(page, "workbench-failed.png")
    script_word_overlap(judge)


def main() -> None:
    server = JudgeServer().start()
    folder = Path(tempfile.mkdtemp())
    os.environ.update(
        OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-stand-in", SCORERS_CACHE=str(folder / "cache.sqlite"),
        XDG_DATA_HOME=str(folder / "data"), XDG_CACHE_HOME=str(folder / "user-cache"),
    )
    script_word_overlap(server)
    # Started where a tuner would start it: beside their catalog folder and their examples.
    (folder / "examples").mkdir()
    for name in (PAIRS, NUMERIC):
        shutil.copy(ROOT / name, folder / name)
    os.chdir(folder)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or "chromium", args=["--no-sandbox"])
            workbench = Workbench(folder / "my-catalog", folder / "results.sqlite", data=Path(PAIRS), concurrency=4).start()
            try:
                tuning_loop(browser, workbench, server)
            finally:
                workbench.stop()
            workbench = Workbench(folder / "labels-catalog", folder / "results.sqlite", data=Path(NUMERIC)).start()
            try:
                numeric_labels(browser, workbench)
            finally:
                workbench.stop()
            workbench = Workbench(folder / "failing-catalog", folder / "results.sqlite", data=Path(PAIRS), concurrency=1).start()
            try:
                failed_run(browser, workbench, server)
            finally:
                workbench.stop()
            browser.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
