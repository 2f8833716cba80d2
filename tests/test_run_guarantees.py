"""The floor under every runner: a stored run is never overwritten or pruned by another kind
of run, and a run that did not score everything never passes (runs/identity.py and
runs/verdict.py). Each test here failed before those guarantees had one place."""

from __future__ import annotations

import json
from pathlib import Path

from scripted import FIRST_CALL_HOLD, PER_CALL, script_hallucination, script_priced
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
        )  # fmt: skip
        assert shown.exit_code == 1, (gate, shown.output)
        verdict = json.loads(shown.stdout)
        assert verdict["passed"] is False and verdict["summary"]["hallucination"]["passed"] is False
        assert "hallucination: 1 of 20 items scored (5%), below the coverage floor 100%: 19 not scorable" in shown.stderr
    lowered = runner.invoke(
        app, ["eval", str(data), "--scorer", "hallucination", "--threshold", "hallucination=0.2", "--min-coverage", "0.05",
              "--store", str(tmp_path / "r.sqlite"), "--run", "lowered"],
    )  # fmt: skip
    assert lowered.exit_code == 0, lowered.output
    assert "Coverage floor 5% (--min-coverage): hallucination: 1 of 20 items scored (5%)." in " ".join(lowered.stdout.split())


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
    )  # fmt: skip
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
    )  # fmt: skip
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
