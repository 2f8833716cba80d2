"""Failures look like failures in the workbench: a run that failed or stopped says why at the
top of every view, no figure is shown without how many items it stands on, the counts are
the ones `scorers eval` prints for the same data, the Stop message gives the judge calls sent
(answered or not) and the cost the store records, and a recommended threshold that agrees no more than chance is
flagged. In Chromium."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from helpers.scripted import between, claims_of, numbered_claims, script_hallucination, script_word_overlap
from typer.testing import CliRunner
from helpers.workbench_pages import PAIRS, Tab, browser_context, call, ok, started, wait_run  # noqa: F401 (fixtures)

from engine.cli import app
from engine.runs.measures.stats import usage_cost
from engine.store import open_store
from engine.testing import JudgeServer, Reply, Request

VIEWS = ("tab-preview", "tab-run", "tab-results", "tab-versions")


def test_a_run_the_judge_refuses_shows_its_cause_on_every_view_and_its_figures_only_with_their_coverage(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    answered = itertools.count()

    def refused_after_the_first(request: Request) -> Reply:
        if next(answered):
            return Reply.fail(400, "The request was refused (sk-test-secret-key-123)")
        return Reply(answer={"claims": claims_of(between(request.prompt, "output"))})

    # The first item is scored; then every call is refused, until ten in a row stop the run.
    judge.on("Claims", refused_after_the_first)
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS, concurrency=1) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.click("#tab-run")
        tab.page.click("#run")
        banner = tab.page.locator("#run-banner")
        tab.page.wait_for_selector("#view-results:not([hidden]) #results-head:has-text('scored')")
        for view in VIEWS:
            tab.page.click(f"#{view}")
            assert banner.is_visible(), view
            text = banner.inner_text()
            assert "failed" in text and "refused" in text and "1 of 20 items scored" in text, text
            assert "sk-test-secret-key-123" not in text
        tab.page.click("#tab-results")
        assert re.search(r"\(failed\): 1 of 20 items scored \(5%\): \d+ failed, \d+ not run\.", tab.text("#results-head")), tab.text("#results-head")
        assert "20 items" not in tab.text("#results-head").replace("of 20 items", "")
        assert tab.text("#agreement-coverage").startswith("On 1 of 20 items")
        assert tab.errors == []


def test_scored_failed_and_not_scorable_are_counted_as_scorers_eval_counts_them(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_hallucination(judge)
    rows = [{"id": f"ok-{n}", "output": "ok. WRONG" if n % 2 else "ok", "context": ["c"], "expected": {"hallucination": bool(n % 2)}} for n in range(6)]
    rows += [{"id": f"fail-{n}", "output": "FAIL here", "context": ["c"], "expected": {"hallucination": True}} for n in range(2)]
    rows += [{"id": f"empty-{n}", "output": "", "context": ["c"], "expected": {"hallucination": False}} for n in range(2)]
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    shown = CliRunner().invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "cli.sqlite"), "--json"])
    summary = json.loads(shown.stdout)["summary"]["hallucination"]
    assert (summary["count"], summary["errors"], summary["not_scorable"]) == (6, 2, 2)

    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=data) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.click("#tab-run")
        tab.page.fill("#size", "10")
        tab.page.click("#run")
        tab.page.wait_for_selector("#view-results:not([hidden]) #results-head:has-text('scored')")
        head = tab.text("#results-head")
        assert "6 of 10 items scored (60%): 2 failed, 2 not scorable" in head, head
        assert "10 labelled" not in head and "4 failed" not in head
        assert tab.text("#agreement-coverage").startswith("On 6 of 10 items")
        # The banner says the run did not score everything, in the same words.
        assert "6 of 10 items scored (60%): 2 failed, 2 not scorable" in tab.text("#run-banner")
        tab.page.click("#tab-run")
        assert "6 of 10 items scored (60%): 2 failed, 2 not scorable" in tab.text("#progress-text")


def test_the_stop_message_gives_the_judge_calls_and_cost_the_store_records(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    judge.on("Claims", lambda request: Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, delay=0.4))
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS, concurrency=2) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.click("#tab-run")
        tab.page.fill("#size", "16")
        tab.page.click("#run")
        tab.page.wait_for_function("document.querySelector('#progress').value >= 3")
        tab.page.click("#stop")
        tab.page.wait_for_function("document.querySelector('#progress-text').textContent.includes('judge call')")
        run = ok(workbench, "status")["run"]["run"]
        store = open_store(tmp_path / "results.sqlite")
        assert store is not None
        [usage] = store.usage(run)
        cost = usage_cost(usage)
        assert usage.judge_calls >= 9 and cost is not None
        text = tab.text("#progress-text")
        # Every request the judge received, those in flight at Stop too (the store has none of theirs).
        assert f"{len(judge.requests)} judge calls sent" in text and f"about ${cost:.4f}" in text, text
        assert "stopped" in tab.text("#run-banner") and "Run again to finish it" in text


def test_calibrate_warns_when_the_best_threshold_agrees_no_more_than_chance(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    # Every claim supported: every item scores 0, and no threshold tells the items apart.
    judge.on("HallucinationVerdicts", lambda request: {"verdicts": [{"statement": claim, "verdict": "no", "reason": "r"} for claim in numbered_claims(request.prompt)]})
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.click("#tab-run")
        tab.page.fill("#size", "10")
        tab.page.click("#run")
        tab.page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
        tab.page.click("#calibrate")
        tab.page.wait_for_selector("#calibration:has-text('Best threshold')")
        warning = tab.text("#calibration-warning")
        assert "kappa 0" in warning and "flags none of the 10 items" in warning, warning
        assert tab.page.locator("#calibration-warning").is_visible()
        # Such a threshold is not one click from the file: the button waits for a tick, and
        # the workbench refuses to set it without one, saying why.
        catalog_before = tab.page.evaluate("state.files[state.catalogName].text")
        assert tab.page.locator("#apply-threshold").is_disabled() and "anyway" in tab.text("#apply-threshold")
        tab.page.click("#apply-threshold", force=True)
        assert tab.page.evaluate("state.files[state.catalogName].text") == catalog_before
        run = ok(workbench, "status")["run"]["run"]
        status, refused = call(workbench, "calibrate", {"scorer": "hallucination", "run": run, "files": {}, "apply": True, "text": catalog_before})
        assert status == 400 and "the threshold was not set: Not a threshold to use: kappa 0" in refused["error"]
        tab.page.check("#despite")
        tab.page.locator("#calibrate-box").screenshot(path=str(tmp_path / "calibrated.png"))
        tab.page.click("#apply-threshold")
        tab.page.wait_for_selector("#calibration:has-text('not saved yet')")
        assert "threshold: " in tab.page.evaluate("state.files[state.catalogName].text")


def test_a_run_whose_every_call_fails_counts_each_request_the_judge_received_retries_too(
    judge: JudgeServer, tmp_path: Path, monkeypatch: Any
) -> None:
    """A failed call leaves no record, so the store counted none: the page said "0 judge
    calls" after the judge had received ten. The requests are counted as they leave."""
    monkeypatch.setenv("SCORERS_RETRIES", "1")  # each call is sent twice: both reached the judge
    judge.fallback = Reply.fail(500, "the judge is down")
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS, concurrency=2) as workbench:
        ok(workbench, "run", {"scorer": "hallucination", "data": str(PAIRS), "size": 8, "seed": 0, "files": {}})
        run = wait_run(workbench)

    assert run["scored"] == 0 and run["failed"] == 8, run
    assert len(judge.requests) >= 10 and run["judge_calls"] == len(judge.requests), (run["judge_calls"], len(judge.requests))


def test_a_stopped_run_counts_the_calls_in_flight_that_the_store_never_saw(judge: JudgeServer, tmp_path: Path) -> None:
    script_word_overlap(judge)
    judge.on("Claims", lambda request: Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, delay=0.4))
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS, concurrency=4) as workbench:
        ok(workbench, "run", {"scorer": "hallucination", "data": str(PAIRS), "size": 16, "seed": 0, "files": {}})
        while ok(workbench, "status")["run"]["done"] < 3:
            pass
        ok(workbench, "stop")
        run = wait_run(workbench)
        store = open_store(tmp_path / "results.sqlite")
        assert store is not None
        stored = sum(row.judge_calls for row in store.usage(run["run"]))

    assert run["status"] == "stopped"
    assert run["judge_calls"] == len(judge.requests) > stored, (run["judge_calls"], len(judge.requests), stored)
