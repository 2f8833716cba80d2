"""The workbench shows what a scorer means before any judge is called: the truth table of
`scorers show` (answers made from its schemas, the score, pass or flag), worked out from the
draft as it is typed, so an edit that moves the pass line moves the table."""

from __future__ import annotations

from typing import Any

from helpers.workbench_pages import call, workbench  # noqa: F401 (the fixture)

from engine.workbench.server import Workbench


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
