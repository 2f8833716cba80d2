"""Text and tool results out of real-looking transcripts of each message format."""

from __future__ import annotations

import json
from typing import Any

from engine import assistant_text, extract_tool_calls, extract_tool_results

WEATHER = {"city": "Seoul", "temperature_c": 3, "conditions": "clear"}

OPENAI_TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a weather assistant."},
    {"role": "user", "content": "What's the weather in Seoul and in Busan?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Seoul"}'}},
            {"id": "call_def", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Busan"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_abc", "content": json.dumps(WEATHER)},
    {"role": "tool", "tool_call_id": "call_def", "content": [{"type": "text", "text": "service unavailable"}]},
    {"role": "assistant", "content": "Seoul is clear at 3°C. I could not get Busan's weather."},
]

ANTHROPIC_TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Seoul?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Seoul"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": [{"type": "text", "text": json.dumps(WEATHER)}]}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It is clear and 3°C in Seoul."}]},
]

# Mastra / AI SDK v4 stored messages: content {format: 2, parts, toolInvocations}
MASTRA_TRANSCRIPT: list[dict[str, Any]] = [
    {"id": "m1", "role": "user", "content": {"format": 2, "parts": [{"type": "text", "text": "Weather in Seoul?"}]}},
    {
        "id": "m2",
        "role": "assistant",
        "content": {
            "format": 2,
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-invocation",
                    "toolInvocation": {"state": "result", "step": 0, "toolCallId": "tc_1", "toolName": "weatherTool", "args": {"city": "Seoul"}, "result": WEATHER},
                },
                {"type": "text", "text": "Clear skies, 3°C."},
            ],
            "toolInvocations": [{"state": "result", "step": 0, "toolCallId": "tc_1", "toolName": "weatherTool", "args": {"city": "Seoul"}, "result": WEATHER}],
            "content": "Clear skies, 3°C.",
        },
    },
]

# AI SDK v5 UI messages: typed tool parts `tool-<name>` with input/output
AI_SDK_V5_TRANSCRIPT: list[dict[str, Any]] = [
    {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Seoul?"}], "content": [{"type": "text", "text": "Weather in Seoul?"}]},
    {
        "id": "a1",
        "role": "assistant",
        "content": [
            {"type": "tool-weatherTool", "toolCallId": "tc_9", "state": "output-available", "input": {"city": "Seoul"}, "output": WEATHER},
            {"type": "text", "text": "Clear, 3°C."},
        ],
    },
]

# AI SDK core model messages: tool-call / tool-result parts
AI_SDK_CORE_TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "weatherTool", "input": {"city": "Seoul"}}]},
    {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "weatherTool", "output": {"type": "json", "value": WEATHER}}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Clear, 3°C."}]},
]


def test_openai_tool_results_get_their_tool_name_and_arguments() -> None:
    results = extract_tool_results(OPENAI_TRANSCRIPT)
    assert results == [
        {"tool_name": "get_weather", "tool_call_id": "call_abc", "args": {"city": "Seoul"}, "result": WEATHER, "is_error": False},
        {"tool_name": "get_weather", "tool_call_id": "call_def", "args": {"city": "Busan"}, "result": "service unavailable", "is_error": False},
    ]
    assert [call["args"] for call in extract_tool_calls(OPENAI_TRANSCRIPT)] == [{"city": "Seoul"}, {"city": "Busan"}]
    assert assistant_text(OPENAI_TRANSCRIPT) == "Seoul is clear at 3°C. I could not get Busan's weather."


def test_anthropic_tool_results_in_user_turns_are_found() -> None:
    assert extract_tool_results(ANTHROPIC_TRANSCRIPT) == [
        {"tool_name": "get_weather", "tool_call_id": "toolu_01A", "args": {"city": "Seoul"}, "result": WEATHER, "is_error": False}
    ]
    assert assistant_text(ANTHROPIC_TRANSCRIPT) == "Let me check.\nIt is clear and 3°C in Seoul."


def test_mastra_messages_count_each_invocation_once() -> None:
    assert extract_tool_results(MASTRA_TRANSCRIPT) == [
        {"tool_name": "weatherTool", "tool_call_id": "tc_1", "args": {"city": "Seoul"}, "result": WEATHER, "is_error": False}
    ]
    assert assistant_text(MASTRA_TRANSCRIPT) == "Clear skies, 3°C."


def test_newer_ai_sdk_shapes_are_not_missed() -> None:
    expected = {"tool_name": "weatherTool", "args": {"city": "Seoul"}, "result": WEATHER, "is_error": False}
    for transcript, call_id in ((AI_SDK_V5_TRANSCRIPT, "tc_9"), (AI_SDK_CORE_TRANSCRIPT, "c1")):
        assert extract_tool_results(transcript) == [{**expected, "tool_call_id": call_id}]
        assert assistant_text(transcript) == "Clear, 3°C."


def test_pending_calls_have_no_results_and_plain_text_has_none() -> None:
    pending = [{"role": "assistant", "content": {"format": 2, "parts": [], "toolInvocations": [{"state": "call", "toolCallId": "x", "toolName": "slow", "args": {}}]}}]
    assert extract_tool_results(pending) == []
    assert [call["tool_name"] for call in extract_tool_calls(pending)] == ["slow"]
    assert extract_tool_results("just text") == []
    assert assistant_text("just text") == "just text"
    assert assistant_text(None) == ""
