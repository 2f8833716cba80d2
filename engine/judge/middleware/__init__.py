"""The judge's middleware chain: each cross-cutting concern of judge calls (a response
cache, a rate limiter, a cost meter, a tracer) is one `JudgeMiddleware` that wraps the call,
never a branch inside it. `Chain` puts them around a judge, outermost first, and is itself a
judge, so every runner (batch, live, pytest, compare) gets the same behaviour."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..protocol import AsksJudge, CallNext, JudgeAnswer, JudgeMiddleware, JudgeRequest


class Chain:
    """A judge whose calls pass through `middleware` (the first listed sees a request first)."""

    def __init__(self, judge: AsksJudge, middleware: Sequence[JudgeMiddleware]) -> None:
        self.judge = judge
        self.middleware = tuple(middleware)
        # Built once: the chain never changes, and a batch makes thousands of calls through it.
        self._call = self._from(0)

    @property
    def model(self) -> str:
        return self.judge.model

    @property
    def identity(self) -> dict[str, Any] | None:
        """The wrapped judge's identity (what a cache keys on), when it has one."""
        return getattr(self.judge, "identity", None)

    @property
    def response_cache(self) -> Any:
        """The response cache in this chain (or the chain it wraps), if any: the first
        middleware that keeps one says so by its own `response_cache`."""
        for middleware in self.middleware:
            found = getattr(middleware, "response_cache", None)
            if found is not None:
                return found
        return getattr(self.judge, "response_cache", None)

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        return await self._call(request)

    def _from(self, position: int) -> CallNext:
        if position == len(self.middleware):
            return self.judge.ask
        middleware, call_next = self.middleware[position], self._from(position + 1)

        async def call(request: JudgeRequest) -> JudgeAnswer:
            return await middleware(request, call_next)

        return call
