"""Answers read as they are written: a judge call streams its answer (OpenAI's chat
completion chunks, Anthropic's message events), so a judge that is slowly generating is told
apart from one that is stuck. The SDK's read timeout (`--timeout`) is then the longest silence
between two pieces of the answer, not the whole answer's time: a slow local model writing
for minutes is waited for once, while one that stops sending is dropped after `--timeout`
seconds of silence and asked again (`--retries` times).

The SDKs send the request (and retry it, and raise their typed errors, until the answer
starts); the server-sent events are read here to their end, as plain JSON, and gathered into
the SDK's own complete object (a `ChatCompletion`, a `Message`) once. Read to the end, the
connection goes back to the SDK's pool (the SDKs' streams stop at OpenAI's `[DONE]` and close
it), and no object is built per piece. A server that answered without streaming (it refused
`stream`) is read as one JSON answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("engine.judge")


class StoppedSending(Exception):
    """The judge sent nothing for the timeout in the middle of its answer, every time asked."""

    def __init__(self, silence: float, attempts: int, pieces: int) -> None:
        super().__init__(f"silent for {silence:g}s")
        self.silence = silence
        self.attempts = attempts
        self.pieces = pieces


class StreamError(Exception):
    """An error event in the middle of a streamed answer (the server's own words)."""


@dataclass
class _Progress:
    """How far the current answer got: pieces received (about one token each)."""

    pieces: int = 0


Gather = Callable[[AsyncIterator[tuple[str | None, Any]], _Progress], Awaitable[Any]]


async def streamed(
    start: Callable[[], Any], gather: Gather, whole: Callable[[Any], Any], *, timeouts: tuple[type[BaseException], ...], silence: float, retries: int, model: str
) -> Any:
    """The answer of a streamed call. `start()` is the SDK's request with a streaming
    response (an async context manager: the SDK sends it, retries it and raises its typed
    errors until the answer starts); `gather(events, progress)` reads the events to the end;
    `whole(data)` reads an answer that came unstreamed. An answer that falls silent for
    `silence` seconds midway (one of `timeouts` is raised while reading) is asked again, up to
    `retries` times; after that, StoppedSending."""
    for attempt in range(retries + 1):
        progress = _Progress()
        answering = False
        try:
            async with start() as response:
                answering = True  # before this, a silence is the SDK's to retry and report
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    return whole(json.loads(await response.read()))
                return await gather(_events(response), progress)
        except timeouts:
            if not answering:
                raise
            if attempt == retries:
                raise StoppedSending(silence, retries + 1, progress.pieces) from None
            logger.warning(
                "the judge %s sent nothing for %gs after %d pieces of its answer (stuck); asking again (%d of %d)",
                model, silence, progress.pieces, attempt + 2, retries + 1,
            )
    raise AssertionError("unreachable")


async def _events(response: Any) -> AsyncIterator[tuple[str | None, Any]]:
    """(event name, data) of each server-sent event, to the end of the body; `[DONE]` and
    comments left out."""
    name: str | None = None
    data: list[str] = []
    async for line in response.iter_lines():
        if not line:
            if data:
                text = "\n".join(data)
                if text != "[DONE]":
                    yield name, json.loads(text)
            name, data = None, []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data and "\n".join(data) != "[DONE]":
        yield name, json.loads("\n".join(data))


@dataclass
class _ToolCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _error(data: Any) -> None:
    if isinstance(data, dict) and isinstance(data.get("error"), (dict, str)):
        error = data["error"]
        raise StreamError(str(error.get("message") if isinstance(error, dict) else error))


async def chat_completion(events: AsyncIterator[tuple[str | None, Any]], progress: _Progress) -> Any:
    """OpenAI's `chat.completion.chunk`s gathered into the `ChatCompletion` a non-streamed
    call would have returned (text, tool calls, `reasoning_content`, finish reason, usage)."""
    from openai.types.chat import ChatCompletion

    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, _ToolCall] = {}
    tokens: list[dict[str, Any]] = []
    finish_reason, usage, first = None, None, None
    async for _, chunk in events:
        _error(chunk)
        first = first or chunk
        usage = chunk.get("usage") or usage
        for choice in (chunk.get("choices") or [])[:1]:
            delta = choice.get("delta") or {}
            progress.pieces += 1
            if delta.get("content"):
                text.append(delta["content"])
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str):
                reasoning.append(thought)
            for call in delta.get("tool_calls") or []:
                gathered = calls.setdefault(call.get("index", 0), _ToolCall())
                gathered.id = call.get("id") or gathered.id
                function = call.get("function") or {}
                gathered.name = function.get("name") or gathered.name
                gathered.arguments.append(function.get("arguments") or "")
            finish_reason = choice.get("finish_reason") or finish_reason
            logprobs = choice.get("logprobs")
            if logprobs:  # each chunk's tokens, as plain dicts (see probabilities.token_logprobs)
                tokens.extend(logprobs.get("content") or ())
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        message["tool_calls"] = [
            {"id": call.id or f"call_{index}", "type": "function", "function": {"name": call.name, "arguments": "".join(call.arguments)}}
            for index, call in sorted(calls.items())
        ]
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    first = first or {}
    completion = ChatCompletion.model_validate({
        "id": first.get("id") or "streamed", "object": "chat.completion", "created": first.get("created") or 0,
        "model": first.get("model") or "", "usage": usage,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason or "stop", "logprobs": None}],
    })
    return _with_tokens(completion, tokens)


