"""Text, tool calls and tool results out of chat transcripts.

Three shapes are understood, because agents store their runs in all of them:
- OpenAI chat: assistant `tool_calls` (+ legacy `function_call`), `tool`/`function` messages,
  `content` as a string or a list of `{type: text, text}` parts;
- Anthropic: content blocks `text`, `tool_use` and (in user turns) `tool_result`;
- the AI SDK / Mastra family: `{role, content: {format, parts, toolInvocations}}`,
  `tool-invocation` parts, v5 `tool-<name>` parts with `input`/`output`, and core
  messages with `tool-call` / `tool-result` parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from ..formatting import to_json

Message = Mapping[str, Any]


class ToolCall(BaseModel):
    tool_name: str
    tool_call_id: str | None = None
    args: Any = None


class ToolResult(ToolCall):
    result: Any = None
    is_error: bool = False


def as_messages(output: Any) -> list[Message]:
    """A run's output as a list of messages (a single message dict counts as one)."""
    if isinstance(output, Mapping):
        return [output]
    if isinstance(output, (list, tuple)):
        return [message for message in output if isinstance(message, Mapping)]
    return []


def role_text(value: Any, role: str) -> str:
    """The text said by `role`: the value itself when it is a string, else the text parts of
    every message of that role, in order, one per line."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    texts = [text for message in as_messages(value) if message.get("role") == role for text in _texts(message)]
    return "\n".join(text for text in texts if text.strip())


def assistant_text(output: Any) -> str:
    """What the assistant said in an output (text, one message, or a transcript)."""
    return role_text(output, "assistant")


def _texts(message: Message) -> list[str]:
    texts = _content_texts(message.get("content"))
    if not texts:  # AI SDK UI messages (v4.2+, v5) keep their parts beside, or instead of, content
        parts = message.get("parts")
        if isinstance(parts, list):
            texts = [text for part in parts if (text := _part_text(part)) is not None]
    return texts


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, Mapping):  # AI SDK / Mastra: {format, parts, content}
        parts = content.get("parts")
        if isinstance(parts, list) and any(_part_text(part) is not None for part in parts):
            return [text for part in parts if (text := _part_text(part)) is not None]
        text = content.get("content")
        return [text] if isinstance(text, str) else []
    if isinstance(content, list):
        return [text for part in content if (text := _part_text(part)) is not None]
    return []


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and part.get("type") in ("text", "output_text") and isinstance(part.get("text"), str):
        return str(part["text"])
    return None


def _parse_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return arguments


def _content_value(content: Any) -> Any:
    """A tool result's content: JSON when it parses, the joined text of parts, or as is."""
    if isinstance(content, list):
        texts = [text for part in content if (text := _part_text(part)) is not None]
        if texts and len(texts) == len(content):
            content = "\n".join(texts)
    return _parse_arguments(content)


def _parts(message: Message) -> list[Mapping[str, Any]]:
    content = message.get("content")
    found: list[Any] = []
    if isinstance(content, list):
        found = list(content)
    elif isinstance(content, Mapping) and isinstance(content.get("parts"), list):
        found = list(content["parts"])
    top = message.get("parts")  # AI SDK UI messages: `parts` beside content (duplicates are merged later)
    if isinstance(top, list):
        found.extend(top)
    return [part for part in found if isinstance(part, Mapping)]


def _invocations(message: Message) -> list[Mapping[str, Any]]:
    """AI SDK v4 tool invocations, wherever this message keeps them."""
    found: list[Mapping[str, Any]] = []
    content = message.get("content")
    for holder in (message, content if isinstance(content, Mapping) else {}):
        invocations = holder.get("toolInvocations")
        if isinstance(invocations, list):
            found.extend(item for item in invocations if isinstance(item, Mapping))
    found.extend(
        part["toolInvocation"]
        for part in _parts(message)
        if part.get("type") == "tool-invocation" and isinstance(part.get("toolInvocation"), Mapping)
    )
    return found


