"""An item of an app's trace is shown with its trace beside its scores: in the report (the span
tree with timings, the tool call with its result, the documents retrieved) and on the
workbench's review page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_hallucination
from helpers.workbench_pages import Tab, call, started
from helpers.traces import FIXTURES, collector_for, traces_catalog

from engine.report import build_report, render_report
from engine.runs.traces.otlp import read_file_exporter
from engine.store import SQLiteStore
from engine.testing import JudgeServer


def scored_trace(judge: JudgeServer, tmp_path: Path) -> Path:
    """The recorded OpenInference trace scored into tmp_path/scores.sqlite, run `traces`."""
    script_hallucination(judge)
    collector = collector_for(traces_catalog(tmp_path, "openinference"), tmp_path)
    collector.accept(list(read_file_exporter(FIXTURES / "openinference.otlp.jsonl")))
    assert collector.flush(timeout=30)
    collector.close()
    return tmp_path / "scores.sqlite"


def test_the_report_shows_each_items_trace_beside_its_scores(judge: JudgeServer, tmp_path: Path) -> None:
    with SQLiteStore(scored_trace(judge, tmp_path)) as store:
        report = build_report(store, "traces")
    (agent,) = [row for row in report.items if row.trace and row.trace[0].scored]
    assert [(line.depth, line.name, line.kind) for line in agent.trace] == [
        (0, "agent", "agent"), (1, "retrieve", "retrieval"), (1, "lookup_weather", "tool"), (1, "ChatCompletion", "llm")]
    assert agent.trace[2].detail == ['lookup_weather({"city": "Paris"}) -> {"forecast": "sunny"}']
    assert agent.trace[1].detail == ["The Eiffel Tower is in Paris.", "It was finished in 1889."]
    assert agent.trace[3].duration_ms > 0 and agent.trace[3].start_ms >= agent.trace[2].start_ms
    # The other kind's scorer did not fail on it: the item was not its kind.
    assert {cell.key: (cell.error, cell.not_scorable) for cell in agent.cells}["traces:hallucination"] == (None, "not this scorer's kind of item")
    page = render_report(report)
    assert 'class="trace"' in page and "lookup_weather({&#34;city&#34;: &#34;Paris&#34;}) -&gt; {&#34;forecast&#34;: &#34;sunny&#34;}" in page
    assert page.count('<tr class="scored">') == 2  # the scored span of each item


@pytest.mark.slow
def test_the_review_page_shows_the_trace_of_an_item(chromium: Any, judge: JudgeServer, tmp_path: Path) -> None: 
    store = scored_trace(judge, tmp_path)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "scorers.yaml").write_text("scorers: {}\n", encoding="utf-8")
    with started(folder, store) as workbench:
        status, created = call(workbench, "review/create", {"name": "runs", "run": "traces", "scorer": "used-no-tools"})
        assert status == 200 and created["items"] == 1, created
        tab = Tab(chromium.new_context(), workbench)
        tab.page.goto(f"http://127.0.0.1:{workbench.port}/review?token={workbench.token}")
        tab.page.wait_for_function("window.reviewReady === true")
        tab.page.fill("#name", "Ana")
        tab.page.click("text=Start reviewing")
        tab.page.wait_for_function("window.reviewReady === true")
        tab.page.select_option("#queue", "runs")
        tab.page.wait_for_selector(".field-trace table.trace tr.scored")
        rows = tab.page.locator(".field-trace tr").all_inner_texts()
        assert len(rows) == 5 and rows[1].startswith("agent")
        assert 'lookup_weather({"city":"Paris"}) -> {"forecast":"sunny"}' in tab.page.inner_text(".field-trace")
        assert not tab.errors
