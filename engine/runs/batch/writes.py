"""Results on their way to the store, written in batches so a run makes one transaction per
few dozen results, not one per result."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from ...errors import StoreError
from ...formatting import one_line
from ...store import ResultRecord, Store, store_location


class BatchedWrites:
    """Results on their way to the store: written together, one transaction per batch, when
    `size` are waiting or every `every` seconds, and all of them when the run ends."""

    #: Failed saves after which the run stops starting items: results that cannot be kept
    #: must not be paid for (a full disk, a database gone).
    stop_after_failures = 3

    def __init__(
        self, store: Store, failed: Callable[[ResultRecord, BaseException], None], give_up: Callable[[StoreError], None], size: int = 64, every: float = 0.5
    ) -> None:
        self.store = store
        self.failed = failed
        self.give_up = give_up
        self.failures = 0
        self.size = size
        self.every = every
        self.waiting: list[ResultRecord] = []
        self._lock = asyncio.Lock()
        # Held by the thread writing a batch: the last write waits for it, so that a run
        # interrupted mid-write does not end (and its store close) before the batch is kept.
        self._writing = threading.Lock()

    async def add(self, record: ResultRecord) -> None:
        self.waiting.append(record)
        if len(self.waiting) >= self.size:
            await self.flush()

    async def flush(self) -> None:
        async with self._lock:
            batch, self.waiting = self.waiting, []
            if batch:
                # On a worker thread: a write waiting on another process's lock must not stall
                # the loop. If this task is cancelled meanwhile, the write still completes.
                await asyncio.to_thread(self._write, batch)

    async def periodically(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            await self.flush()

    def flush_now(self) -> None:
        """The last write, at the end of a run (also when it is interrupted), once a write
        already under way on its thread is done."""
        batch, self.waiting = self.waiting, []
        self._write(batch)

    def _write(self, batch: list[ResultRecord]) -> None:
        with self._writing:
            if batch:
                self._write_batch(batch)

    def _write_batch(self, batch: list[ResultRecord]) -> None:
        """One transaction for the batch; when it fails, each result on its own, so that only
        the results that really cannot be saved are counted as failures."""
        try:
            self.store.save_many(batch)
        except Exception:
            for record in batch:
                try:
                    self.store.save(record)
                except Exception as exc:
                    self.failed(record, exc)
                    self.failures += 1
                    if self.failures == self.stop_after_failures:
                        cause = exc if isinstance(exc, StoreError) else StoreError(one_line(exc), store_location(self.store))
                        self.give_up(cause)
