"""AI SDK UI messages keep `parts` at the top of the message (v4.2+ beside a `content`
string, v5 instead of it); their text and tool results must not be missed."""

from __future__ import annotations

from typing import Any

from helpers.scripted import outputs_judged, script_hallucination

from engine import (
    assistant_text,
    create_hallucination_scorer,
    extract_tool_calls,
    extract_tool_results,
)
from engine.testing import JudgeServer

V5_TRANSCRIPT: list[dict[str, Any]] = [
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "tool-weather", "toolCallId": "w1", "state": "output-available", "input": {"city": "Paris"}, "output": {"temp_c": 21}},
            {"type": "text", "text": "It is 21 degrees in Paris."},
        ],
    },
]

V4_MESSAGE: dict[str, Any] = {
    "role": "assistant",
    "content": "It is 21 degrees.",
    "toolInvocations": [{"state": "result", "toolCallId": "w1", "toolName": "weather", "args": {"city": "Paris"}, "result": {"temp_c": 21}}],
    "parts": [
        {"type": "tool-invocation", "toolInvocation": {"state": "result", "toolCallId": "w1", "toolName": "weather", "args": {"city": "Paris"}, "result": {"temp_c": 21}}},
        {"type": "text", "text": "It is 21 degrees."},
    ],
}


def test_v5_parts_give_the_tool_results_and_the_text() -> None:
    assert extract_tool_results(V5_TRANSCRIPT) == [{"tool_name": "weather", "tool_call_id": "w1", "args": {"city": "Paris"}, "result": {"temp_c": 21}, "is_error": False}]
    assert extract_tool_calls(V5_TRANSCRIPT) == [{"tool_name": "weather", "tool_call_id": "w1", "args": {"city": "Paris"}}]
    assert assistant_text(V5_TRANSCRIPT) == "It is 21 degrees in Paris."


def test_v4_parts_beside_content_are_not_counted_twice() -> None:
    assert len(extract_tool_results([V4_MESSAGE])) == 1
    assert assistant_text([V4_MESSAGE]) == "It is 21 degrees."


def test_a_v5_transcript_is_judged_on_its_text(judge: JudgeServer) -> None:
    script_hallucination(judge)
    scorer = create_hallucination_scorer(options={"context": ["Paris: 21 degrees"]})

    result = scorer.run(output=V5_TRANSCRIPT)

    assert outputs_judged(judge) == ["It is 21 degrees in Paris."]
    assert result.score == 0.0
