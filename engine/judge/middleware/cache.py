"""A response cache: a judge question asked before gets the answer it got then,
without paying a provider again.

The key is everything that decides the answer: the judge's model, endpoint and structured-
output mode, the exact messages, the answer schema (its JSON schema), the sampling settings
and the sample index. Re-asks are not part of it (they decide whether an answer is found, not
which). Only validated answers are stored, never errors; a stored answer is validated again
when it is served, under the same rules as a fresh one, and one that no longer passes is
asked again. Identical questions in flight at the same time are sent once.

Storage is a private detail of the cache (`cache_storage.py`, over the storage floor `engine/db`): one SQLite key-value file (not
a results store), in the user's cache directory unless a path is given, safe to share between
the processes of a machine; or, given a `postgresql://` URL, tables in that database, shared
by every process of a fleet.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ...db import url_scheme
from ...errors import ConfigError, StoreError
from ..protocol import AsksJudge, CallNext, FieldProbabilities, JudgeAnswer, JudgeRequest, TokenUsage
from .cache_storage import CacheStats, open_responses
from .shared import REFUSED, revalidated, shared_flight, stored_form
from .shared import cache_key as cache_key  # the key's home is shared.py; kept importable from here

#: A stored answer: its value, the usage of the call that paid for it, its values' probabilities.
Stored = tuple[Any, TokenUsage | None, tuple[FieldProbabilities, ...] | None]

logger = logging.getLogger("engine.cache")


def default_cache_location() -> str | Path:
    """SCORERS_CACHE (a file path or a `postgresql://` URL), else `responses.sqlite` in the
    user's cache directory."""
    configured = os.environ.get("SCORERS_CACHE")
    if configured:
        return configured if is_database_url(configured) else Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("llm-scorers")) / "responses.sqlite"


def is_database_url(location: object) -> bool:
    return url_scheme(location) is not None


