"""The target of a batch run: the agent (or any callable) that produces the reply to score."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError

#: A callable mapping an input to a reply (sync or async), or an object with an
#: `agenerate` (async) or `generate` (sync) method.
Target = Any


async def call_target(target: Target, value: Any) -> Any:
    """The target's reply to `value`. Sync targets run on a worker thread, so that a slow
    one does not hold up the event loop (and with it every other item)."""
    function: Callable[..., Any]
    if hasattr(target, "agenerate"):
        function = target.agenerate
    elif hasattr(target, "generate"):
        function = target.generate
    elif callable(target):
        function = target
    else:
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None)):
        reply = await function(value)
    else:
        reply = await asyncio.to_thread(function, value)
    if inspect.isawaitable(reply):
        reply = await reply
    return reply


def as_reply(value: Any) -> Any:
    """What a target returned, as something a scorer judges: text or chat messages.
    Result objects with `messages` (preferred: they carry tool results) or `text` are read."""
    if isinstance(value, (str, list, tuple)):
        return list(value) if isinstance(value, tuple) else value
    if isinstance(value, Mapping):
        if "role" in value:
            return [dict(value)]
        for name in ("messages", "text", "content"):
            if isinstance(value.get(name), (str, list)):
                return value[name]
    else:
        for name in ("messages", "text", "content"):
            attribute = getattr(value, name, None)
            if isinstance(attribute, (str, list)):
                return attribute
    if value is None:
        raise ValueError("the target returned None")
    raise ValueError(f"the target returned a {type(value).__name__}; expected text or chat messages")
