"""The workbench shows how sure the judge was: each item's confidence beside its score, the
item's own page, and the calibration of confidence against people's labels with its
reliability curve; the threshold calibration beside it keeps working. In Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.scripted import between, numbered_claims
from helpers.workbench_pages import Tab, browser_context, started  # noqa: F401 (the fixture)

from engine.testing import JudgeServer, Reply, Request


def _script_sure_and_unsure(judge: JudgeServer) -> None:
    """The judge flags every output; at 90% for a SURE one, where people agree, and at 60% for
    a DOUBT one, where people do not."""

    def verdicts(request: Request) -> Reply:
        sure = "SURE" in request.prompt
        answer = {"verdicts": [{"statement": numbered_claims(request.prompt)[0], "verdict": "yes", "reason": "r"}]}
        return Reply.unsure(answer, {"verdicts[0].verdict": {"yes": 0.9, "no": 0.1} if sure else {"yes": 0.6, "no": 0.4}})

    judge.on("Claims", lambda request: {"claims": [between(request.prompt, "output")]})
    judge.on("HallucinationVerdicts", verdicts)
    judge.on("Reason", {"reason": "r"})


def test_a_run_shows_each_items_confidence_and_its_calibration_against_people(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    _script_sure_and_unsure(judge)
    data = tmp_path / "data.jsonl"
    items = [{"id": f"{kind.lower()}-{n}", "output": f"{kind} {n}.", "context": ["facts"], "expected": {"hallucination": kind == "SURE"}} for kind in ("SURE", "DOUBT") for n in range(3)]
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=data) as workbench:
        tab = Tab(browser_context, workbench).open()
        page = tab.page
        page.select_option("#scorer", "hallucination")
        page.click("#tab-run")
        page.click("#run")
        page.wait_for_selector("#view-results:not([hidden]) #items tbody tr")
        assert "1 (90% sure)" in tab.text("#items tr[data-item='sure-0']")
        assert "1 (60% sure)" in tab.text("#items tr[data-item='doubt-0']")
        summary = " ".join(tab.text("#confidence-calibration").split())
        assert "Confidence against people (6 items): calibration error 0.35" in summary, summary
        assert "AUROC 1" in summary
        assert page.locator("#confidence-calibration svg.reliability circle").count() == 2

        page.click("#items tr[data-item='doubt-0'] button")
        page.wait_for_selector("#item-title:has-text('60% sure')")
        page.keyboard.press("Escape")
        page.wait_for_selector("#item-dialog", state="hidden")

        # The threshold's own calibration, which shares the results view, still answers.
        page.click("#calibrate")
        page.wait_for_selector("#calibration:has-text('Best threshold')")
        assert tab.errors == []
