"""The floor under every runner: a stored run is never overwritten or pruned by another kind
of run, and a run that did not score everything never passes (runs/identity.py and
runs/verdict.py). Each test here failed before those guarantees had one place."""

from __future__ import annotations

import json
import logging
import signal
from pathlib import Path

import pytest

from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, script_hallucination, script_priced
from helpers.stopped_runs import has_saved, stop_mid_run
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.testing import JudgeServer, Reply

runner = CliRunner()


def live_run(judge: JudgeServer, path: Path, name: str = "agent-v1", replies: int = 10) -> None:
    script_hallucination(judge)
    live = LiveScorer(create_hallucination_scorer(options={"context": ["c"]}), store=path, run=name)
    for number in range(replies):
        live.submit("ok", input=f"q{number}", run_id=f"r{number}")
    assert live.close(timeout=30)


def data_file(path: Path, outputs: list[str], context: bool = True) -> Path:
    rows = [{"id": f"r{number}", "input": f"q{number}", "output": output, **({"context": ["c"]} if context else {})} for number, output in enumerate(outputs)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_batch_run_of_a_live_run_s_name_is_refused_and_deletes_nothing(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    live_run(judge, store)
    data = data_file(tmp_path / "d.jsonl", ["ok", "ok", "ok"])  # 3 of the live run's 10 ids

    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--run", "agent-v1", "--store", str(store)])

    assert shown.exit_code == 2
    assert "run 'agent-v1' is a live run, and a batch run cannot write into it" in shown.stderr
    assert "deleting its results (--replace)" in shown.stderr
    with SQLiteStore(store) as opened:
        assert len(opened.query(run="agent-v1")) == 10
        assert opened.get_run("agent-v1").kind == "live"  # type: ignore[union-attr]
    # In Python too, before a judge is asked.
    asked = len(judge.requests)
    try:
        run_evals(str(data), create_hallucination_scorer(), run="agent-v1", store=store)
    except ConfigError as exc:
        assert "is a live run" in str(exc) and "(replace=)" in str(exc)
    else:
        raise AssertionError("a batch run wrote into a live run")
    assert len(judge.requests) == asked


def test_replace_is_the_one_way_to_take_another_run_s_name(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    live_run(judge, store)
    data = data_file(tmp_path / "d.jsonl", ["ok", "ok"])
    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--run", "agent-v1", "--replace", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    with SQLiteStore(store) as opened:
        assert opened.get_run("agent-v1").kind == "batch"  # type: ignore[union-attr]
        assert len(opened.query(run="agent-v1")) == 2


def test_rescore_never_writes_into_its_source_or_another_kind_of_run(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    live_run(judge, store)
    live_run(judge, store, name="other-live", replies=2)
    onto_source = runner.invoke(app, ["rescore", "--run", "agent-v1", "--scorer", "hallucination", "--as", "agent-v1", "--store", str(store)])
    assert onto_source.exit_code == 2 and "the new run would overwrite the run it re-scores ('agent-v1'): give it another name (--as)" in onto_source.stderr
    onto_live = runner.invoke(app, ["rescore", "--run", "agent-v1", "--scorer", "hallucination", "--as", "other-live", "--store", str(store)])
    assert onto_live.exit_code == 2 and "run 'other-live' is a live run, and a rescore run cannot write into it" in onto_live.stderr
    with SQLiteStore(store) as opened:
        assert len(opened.query(run="agent-v1")) == 10 and len(opened.query(run="other-live")) == 2
        kept = {record.item_id: record.scorer_hash for record in opened.query(run="agent-v1")}
    # A rescore run of its own name resumes as any run does.
    first = runner.invoke(app, ["rescore", "--run", "agent-v1", "--scorer", "hallucination", "--as", "again", "--store", str(store)])
    assert first.exit_code == 0, first.output
    with SQLiteStore(store) as opened:
        assert opened.get_run("again").kind == "rescore"  # type: ignore[union-attr]
        assert {record.item_id: record.scorer_hash for record in opened.query(run="agent-v1")} == kept


def test_a_live_scorer_refuses_the_name_of_a_batch_run(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    run_evals([{"id": "a", "output": "ok", "context": ["c"]}], create_hallucination_scorer(), run="nightly", store=store)
    try:
        LiveScorer(create_hallucination_scorer(options={"context": ["c"]}), store=store, run="nightly")
    except ConfigError as exc:
        assert "run 'nightly' is a batch run, and a live run cannot write into it" in str(exc)
    else:
        raise AssertionError("a live scorer took a batch run's name")
    with SQLiteStore(store) as opened:
        assert [record.item_id for record in opened.query(run="nightly")] == ["a"]


def test_a_gate_never_passes_on_one_item_scored_of_twenty(judge: JudgeServer, tmp_path: Path) -> None:
    """19 of 20 items not scorable (no context), 1 scored and clean: the mean 0 meets the
    threshold, on the mean and on its interval, but the run covered 5% of the items."""
    script_hallucination(judge)
    rows = [{"id": "scored", "output": "ok", "context": ["c"]}] + [{"id": f"n{number}", "output": "ok"} for number in range(19)]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for gate in ("mean", "lower"):
        shown = runner.invoke(
            app, ["eval", str(data), "--scorer", "hallucination", "--threshold", "hallucination=0.2", "--gate", gate, "--store", str(tmp_path / "r.sqlite"),
                  "--run", f"gate-{gate}", "--json"],
        )
        assert shown.exit_code == 1, (gate, shown.output)
        verdict = json.loads(shown.stdout)
        assert verdict["passed"] is False and verdict["summary"]["hallucination"]["passed"] is False
        assert "hallucination: below the coverage floor 100%: 1 of 20 items scored (5%): 19 not scorable" in shown.stderr
    lowered = runner.invoke(
        app, ["eval", str(data), "--scorer", "hallucination", "--threshold", "hallucination=0.2", "--min-coverage", "0.05",
              "--store", str(tmp_path / "r.sqlite"), "--run", "lowered"],
    )
    assert lowered.exit_code == 0, lowered.output
    assert "Coverage floor 5% (--min-coverage): hallucination: 1 of 20 items scored (5%): 19 not scorable." in " ".join(lowered.stdout.split())


def test_pairwise_fails_when_pairs_fail(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("PreferenceVerdict", Reply.fail(400, "scripted judge failure"))
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{n}", "input": "q", "outputs": {"a": "x", "b": "y"}}) + "\n" for n in range(3)), encoding="utf-8")
    shown = runner.invoke(app, ["pairwise", str(data), "--scorer", "preference", "--store", str(tmp_path / "r.sqlite"), "--as", "pw"])
    assert shown.exit_code == 1, shown.output
    assert "failed: 3" in " ".join(shown.stdout.split())
    assert "nothing was scored by preference: 0 not scorable, 3 errors" in shown.stderr


def test_rescore_with_nothing_to_score_makes_no_run_and_fails(judge: JudgeServer, tmp_path: Path) -> None:
    import time

    store = tmp_path / "r.sqlite"
    live_run(judge, store, replies=2)
    time.sleep(1.1)  # the two replies are older than the window asked for
    shown = runner.invoke(app, ["rescore", "--run", "agent-v1", "--scorer", "hallucination", "--since", "1s", "--as", "empty", "--store", str(store)])
    assert shown.exit_code == 2 and "nothing to re-score: run 'agent-v1' holds no stored item to score again in that time (--since)" in shown.stderr
    with SQLiteStore(store) as opened:
        assert "empty" not in {run.name for run in opened.runs()}


def _priced_items(path: Path, count: int) -> Path:
    return data_file(path, [f"claim {number}" for number in range(count)])


def _stored_cost(store: Path, run: str) -> float:
    from engine.judge.prices import price_table

    with SQLiteStore(store) as opened:
        return sum(price_table().cost(row.model or "", row.tokens(), row.batch) or 0.0 for row in opened.usage(run))


def test_a_budget_holds_at_any_concurrency_and_every_view_shows_one_spend(judge: JudgeServer, tmp_path: Path) -> None:
    """`--max-cost` at concurrency 32 spent 7.6 times its budget, and the stop line, the cost
    table and the store each told another figure: now no call leaves that could pass it."""
    script_priced(judge)
    data, store = _priced_items(tmp_path / "d.jsonl", 200), tmp_path / "r.sqlite"
    budget = 10 * 3 * PER_CALL + FIRST_CALL_HOLD  # ten items' worth, and room for each step's first call
    shown = runner.invoke(
        app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped", "--concurrency", "32",
              "--max-cost", f"{budget:.8f}", "--no-cache", "--json"],
    )
    assert shown.exit_code == 1, shown.output
    payload = json.loads(shown.stdout)
    spent = payload["cost_usd"]
    assert payload["status"] == "interrupted" and payload["passed"] is False
    assert 0.5 * budget < spent <= budget  # every answer costs what the first of its step did: no estimate missed
    assert spent == payload["summary"]["hallucination"]["cost_usd"]
    assert f"the run has spent ${spent:.4f}" in payload["stopped"]
    assert abs(_stored_cost(store, "capped") - spent) < 1e-9
    table = runner.invoke(
        app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped", "--concurrency", "32",
              "--max-cost", f"{budget:.8f}", "--no-cache"],
    )
    words = " ".join(table.stdout.split())
    assert table.exit_code == 1 and f"${spent:.4f}" in words  # the cost table and the stop line: the same figure


def test_a_budget_covers_the_run_across_reruns_unless_raised(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    data, store = _priced_items(tmp_path / "d.jsonl", 30), tmp_path / "r.sqlite"
    budget = 3 * 3 * PER_CALL + FIRST_CALL_HOLD
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped", "--concurrency", "4", "--no-cache"]
    assert runner.invoke(app, [*arguments, "--max-cost", f"{budget:.8f}"]).exit_code == 1
    spent = _stored_cost(store, "capped")
    calls = len(judge.requests)
    again = runner.invoke(app, [*arguments, "--max-cost", f"{budget:.8f}", "--json"])
    assert again.exit_code == 1 and json.loads(again.stdout)["status"] == "interrupted"
    assert len(judge.requests) - calls <= 1  # at most a call that found no room and was not sent...
    assert _stored_cost(store, "capped") == spent  # ... so the same budget is not spent twice
    raised = runner.invoke(app, [*arguments, "--max-cost", "1"])
    assert raised.exit_code == 0, raised.output
    with SQLiteStore(store) as opened:
        assert len(opened.query(run="capped")) == 30


def test_a_rerun_of_a_finished_run_under_a_budget_leaves_it_finished(judge: JudgeServer, tmp_path: Path) -> None:
    """A finished run rerun with `--max-cost` below what it spent said "0 of 5 items ... the
    run has spent $0.0000 ... nothing was scored", exited 1 and turned the run interrupted:
    reading its results back costs nothing, so the rerun reads them and the run stays complete."""
    script_priced(judge)
    data, store = _priced_items(tmp_path / "d.jsonl", 5), tmp_path / "r.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "c1", "--no-cache"]
    assert runner.invoke(app, arguments).exit_code == 0
    calls = len(judge.requests)
    again = runner.invoke(app, [*arguments, "--max-cost", "0.0001", "--json"])
    assert again.exit_code == 0, again.output
    payload = json.loads(again.stdout)
    assert (payload["status"], payload["counts"]["reused"], payload["stopped"]) == ("complete", 5, None)
    assert abs(payload["cost_usd"] - _stored_cost(store, "c1")) < 1e-9 and len(judge.requests) == calls
    with SQLiteStore(store) as opened:
        assert opened.get_run("c1").status == "complete"  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_rerun_after_sigterm_under_a_spent_budget_says_what_the_run_spent(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    judge.latency = 0.2
    data, store = _priced_items(tmp_path / "d.jsonl", 12), tmp_path / "r.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "c1", "--no-cache", "--concurrency", "2"]
    stopped = stop_mid_run(arguments, tmp_path, signal.SIGTERM, when=has_saved(store, "c1", at_least=3))
    assert stopped.returncode == 130, stopped.stderr
    spent = _stored_cost(store, "c1")
    judge.requests.clear()
    again = runner.invoke(app, [*arguments, "--max-cost", f"{spent / 2:.8f}", "--json"])
    assert again.exit_code == 1, again.output
    payload = json.loads(again.stdout)
    assert payload["status"] == "interrupted" and f"the run has spent ${spent:.4f}" in payload["stopped"]
    assert judge.requests == []  # nothing was left to spend: no call left, no item half-asked


def test_live_scoring_is_back_within_seconds_of_its_judge(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Ten failed calls open the judge's circuit. A reply sent while it is open waits for the
    probe (2 s later) instead of being recorded as an error, and one sent after the judge
    came back is scored: before, both were errors for the next 30 s."""
    import threading
    import time

    from engine.testing import Reply

    monkeypatch.setenv("SCORERS_RETRIES", "0")
    down = threading.Event()
    down.set()

    def claims(request: object) -> Reply:
        return Reply.fail(500, "down") if down.is_set() else Reply(answer={"claims": ["fine"]})

    judge.on("Claims", claims)
    judge.on("HallucinationVerdicts", lambda request: {"verdicts": [{"statement": "fine", "verdict": "no", "reason": "r"}]})
    judge.on("Reason", {"reason": "r"})
    live = LiveScorer(create_hallucination_scorer(options={"context": ["c"]}), concurrency=1)
    for number in range(10):
        live.submit("reply", input="q", run_id=f"down-{number}")
    assert live.flush(timeout=30)
    assert live.stats.errors["hallucination"] == 10  # the circuit is open now
    down.clear()  # the judge is back
    started = time.monotonic()
    live.submit("reply", input="q", run_id="after")
    assert live.flush(timeout=30)
    assert live.stats.scored["hallucination"] == 1 and live.stats.errors["hallucination"] == 10
    assert time.monotonic() - started < 10
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        live.submit("reply", input="q", run_id="at-close")
        assert live.close(timeout=0.001) in (True, False)
    assert "Task was destroyed but it is pending" not in caplog.text


def test_a_command_that_must_write_to_a_read_only_store_is_refused_with_status_2(judge: JudgeServer, tmp_path: Path, small_disk: Path) -> None:
    import subprocess

    store = small_disk / "r.sqlite"
    live_run(judge, store, replies=5)
    remounted = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
    if remounted.returncode != 0:
        pytest.skip(f"cannot make the filesystem read-only here: {remounted.stderr.strip()}")
    asked = len(judge.requests)
    monitors = tmp_path / "m.yaml"
    monitors.write_text("monitors:\n  rising: {scorer: hallucination, statistic: mean, above: 0.5, window: 5, min_samples: 5}\n", encoding="utf-8")
    for command in (
        ["rescore", "--run", "agent-v1", "--scorer", "hallucination", "--as", "again", "--store", str(store)],
        ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"],
    ):
        shown = runner.invoke(app, command)
        assert shown.exit_code == 2, (command, shown.output)
        assert "the file cannot be written (a read-only file or disk)" in shown.stderr and "Traceback" not in shown.output
    assert len(judge.requests) == asked  # refused before any judge call
    read = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store)])  # only reading: fine
    assert read.exit_code == 0, read.output


def test_numeric_labels_a_scorer_cannot_give_are_that_item_s_error(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    rows = [
        {"id": "fine", "output": "ok", "context": ["c"], "expected": {"hallucination": 0}},
        {"id": "two", "output": "ok", "context": ["c"], "expected": {"hallucination": 2}},
        {"id": "minus", "output": "ok", "context": ["c"], "expected": -1},
    ]
    result = run_evals(rows, create_hallucination_scorer())
    assert result.counts.outcomes == {"scored": 1, "error": 2, "not_scorable": 0} and result.passed is False
    messages = {error.item_id: error.error for error in result.errors}
    assert messages["two"] == "`expected` for hallucination is 2, which is not a score it gives (0 to 1); a pass/flag label is true or false"
    assert "is -1" in messages["minus"]
    assert result.summary["hallucination"].agreement is not None and result.summary["hallucination"].agreement.labelled == 1


def test_a_monitor_with_enough_outcomes_but_no_score_says_so(judge: JudgeServer, tmp_path: Path) -> None:
    from engine.testing import Reply

    judge.on("Claims", Reply.fail(400, "scripted judge failure"))
    store = tmp_path / "r.sqlite"
    live = LiveScorer(create_hallucination_scorer(options={"context": ["c"]}), store=store)
    for number in range(20):
        live.submit("reply", input="q", run_id=f"r{number}")
    assert live.close(timeout=30)
    monitors = tmp_path / "m.yaml"
    monitors.write_text("monitors:\n  rising: {scorer: hallucination, statistic: mean, above: 0.5, window: 20, min_samples: 10}\n", encoding="utf-8")
    shown = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--json"])
    note = json.loads(shown.stdout)["monitors"][0]["note"]
    assert note == "no mean over the 20 outcomes: none was scored (each failed or was not scorable)"  # not "20 of the 10 samples needed"


def test_sigterm_ends_monitor_watch_as_ctrl_c_does(judge: JudgeServer, tmp_path: Path) -> None:
    import os
    import selectors
    import signal
    import subprocess
    import sys

    store = tmp_path / "r.sqlite"
    live_run(judge, store, replies=3)
    monitors = tmp_path / "m.yaml"
    monitors.write_text("monitors:\n  rising: {scorer: hallucination, statistic: mean, above: 0.5, window: 5, min_samples: 5}\n", encoding="utf-8")
    scorers = str(Path(sys.executable).with_name("scorers"))
    process = subprocess.Popen([scorers, "monitor", "--monitors", str(monitors), "--store", str(store), "--watch", "--interval", "1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    # Signalled once it watches (it has printed), not after a fixed wait: on a loaded machine
    # the command may still be starting after 3 s, and Python's default would end it (-15).
    watching = selectors.DefaultSelector()
    watching.register(process.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    assert watching.select(timeout=60), "monitor --watch printed nothing in 60 s"
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == 130


def test_a_live_reply_whose_scoring_failed_keeps_its_context_for_rescoring(judge: JudgeServer, tmp_path: Path) -> None:
    from engine.testing import Reply

    judge.on("Claims", Reply.fail(400, "scripted judge failure"))
    store = tmp_path / "r.sqlite"
    live = LiveScorer(create_hallucination_scorer(options={"context": ["the facts"]}), store=store)
    live.submit("reply", input="q", run_id="r1")
    assert live.close(timeout=30)
    with SQLiteStore(store) as opened:
        [record] = opened.query(run="live")
    assert record.error is not None and record.context == ["the facts"]
    script_hallucination(judge)
    again = runner.invoke(app, ["rescore", "--run", "live", "--scorer", "hallucination", "--as", "again", "--store", str(store), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["result"]["counts"]["outcomes"] == {"scored": 1, "error": 0, "not_scorable": 0}
