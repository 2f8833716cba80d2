"""One batch run split across worker processes through a store that shares work (PostgreSQL).

Every worker runs the same command. Each queues the run's items in the store (the first
copy of an index wins), then claims a few unfinished items at a time under a lease, scores
them exactly as a local run does, and marks them finished once their records are saved. A
lease is renewed while the worker is alive; the items of a worker that dies are claimed by
the others when its lease runs out. A worker that runs out of items waits for the items
other workers still hold, so when any worker's command ends, the whole run is scored.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine, Iterable
from typing import Any

from pydantic import ValidationError

from ...formatting import one_line
from ...store import SharesWork
from .evaluation import Stopped
from ..items import EvalItem, UnreadableItem, numbered

_QUEUE_CHUNK = 500
logger = logging.getLogger("engine.evals")


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _queued(raw: Any) -> tuple[str | None, dict[str, Any]]:
    """The item's id (None when unreadable) and its payload as queued."""
    if isinstance(raw, UnreadableItem):
        return None, {"unreadable": raw.message}
    try:
        key = EvalItem.of(raw).id  # None without an id: the claiming worker keys it by its place
    except (ValidationError, ValueError):
        key = None  # the worker that claims it records why
    return key, {"item": raw.model_dump() if isinstance(raw, EvalItem) else raw}


def _unqueued(payload: dict[str, Any]) -> Any:
    if "unreadable" in payload:
        return UnreadableItem(message=payload["unreadable"])
    return payload["item"]


async def drive_shared(
    store: SharesWork,
    run: str,
    source: Iterable[Any] | AsyncIterable[Any],
    score_item: Callable[[int, Any], Coroutine[Any, Any, None]],
    *,
    concurrency: int,
    rerun: bool,
    lease_s: float,
    stop_claiming: Callable[[], Awaitable[bool]] | None = None,
    save: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Queue the items of `source`, then score claimed items with `score_item(index, raw)`
    until no item of the run is left unfinished, or until `stop_claiming()` (asked before
    each claim) says to take no more: the items being scored are finished, the rest are
    left unclaimed. `save()` writes the records of the items scored so far, when
    `score_item` leaves them waiting: it is awaited before they are marked finished. `rerun`
    (the run existed and had ended) queues its items again, so failures are judged again and
    the rest loaded from the store."""
    chunk: list[tuple[int, str | None, Any]] = []
    async for index, _, raw in numbered(source):
        chunk.append((index, *_queued(raw)))
        if len(chunk) >= _QUEUE_CHUNK:
            await asyncio.to_thread(store.queue_items, run, chunk)
            chunk = []
    await asyncio.to_thread(store.queue_items, run, chunk)
    if rerun:
        await asyncio.to_thread(store.reopen, run)

    worker = worker_name()
    window = concurrency * 2
    # How soon an idle worker looks again for items freed by a dead worker or left by a slow one.
    idle = min(1.0, lease_s / 3)
    running: dict[asyncio.Task[None], int] = {}

    async def keep_leases() -> None:
        while True:
            await asyncio.sleep(lease_s / 3)
            try:
                await asyncio.to_thread(store.renew, run, worker, sorted(running.values()), lease_s)
            except Exception as exc:  # a missed renewal only risks another worker judging an item too
                logger.warning("could not renew the lease of %d item(s) of run %s: %s", len(running), run, one_line(exc))

    heartbeat = asyncio.create_task(keep_leases())
    stopping = False
    try:
        while True:
            if len(running) < window and not stopping:
                stopping = stop_claiming is not None and await stop_claiming()
            if len(running) < window and not stopping:
                claimed = await asyncio.to_thread(store.claim, run, worker, window - len(running), lease_s)
                for item in claimed:
                    running[asyncio.create_task(score_item(item.index, _unqueued(item.payload)))] = item.index
            if not running:
                if stopping or await asyncio.to_thread(store.unfinished, run) == 0:
                    return
                await asyncio.sleep(idle)  # the rest is held by other workers: theirs, or ours when they die
                continue
            done, _ = await asyncio.wait(set(running), timeout=idle, return_when=asyncio.FIRST_COMPLETED)
            finished = []
            for task in done:
                index = running.pop(task)
                failure = task.exception()
                if isinstance(failure, Stopped):  # the run is stopping (its judge, its budget): left for a rerun
                    stopping = True
                elif failure is not None:  # item failures are recorded, so only a bug of ours gets here
                    raise failure
                else:
                    finished.append(index)
            if save is not None:
                # Finished only once saved: a worker killed in between leaves the items open
                # for another, never marked finished without their results.
                await save()
            await asyncio.to_thread(store.finish, run, worker, finished)
    finally:
        heartbeat.cancel()
        for task in running:
            task.cancel()
        await asyncio.gather(heartbeat, *running, return_exceptions=True)
