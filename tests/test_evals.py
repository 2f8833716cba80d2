"""Batch evaluation through the loopback judge: bound, order, errors, resume."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.catalogs import copy_catalog
from helpers.scripted import between, outputs_judged, script_hallucination

from engine import (
    ConfigError,
    ItemResult,
    SQLiteStore,
    arun_evals,
    create_hallucination_scorer,
    load_scorers,
    run_evals,
)
from engine.testing import JudgeServer, Reply, Request


def items(*outputs: str) -> list[dict[str, Any]]:
    return [{"id": f"item-{n}", "input": f"question {n}", "output": output, "context": ["the facts"]} for n, output in enumerate(outputs)]


def test_mean_per_scorer_and_results_in_input_order(judge: JudgeServer) -> None:
    script_hallucination(judge)
    # The first item's claims come back last, so completion order differs from input order.
    judge.on("Claims", lambda request: Reply(answer={"claims": ["slow", "WRONG"]}, delay=0.4) if "first" in between(request.prompt, "output") else Reply(answer={"claims": [between(request.prompt, "output")]}))
    data = items("first. WRONG", "ok", "WRONG", "fine", "WRONG again", "good")
    completed: list[str] = []

    result = run_evals(data, [create_hallucination_scorer()], on_item_complete=lambda item: completed.append(item.id), concurrency=3)

    assert [item.id for item in result.items] == [f"item-{n}" for n in range(6)]
    assert [item.results["hallucination"].score for item in result.items] == [0.5, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert result.scores == {"hallucination": pytest.approx(2.5 / 6)}
    assert sorted(completed) == sorted(item.id for item in result.items)
    summary = result.summary["hallucination"]
    assert (summary.count, summary.min, summary.max, summary.errors) == (6, 0.0, 1.0, 0)
    assert result.counts.items == result.counts.completed == 6


def test_callback_gets_item_reply_and_step_results_and_may_be_async(judge: JudgeServer) -> None:
    script_hallucination(judge)
    seen: list[ItemResult] = []

    async def on_item_complete(item: ItemResult) -> None:
        await asyncio.sleep(0)
        seen.append(item)

    run_evals(items("ok. WRONG"), [create_hallucination_scorer()], on_item_complete=on_item_complete)

    (item,) = seen
    assert item.item is not None and item.item.input == "question 0"
    assert item.output == "ok. WRONG"
    outcome = item.results["hallucination"]
    assert outcome.score == 0.5 and outcome.reason == "scripted reason"
    assert outcome.steps["preprocess"].result == {"claims": ["ok", "WRONG"]}
    assert [verdict["verdict"] for verdict in outcome.steps["analyze"].result["verdicts"]] == ["no", "yes"]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_target_calls_and_scorer_runs_share_one_bound(judge: JudgeServer, tmp_path: Path, concurrency: int) -> None:
    script_hallucination(judge, delay=0.02)
    catalog = load_scorers(copy_catalog(tmp_path, "copy_a", "copy_b"))
    scorers = [catalog.create("copy_a"), catalog.create("copy_b")]
    lock = threading.Lock()
    active = {"targets": 0, "most": 0}

    async def target(question: str) -> str:
        with lock:
            active["targets"] += 1
            # Units in flight now: target calls plus judge requests (each scorer run has at
            # most one judge request open at a time).
            active["most"] = max(active["most"], active["targets"] + judge.in_flight)
        await asyncio.sleep(0.02)
        with lock:
            active["targets"] -= 1
        return f"answer to {question}. WRONG"

    def watch(request: Request) -> Reply:
        with lock:
            active["most"] = max(active["most"], active["targets"] + judge.in_flight)
        return Reply(answer={"claims": claims_for(request)}, delay=0.02)

    def claims_for(request: Request) -> list[str]:
        return between(request.prompt, "output").split(". ")

    judge.on("Claims", watch)
    data = [{"input": f"q{n}", "context": ["facts"]} for n in range(6)]

    result = run_evals(data, scorers, target=target, concurrency=concurrency, cache=False)  # every request reaches the server

    assert result.counts.completed == 6 and not result.errors
    assert judge.max_in_flight <= concurrency
    assert active["most"] <= concurrency
    if concurrency > 1:  # the bound is also used, not just respected
        assert judge.max_in_flight > 1


def test_data_is_read_lazily_a_bounded_window_ahead(judge: JudgeServer) -> None:
    script_hallucination(judge)
    pulled = {"count": 0}
    done = {"count": 0}
    ahead: list[int] = []

    def data() -> Iterator[dict[str, Any]]:
        for n in range(20):
            pulled["count"] += 1
            yield {"input": f"q{n}", "output": f"answer {n}", "context": ["facts"]}

    def on_item_complete(item: ItemResult) -> None:
        done["count"] += 1
        ahead.append(pulled["count"] - done["count"])

    result = run_evals(data(), [create_hallucination_scorer()], on_item_complete=on_item_complete, concurrency=2, keep_results=False)

    assert result.counts.completed == 20 and result.items == []
    assert max(ahead) <= 2 * 2 + 1  # never the whole data set in memory


@pytest.mark.parametrize("kind", ["sync", "async", "generate", "agenerate"])
def test_any_kind_of_target_produces_the_reply_that_is_judged(judge: JudgeServer, kind: str) -> None:
    script_hallucination(judge)

    def reply(question: str) -> str:
        return f"reply to {question}"

    async def areply(question: str) -> str:
        return f"reply to {question}"

    class Agent:
        def generate(self, question: str) -> dict[str, Any]:  # a result object, as agent SDKs return
            return {"text": f"reply to {question}", "usage": {}}

    class AsyncAgent:
        async def agenerate(self, question: str) -> list[dict[str, Any]]:
            return [{"role": "user", "content": question}, {"role": "assistant", "content": f"reply to {question}"}]

    target = {"sync": reply, "async": areply, "generate": Agent(), "agenerate": AsyncAgent()}[kind]
    data = [{"input": "q1", "context": ["facts"]}, {"input": "q2", "context": ["facts"]}]

    result = run_evals(data, [create_hallucination_scorer()], target=target)

    assert sorted(outputs_judged(judge)) == ["reply to q1", "reply to q2"]
    assert result.counts.completed == 2


def test_items_with_output_do_not_call_the_target(judge: JudgeServer) -> None:
    script_hallucination(judge)
    calls: list[str] = []

    def target(question: str) -> str:
        calls.append(question)
        return "from the target"

    data = [{"input": "q1", "output": "given", "context": ["facts"]}, {"input": "q2", "context": ["facts"]}]
    run_evals(data, [create_hallucination_scorer()], target=target)

    assert calls == ["q2"]
    assert sorted(outputs_judged(judge)) == ["from the target", "given"]


def test_one_items_failure_is_recorded_and_never_stops_the_others(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)

    def target(question: str) -> str:
        if question == "explode":
            raise RuntimeError("the agent crashed")
        if question == "judge fails":
            return "FAIL"
        return f"answer. WRONG {question}"

    data: list[Any] = [
        {"input": "a", "context": ["facts"]},
        {"input": "explode", "context": ["facts"]},
        42,
        {"input": "judge fails", "context": ["facts"]},
        {"input": "no context"},
        {"input": "b", "context": ["facts"]},
    ]
    store = tmp_path / "results.sqlite"
    result = run_evals(data, [create_hallucination_scorer()], target=target, store=store, run="r")

    scores = [item.results["hallucination"].score if item.results else None for item in result.items]
    assert scores == [0.5, None, None, None, None, 0.5]
    assert result.scores == {"hallucination": 0.5}
    causes = {(error.index, error.stage): error.error for error in result.errors}
    assert causes[(1, "target")] == "RuntimeError: the agent crashed"
    assert "an item must be an object" in causes[(2, "item")]
    assert "HTTP 400" in causes[(3, "scorer")] and "preprocess" in causes[(3, "scorer")]
    # No context is not the judge's failure: the item is not scorable, with the reason.
    assert (4, "scorer") not in causes
    assert "needs a context" in (result.items[4].results["hallucination"].not_scorable or "")
    assert (result.counts.items, result.counts.completed, result.counts.failed) == (6, 3, 3)
    assert result.counts.outcomes == {"scored": 2, "error": 3, "not_scorable": 1}
    # Every failure counts, whatever stage it failed at (the unreadable item too).
    assert result.summary["hallucination"].errors == 3 and result.summary["hallucination"].not_scorable == 1
    assert result.status == "incomplete" and result.passed is False
    with SQLiteStore(store) as saved:
        failures = saved.query(run="r", errors=True)
        assert {record.error_stage for record in failures} == {"item", "target", "scorer"}
        assert saved.get_run("r").status == "incomplete"  # type: ignore[union-attr]


def test_thresholds_give_a_verdict_in_the_scorers_direction(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = items("ok. WRONG", "ok")  # mean 0.25, lower is better
    scorer = create_hallucination_scorer()

    assert run_evals(data, [scorer], thresholds={"hallucination": 0.3}).passed is True
    failing = run_evals(data, [scorer], thresholds={"hallucination": 0.2})
    assert failing.passed is False and failing.summary["hallucination"].passed is False
    assert run_evals(data, [scorer]).passed is True  # no threshold: nothing failed
    with pytest.raises(ConfigError, match="faithfulness"):
        run_evals(data, [scorer], thresholds={"faithfulness": 0.5})


def test_a_threshold_fails_when_nothing_could_be_scored(judge: JudgeServer) -> None:
    script_hallucination(judge)
    result = run_evals(items("FAIL"), [create_hallucination_scorer()], thresholds={"hallucination": 1.0})
    assert result.scores == {"hallucination": None}
    assert result.passed is False


def test_no_judge_configured_fails_before_any_item(tmp_path: Path) -> None:
    calls: list[str] = []
    with pytest.raises(ConfigError, match="no judge configured .* OPENAI_API_KEY"):
        run_evals([{"input": "q"}], [create_hallucination_scorer()], target=calls.append, store=tmp_path / "r.sqlite")
    assert calls == []
    assert not (tmp_path / "r.sqlite").exists()


def test_interrupted_run_resumes_with_only_the_missing_items(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.05)
    store = tmp_path / "results.sqlite"
    data = [{"input": f"q{n}", "context": ["facts"]} for n in range(10)]
    targeted: list[str] = []

    def target(question: str) -> str:
        targeted.append(question)
        return f"answer to {question}. WRONG"

    async def interrupted() -> None:
        finished = asyncio.Event()
        count = {"items": 0}

        def on_item_complete(item: ItemResult) -> None:
            count["items"] += 1
            if count["items"] == 4:
                finished.set()

        task = asyncio.create_task(arun_evals(data, [create_hallucination_scorer()], target=target, on_item_complete=on_item_complete, concurrency=2, store=store, run="nightly"))
        await finished.wait()
        task.cancel()  # what Ctrl-C does to a running asyncio program
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    with SQLiteStore(store) as saved:
        run = saved.get_run("nightly")
        assert run is not None and run.status == "interrupted"
        done_before = {record.item_id for record in saved.query(run="nightly", errors=False)}
    assert 4 <= len(done_before) < 10
    judge.requests.clear()
    targeted.clear()

    result = run_evals(data, [create_hallucination_scorer()], target=target, concurrency=2, store=store, run="nightly")

    assert result.counts.resumed == len(done_before)
    assert len(targeted) == 10 - len(done_before)
    assert len(outputs_judged(judge)) == 10 - len(done_before)
    assert [item.results["hallucination"].score for item in result.items] == [0.5] * 10
    assert {item.id for item in result.items if item.resumed} == done_before
    with SQLiteStore(store) as saved:
        assert saved.get_run("nightly").status == "complete"  # type: ignore[union-attr]
        assert len(saved.query(run="nightly")) == 10


def test_a_run_cancelled_while_a_batch_is_being_written_keeps_that_batch(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_hallucination(judge, delay=0.05)
    store = tmp_path / "results.sqlite"
    data = [{"input": f"q{n}", "output": f"answer {n}. WRONG", "context": ["facts"]} for n in range(40)]
    writing = threading.Event()
    save_many = SQLiteStore.save_many

    def slow_to_save(self: SQLiteStore, records: Any) -> None:
        writing.set()
        threading.Event().wait(1.0)  # the batch is on its way when Ctrl-C comes
        save_many(self, records)

    monkeypatch.setattr(SQLiteStore, "save_many", slow_to_save)

    async def cancelled_mid_write() -> None:
        task = asyncio.create_task(arun_evals(data, [create_hallucination_scorer()], concurrency=2, store=store, run="nightly"))
        while not writing.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_mid_write())
    with SQLiteStore(store) as saved:
        kept = saved.query(run="nightly", errors=False)
    assert kept, "the batch being written when the run was cancelled was lost (its store was closed under it)"


def test_rerun_scores_failed_items_again_and_reuses_the_saved_reply(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    catalog = load_scorers(copy_catalog(tmp_path, "copy_a", "copy_b"))
    scorers = [catalog.create("copy_a", model="openai/model-a"), catalog.create("copy_b", model="openai/model-b")]
    judge_b_down = True

    def claims(request: Request) -> Reply:
        if judge_b_down and request.body["model"] == "model-b":
            return Reply.fail(400, "judge down")
        return Reply(answer={"claims": [between(request.prompt, "output")]})

    script_hallucination(judge)
    judge.on("Claims", claims)
    replies = iter(["reply one", "reply two"])
    data = [{"id": "x", "input": "q", "context": ["facts"]}]
    first = run_evals(data, scorers, target=lambda question: next(replies), store=store, run="r")
    assert [outcome.ok for outcome in first.items[0].results.values()] == [True, False]

    judge_b_down = False
    judge.requests.clear()
    second = run_evals(data, scorers, target=lambda question: next(replies), store=store, run="r")

    # Only the failed scorer ran again, and on the reply the other scorer judged.
    assert [request.body["model"] for request in judge.requests_for("Claims")] == ["model-b"]
    assert outputs_judged(judge) == ["reply one"]
    assert [outcome.resumed for outcome in second.items[0].results.values()] == [True, False]
    assert all(outcome.ok for outcome in second.items[0].results.values())
    assert second.items[0].output == "reply one"


def test_resuming_refuses_results_from_another_judge(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"
    run_evals(items("ok"), [create_hallucination_scorer(model="openai/model-a")], store=store, run="r")
    with pytest.raises(ConfigError, match=r"another definition or judge.*start it over \(replace=\)"):
        run_evals(items("ok", "more"), [create_hallucination_scorer(model="openai/model-b")], store=store, run="r")


def test_jsonl_data_streams_and_bad_lines_are_item_errors(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    path = tmp_path / "data.jsonl"
    lines = [json.dumps(item) for item in items("ok", "WRONG")]
    path.write_text(lines[0] + "\n{not json\n\n" + lines[1] + "\n", encoding="utf-8")

    result = run_evals(path, [create_hallucination_scorer()])

    assert [item.results["hallucination"].outcome for item in result.items] == ["scored", "error", "scored"]
    assert [item.line for item in result.items] == [1, 2, 4]
    assert result.scores == {"hallucination": 0.5}
    (error,) = result.errors
    assert error.stage == "item" and f"{path}:2: not valid JSON" in error.error and error.line == 2


def test_items_without_id_are_recognised_by_content_on_resume(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"
    data = [{"input": "q", "output": "ok", "context": ["facts"], "label": "faithful"}]
    first = run_evals(data, [create_hallucination_scorer()], store=store, run="r")
    assert first.items[0].item is not None and first.items[0].item.metadata == {"label": "faithful"}
    judge.requests.clear()

    second = run_evals([*data, {**data[0], "output": "other"}], [create_hallucination_scorer()], store=store, run="r")

    assert [item.resumed for item in second.items] == [True, False]
    assert outputs_judged(judge) == ["other"]


async def test_async_core_and_sync_wrapper_inside_a_running_loop(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = items("WRONG")
    assert (await arun_evals(data, [create_hallucination_scorer()])).scores == {"hallucination": 1.0}
    # The sync wrapper also works from code that already runs an event loop.
    assert run_evals(data, [create_hallucination_scorer()]).scores == {"hallucination": 1.0}


def test_agreement_with_human_scores_is_measured(judge: JudgeServer) -> None:
    """What a prompt tuner reads after a change: does the judge order the items as humans do?"""
    script_hallucination(judge)
    labelled = [
        {"id": "a", "output": "ok", "context": ["c"], "expected": {"hallucination": 0}},
        {"id": "b", "output": "WRONG", "context": ["c"], "expected": {"hallucination": 1}},
        {"id": "c", "output": "ok. WRONG", "context": ["c"], "expected": {"hallucination": 1}},
        {"id": "d", "output": "ok. ok", "context": ["c"]},  # no human score: not counted
    ]
    agreement = run_evals(labelled, [create_hallucination_scorer()]).summary["hallucination"].agreement
    assert agreement is not None and agreement.numeric is not None
    assert agreement.labelled == 3
    assert agreement.numeric.spearman.value == 0.866  # judge 0, 1, 0.5 against humans 0, 1, 1
    assert agreement.numeric.mean_abs_error.value == round(0.5 / 3, 4)

    inverted = [{**item, "expected": {"hallucination": 1 - item["expected"]["hallucination"]}} for item in labelled[:3]]
    numeric = run_evals(inverted, [create_hallucination_scorer()]).summary["hallucination"].agreement.numeric
    assert numeric.spearman.value == -0.866
    assert run_evals(labelled[3:], [create_hallucination_scorer()]).summary["hallucination"].agreement is None
