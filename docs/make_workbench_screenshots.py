"""Make the screenshots of docs/workbench.md: the workbench on the HaluEval pairs, answered by
the test suite's stand-in judge (word overlap), photographed in headless chromium at each
step of the tuning loop, at 1280x800 and in a narrow window.

    python docs/make_workbench_screenshots.py     # needs `.[test]` installed and Debian's chromium
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from scripted import script_word_overlap  # noqa: E402

from engine.testing import JudgeServer  # noqa: E402
from engine.workbench.server import Workbench  # noqa: E402

ANALYZE = "prompts/hallucination/analyze.j2"


def edit(page: Page, pane: str, path: str, old: str, new: str) -> None:
    page.select_option(f"#{pane} .file-pick", path)
    area = page.locator(f"#{pane} textarea")
    area.fill(area.input_value().replace(old, new))


def shoot(page: Page, name: str) -> None:
    page.wait_for_timeout(300)
    page.screenshot(path=str(IMAGES / name))


def main() -> None:
    server = JudgeServer().start()
    folder = Path(tempfile.mkdtemp())
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-stand-in", SCORERS_CACHE=str(folder / "cache.sqlite"))
    script_word_overlap(server)
    # Started where a tuner would start it: beside their catalog folder and their examples.
    (folder / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "halueval_qa_pairs.jsonl", folder / "examples")
    os.chdir(folder)
    workbench = Workbench(folder / "my-catalog", folder / "results.sqlite", data=Path("examples/halueval_qa_pairs.jsonl")).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or "chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
            page.goto(workbench.url)
            page.select_option("#scorer", "hallucination")
            page.wait_for_selector("#prompts section[data-step='preprocess']")
            page.select_option("#pane-b .file-pick", ANALYZE)

            edit(page, "pane-b", ANALYZE, "preprocess.claims | length }})", "preprocess.clams | length }})")
            page.wait_for_selector("#problems .problem")
            page.locator("#pane-b textarea").evaluate("area => { area.scrollTop = 200; area.dispatchEvent(new Event('scroll')); }")
            shoot(page, "workbench-check.png")
            edit(page, "pane-b", ANALYZE, "preprocess.clams", "preprocess.claims")
            page.wait_for_selector("#problems-title:text('Checks: no problems')")

            page.click("#tab-run")
            page.fill("#size", "40")
            page.dispatch_event("#size", "change")
            page.wait_for_selector("#estimate:has-text('40 items')")
            page.click("#run")
            page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
            page.click("#tab-run")
            shoot(page, "workbench-run.png")
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

            page.click("#save")
            page.locator("#diffs .diff").first.wait_for()
            shoot(page, "workbench-save.png")
            page.click("#save-confirm")
            page.wait_for_selector("#view-versions:not([hidden]) #versions tr[data-version='1']")
            shoot(page, "workbench-versions.png")

            narrow = browser.new_page(viewport={"width": 420, "height": 860}, device_scale_factor=1)
            narrow.goto(workbench.url)
            narrow.wait_for_selector("#prompts section[data-step='preprocess']")
            shoot(narrow, "workbench-narrow.png")
            browser.close()
    finally:
        workbench.stop()
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
