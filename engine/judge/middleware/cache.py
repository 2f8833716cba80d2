"""A response cache on disk: a judge question asked before gets the answer it got then,
without paying a provider again.

The key is everything that decides the answer: the judge's model, endpoint and structured-
output mode, the exact messages, the answer schema (its JSON schema), the sampling settings
and the sample index. Re-asks are not part of it (they decide whether an answer is found, not
which). Only validated answers are stored, never errors; a stored answer is validated again
when it is served, under the same rules as a fresh one, and one that no longer passes is
asked again. Identical questions in flight at the same time are sent once.

Storage is a private detail of the cache: one SQLite key-value file (not a results store),
in the user's cache directory unless a path is given, safe to share between processes.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ...errors import ConfigError
from ..protocol import AsksJudge, CallNext, JudgeAnswer, JudgeRequest, TokenUsage

logger = logging.getLogger("engine.cache")

_schemas: weakref.WeakKeyDictionary[type[BaseModel], Any] = weakref.WeakKeyDictionary()


def default_cache_path() -> Path:
    """SCORERS_CACHE, else `responses.sqlite` in the user's cache directory."""
    configured = os.environ.get("SCORERS_CACHE")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("llm-scorers")) / "responses.sqlite"


def _answer_schema(model: type[BaseModel] | None) -> Any:
    if model is None:
        return None
    schema = _schemas.get(model)
    if schema is None:
        schema = _schemas[model] = model.model_json_schema()
    return schema


