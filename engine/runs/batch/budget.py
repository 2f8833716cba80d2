"""What a run may spend (`max_cost`), across its invocations: the judge's budget middleware
(judge/middleware/budget.py) holds every call to it before the call leaves; this room gives
it what the run spent before (a resumed run's stored usage) and, for a run shared by
workers, what the other workers have spent since."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ...judge.middleware.budget import SpendLimit
from ...errors import StoreError
from ...store import Store
from ..measures.stats import usage_cost

#: How often, at most, a worker of a shared run reads the whole run's spend (for --max-cost).
_SHARED_SPEND_EVERY = 0.5


def stored_spend(store: Store, run: str) -> float:
    """What a run's stored results cost (every invocation, every worker), at today's prices."""
    return sum(usage_cost(row) or 0.0 for row in store.usage(run))


class RunBudget:
    """The run's spend limit (None: no budget); `stopped` says why it stopped the run."""

    def __init__(
        self, max_cost: float | SpendLimit | None, store: Store | None, run: str, flush: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        #: A limit given whole is shared with other runs (align's runs share one budget) and
        #: already counts what they spent before: it is used as it is.
        self.shared_limit = isinstance(max_cost, SpendLimit)
        self.limit = max_cost if isinstance(max_cost, SpendLimit) else SpendLimit(max_cost) if max_cost is not None else None
        self.store = store
        self.run = run
        self.flush = flush
        self._next_read = 0.0
        #: What the items judged in this invocation cost, on average (None before the first).
        self._item_costs = (0, 0.0)
        #: What was left would not cover another item (the run stops as if the budget was reached).
        self._no_room = False
        #: An item that needed the judge was not started: the run's spend had reached the limit.
        self._held_back = False
        #: Whether this invocation resumes a run: its spend is then the store's, not this invocation's.
        self._resuming = False
        #: A shared run's spend by every worker, read when this worker ends (see `read_run_spend`).
        self.run_spend: float | None = None

    def stopped(self, spent: float | None, shared: bool = False, unit: str = "item") -> str | None:
        """Why the budget stopped the run, once it has, with what the run spent in all (the
        figure its cost table shows; for a resumed run, what its stored results cost before
        and this invocation's calls; for a run shared by workers, the store's figure of them all)."""
        if self.limit is None or not self.reached():
            return None
        if shared:
            spent = self.run_spend
        elif self._resuming and not self.shared_limit:
            spent = self.limit.total
        whose = " by every worker" if shared else ""
        total = "" if spent is None else f": the run has spent ${spent:.4f}{whose}, and what is left would not cover another {unit}"
        return f"the budget of ${self.limit.max_cost:g} (--max-cost) was reached{total}"

    async def start(self, resuming: bool) -> None:
        """A resumed run's budget counts what its earlier invocations spent."""
        self._resuming = resuming
        if self.limit is not None and resuming and self.store is not None and not self.shared_limit:
            self.limit.spent_before = await asyncio.to_thread(stored_spend, self.store, self.run)

    def reached(self) -> bool:
        """Whether the budget stopped the run: it kept an item or a call from the judge. A
        spend at the limit with nothing left to ask (a finished run read back) stops nothing."""
        return self.limit is not None and (self._no_room or self._held_back or self.limit.refused > 0)

    def hold_back(self) -> bool:
        """Whether an item that needs the judge must not start: the run has spent its budget
        (it is then counted as stopped by it). Items whose results are stored still count."""
        if self.limit is not None and self.limit.reached():
            self._held_back = True
        return self._held_back

    def read_run_spend(self) -> None:
        """Read what the whole run has spent (every worker's saved results), while the store
        is still open: what a shared run's stop line says."""
        if self.limit is not None and self.store is not None and self.reached():
            try:
                self.run_spend = stored_spend(self.store, self.run)
            except StoreError:
                self.run_spend = None

    def item_judged(self, cost: float) -> None:
        """One item judged in this invocation, with what its judge calls cost."""
        count, total = self._item_costs
        self._item_costs = (count + 1, total + cost)

    def room_for_another(self, in_flight: int) -> bool:
        """Whether another item may start beside `in_flight` others: what the run has spent,
        and an average item for each of them and for the new one, fit the budget. Before an
        item has been judged, what an item costs is not known, so the first goes alone."""
        limit = self.limit
        if limit is None:
            return True
        count, total = self._item_costs
        if count == 0:
            return in_flight == 0
        return limit.total + (in_flight + 1) * total / count <= limit.max_cost

    def out_of_room(self) -> None:
        """What is left would not cover another item: the run stops here."""
        self._no_room = True

    async def reached_by_all(self) -> bool:
        """For a run shared by workers: has the run's spend, every worker's as the store
        records it plus this worker's calls not saved yet, reached the budget? The whole run
        is read at most every half second, and less often when the read is slow (at most a
        twentieth of the time goes to it)."""
        limit = self.limit
        if limit is None or self.store is None:
            return False
        started = time.monotonic()
        if started >= self._next_read:
            if self.flush is not None:
                await self.flush()
            stored = await asyncio.to_thread(stored_spend, self.store, self.run)
            # The store holds this worker's saved results too: what it spent is counted once.
            limit.spent_before = max(0.0, stored - limit.spent)
            self._next_read = started + max(_SHARED_SPEND_EVERY, 20 * (time.monotonic() - started))
        if limit.reached():
            self._held_back = True  # the workers claim no more items
        return limit.reached()
