"""The workbench stays usable with a data set of 2,000 items: every item can be picked for the
preview, a run of all of them shows every item with the coverage of its figures, the filter
of disagreements answers at once, and a keystroke still gets its check and preview. A
computed scorer (no judge) keeps the run itself quick. In Chromium."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_word_overlap
from helpers.workbench_pages import Tab, browser_context, started  # noqa: F401 (the fixture)

from engine.testing import JudgeServer

ITEMS = 2000


@pytest.mark.slow
def test_two_thousand_items(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    data = tmp_path / "big.jsonl"
    rows = [
        {"id": f"i{n}", "input": f"question {n} about things", "output": f"answer {n} about {'things' if n % 2 else 'other stuff'}",
         "context": [f"answer {n} about things"], "expected": {"content-similarity": n % 2, "hallucination": bool(n % 3)}}
        for n in range(ITEMS)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=data) as workbench:
        tab = Tab(browser_context, workbench).open()
        page = tab.page
        assert page.locator("#item option").count() == ITEMS
        page.select_option("#scorer", "content-similarity")
        page.click("#tab-run")
        page.fill("#size", str(ITEMS))
        page.dispatch_event("#size", "change")
        page.wait_for_selector(f"#estimate:has-text('{ITEMS} items: about 0 judge calls')")
        page.click("#run")
        page.wait_for_selector("#view-results:not([hidden]) #items tbody tr", timeout=120_000)
        assert f"{ITEMS} of {ITEMS} items scored" in tab.text("#results-head")
        assert page.locator("#items tbody tr").count() == ITEMS
        wrong = page.locator("#items tbody tr.wrong").count()
        started_at = time.monotonic()
        page.click("#only-wrong")
        assert page.locator("#items tbody tr").count() == wrong and time.monotonic() - started_at < 5

        # Back to a judged scorer: a keystroke still gets its check and its preview.
        page.select_option("#scorer", "hallucination")
        page.click("#tab-preview")
        page.wait_for_selector("#prompts section[data-step='preprocess']")
        tab.edit("pane-b", "prompts/hallucination/analyze.j2", lambda text: text.replace("Decide,", "At scale. Decide,"))
        page.wait_for_selector("#problems-title:text('Checks: no problems')")
        page.wait_for_function("!document.querySelector('#prompts').classList.contains('stale')", timeout=10_000)
        assert tab.errors == []