def cache_key(identity: dict[str, Any], request: JudgeRequest) -> str:
    """The key of `request` to the judge described by `identity`."""
    decided_by = {
        "judge": identity,
        "messages": request.messages,
        "schema": _answer_schema(request.response_model),
        "sampling": request.sampling.model_dump(exclude={"reasks"}),
        "sample": request.sample,
    }
    return hashlib.sha256(json.dumps(decided_by, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


_DDL = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer TEXT NOT NULL, "
    "usage TEXT, created_at REAL NOT NULL, used_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS responses_by_model ON responses (model, created_at)",
    "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, "
    "hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0)",
)


@dataclass
class CacheStats:
    path: str
    entries: int
    size_bytes: int
    models: dict[str, int]
    #: (when the session started, hits, misses) of the latest sessions, newest first.
    recent: list[tuple[float, int, int]]


class ResponseCache:
    """The cache file and its counters for this process. `wrap(judge)` puts it in front of a
    judge; one cache may serve every judge of a run."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            for statement in _DDL:
                self._db.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the response cache {self.path}: {exc} (--cache PATH picks another, --no-cache turns it off)") from None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._session: int | None = None
        self._flights: dict[tuple[int, str], asyncio.Future[JudgeAnswer]] = {}
        self._closed = False
        _open_caches.add(self)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    @classmethod
    def of(cls, choice: ResponseCache | str | os.PathLike[str] | bool | None) -> ResponseCache | None:
        """The cache a `cache=` argument asks for: None/False none, True the default file
        (SCORERS_CACHE or the user's cache directory), a path that file, or the cache given.
        Caches opened here are shared per file within the process."""
        if choice is None or choice is False:
            return None
        if isinstance(choice, ResponseCache):
            return choice
        path = default_cache_path() if choice is True else Path(choice).expanduser()
        with _shared_lock:
            shared = _shared.get(path.resolve())
            if shared is None or shared._closed:
                shared = _shared[path.resolve()] = cls(path)
            return shared

    def wrap(self, judge: AsksJudge) -> AsksJudge:
        """`judge` with this cache in front; a judge that cannot say what decides its
        answers (no `identity`), or one already behind this cache, is returned as it is."""
        from . import Chain

        if getattr(judge, "response_cache", None) is self or getattr(judge, "identity", None) is None:
            return judge
        return Chain(judge, [CachedCalls(self, judge)])

    # storage

    def get(self, key: str) -> tuple[Any, TokenUsage | None] | None:
        with self._lock:
            if self._closed:
                return None
            row = self._db.execute("SELECT answer, usage FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return json.loads(row[0]), TokenUsage.model_validate_json(row[1]) if row[1] else None

    def put(self, key: str, model: str, step: str, answer: Any, usage: TokenUsage | None) -> None:
        now = time.time()
        with self._lock:
            if self._closed:
                return
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, step, answer, usage, created_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, model, step, json.dumps(answer, ensure_ascii=False), usage.model_dump_json() if usage else None, now, now),
            )

    def count(self, hit: bool) -> None:
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def stats(self, recent: int = 10) -> CacheStats:
        self.flush()
        with self._lock:
            entries = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            models = dict(self._db.execute("SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY COUNT(*) DESC").fetchall())
            sessions = self._db.execute(
                "SELECT started_at, hits, misses FROM sessions WHERE hits + misses > 0 ORDER BY id DESC LIMIT ?", (recent,)
            ).fetchall()
        size = sum(path.stat().st_size for path in self.path.parent.glob(self.path.name + "*") if path.is_file())
        return CacheStats(str(self.path), entries, size, models, [tuple(row) for row in sessions])

    def clear(self, older_than: float | None = None, model: str | None = None) -> int:
        """Delete entries (created more than `older_than` seconds ago, of `model`); how many."""
        where: list[str] = []
        parameters: list[Any] = []
        if older_than is not None:
            where.append("created_at < ?")
            parameters.append(time.time() - older_than)
        if model is not None:
            where.append("model = ?")
            parameters.append(model)
        sql = "DELETE FROM responses" + (" WHERE " + " AND ".join(where) if where else "")
        with self._lock:
            deleted = self._db.execute(sql, parameters).rowcount
            if not where:
                self._db.execute("DELETE FROM sessions")
            self._db.execute("VACUUM")
        return int(deleted)

    def flush(self) -> None:
        """Record this process's hits and misses (for `scorers cache stats`)."""
        with self._lock:
            if self._closed or self.hits + self.misses == 0:
                return
            if self._session is None:
                self._session = self._db.execute("INSERT INTO sessions (started_at) VALUES (?)", (time.time(),)).lastrowid
            self._db.execute("UPDATE sessions SET hits = ?, misses = ? WHERE id = ?", (self.hits, self.misses, self._session))

    def new_session(self) -> None:
        """Count hits and misses afresh from here (a batch run is one session of the stats)."""
        self.flush()
        with self._lock:
            self.hits = self.misses = 0
            self._session = None

    def close(self) -> None:
        self.flush()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()
        _open_caches.discard(self)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_open_caches: weakref.WeakSet[ResponseCache] = weakref.WeakSet()
_shared: dict[Path, ResponseCache] = {}
_shared_lock = threading.Lock()


@atexit.register
def _flush_open_caches() -> None:
    for cache in list(_open_caches):
        try:
            cache.flush()
        except sqlite3.Error:
            pass


class CachedCalls:
    """The middleware: one cache in front of one judge."""

    def __init__(self, cache: ResponseCache, judge: AsksJudge) -> None:
        self.cache = cache
        self.identity: dict[str, Any] = getattr(judge, "identity")
        self.model = judge.model

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        cache = self.cache
        key = cache_key(self.identity, request)
        try:
            stored = cache.get(key)
        except sqlite3.Error as exc:  # a broken cache must not stop a run
            logger.warning("response cache %s unreadable: %s", cache.path, exc)
            stored = None
        if stored is not None:
            value = _revalidated(request, stored[0])
            if value is not _REFUSED:
                cache.count(hit=True)
                return JudgeAnswer(value=value, usage=None, cached=True)
        flight_key = (id(asyncio.get_running_loop()), key)
        leader = cache._flights.get(flight_key)
        if leader is not None:
            try:
                answer = await asyncio.shield(leader)
            except asyncio.CancelledError:
                if not leader.cancelled():
                    raise  # this caller was cancelled, not the one it waited for
            else:
                value = _revalidated(request, _stored_form(answer.value))
                if value is not _REFUSED:
                    cache.count(hit=True)
                    return JudgeAnswer(value=value, usage=None, cached=True)
        future: asyncio.Future[JudgeAnswer] = asyncio.get_running_loop().create_future()
        cache._flights[flight_key] = future
        try:
            answer = await call_next(request)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: waiters, if any, raise it themselves
            raise
        finally:
            if cache._flights.get(flight_key) is future:
                del cache._flights[flight_key]
        future.set_result(answer)
        cache.count(hit=False)
        try:
            cache.put(key, self.model, request.step, _stored_form(answer.value), answer.usage)
        except sqlite3.Error as exc:
            logger.warning("response cache %s not written: %s", cache.path, exc)
        return answer


_REFUSED = object()


def _stored_form(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _revalidated(request: JudgeRequest, stored: Any) -> Any:
    """A stored answer, validated as a fresh one would be (the rules of the step may read the
    run's earlier steps); `_REFUSED` when it does not pass."""
    if request.response_model is None:
        return stored if isinstance(stored, str) else _REFUSED
    try:
        return request.response_model.model_validate(stored)
    except ValidationError:
        return _REFUSED
