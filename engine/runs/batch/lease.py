"""The process lease: one process at a time runs a run, so a second process resuming the same
run is refused instead of judging every item twice. A crashed process frees it when its lease
runs out (at once, when it ran on this host and its pid is gone). A runner made of several
runs (align) holds one lease over all of them (`held`)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

from ...errors import ConfigError
from ...formatting import one_line
from ...store import RunLease, Store
from ..owners import new_owner, pid_alive

logger = logging.getLogger("engine.evals")

#: How long a run's lease lasts without being renewed (a crashed process frees it then).
LEASE_SECONDS = 60.0


class Lease:
    """This process's hold on a run, renewed while it runs."""

    def __init__(self, store: Store, run: str, shown: str | None = None) -> None:
        self.store = store
        self.run = run
        #: What the refusal calls what is held (the run, by default).
        self.shown = shown or f"run {run!r}"
        self.host = socket.gethostname()
        self.owner = new_owner()
        self.renewing: asyncio.Task[None] | None = None

    def _lease(self) -> RunLease:
        expires = datetime.now(timezone.utc) + timedelta(seconds=LEASE_SECONDS)
        return RunLease(run=self.run, owner=self.owner, pid=os.getpid(), host=self.host, expires_at=expires)

    def take(self) -> None:
        holder = self.store.lease_run(self._lease())
        if holder is not None and holder.host == self.host and not pid_alive(holder.pid):
            self.store.release_run(self.run, holder.owner)  # left by a process that died
            holder = self.store.lease_run(self._lease())
        if holder is not None:
            raise ConfigError(
                f"{self.shown} is being run by another process (pid {holder.pid} on {holder.host}); "
                "wait for it to end, or give this one another --run name"
            )

    def keep_renewing(self) -> None:
        """Renew the lease in the background until `release`."""
        self.renewing = asyncio.create_task(self._keep())

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            try:
                await asyncio.to_thread(self.store.lease_run, self._lease())
            except Exception as exc:  # the run goes on; the lease lapses at worst
                logger.warning("could not renew the lease of run %r: %s", self.run, one_line(exc))

    def release(self) -> None:
        if self.renewing is not None:
            self.renewing.cancel()
        try:
            self.store.release_run(self.run, self.owner)
        except Exception as exc:
            logger.warning("could not release the lease of run %r: %s", self.run, one_line(exc))


@asynccontextmanager
async def held(store: Store, key: str, shown: str) -> AsyncIterator[Lease]:
    """This process's lease on `key`, taken (or refused, naming `shown`) before the body
    runs, renewed while it runs, and released after it."""
    lease = Lease(store, key, shown)
    await asyncio.to_thread(lease.take)
    lease.keep_renewing()
    try:
        yield lease
    finally:
        lease.release()
