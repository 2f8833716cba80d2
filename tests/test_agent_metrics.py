"""Agent metrics over a whole trace, as YAML scorers: trajectory matching in four modes
(computed), task completion, step efficiency and plan adherence (judged), scored on the agent
item a recorded trace gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import RunInput, builtin_catalog, load_scorers
from engine.runs.traces import TraceReader, group_by_trace, read_file_exporter
from engine.testing import JudgeServer

FIXTURES = Path(__file__).parent / "fixtures" / "traces"


def agent_run(tmp_path: Path) -> RunInput:
    """The whole run of the recorded OpenInference trace: one tool call, then the answer."""
    path = tmp_path / "catalog.yaml"
    path.write_text("scorers: {}\ntraces:\n  convention: openinference\n  agent:\n    scorers: [task-completion]\n", encoding="utf-8")
    spec = load_scorers(path).traces
    assert spec is not None
    (spans,) = group_by_trace(read_file_exporter(FIXTURES / "openinference.otlp.jsonl")).values()
    (item,) = TraceReader(spec).items(spans).items
    return item.given


CALLS = [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "search", "arguments": '{"q": "Paris"}'}},
        {"id": "b", "type": "function", "function": {"name": "book", "arguments": '{"place": "Chez Paul"}'}},
    ]},
    {"role": "tool", "tool_call_id": "a", "content": "Chez Paul"},
    {"role": "tool", "tool_call_id": "b", "content": "booked"},
    {"role": "assistant", "content": "Booked Chez Paul."},
]


@pytest.mark.parametrize(
    ("mode", "expected", "score"),
    [
        ("strict", ["search", "book"], 1), ("strict", ["book", "search"], 0),
        ("unordered", ["book", "search"], 1), ("unordered", ["book"], 0),
        ("subset", ["search", "book", "pay"], 1), ("subset", ["search"], 0),
        ("superset", ["book"], 1), ("superset", ["book", "pay"], 0),
    ],
)
def test_trajectory_match_modes(mode: str, expected: list[str], score: int) -> None:
    scorer = builtin_catalog().create("trajectory-match", options={"mode": mode})
    result = scorer.score(RunInput(output=CALLS, expected_trajectory=expected))
    assert result.score == score


def test_trajectory_match_compares_arguments_exactly_when_asked() -> None:
    scorer = builtin_catalog().create("trajectory-match", options={"mode": "superset", "match_args": True})
    assert scorer.score(RunInput(output=CALLS, expected_trajectory=[{"tool_name": "book", "args": {"place": "Chez Paul"}}])).score == 1
    assert scorer.score(RunInput(output=CALLS, expected_trajectory=[{"tool_name": "book", "args": {"place": "Le Train Bleu"}}])).score == 0


def test_the_agent_item_of_a_trace_is_matched_against_its_expected_tools(tmp_path: Path) -> None:
    run = agent_run(tmp_path)
    scorer = builtin_catalog().create("trajectory-match", options={"mode": "strict"})
    assert scorer.score(RunInput(output=run.output, expected_trajectory=["lookup_weather"])).score == 1


@pytest.mark.parametrize(("verdict", "score"), [("yes", 1.0), ("partly", 0.5), ("no", 0.0)])
def test_task_completion_reads_the_whole_run(verdict: str, score: float, judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("TaskCompletion", {"verdict": verdict, "unmet": [] if verdict == "yes" else ["say when it was built"], "reason": "scripted"})
    run = agent_run(tmp_path)
    result = builtin_catalog().create("task-completion").score(run)
    assert result.score == score
    (request,) = judge.requests_for("TaskCompletion")
    # The judge saw the task, the tool call with its result, and the final answer.
    assert "Where is the Eiffel Tower?" in request.prompt and 'lookup_weather {"city": "Paris"} -> {"forecast": "sunny"}' in request.prompt
    assert "The Eiffel Tower is in Paris and was finished in 1889." in request.prompt


def test_step_efficiency_is_the_needed_steps_over_those_taken(judge: JudgeServer) -> None:
    judge.on("StepEfficiency", {"least_steps": 1, "reason": "the search was not used"})
    result = builtin_catalog().create("step-efficiency").score(RunInput(output=CALLS, input="Book Chez Paul"))
    assert result.score == 0.5


def test_plan_adherence_counts_the_plan_steps_carried_out(judge: JudgeServer) -> None:
    answer: dict[str, Any] = {"plan": ["search", "book", "pay"], "followed": [
        {"step": "search", "verdict": "yes"}, {"step": "book", "verdict": "yes"}, {"step": "pay", "verdict": "no"}]}
    judge.on("PlanAdherence", answer)
    result = builtin_catalog().create("plan-adherence").score(RunInput(output=CALLS, input="Book and pay", ground_truth="1. search 2. book 3. pay"))
    assert result.score == pytest.approx(0.67)
    assert "1. search 2. book 3. pay" in judge.requests_for("PlanAdherence")[0].prompt


@pytest.mark.parametrize(
    ("mode", "verdicts", "score"),
    [
        ("superset", ["same"], 1), ("superset", ["different"], 0),
        ("subset", ["same", "not called"], 1), ("subset", ["different", "not called"], 0),
        ("strict", ["same", "same"], 1), ("unordered", ["same", "not called"], 0),
    ],
)
def test_trajectory_match_judges_arguments_by_what_they_mean(mode: str, verdicts: list[str], score: int, judge: JudgeServer) -> None:
    expected: list[Any] = [{"tool_name": "search", "args": {"q": "paris, France"}}, {"tool_name": "book", "args": {"place": "chez paul"}}][: len(verdicts)]
    if mode == "subset":
        expected = [{"tool_name": "search", "args": {"q": "paris, France"}}, {"tool_name": "book", "args": {"place": "chez paul"}}, {"tool_name": "pay", "args": {}}]
        verdicts = [*verdicts[:1], "same", *verdicts[1:]]
    if mode == "superset":
        expected = [{"tool_name": "book", "args": {"place": "chez paul"}}]
    judge.on("TrajectoryArguments", {"steps": [{"tool_name": step["tool_name"], "verdict": verdict, "reason": "scripted"} for step, verdict in zip(expected, verdicts)]})
    scorer = builtin_catalog().create("trajectory-match-judged", options={"mode": mode})
    assert scorer.score(RunInput(output=CALLS, expected_trajectory=expected)).score == score
    (request,) = judge.requests_for("TrajectoryArguments")
    # The judge saw the expected arguments and the ones the agent gave.
    assert 'book {"place": "chez paul"}' in request.prompt and 'book {"place": "Chez Paul"}' in request.prompt
