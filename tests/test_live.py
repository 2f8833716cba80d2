"""Live scoring: replies return at once, scoring happens in the background, sampled."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.catalogs import copy_catalog
from helpers.scripted import outputs_judged, script_hallucination

from engine import (
    ConfigError,
    LiveScorer,
    Run,
    SQLiteStore,
    attach_scorers,
    create_hallucination_scorer,
    load_scorers,
)
from engine.testing import JudgeServer


@pytest.fixture
def gate(judge: JudgeServer) -> Iterator[threading.Event]:
    """A judge that holds every claims answer until the test opens the gate."""
    opened = threading.Event()
    script_hallucination(judge, gate=opened)
    yield opened
    opened.set()


def call_in_thread(function: Any, *args: Any) -> Any:
    """Call `function` on a thread and fail (instead of hanging) if it does not return."""
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("value", function(*args)), daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the agent call blocked on scoring"
    return outcome["value"]


def test_the_reply_returns_while_the_judge_is_still_busy(judge: JudgeServer, gate: threading.Event, tmp_path: Path) -> None:
    live = LiveScorer([create_hallucination_scorer(options={"context": ["facts"]})], store=tmp_path / "live.sqlite")

    @live
    def agent(question: str) -> str:
        return f"answer to {question}"

    reply = call_in_thread(agent, "q1")

    assert reply == "answer to q1"
    assert live.stats.pending == 1 and live.stats.scored["hallucination"] == 0
    gate.set()
    assert live.flush(timeout=10)
    assert live.stats.scored["hallucination"] == 1
    live.close()
    with SQLiteStore(tmp_path / "live.sqlite") as store:
        (saved,) = store.query(source="live")
    assert (saved.run, saved.input, saved.output, saved.score) == ("live", "q1", "answer to q1", 0.0)


async def test_an_async_agent_is_not_held_up_either(judge: JudgeServer, gate: threading.Event) -> None:
    live = LiveScorer([create_hallucination_scorer(options={"context": ["facts"]})])

    @live
    async def agent(question: str) -> str:
        return "ok. WRONG"

    reply = await asyncio.wait_for(agent("q"), timeout=10)

    assert reply == "ok. WRONG" and live.stats.pending == 1
    gate.set()
    assert await live.aflush(timeout=10)
    (result,) = live.results
    assert result.score == 0.5
    live.close()


def test_a_full_queue_drops_and_counts_instead_of_blocking(judge: JudgeServer, gate: threading.Event) -> None:
    live = LiveScorer([create_hallucination_scorer(options={"context": ["facts"]})], queue_size=2, concurrency=1)
    agent = live.wrap(lambda question: f"answer {question}")

    replies = [call_in_thread(agent, f"q{n}") for n in range(5)]

    assert replies == [f"answer q{n}" for n in range(5)]
    assert (live.stats.queued, live.stats.dropped, live.stats.pending) == (2, 3, 2)
    gate.set()
    assert live.flush(timeout=10)
    assert live.stats.scored["hallucination"] == 2
    assert sorted(outputs_judged(judge)) == ["answer q0", "answer q1"]
    live.close()


def test_sampling_scores_a_share_of_replies_per_scorer(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    catalog = load_scorers(copy_catalog(tmp_path, "always", "sometimes", "never"))
    scorers = [catalog.create(scorer_id, options={"context": ["facts"]}) for scorer_id in ("always", "sometimes", "never")]
    agent = attach_scorers(lambda question: f"ok {question}", scorers, sampling={"sometimes": 0.3, "never": 0.0}, seed=7)

    for n in range(40):
        agent(f"q{n}")
    assert agent.live.flush(timeout=30)

    stats = agent.live.stats
    assert stats.calls == 40
    assert stats.scored["always"] == 40
    assert 0 < stats.scored["sometimes"] < 40 and stats.scored["sometimes"] == stats.sampled["sometimes"]
    assert stats.scored["never"] == 0
    # Every reply's claims were asked for; the two scorers that judged one reply asked the same
    # question, sent once when both were in flight (see the shared-requests tests).
    judged = outputs_judged(judge)
    assert len(set(judged)) == 40 and len(judged) <= 40 + stats.scored["sometimes"]
    agent.live.close()


def test_a_judge_failure_is_logged_and_recorded_never_raised(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script_hallucination(judge)
    seen: list[Any] = []
    agent = attach_scorers(lambda question: "FAIL", [create_hallucination_scorer(options={"context": ["facts"]})], store=tmp_path / "live.sqlite", on_result=seen.append)

    with caplog.at_level(logging.WARNING, logger="engine.live"):
        assert agent("q") == "FAIL"
        assert agent.live.flush(timeout=10)

    assert agent.live.stats.errors["hallucination"] == 1
    (failure,) = agent.live.errors
    assert "HTTP 400" in (failure.error or "") and seen == [failure]
    assert any("HTTP 400" in message for message in caplog.messages)
    agent.live.close()
    with SQLiteStore(tmp_path / "live.sqlite") as store:
        (saved,) = store.query(errors=True)
    assert saved.error_stage == "scorer" and saved.score is None


def test_context_comes_from_the_tool_results_in_the_agents_messages(judge: JudgeServer) -> None:
    script_hallucination(judge)
    transcript = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"temp_c": 21}'},
        {"role": "assistant", "content": "It is 21 degrees. WRONG and sunny"},
    ]
    agent = attach_scorers(lambda question: transcript, [create_hallucination_scorer()])

    agent("Weather in Paris?")
    assert agent.live.flush(timeout=10)

    (result,) = agent.live.results
    assert result.error is None and result.score == 0.5
    assert result.context == [json.dumps({"tool": "weather", "result": {"temp_c": 21}})]
    (analyze,) = judge.requests_for("HallucinationVerdicts")
    assert '"temp_c": 21' in analyze.prompt
    agent.live.close()


def test_get_context_gives_the_context_of_a_reply(judge: JudgeServer) -> None:
    script_hallucination(judge)

    async def get_context(run: Run, step: str) -> list[str]:
        return [f"facts about {run.input}"]

    agent = attach_scorers(lambda question: "ok", [create_hallucination_scorer()], get_context=get_context)
    agent("Paris")
    assert agent.live.flush(timeout=10)

    assert agent.live.results[0].context == ["facts about Paris"]
    assert "facts about Paris" in judge.requests_for("HallucinationVerdicts")[0].prompt
    agent.live.close()


def test_agent_objects_keep_their_interface(judge: JudgeServer) -> None:
    script_hallucination(judge)

    class Agent:
        name = "helper"

        def generate(self, question: str) -> dict[str, Any]:
            return {"text": f"reply to {question}", "finish_reason": "stop"}

    agent = attach_scorers(Agent(), [create_hallucination_scorer(options={"context": ["facts"]})])

    assert agent.generate("q") == {"text": "reply to q", "finish_reason": "stop"}
    assert agent.name == "helper" and not hasattr(agent, "agenerate")
    assert agent.live.flush(timeout=10)
    assert outputs_judged(judge) == ["reply to q"]
    agent.live.close()


def test_after_close_replies_are_still_returned_and_counted_as_dropped(judge: JudgeServer) -> None:
    script_hallucination(judge)
    agent = attach_scorers(lambda question: "ok", [create_hallucination_scorer(options={"context": ["facts"]})])
    agent.live.close()

    assert agent("q") == "ok"
    assert agent.live.stats.dropped == 1 and judge.requests == []


def test_setup_mistakes_are_said_at_once() -> None:
    with pytest.raises(ConfigError, match="no judge configured"):
        LiveScorer([create_hallucination_scorer()])


def test_sampling_rates_are_checked(judge: JudgeServer) -> None:
    scorer = create_hallucination_scorer()
    with pytest.raises(ConfigError, match="between 0 and 1"):
        LiveScorer([scorer], sampling=1.5)
    with pytest.raises(ConfigError, match="faithfulness"):
        LiveScorer([scorer], sampling={"faithfulness": 0.5})
