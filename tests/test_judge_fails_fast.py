"""A judge that refuses, hangs, rambles or is down ends a run quickly with one line that says
what to fix; finished results stay saved and the same run continues afterwards."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import socket
import time
from pathlib import Path

import pytest
from engine.testing import JudgeServer, Reply
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import AnswerCutOffError, load_scorers, JudgeTimeoutError, SQLiteStore, create_hallucination_scorer, create_scorer, run_evals
from engine.cli import app

runner = CliRunner()


def write_items(path: Path, count: int, output: str = "ok. WRONG") -> Path:
    lines = [json.dumps({"id": f"i{n}", "output": f"{output} {n}", "context": ["facts"]}) for n in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def eval_args(data: Path, store: Path, *more: str) -> list[str]:
    return ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "r", *more]


def test_a_refused_key_costs_one_request_stops_the_run_and_a_rerun_continues(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", Reply.fail(401, "Incorrect API key provided"))
    data, store = write_items(tmp_path / "data.jsonl", 20), tmp_path / "r.sqlite"

    refused = runner.invoke(app, eval_args(data, store))

    assert len(judge.requests) == 1
    assert refused.exit_code == 2, refused.output
    lines = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "refused the API key (HTTP 401)" in lines[0] and "OPENAI_API_KEY" in lines[0]
    assert refused.stdout == ""  # its one line: no summary table of nothing, nor the same error again
    with SQLiteStore(store) as saved:
        assert saved.get_run("r").status == "failed"  # type: ignore[union-attr]

    judge.reset()
    script_hallucination(judge)
    resumed = runner.invoke(app, eval_args(data, store, "--json"))

    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert summary["status"] == "complete" and summary["counts"]["outcomes"]["scored"] == 20


def test_finished_results_stay_when_the_key_is_revoked_mid_run(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    answered = {"claims": 0}

    def claims(request: object) -> Reply:
        answered["claims"] += 1
        if answered["claims"] > 3:
            return Reply.fail(401, "key revoked")
        return Reply(answer={"claims": ["a"]})

    judge.on("Claims", claims)
    result = run_evals(write_items(tmp_path / "d.jsonl", 20), [create_hallucination_scorer()], concurrency=1, store=tmp_path / "r.sqlite", run="r")

    assert result.status == "failed" and result.passed is False
    assert result.stopped_by is not None and "refused the API key" in result.stopped_by
    assert result.counts.outcomes["scored"] == 3 and result.counts.outcomes["error"] == 1
    assert answered["claims"] == 4
    with SQLiteStore(tmp_path / "r.sqlite") as saved:
        assert len(saved.query(run="r", errors=False)) == 3


def test_every_call_has_max_tokens_and_a_cut_off_answer_is_named_not_retried(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    scorer = create_hallucination_scorer(options={"context": ["facts"]})
    scorer.run(output="ok. WRONG")
    # Every call has a limit: the step's (2048, 1024 for a reason), lowered to what the
    # answer's bounds allow (claims of a two-sentence output, one verdict each, a reason).
    limits = {request.schema_name: request.body.get("max_tokens") for request in judge.requests}
    assert set(limits) == {"Claims", "HallucinationVerdicts", "Reason"}
    assert all(0 < limit < 2048 for limit in limits.values()) and limits["Reason"] < 1024, limits

    judge.reset()
    judge.on("Claims", Reply.cut_off('{"claims": ["The first iPhone came out in 2007", "It cost'))
    with pytest.raises(AnswerCutOffError, match=r"step 'preprocess': the judge's answer was cut off at \d+ tokens, the most its bounds allow"):
        scorer.run(output="ok")
    assert len(judge.requests) == 1

    # A step without bounds of its own sends the step's max_tokens, and the message says to raise it.
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "loose.yaml").write_text("title: Claims\ntype: object\nproperties:\n  claims: {type: array, items: {type: string}}\nrequired: [claims]\n")
    (tmp_path / "scorers.yaml").write_text(
        "scorers:\n  loose:\n    extends: hallucination\n    steps:\n      - id: preprocess\n        schema: loose.yaml\n        bounds: {claims: null, \"claims[]\": null}\n", encoding="utf-8"
    )
    judge.reset()
    judge.on("Claims", Reply.cut_off('{"claims": ["The first iPhone came out in 2007", "It cost'))
    with pytest.raises(AnswerCutOffError, match=r"step 'preprocess': the judge's answer was cut off at 2048 tokens; raise max_tokens"):
        load_scorers(tmp_path / "scorers.yaml").create("loose", options={"context": ["facts"]}).run(output="ok")


def test_a_free_text_answer_cut_off_is_named_too(judge: JudgeServer) -> None:
    script_hallucination(judge)
    judge.on("Reason", Reply.cut_off("The score is 0.5 because the claim"))
    scorer = create_hallucination_scorer(options={"context": ["facts"]}, judge=JudgeSettings(mode="md_json"))
    with pytest.raises(AnswerCutOffError, match="cut off"):
        scorer.run(output="ok. WRONG")


@pytest.mark.slow
def test_a_rambling_judge_ends_a_batch_quickly_with_the_named_error(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", Reply.cut_off('{"claims": ["a", "b'))
    started = time.monotonic()

    result = run_evals(write_items(tmp_path / "d.jsonl", 40), [create_hallucination_scorer()], concurrency=4)

    assert time.monotonic() - started < 10
    assert result.status == "failed" and result.stopped_by is not None
    assert "judge calls in a row" in result.stopped_by and "cut off at" in result.stopped_by
    assert len(judge.requests) < 20  # the circuit opened after 10 failures in a row


@pytest.mark.slow
def test_a_hanging_judge_ends_a_20_item_run_in_seconds(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", Reply.hang())
    data, store = write_items(tmp_path / "data.jsonl", 20), tmp_path / "r.sqlite"
    started = time.monotonic()

    result = runner.invoke(app, eval_args(data, store, "--timeout", "1", "--retries", "0"))

    assert time.monotonic() - started < 8
    assert result.exit_code == 1, result.output
    assert "did not answer within 1s per attempt (1 attempt, 1s in all" in result.stderr
    assert len(judge.requests) == 1


def test_timeout_and_retries_come_from_python_yaml_and_the_environment(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge.on("Claims", Reply.hang())
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError, match=r"within 0.5s per attempt \(2 attempts, \d+s in all"):
        create_hallucination_scorer(options={"context": ["c"]}, judge=JudgeSettings(timeout=0.5, retries=1)).run(output="x")
    assert time.monotonic() - started < 5
    assert len(judge.requests) == 2

    monkeypatch.setenv("SCORERS_TIMEOUT", "0.5")
    monkeypatch.setenv("SCORERS_RETRIES", "0")
    judge.reset()
    judge.on("Claims", Reply.hang())
    with pytest.raises(JudgeTimeoutError, match=r"within 0.5s per attempt \(1 attempt"):
        create_hallucination_scorer(options={"context": ["c"]}).run(output="x")

    monkeypatch.delenv("SCORERS_TIMEOUT")
    monkeypatch.delenv("SCORERS_RETRIES")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("scorers:\n  quick:\n    extends: hallucination\n    name: Quick\n    judge:\n      timeout: 0.5\n      retries: 0\n", encoding="utf-8")
    from engine import load_scorers

    judge.reset()
    judge.on("Claims", Reply.hang())
    with pytest.raises(JudgeTimeoutError, match=r"within 0.5s per attempt \(1 attempt"):
        load_scorers(catalog).create("quick", options={"context": ["c"]}).run(output="x")


def test_a_server_that_keeps_failing_opens_the_circuit(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.on("Claims", [Reply(answer={"claims": ["a"]})] + [Reply.fail(500, "overloaded")] * 100)

    result = run_evals(write_items(tmp_path / "d.jsonl", 30), [create_hallucination_scorer(judge=JudgeSettings(retries=0))], concurrency=1)

    assert result.status == "failed"
    assert result.stopped_by is not None and "after 10 judge calls in a row" in result.stopped_by and "HTTP 500" in result.stopped_by
    # The first Claims succeeds, then ten failures in a row open the circuit. Concurrency
    # counts calls, so a second item is in progress beside the first: the first item's two
    # later (successful) calls may each break a run of failures, at most twice.
    assert 11 <= len(judge.requests_for("Claims")) <= 13


def test_an_unsupported_response_format_suggests_another_mode(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", Reply.fail(400, "response_format json_schema is not supported by this server"))
    data, store = write_items(tmp_path / "data.jsonl", 5), tmp_path / "r.sqlite"

    result = runner.invoke(app, eval_args(data, store))

    # One request in the configured mode, one in the mode the judge falls back to; then the run stops.
    assert result.exit_code == 2 and len(judge.requests) == 2
    assert "may not support --mode tools: try --mode json or --mode md_json" in result.stderr


def test_a_judge_that_cannot_be_reached_stops_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-nothing-here-1")
    data, store = write_items(tmp_path / "data.jsonl", 20), tmp_path / "r.sqlite"
    started = time.monotonic()

    result = runner.invoke(app, eval_args(data, store, "--retries", "0"))

    assert time.monotonic() - started < 10
    assert result.exit_code == 2, result.output
    assert f"cannot reach the judge at http://127.0.0.1:{port}/v1" in result.stderr and "is the server running" in result.stderr


def test_a_refused_key_with_two_scorers_counts_the_item_that_met_it(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", Reply.fail(401, "Incorrect API key provided"))
    judge.on("AnswerRelevancyStatements", Reply.fail(401, "Incorrect API key provided"))
    data = [{"id": f"i{n}", "input": "q", "output": "ok", "context": ["facts"]} for n in range(10)]

    result = run_evals(data, [create_hallucination_scorer(), create_scorer("answer-relevancy")])

    assert len(judge.requests) == 1
    assert result.status == "failed" and result.counts.items == 1 and result.counts.failed == 1
    assert {summary.errors for summary in result.summary.values()} == {1}  # never "errors 0" beside a stopped run
