"""A bound on judge calls in flight, shared by every judge it wraps: a batch run's
`concurrency` counts calls, not items, so while one item waits for a step's answer another
item's call can take the slot."""

from __future__ import annotations

import asyncio

from ..protocol import CallNext, JudgeAnswer, JudgeRequest


class CallSlots:
    """At most `limit` calls in flight through every judge wrapped by this middleware (and
    every other holder of `slot`, such as a batch run's target calls). Waiting calls are
    served first come, first served."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.slot = asyncio.Semaphore(limit)

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        async with self.slot:
            return await call_next(request)

