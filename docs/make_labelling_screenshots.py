"""Make the screenshots of docs/labelling.md: the review page on the shipped HaluEval examples
(scored by the test suite's stand-in judge, word overlap), photographed in headless chromium
at 1280x800 as two reviewers use it: saying who you are, making a queue, an item before the
label (the judge hidden, its claims highlighted), the same item once labelled, and the
agreement between the two reviewers beside the judge's.

    python docs/make_labelling_screenshots.py     # needs `.[test]` installed and Debian's chromium
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
sys.path.insert(0, str(ROOT / "tests"))

from helpers.scripted import script_word_overlap  # noqa: E402
from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

from engine import JudgeSettings, create_scorer, run_evals  # noqa: E402
from engine.testing import JudgeServer  # noqa: E402
from engine.workbench.server import Workbench  # noqa: E402

DATA = ROOT / "examples" / "halueval_qa.jsonl"
CATALOG = """\
scorers: {}
queues:
  check-answers:
    scorer: hallucination
    instructions: >-
      Read the context, then the answer. Flag the answer when it says anything
      the context does not support. Mark each claim "yes" when it is made up.
    steps:
      answers: analyze.verdicts
      text: statement
      judged: verdict
      choices: ['yes', 'no']
    labels_per_item: 2
"""
EXPECTED = {row["id"]: bool(row["expected"]["hallucination"]) for row in map(json.loads, DATA.read_text(encoding="utf-8").splitlines())}


def shoot(page: Page, name: str) -> None:
    page.wait_for_timeout(300)
    page.screenshot(path=str(IMAGES / name))


def reviewer(browser: Browser, workbench: Workbench, name: str, picture: str | None = None) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 800}, device_scale_factor=1).new_page()
    page.set_default_timeout(60_000)
    page.goto(f"http://127.0.0.1:{workbench.port}/review?token={workbench.token}")
    page.wait_for_function("window.reviewReady === true")
    page.fill("#name", name)
    if picture:
        shoot(page, picture)
    page.click("text=Start reviewing")
    page.wait_for_function("window.reviewReady === true")
    return page


def item_id(page: Page) -> str:
    page.wait_for_selector("#reviewing:not([hidden])")
    return str(page.locator("#item-title").inner_text()).split()[1]


def label(page: Page, flagged: bool) -> None:
    page.keyboard.press("f" if flagged else "p")
    page.keyboard.press("Enter")
    page.wait_for_selector("#judge-box:not([hidden])")


def advance(page: Page) -> bool:
    before = page.locator("#item-title").inner_text()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "([before]) => !document.querySelector('#empty').hidden || document.querySelector('#item-title').textContent !== before", arg=[before]
    )
    return bool(page.locator("#empty").is_hidden())


def review(browser: Browser, workbench: Workbench) -> None:
    ana = reviewer(browser, workbench, "Ana", "labelling-start.png")
    ana.click("#tab-new")
    ana.fill("#new-name", "check-answers")
    ana.select_option("#new-run", "production")
    ana.select_option("#new-scorer", "hallucination")
    ana.fill("#new-sample", "8")
    ana.fill("#new-seed", "2")
    shoot(ana, "labelling-new-queue.png")
    ana.click("text=Make the queue")
    ana.wait_for_function("document.querySelector('#progress-line').textContent.includes('8 items')")

    shot = False
    while True:
        current = item_id(ana)
        if not shot and ana.locator("mark.claim").count() >= 1:
            for _ in range(ana.locator("#answers li").count()):
                ana.keyboard.press("Shift+Digit1" if EXPECTED[current] else "Shift+Digit2")
            ana.keyboard.press("f" if EXPECTED[current] else "p")
            shoot(ana, "labelling-item.png")
            ana.keyboard.press("Enter")
            ana.wait_for_selector("#judge-box:not([hidden])")
            shoot(ana, "labelling-revealed.png")
            shot = True
        else:
            label(ana, EXPECTED[current])
        if not advance(ana):
            break

    ben = reviewer(browser, workbench, "Ben")
    disagreed = 0
    while True:
        current = item_id(ben)
        # Ben reads two answers differently from Ana.
        differs = disagreed < 2 and not EXPECTED[current]
        disagreed += differs
        label(ben, EXPECTED[current] != differs)
        if not advance(ben):
            break
    ana.click("#tab-agreement")
    ana.wait_for_selector("#people tbody tr")
    shoot(ana, "labelling-agreement.png")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs Debian's chromium (apt-get install -y chromium)")
    judge = JudgeServer().start()
    script_word_overlap(judge)
    os.environ.update({"OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "sk-screenshots", "SCORERS_CACHE": ""})
    folder = Path(tempfile.mkdtemp(prefix="labelling-"))
    try:
        store = folder / "results.sqlite"
        scorer = create_scorer("hallucination", model="openai/judge")
        run_evals(str(DATA), [scorer], run="production", store=str(store), cache=False)
        catalog = folder / "my-catalog"
        catalog.mkdir()
        (catalog / "scorers.yaml").write_text(CATALOG, encoding="utf-8")
        workbench = Workbench(catalog, store, judge=JudgeSettings(model="openai/judge"), cache=False).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                review(browser, workbench)
                browser.close()
        finally:
            workbench.stop()
    finally:
        judge.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
