"""Computed scorers the way agents are run: batches of conversation items with expected
trajectories, live scoring sampled by run id and filtered on metadata, and a long eval
that streams in flat memory."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.streamed_memory import streamed
from typer.testing import CliRunner

import engine
from engine import LiveScorer, run_evals
from engine.cli import app
from engine.runs.live.scorer import sample_point
from engine.testing import JudgeServer

CONVERSATION = [
    {"role": "user", "content": "Book me a table for two in Lyon."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search_restaurants", "arguments": '{"city": "Lyon"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"restaurants": ["Paul Bocuse"]}'},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "reserve", "arguments": '{"name": "Paul Bocuse", "people": 2}'}}]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"confirmed": true}'},
    {"role": "assistant", "content": "Booked Paul Bocuse for two."},
]


def test_a_batch_of_conversations_is_scored_against_expected_trajectories(judge: JudgeServer, tmp_path: Path) -> None:
    data = tmp_path / "conversations.jsonl"
    items = [
        {"id": "ok", "turns": CONVERSATION, "expected_trajectory": ["search_restaurants", {"tool_name": "reserve", "args": {"people": 2}}]},
        {"id": "wrong-order", "turns": CONVERSATION, "expected_trajectory": ["reserve", "search_restaurants"]},
        {"id": "no-trajectory", "turns": CONVERSATION},
    ]
    data.write_text("\n".join(json.dumps(item) for item in items), encoding="utf-8")
    scorers = [
        engine.create_scorer("trajectory-accuracy-computed", options={"order": "strict", "match_args": True}),
        engine.create_scorer("no-tool-errors"),
    ]

    result = run_evals(str(data), scorers, store=tmp_path / "results.sqlite", run="conversations")

    by_id = {item.id: item for item in result.items}
    assert by_id["ok"].results["trajectory-accuracy-computed"].score == 1
    assert by_id["wrong-order"].results["trajectory-accuracy-computed"].score == 0
    # No expected trajectory: the scorer cannot judge the item (not scorable, with the reason), not an error.
    assert "expected_trajectory" in (by_id["no-trajectory"].results["trajectory-accuracy-computed"].not_scorable or "")
    assert all(item.results["no-tool-errors"].score == 1 for item in result.items)
    assert by_id["ok"].output == CONVERSATION  # the transcript is what was scored and stored
    assert judge.requests == []


def test_scorers_results_shows_percentiles_and_pass_rate(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    data = [{"input": "alpha beta gamma delta", "output": " ".join(["alpha", "beta", "gamma", "delta"][:n])} for n in range(5)]
    run_evals(data, [engine.create_scorer("keyword-coverage")], store=store, run="coverage", thresholds={"keyword-coverage": 0.5})

    shown = CliRunner().invoke(app, ["results", "--run", "coverage", "--store", str(store), "--json"])
    assert shown.exit_code == 0, shown.output
    stats = json.loads(shown.stdout)["scorers"][0]
    # scores 0, 0.25, 0.5, 0.75, 1: median 0.5; p95 = 0.75 + 0.8 * 0.25 = 0.95; 3 of 5 at least 0.5
    assert (stats["mean"], stats["p50"], stats["p95"], stats["pass_rate"]) == (0.5, 0.5, pytest.approx(0.95), 0.6)

    stricter = CliRunner().invoke(app, ["results", "--run", "coverage", "--store", str(store), "--threshold", "keyword-coverage=1"])
    assert stricter.exit_code == 0, stricter.output
    assert "p50" in stricter.stdout and "p95" in stricter.stdout and "20%" in stricter.stdout


def test_live_sampling_is_decided_by_run_id_the_same_for_every_scorer_and_replays(judge: JudgeServer) -> None:
    scorers = [engine.create_scorer("used-no-tools"), engine.create_scorer("keyword-coverage")]
    picked: list[set[str]] = []
    for _ in range(2):  # the same traffic twice: a replay picks the same runs
        seen: dict[str, set[str]] = {"used-no-tools": set(), "keyword-coverage": set()}
        lock = threading.Lock()

        def collect(record: engine.ResultRecord, seen: dict[str, set[str]] = seen, lock: threading.Lock = lock) -> None:
            with lock:
                seen[record.scorer_id].add(record.item_id)

        with LiveScorer(scorers, sampling=0.3, on_result=collect, flush_at_exit=0) as live:
            for n in range(200):
                live.submit("reply", input="question", run_id=f"trace-{n}")
            assert live.flush(timeout=30)
        assert seen["used-no-tools"] == seen["keyword-coverage"]
        picked.append(seen["used-no-tools"])
    assert picked[0] == picked[1]
    assert picked[0] == {f"trace-{n}" for n in range(200) if sample_point(f"trace-{n}") < 0.3}
    assert 30 <= len(picked[0]) <= 90  # about 60
    assert judge.requests == []


def test_live_filter_is_checked_before_sampling_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    def only_production(metadata: Any) -> bool:
        if metadata.get("broken"):
            raise RuntimeError("filter bug")
        return bool(metadata.get("env") == "production")

    with LiveScorer([engine.create_scorer("used-no-tools")], filter=only_production, flush_at_exit=0) as live:
        assert live.submit("a", metadata={"env": "production"}, run_id="r1") is True
        assert live.submit("b", metadata={"env": "staging"}, run_id="r2") is False
        assert live.submit("c", metadata={"broken": True}, run_id="r3") is False
        assert live.flush(timeout=10)
        assert (live.stats.calls, live.stats.filtered, live.stats.scored["used-no-tools"]) == (3, 2, 1)
    assert "filter bug" in caplog.text


@pytest.mark.slow
def test_a_20000_item_eval_of_a_computed_scorer_streams_in_flat_memory() -> None:
    total = 20_000

    def data() -> Iterator[dict[str, Any]]:
        for n in range(total):
            yield {"id": str(n), "input": f"order {n} shipped to Lyon on time", "output": f"Your order {n} shipped to Lyon."}

    result, grown = streamed(data(), total, engine.create_scorer("keyword-coverage"))
    assert result.counts.completed == total and not result.errors
    # keywords of the input: shipped, lyon, time ("order" and numbers are not keywords); the output has two
    assert result.scores["keyword-coverage"] == pytest.approx(0.67)
    # Ten times the items, about the same memory: nothing grows per item.
    assert grown < 2_000_000, grown


def test_scorers_eval_of_computed_scorers_needs_no_judge(tmp_path: Path, judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    data = tmp_path / "items.jsonl"
    data.write_text(
        "\n".join(json.dumps({"id": str(n), "input": "hello", "output": "hello" if n else "bye", "ground_truth": "hello"}) for n in range(4)),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["eval", str(data), "--scorer", "equals", "--scorer", "used-no-tools", "--store", str(tmp_path / "r.sqlite"), "--threshold", "equals=0.7", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scores"] == {"equals": 0.75, "used-no-tools": 1.0}
    assert judge.requests == []