def _calls_and_results(messages: Iterable[Message]) -> tuple[list[ToolCall], list[ToolResult]]:
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for message in messages:
        role = message.get("role")
        for call in message.get("tool_calls") or []:  # OpenAI chat
            function = call.get("function") or {}
            calls.append(ToolCall(tool_name=function.get("name", ""), tool_call_id=call.get("id"), args=_parse_arguments(function.get("arguments"))))
        legacy = message.get("function_call")
        if isinstance(legacy, Mapping):
            calls.append(ToolCall(tool_name=legacy.get("name", ""), args=_parse_arguments(legacy.get("arguments"))))
        if role == "tool" and "tool_call_id" in message:
            results.append(ToolResult(tool_name=message.get("name") or "", tool_call_id=message["tool_call_id"], result=_content_value(message.get("content"))))
        if role == "function":
            results.append(ToolResult(tool_name=message.get("name") or "", result=_content_value(message.get("content"))))
        for invocation in _invocations(message):  # AI SDK v4 / Mastra
            call = ToolCall(tool_name=invocation.get("toolName", ""), tool_call_id=invocation.get("toolCallId"), args=invocation.get("args"))
            calls.append(call)
            if invocation.get("state") == "result" or "result" in invocation:
                results.append(ToolResult(**call.model_dump(), result=invocation.get("result")))
        for part in _parts(message):
            kind = str(part.get("type", ""))
            if kind == "tool_use":  # Anthropic
                calls.append(ToolCall(tool_name=part.get("name", ""), tool_call_id=part.get("id"), args=part.get("input")))
            elif kind == "tool_result":
                results.append(
                    ToolResult(tool_name="", tool_call_id=part.get("tool_use_id"), result=_content_value(part.get("content")), is_error=bool(part.get("is_error")))
                )
            elif kind == "tool-call":  # AI SDK core messages
                calls.append(ToolCall(tool_name=part.get("toolName", ""), tool_call_id=part.get("toolCallId"), args=part.get("args", part.get("input"))))
            elif kind == "tool-result":
                output = part.get("output", part.get("result"))
                if isinstance(output, Mapping) and "value" in output and "type" in output:  # v5 typed output
                    output = output["value"]
                results.append(ToolResult(tool_name=part.get("toolName", ""), tool_call_id=part.get("toolCallId"), args=part.get("args", part.get("input")), result=output))
            elif kind == "tool-error":  # AI SDK core: a tool that threw
                results.append(
                    ToolResult(tool_name=part.get("toolName", ""), tool_call_id=part.get("toolCallId"), args=part.get("input"), result=part.get("error"), is_error=True)
                )
            elif kind.startswith("tool-") and kind != "tool-invocation":  # AI SDK v5 UI parts: tool-<name>
                call = ToolCall(tool_name=kind[len("tool-"):], tool_call_id=part.get("toolCallId"), args=part.get("input"))
                calls.append(call)
                if part.get("state") == "output-available" or "output" in part:
                    results.append(ToolResult(**call.model_dump(), result=part.get("output")))
                elif part.get("state") == "output-error":
                    results.append(ToolResult(**call.model_dump(), result=part.get("errorText"), is_error=True))
    return _unique(calls), _unique(results)


def _unique(items: list[Any]) -> list[Any]:
    """The same call may be stored twice (e.g. in `toolInvocations` and in `parts`)."""
    seen: set[str] = set()
    unique = []
    for item in items:
        key = item.tool_call_id or json.dumps(item.model_dump(), sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def tool_result_context(messages: Any) -> list[str]:
    """Context pieces from the tool results of a transcript: one JSON object
    `{"tool": name, "result": result}` per result, what the agent based its answer on."""
    return [
        to_json({"tool": result["tool_name"], "result": result["result"]})
        for result in extract_tool_results(messages)
    ]


def split_conversation(turns: Any) -> tuple[str | None, list[Message]]:
    """A conversation's last user text and the reply after it (every message that follows
    the last user message: the assistant's text, tool calls and tool results)."""
    messages = as_messages(turns)
    last_user = max((index for index, message in enumerate(messages) if message.get("role") == "user"), default=None)
    if last_user is None:
        return None, messages
    return role_text([messages[last_user]], "user"), messages[last_user + 1 :]


def conversation_turns(turns: Any) -> list[dict[str, Any]]:
    """A conversation as its templates and expressions see it: per message, in order,
    `{turn, role, text, tool_calls, tool_results}` (`turn` counts from 1)."""
    found = []
    for number, message in enumerate(as_messages(turns), start=1):
        role = str(message.get("role", ""))
        calls, results = _calls_and_results([message])
        text = "\n".join(piece for piece in _texts(message) if piece.strip())
        if role == "tool" and not text:
            text = json.dumps(_content_value(message.get("content")), ensure_ascii=False, default=str)
        found.append(
            {"turn": number, "role": role, "text": text, "tool_calls": [call.model_dump() for call in calls], "tool_results": [result.model_dump() for result in results]}
        )
    return found


def extract_tool_calls(messages: Any) -> list[dict[str, Any]]:
    """Every tool call the assistant made, in order: `{tool_name, tool_call_id, args}`."""
    return [call.model_dump() for call in _calls_and_results(as_messages(messages))[0]]


def extract_tool_results(messages: Any) -> list[dict[str, Any]]:
    """Every tool result in a transcript, in order, as `{tool_name, tool_call_id, args,
    result}`, the name and arguments filled in from the matching call when the result
    itself lacks them."""
    calls, results = _calls_and_results(as_messages(messages))
    by_id = {call.tool_call_id: call for call in calls if call.tool_call_id}
    completed = []
    for result in results:
        call = by_id.get(result.tool_call_id) if result.tool_call_id else None
        if call is not None:
            result = result.model_copy(update={"tool_name": result.tool_name or call.tool_name, "args": result.args if result.args is not None else call.args})
        completed.append(result.model_dump())
    return completed


def empty_output(output: Any, text: str) -> str | None:
    """What makes an output empty (`text` is what the assistant said in it), or None when it
    is not: an output that says nothing and calls no tool gives a judge nothing to read."""
    if text.strip() or extract_tool_calls(output):
        return None
    if isinstance(output, str):
        return "whitespace only" if output else "empty"
    if not any(message.get("role") == "assistant" for message in as_messages(output)):
        return "a transcript with no assistant message"
    return "a transcript whose assistant messages say nothing"