def whole_chat_completion(data: Any) -> Any:
    from openai.types.chat import ChatCompletion

    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    tokens = list((first.get("logprobs") or {}).get("content") or ())
    if tokens and choices:
        data = {**data, "choices": [{**first, "logprobs": None}, *choices[1:]]}
    return _with_tokens(ChatCompletion.model_validate(data), tokens)


def _with_tokens(completion: Any, tokens: list[dict[str, Any]]) -> Any:
    """The completion with its first choice's token log-probabilities left as the server's
    plain dicts: validating each token and its candidates as objects costs more than reading
    them. Put in the field's place directly, as `model_construct` would: a profile showed
    `model_construct` itself costing a tenth of a millisecond a call."""
    if tokens and completion.choices:
        from openai.types.chat.chat_completion import ChoiceLogprobs

        logprobs = ChoiceLogprobs(content=None, refusal=None)
        logprobs.__dict__["content"] = tokens
        completion.choices[0].__dict__["logprobs"] = logprobs
    return completion


async def anthropic_message(events: AsyncIterator[tuple[str | None, Any]], progress: _Progress) -> Any:
    """Anthropic's message events gathered into the `Message` a non-streamed call would
    have returned (text, tool use with its input, thinking, stop reason, usage)."""
    from anthropic.types import Message

    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    pieces: dict[int, list[str]] = {}
    async for _, event in events:
        kind = event.get("type")
        if kind == "error":
            _error(event)
        elif kind == "message_start":
            message = dict(event["message"])
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
            pieces[event["index"]] = []
        elif kind == "content_block_delta":
            progress.pieces += 1
            delta = event["delta"]
            piece = delta.get("text") or delta.get("partial_json") or delta.get("thinking")
            if isinstance(piece, str):
                pieces[event["index"]].append(piece)
            if delta.get("signature"):
                blocks[event["index"]]["signature"] = delta["signature"]
        elif kind == "message_delta":
            message["stop_reason"] = event["delta"].get("stop_reason")
            message["stop_sequence"] = event["delta"].get("stop_sequence")
            message.setdefault("usage", {})["output_tokens"] = (event.get("usage") or {}).get("output_tokens", 0)
    content = []
    for index in sorted(blocks):
        block, written = blocks[index], "".join(pieces[index])
        if block["type"] == "tool_use":
            try:
                block["input"] = json.loads(written) if written.strip() else {}
            except json.JSONDecodeError:  # cut off midway: kept as text, for the message that says so
                block = {"type": "text", "text": written}
        elif block["type"] in ("text", "thinking"):
            block[block["type"]] = written
        content.append(block)
    message["content"] = content
    return Message.model_validate(message)


def whole_anthropic_message(data: Any) -> Any:
    from anthropic.types import Message

    return Message.model_validate(data)
