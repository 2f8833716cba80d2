"""What a run may spend: how much its judge calls may cost before it stops starting new
items (`max_cost`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ...store import Store
from ..measures.stats import usage_cost

#: How often, at most, a worker of a shared run reads the whole run's spend (for --max-cost).
_SHARED_SPEND_EVERY = 0.5


class SpendBudget:
    """The estimated spend of this invocation's judge calls against `max_cost` (None: no
    budget). `stopped` says why the budget stopped the run, once it has."""

    def __init__(self, max_cost: float | None, store: Store | None, run: str, flush: Callable[[], Awaitable[None]] | None) -> None:
        self.max_cost = max_cost
        self.store = store
        self.run = run
        self.flush = flush
        self.spent = 0.0  # estimated US dollars of the judge calls made by this invocation
        #: (when to read again, the run's spend in the store, self.spent then): see reached_by_all.
        self.shared_read: tuple[float, float, float] | None = None
        self.stopped: str | None = None

    @property
    def metered(self) -> bool:
        return self.max_cost is not None

    def add(self, cost: float | None) -> None:
        self.spent += cost or 0.0

    def reached(self) -> bool:
        if self.max_cost is not None and self.spent >= self.max_cost:
            self.stopped = f"the estimated spend ${self.spent:.4f} reached the budget of ${self.max_cost:g} (--max-cost)"
            return True
        return False

    async def reached_by_all(self) -> bool:
        """For a run shared by workers: has the spend of every worker, as the store records
        it, reached the budget? Reading it sums the whole run, so it is read at most every
        half second, and less often when the read is slow (at most a twentieth of the time
        goes to it); in between, this worker adds what it spent itself."""
        if self.max_cost is None or self.store is None:
            return False
        started = time.monotonic()
        if self.shared_read is None or started >= self.shared_read[0]:
            if self.flush is not None:
                await self.flush()
            usage = await asyncio.to_thread(self.store.usage, self.run)
            took = time.monotonic() - started
            next_read = started + max(_SHARED_SPEND_EVERY, 20 * took)
            self.shared_read = (next_read, sum(usage_cost(row) or 0.0 for row in usage), self.spent)
        _, stored, spent_then = self.shared_read
        total = stored + self.spent - spent_then
        if total >= self.max_cost:
            self.stopped = f"the run's estimated spend ${total:.4f}, by every worker, reached the budget of ${self.max_cost:g} (--max-cost)"
            return True
        return False
