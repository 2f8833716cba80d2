"""Attaching scoring to an agent: the agent's replies pass through unchanged and are handed,
with the arguments that produced them, to a callback (the live scorer's `_observe`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import ConfigError

#: What sees each reply: the agent's positional and keyword arguments, and its reply.
Observe = Callable[[tuple[Any, ...], Mapping[str, Any], Any], None]


def attached(agent: Any, observe: Observe, live: Any) -> Any:
    """`agent` with every reply handed to `observe`: a function (sync or async) keeps its
    kind; an object with `generate`/`agenerate` gets those wrapped, the rest passed through.
    The wrapper's `.live` is `live`."""
    if not inspect.isroutine(agent) and (hasattr(agent, "generate") or hasattr(agent, "agenerate")):
        return ScoredAgent(agent, observe, live)
    if not callable(agent):
        raise ConfigError(f"cannot attach scorers to a {type(agent).__name__}: expected a callable or an agent with generate()")
    if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(getattr(agent, "__call__", None)):

        @functools.wraps(agent)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            reply = await agent(*args, **kwargs)
            observe(args, kwargs, reply)
            return reply

        async_wrapper.live = live  # type: ignore[attr-defined]
        return async_wrapper

    @functools.wraps(agent)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        reply = agent(*args, **kwargs)
        observe(args, kwargs, reply)
        return reply

    wrapper.live = live  # type: ignore[attr-defined]
    return wrapper


class ScoredAgent:
    """An agent object whose generate/agenerate replies are scored; everything else is the
    agent's own (and it has exactly the methods the agent has)."""

    def __init__(self, agent: Any, observe: Observe, live: Any) -> None:
        self._agent = agent
        self._observe = observe
        self.live = live

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._agent, name)
        if name == "agenerate":

            async def agenerate(*args: Any, **kwargs: Any) -> Any:
                reply = await attribute(*args, **kwargs)
                self._observe(args, kwargs, reply)
                return reply

            return agenerate
        if name == "generate":

            def generate(*args: Any, **kwargs: Any) -> Any:
                reply = attribute(*args, **kwargs)
                self._observe(args, kwargs, reply)
                return reply

            return generate
        return attribute

    def __repr__(self) -> str:
        return f"<{self._agent!r} with live scoring>"
