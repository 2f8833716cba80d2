"""Make docs/images/report.png: a compare run on the HaluEval pairs, answered by the test
suite's stand-in judge (word overlap), rendered as a report and photographed in headless
chromium with one item opened.

    python docs/make_report_screenshot.py     # needs `.[test]` installed and Debian's chromium
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers.scripted import script_word_overlap  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from engine.cli import app  # noqa: E402
from engine.testing import JudgeServer  # noqa: E402


def main() -> None:
    server = JudgeServer().start()
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-stand-in")
    script_word_overlap(server)
    os.chdir(ROOT)  # the report names the data as the docs' commands do
    with tempfile.TemporaryDirectory() as folder:
        store, report = Path(folder) / "results.sqlite", Path(folder) / "report.html"
        runner = CliRunner()
        for command in (
            ["compare", "examples/halueval_qa_pairs.jsonl", "--scorer", "hallucination", "--config",
             "examples/variants/strict/scorers.yaml", "--sample", "60", "--seed", "1", "--run", "strict-vs-builtin", "--store", str(store)],
            ["report", "strict-vs-builtin", "--store", str(store), "-o", str(report)],
        ):
            result = runner.invoke(app, command)
            if result.exit_code != 0:
                raise SystemExit(result.output)
        server.stop()
        chromium = shutil.which("chromium") or "chromium"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1300, "height": 1000}, device_scale_factor=1)
            page.goto(report.as_uri())
            page.screenshot(path=str(ROOT / "docs" / "images" / "report.png"), full_page=False)
            page.fill("#search", "hallucinated")
            page.locator("tbody.item:visible tr.row.wrong").first.click()
            page.evaluate("document.getElementById('search').scrollIntoView()")
            page.screenshot(path=str(ROOT / "docs" / "images" / "report-items.png"), full_page=False)
            browser.close()


if __name__ == "__main__":
    main()
