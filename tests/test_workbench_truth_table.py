"""The workbench shows what a scorer means before any judge is called: the truth table of
`scorers show` (answers made from its schemas, the score, pass or flag), worked out from the
draft as it is typed, so an edit that moves the pass line moves the table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from helpers.workbench_pages import PAIRS, ROOT, call, workbench  # noqa: F401 (the fixture)

from engine.workbench.server import Workbench

ARTIFACTS = Path(os.environ.get("SCORERS_TEST_ARTIFACTS", ROOT / "test-artifacts"))


def _rows(found: dict[str, Any]) -> dict[str, tuple[float | None, str]]:
    return {row["answer"]: (row["score"], row["outcome"]) for row in found["truth_table"]}


def test_the_truth_table_of_a_draft(workbench: Workbench) -> None:
    status, found = call(workbench, "truth", {"files": {}, "scorer": "hallucination"})
    assert status == 200, found
    rows = _rows(found)
    assert rows["3 claims; verdicts no, no, no"] == (0.0, "pass")
    assert rows["3 claims; verdicts yes, yes, yes"] == (1.0, "flag")
    assert rows["3 claims; verdicts yes, no, yes"] == (0.67, "flag")

    # A laxer pass line in the draft (not saved): the same answers, one fewer flagged.
    draft = "scorers:\n  lax:\n    extends: hallucination\n    threshold: 0.7\n"
    status, found = call(workbench, "truth", {"files": {"scorers.yaml": draft}, "scorer": "lax"})
    assert status == 200, found
    assert _rows(found)["3 claims; verdicts yes, no, yes"] == (0.67, "pass")


def test_the_truth_table_in_the_page(workbench: Workbench, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(f"http://127.0.0.1:{workbench.port}/") else route.abort())
    page.goto(workbench.url)
    page.select_option("#scorer", "faithfulness")
    page.select_option("#data", str(PAIRS))
    page.wait_for_selector("#truth tbody tr:has-text('unsure')")  # faithfulness's own verdicts, once its check is back
    shown = page.locator("#truth tbody tr").all_inner_texts()
    assert any(row.split("\t") == ["3 claims; verdicts yes, yes, yes", "1", "pass"] for row in shown), shown
    assert any(row.split("\t") == ["3 claims; verdicts no, no, no", "0", "flag"] for row in shown), shown
    assert page.locator("#truth-box").is_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#truth-box").screenshot(path=str(ARTIFACTS / "workbench-truth-table.png"))
