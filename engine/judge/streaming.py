"""Answers read as they are written: a judge call streams its answer (OpenAI's chat
completion chunks, Anthropic's message events), so a judge that is slowly generating is told
apart from one that is stuck. The SDK's read timeout (`--timeout`) is then the longest silence
between two pieces of the answer, not the whole answer's time: a slow local model writing
for minutes is waited for once, while one that stops sending is dropped after `--timeout`
seconds of silence and asked again (`--retries` times).

The pieces are gathered here into the SDK's own complete objects (a `ChatCompletion`, a
`Message`) once the stream ends, in time linear in the answer's length (the SDKs' stream
helpers rebuild or re-parse the whole answer at every piece).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

logger = logging.getLogger("engine.judge")

T = TypeVar("T")


class StoppedSending(Exception):
    """The judge sent nothing for the timeout in the middle of its answer, every time asked."""

    def __init__(self, silence: float, attempts: int, pieces: int) -> None:
        super().__init__(f"silent for {silence:g}s")
        self.silence = silence
        self.attempts = attempts
        self.pieces = pieces


@dataclass
class _Progress:
    """How far the current answer got: pieces received (about one token each)."""

    pieces: int = 0


async def streamed(
    start: Callable[[], Awaitable[Any]], collect: Callable[[Any, _Progress], Awaitable[T]], *, timeouts: tuple[type[BaseException], ...], silence: float, retries: int, model: str
) -> T:
    """The answer of a streamed call: `start()` sends the request (the SDK retries it until
    the answer starts), `collect(stream, progress)` reads it to the end. An answer that falls
    silent for `silence` seconds midway (one of `timeouts` is raised while reading) is asked
    again, up to `retries` times; after that, StoppedSending."""
    for attempt in range(retries + 1):
        progress = _Progress()
        stream = await start()
        try:
            return await collect(stream, progress)
        except timeouts:
            if attempt == retries:
                raise StoppedSending(silence, retries + 1, progress.pieces) from None
            logger.warning(
                "the judge %s sent nothing for %gs after %d pieces of its answer (stuck); asking again (%d of %d)",
                model, silence, progress.pieces, attempt + 2, retries + 1,
            )  # fmt: skip
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()
    raise AssertionError("unreachable")


@dataclass
class _ToolCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


async def chat_completion(stream: Any, progress: _Progress) -> Any:
    """OpenAI's `chat.completion.chunk`s gathered into the `ChatCompletion` a non-streamed
    call would have returned (text, tool calls, `reasoning_content`, finish reason, usage).
    A server that answered without streaming (it refused `stream`) is returned as it is."""
    from openai.types.chat import ChatCompletion

    if isinstance(stream, ChatCompletion):
        return stream
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, _ToolCall] = {}
    finish_reason, usage, first = None, None, None
    async for chunk in stream:
        first = first or chunk
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices[:1]:
            delta = choice.delta
            progress.pieces += 1
            if delta.content:
                text.append(delta.content)
            extra = delta.model_extra or {}
            thought = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(thought, str):
                reasoning.append(thought)
            for call in delta.tool_calls or []:
                gathered = calls.setdefault(call.index, _ToolCall())
                gathered.id = call.id or gathered.id
                if call.function is not None:
                    gathered.name = call.function.name or gathered.name
                    gathered.arguments.append(call.function.arguments or "")
            finish_reason = choice.finish_reason or finish_reason
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        message["tool_calls"] = [
            {"id": call.id or f"call_{index}", "type": "function", "function": {"name": call.name, "arguments": "".join(call.arguments)}}
            for index, call in sorted(calls.items())
        ]
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    return ChatCompletion.model_validate({
        "id": getattr(first, "id", None) or "streamed", "object": "chat.completion", "created": getattr(first, "created", None) or 0,
        "model": getattr(first, "model", None) or "", "usage": usage,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason or "stop", "logprobs": None}],
    })  # fmt: skip


async def anthropic_message(stream: Any, progress: _Progress) -> Any:
    """Anthropic's message events gathered into the `Message` a non-streamed call would
    have returned (text, tool use with its input, thinking, stop reason, usage)."""
    from anthropic.types import Message

    if isinstance(stream, Message):
        return stream
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    pieces: dict[int, list[str]] = {}
    async for event in stream:
        kind = event.type
        if kind == "message_start":
            message = event.message.model_dump()
        elif kind == "content_block_start":
            blocks[event.index] = event.content_block.model_dump()
            pieces[event.index] = []
        elif kind == "content_block_delta":
            progress.pieces += 1
            delta = event.delta
            piece = getattr(delta, "text", None) or getattr(delta, "partial_json", None) or getattr(delta, "thinking", None)
            if isinstance(piece, str):
                pieces[event.index].append(piece)
            if getattr(delta, "signature", None):
                blocks[event.index]["signature"] = delta.signature
        elif kind == "message_delta":
            message["stop_reason"] = event.delta.stop_reason
            message["stop_sequence"] = event.delta.stop_sequence
            message.setdefault("usage", {})["output_tokens"] = event.usage.output_tokens
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
