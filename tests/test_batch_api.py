"""Batch runs through the provider's Batch API, against the loopback server's /v1/files and
/v1/batches: one job per step, answers validated and re-asked, failed and expired lines
asked again or recorded, and a stopped run resumed without paying twice."""

from __future__ import annotations

from engine.judge import JudgeSettings
import asyncio
import json
from pathlib import Path

import pytest
from helpers.scripted import between, outputs_judged, script_hallucination
from typer.testing import CliRunner

from engine import SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.runs import BatchProgress, arun_batch_api, run_batch_api
from engine.testing import JudgeServer, Reply, Request

runner = CliRunner()
FAST = {"poll_interval": 0.01, "settle": 0.05}


def items(count: int, fail: tuple[int, ...] = ()) -> list[dict[str, object]]:
    return [
        {"id": f"i{n}", "input": f"q{n}", "output": "FAIL" if n in fail else (f"ok {n}. WRONG" if n % 2 else f"ok {n}"), "context": ["facts"]}
        for n in range(count)
    ]


def batch_lines(judge: JudgeServer) -> list[list[dict[str, object]]]:
    """The request lines of every batch created, in order."""
    return [batch["_lines"] for batch in judge.batches.values()]


def test_each_step_of_every_item_goes_out_as_one_batch_job_and_scores_as_a_live_run(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    live = run_evals(items(6), [create_hallucination_scorer()], cache=False)
    judge.requests.clear()

    result = run_batch_api(items(6), [create_hallucination_scorer()], run="nightly", store=tmp_path / "r.sqlite", **FAST)

    assert result.scores == live.scores and result.counts.completed == 6
    lines = batch_lines(judge)
    # preprocess, analyze, generate_reason: one job each, every item in it.
    assert [len(job) for job in lines] == [6, 6, 6]
    first = lines[0][0]
    assert first["method"] == "POST" and first["url"] == "/v1/chat/completions"
    body = first["body"]
    assert isinstance(body, dict) and body["model"] == "gpt-4o-mini" and body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["name"] == "Claims"
    assert "properties" in body["response_format"]["json_schema"]["schema"]
    assert not [request for request in judge.requests if request.headers]  # no live call was made
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        records = {record.item_id: record for record in store.query(run="nightly")}
        jobs = store.batch_jobs("nightly")
    assert records["i1"].score == 0.5 and records["i1"].steps["preprocess"].result == {"claims": ["ok 1", "WRONG"]}
    assert records["i1"].total_tokens == 180  # usage of every line, as for live calls
    assert [job.status for job in jobs] == ["completed"] * 3 and sum(job.requests for job in jobs) == 18


def test_identical_questions_in_a_run_are_one_line_of_a_job(judge: JudgeServer) -> None:
    script_hallucination(judge)
    same = [{"id": f"i{n}", "output": "ok. WRONG", "context": ["facts"]} for n in range(3)]

    result = run_batch_api(same, [create_hallucination_scorer()], run="r", store=None, **FAST)

    assert result.scores == {"hallucination": 0.5} and result.counts.completed == 3
    assert [len(job) for job in batch_lines(judge)] == [1, 1, 1]


def test_failed_lines_are_asked_again_or_recorded_and_bad_answers_re_asked(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    flaky = {"count": 0}

    def claims(request: Request) -> Reply | dict[str, object]:
        output = between(request.prompt, "output")
        if output == "FAIL":
            return Reply.fail(400, "scripted judge failure")  # a request error: recorded, not retried
        if output == "ok 0" and flaky["count"] == 0:
            flaky["count"] += 1
            return Reply.fail(500, "overloaded")  # a server error: asked again in the next job
        if output.endswith("WRONG") and not request.is_reask:
            return {"claims": "not a list"}  # refused by the schema: re-asked with the reason
        return {"claims": [claim.strip() for claim in output.split(". ")]}

    judge.on("Claims", claims)
    result = run_batch_api(items(4, fail=(2,)), [create_hallucination_scorer()], run="r", store=tmp_path / "r.sqlite", **FAST)

    assert (result.counts.completed, result.counts.failed) == (3, 1)
    (error,) = result.errors
    assert error.item_id == "i2" and "HTTP 400" in error.error and "scripted judge failure" in error.error
    reasks = [request for request in judge.requests_for("Claims") if request.is_reask]
    assert len(reasks) == 2 and "Your answer was refused: claims" in reasks[0].messages[-1]["content"]
    assert len(batch_lines(judge)[0]) == 4 and len(batch_lines(judge)[1]) == 3  # the 500 line and both re-asks went again
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        (failed,) = store.query(run="r", errors=True)
    assert failed.item_id == "i2" and failed.error_stage == "scorer"


def test_the_lines_of_an_expired_batch_go_out_again(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.expire_next_batch(answered=2)
    states: list[str] = []

    result = run_batch_api(items(5), [create_hallucination_scorer()], run="r", store=tmp_path / "r.sqlite", on_progress=lambda p: states.append(p.status), **FAST)

    assert result.counts.completed == 5
    first, second = batch_lines(judge)[:2]
    schemas = [line["body"]["response_format"]["json_schema"]["name"] for line in second]  # type: ignore[index]
    # The three expired Claims lines went again, beside the next step of the two answered items.
    assert len(first) == 5 and sorted(schemas) == ["Claims"] * 3 + ["HallucinationVerdicts"] * 2
    assert "expired" in states
    assert sorted(outputs_judged(judge)) == sorted(item["output"] for item in items(5))  # type: ignore[type-var]


def test_a_run_stopped_between_two_polls_resumes_polling_instead_of_paying_twice(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.batch_polls_in_progress = 3
    store = tmp_path / "r.sqlite"
    seen: list[BatchProgress] = []

    async def stopped_after_the_first_poll() -> None:
        task = asyncio.create_task(arun_batch_api(items(4), [create_hallucination_scorer()], run="r", store=store, on_progress=seen.append, **FAST))
        while not any(progress.status == "in_progress" for progress in seen):
            await asyncio.sleep(0.005)
        task.cancel()  # Ctrl-C between two polls of the first job
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stopped_after_the_first_poll())
    with SQLiteStore(store) as saved:
        (job,) = saved.batch_jobs("r")
        assert job.status == "in_progress" and saved.get_run("r").status == "interrupted"  # type: ignore[union-attr]

    seen.clear()
    result = run_batch_api(items(4), [create_hallucination_scorer()], run="r", store=store, on_progress=seen.append, **FAST)

    assert result.counts.completed == 4
    assert seen[0].batch_id == job.batch_id and seen[0].resumed  # polled the job it had paid for
    assert len(judge.batches) == 3  # that job, then analyze and generate_reason: step one was not sent twice
    assert len(outputs_judged(judge)) == 4


def test_the_command_line_runs_a_batch_api_run_and_shows_each_jobs_state(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items(3)), encoding="utf-8")

    result = runner.invoke(
        app,
        ["eval", str(data), "--scorer", "hallucination", "--reasons", "always", "--batch-api", "--poll-interval", "0.01", "--store", str(tmp_path / "r.sqlite"), "--run", "b"],
    )

    assert result.exit_code == 0, result.output
    assert "): in_progress, 0/3 answered, 0 failed" in result.stderr and "): completed, 3/3 answered, 0 failed" in result.stderr
    assert "Saved as run b" in result.stdout and len(judge.batches) == 3


def test_a_computed_scorer_beside_a_judged_one_runs_as_it_is(judge: JudgeServer, tmp_path: Path) -> None:
    from engine import create_scorer

    script_hallucination(judge)
    scorers = [create_hallucination_scorer(), create_scorer("keyword-coverage")]

    result = run_batch_api(items(3), scorers, run="r", store=tmp_path / "r.sqlite", **FAST)

    assert result.counts.completed == 3 and result.summary["keyword-coverage"].count == 3
    assert [len(job) for job in batch_lines(judge)] == [3, 3, 3]  # only the judged scorer's steps went out


def test_a_jurys_judges_each_send_their_own_jobs(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    jury = create_hallucination_scorer(judge=JudgeSettings(models=["openai/judge-a", "openai/judge-b"]))

    result = run_batch_api(items(3), [jury], run="r", store=tmp_path / "r.sqlite", **FAST)

    assert result.counts.completed == 3 and result.scores == {"hallucination": 0.5 * 1 / 3}
    models = sorted({line["body"]["model"] for job in batch_lines(judge) for line in job})  # type: ignore[index]
    assert models == ["judge-a", "judge-b"] and len(judge.batches) == 6  # three steps for each judge
    with SQLiteStore(tmp_path / "r.sqlite") as store:
        assert all(len(record.judges or []) == 2 for record in store.query(run="r"))


def live_calls(judge: JudgeServer) -> list[Request]:
    return [request for request in judge.requests if request.headers]  # batch lines carry no HTTP headers


def test_the_response_cache_answers_what_it_knows_and_keeps_every_batch_answer(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    first = run_batch_api(items(4), [create_hallucination_scorer()], run="first", store=store, **FAST)
    assert len(judge.batches) == 3 and first.summary["hallucination"].judge_calls == 12

    again = run_batch_api(items(4), [create_hallucination_scorer()], run="second", store=store, **FAST)
    live = run_evals(items(4), [create_hallucination_scorer()])

    assert len(judge.batches) == 3 and not live_calls(judge)  # no new job, no live call: every answer was kept
    assert again.scores == live.scores == first.scores
    assert again.summary["hallucination"].judge_calls == 0 and again.summary["hallucination"].cached_calls == 12

    judge.requests.clear()
    run_evals(items(6), [create_hallucination_scorer()], cache=False)  # two new items, answered live ...
    warmed = run_batch_api(items(6), [create_hallucination_scorer()], run="third", store=store, **FAST)
    # ... but without the cache, so the batch asks for those two only
    assert [len(job) for job in batch_lines(judge)[3:]] == [2, 2, 2] and warmed.counts.completed == 6


def test_a_step_too_big_for_one_job_is_cut_into_jobs_within_the_providers_limits(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.batch_max_bytes, judge.batch_max_requests = 6_000, 3
    data = items(7)
    data[5]["output"] = "x" * 8_000  # no job can take this one's request
    refused = run_batch_api(data, [create_hallucination_scorer()], run="too-big", store=None, **FAST)
    assert not judge.batches  # the server refused the one job it was sent, the items failed ...
    assert refused.counts.failed == 7 and "HTTP 400 submitting a batch: a batch takes at most 3 requests" in refused.errors[0].error

    result = run_batch_api(data, [create_hallucination_scorer()], run="cut", store=None, max_job_bytes=6_000, max_job_requests=3, **FAST)

    sizes = [len(judge.files[batch["input_file_id"]][1]) for batch in judge.batches.values()]
    assert sizes and max(sizes) <= 6_000
    lines = batch_lines(judge)
    assert all(len(job) <= 3 for job in lines) and sum(len(job) for job in lines) == 18  # 6 items, 3 steps each
    assert (result.counts.completed, result.counts.failed) == (6, 1)
    (error,) = result.errors
    assert error.item_id == "i5" and "more than a Batch API job takes (6,000)" in error.error


def test_a_batch_costs_the_batch_price_in_the_run_its_results_and_its_estimate(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    live = run_evals(items(4), [create_hallucination_scorer()], cache=False, run="live", store=store)
    batch = run_batch_api(items(4), [create_hallucination_scorer()], run="batch", store=store, cache=False, **FAST)

    live_cost, batch_cost = live.summary["hallucination"].cost_usd, batch.summary["hallucination"].cost_usd
    assert live.summary["hallucination"].usage == batch.summary["hallucination"].usage
    assert live_cost and batch_cost == pytest.approx(live_cost / 2)

    shown = runner.invoke(app, ["results", "--run", "batch", "--store", str(store), "--json"])
    assert shown.exit_code == 0, shown.output
    (usage,) = json.loads(shown.stdout)["usage"]
    assert usage["batch_api"] is True and usage["cost_usd"] == pytest.approx(batch_cost)
    table = runner.invoke(app, ["results", "--run", "batch", "--store", str(store)], env={"COLUMNS": "200"})
    assert "hallucination (batch API)" in table.stdout

    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items(4)), encoding="utf-8")
    estimates = [
        json.loads(runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--estimate", "--json", *flag]).stdout)["cost_usd"]
        for flag in ([], ["--batch-api"])
    ]
    assert estimates[0] and estimates[1] == pytest.approx(estimates[0] / 2)


def test_a_budget_is_refused_for_a_batch_api_run_which_it_could_not_stop(judge: JudgeServer, tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps(items(1)[0]) + "\n", encoding="utf-8")

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--batch-api", "--max-cost", "1"])

    assert result.exit_code == 2 and "--max-cost cannot stop a Batch API job" in result.stderr and not judge.requests


def test_both_stores_price_the_batch_api_steps_of_a_run_apart_from_its_live_ones(judge: JudgeServer, tmp_path: Path, postgres_url: str) -> None:
    from engine.store import open_store

    script_hallucination(judge)
    for where in (str(tmp_path / "r.sqlite"), postgres_url):
        # Two items through the Batch API, then the run resumed live with two more.
        run_batch_api(items(2), [create_hallucination_scorer()], run="mixed", store=where, cache=False, **FAST)
        run_evals(items(4), [create_hallucination_scorer()], run="mixed", store=where, cache=False)
        store = open_store(where)
        assert store is not None
        try:
            rows = {row.batch: row for row in store.usage("mixed")}
        finally:
            store.close()
        assert sorted(rows) == [False, True] and rows[True].judge_calls == rows[False].judge_calls == 6
        assert rows[True].prompt_tokens == rows[False].prompt_tokens > 0