class ResponseCache:
    """The cache's storage and its counters for this process. `wrap(judge)` puts it in
    front of a judge; one cache may serve every judge of a run.

    A storage that fails during a run (a locked file, a database gone away) costs a warning,
    never the run: its answers are asked of the judge, and the storage is left alone for
    `pause_after_failure` seconds so that an outage does not slow every call."""

    pause_after_failure = 30.0

    def __init__(self, location: str | os.PathLike[str] | None = None) -> None:
        self.storage = open_responses(location if location is not None else default_cache_location())
        self.location = self.storage.location
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._session: int | None = None
        self._flights: dict[tuple[int, str], asyncio.Future[JudgeAnswer]] = {}
        self._paused_until = 0.0
        self._flushing = threading.Lock()  # one session row per session, whoever flushes
        # A remote storage is called from these threads, one connection each, never from
        # the event loop; made when first needed.
        self._threads: ThreadPoolExecutor | None = None
        self._closed = False
        _open_caches.add(self)

    def __repr__(self) -> str:
        return f"ResponseCache({self.location!r})"

    @classmethod
    def of(cls, choice: ResponseCache | str | os.PathLike[str] | bool | None) -> ResponseCache | None:
        """The cache a `cache=` argument asks for: None/False none, True the default
        (SCORERS_CACHE, else a file in the user's cache directory), a file path or a
        `postgresql://` URL, or the cache given. Caches opened here are shared per file or
        database within the process."""
        if choice is None or choice is False:
            return None
        if isinstance(choice, ResponseCache):
            return choice
        location = default_cache_location() if choice is True else choice
        shared_as: str | Path = str(location) if is_database_url(location) else Path(location).expanduser().resolve()
        with _shared_lock:
            shared = _shared.get(shared_as)
            if shared is None or shared._closed:
                shared = _shared[shared_as] = cls(location)
            return shared

    def wrap(self, judge: AsksJudge) -> AsksJudge:
        """`judge` with this cache in front; a judge that cannot say what decides its
        answers (no `identity`), or one already behind this cache, is returned as it is."""
        from . import Chain

        if getattr(judge, "response_cache", None) is self or getattr(judge, "identity", None) is None:
            return judge
        return Chain(judge, [CachedCalls(self, judge)])

    # answers

    def get(self, key: str) -> Stored | None:
        """The stored answer, its usage and its values' probabilities; None when there is
        none or the storage failed."""
        stored = self._attempt(lambda: self.storage.get(key), "unreadable")
        if stored is None:
            return None
        usage = dict(stored[1] or {})
        weighed = usage.pop("probabilities", None)
        probabilities = tuple(FieldProbabilities.model_validate(figure) for figure in weighed) if weighed else None
        return stored[0], TokenUsage.model_validate(usage) if usage else None, probabilities

    def put(self, key: str, model: str, step: str, answer: Any, usage: TokenUsage | None, probabilities: tuple[FieldProbabilities, ...] | None = None) -> None:
        """Store an answer; a storage failure is a warning. Its values' probabilities are
        kept beside its usage, so an answer served again is as sure as when it was paid for."""
        dumped = usage.model_dump(mode="json") if usage is not None else None
        if probabilities:
            dumped = {**(dumped or {}), "probabilities": [figure.model_dump(mode="json") for figure in probabilities]}
        self._attempt(lambda: self.storage.put(key, model, step, answer, dumped), "not written")

    async def aget(self, key: str) -> Stored | None:
        """`get` without holding up the event loop on a remote storage."""
        return await self._off_the_loop(self.get, key)

    async def stored_answer(self, key: str, request: JudgeRequest) -> Stored | None:
        """The stored answer to `request` (under its `cache_key`), validated as a fresh one
        would be, with the usage of the call that first paid for it; None when the cache
        holds no answer that passes. Not counted as a hit: nothing was asked."""
        stored = await self.aget(key)
        if stored is None:
            return None
        value = revalidated(request, stored[0])
        return None if value is REFUSED else (value, stored[1], stored[2])

    def recent_usage(self, model: str, step: str, limit: int = 500) -> list[tuple[int, int]]:
        """(prompt, completion) tokens of recent paid answers of `step` by `model`: an
        estimate's evidence of how long such questions and answers are; empty when the
        storage fails."""
        return self._attempt(lambda: self.storage.recent_usage(model, step, limit), "unreadable") or []

    async def aput(self, key: str, model: str, step: str, answer: Any, usage: TokenUsage | None, probabilities: tuple[FieldProbabilities, ...] | None = None) -> None:
        """`put` without holding up the event loop on a remote storage."""
        await self._off_the_loop(self.put, key, model, step, answer, usage, probabilities)

    async def _off_the_loop(self, call: Callable[..., _T], *arguments: Any) -> _T:
        with self._lock:
            if not self.storage.remote or self._closed:
                threads = None  # a local file answers faster than a thread could start
            elif self._threads is None:
                threads = self._threads = ThreadPoolExecutor(max_workers=self.storage.max_connections, thread_name_prefix="scorers-cache")
            else:
                threads = self._threads
        if threads is None:
            return call(*arguments)
        return await asyncio.get_running_loop().run_in_executor(threads, call, *arguments)

    def _attempt(self, action: Callable[[], _T], failure: str) -> _T | None:
        if self._closed or time.monotonic() < self._paused_until:
            return None
        try:
            return action()
        except StoreError as exc:
            with self._lock:
                warn = time.monotonic() >= self._paused_until
                self._paused_until = time.monotonic() + self.pause_after_failure
            if warn:  # once per outage, not once per call
                logger.warning(
                    "response cache %s %s: %s (judging without it for the next %.0f s)", self.location, failure, exc.message, self.pause_after_failure
                )
            return None

    def count(self, hit: bool) -> None:
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    # what it holds

    def stats(self, recent: int = 10) -> CacheStats:
        self.flush()
        return self._maintain(lambda: self.storage.stats(recent))

    def clear(self, older_than: float | None = None, model: str | None = None) -> int:
        """Delete entries (created more than `older_than` seconds ago, of `model`); how many."""
        return self._maintain(lambda: self.storage.clear(older_than, model))

    def _maintain(self, action: Callable[[], _T]) -> _T:
        # Asked for by the user, so a failure is theirs to see (one line), not a warning.
        try:
            return action()
        except StoreError as exc:
            raise ConfigError(f"response cache {self.location}: {exc.message}") from None

    # sessions of the hit rate

    def flush(self) -> None:
        """Record this process's hits and misses (for `scorers cache stats`)."""
        with self._flushing:
            with self._lock:
                if self.hits + self.misses == 0:
                    return
                session, hits, misses = self._session, self.hits, self.misses
            saved = self._attempt(lambda: self.storage.save_session(session, hits, misses), "could not count hits")
            if saved is not None:
                with self._lock:
                    self._session = saved

    def new_session(self) -> None:
        """Count hits and misses afresh from here (a batch run is one session of the stats)."""
        self.flush()
        with self._lock:
            self.hits = self.misses = 0
            self._session = None

    def close(self) -> None:
        if self._closed:
            return
        self.flush()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = self._threads
        if threads is not None:
            threads.shutdown(wait=True)
        self.storage.close()
        _open_caches.discard(self)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_T = TypeVar("_T")
_open_caches: weakref.WeakSet[ResponseCache] = weakref.WeakSet()
_shared: dict[str | Path, ResponseCache] = {}
_shared_lock = threading.Lock()


@atexit.register
def close_open_caches() -> None:
    """Close every cache of this process: their last hit counts reach the storage, and a
    database's pool is closed (at exit, before the interpreter tears its threads down)."""
    for cache in list(_open_caches):
        cache.close()


class CachedCalls:
    """The middleware: one cache in front of one judge."""

    def __init__(self, cache: ResponseCache, judge: AsksJudge) -> None:
        self.cache = cache
        self.identity: dict[str, Any] = getattr(judge, "identity")
        self.model = judge.model

    @property
    def response_cache(self) -> ResponseCache:
        """The cache this middleware keeps (what `Chain.response_cache` finds)."""
        return self.cache

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        # The first of identical questions leads: it reads the storage, asks if it must and
        # stores the answer; the others wait for it. It stays the leader until the answer is
        # stored, so no question slips in between its being asked and its being readable.
        key = cache_key(self.identity, request)
        return await shared_flight(self.cache._flights, key, request, lambda: self._lead(request, key, call_next), lambda: self.cache.count(hit=True))

    async def _lead(self, request: JudgeRequest, key: str, call_next: CallNext) -> JudgeAnswer:
        cache = self.cache
        stored = await cache.stored_answer(key, request)
        if stored is not None:
            cache.count(hit=True)
            return JudgeAnswer(value=stored[0], usage=None, cached=True, probabilities=stored[2])
        answer = await call_next(request)
        cache.count(hit=False)
        await cache.aput(key, self.model, request.step, stored_form(answer.value), answer.usage, answer.probabilities)
        return answer
