"""Where the response cache keeps its answers: a small key-value interface with two homes,
a private SQLite file (one machine) and a table in a PostgreSQL database (a fleet of
processes on many machines sharing what they were told).

Each storage is safe to call from several threads and processes at once, turns its driver's
failures into `CacheStorageError` (with no password in the message), and raises
`ConfigError` when it cannot be opened at all.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import ConfigError


class CacheStorageError(Exception):
    """The cache's storage failed (locked, disconnected, full): the run goes on without it."""


@dataclass
class CacheStats:
    #: The file, or the database URL with its password masked.
    location: str
    backend: str
    entries: int
    size_bytes: int
    models: dict[str, int]
    #: (when the session started, hits, misses) of the latest sessions, newest first.
    recent: list[tuple[float, int, int]]


class CacheStorage(Protocol):
    """What `ResponseCache` needs from where it keeps answers."""

    #: Where it is, fit for messages (a URL's password masked).
    location: str
    #: Its calls wait on a network, so async callers run them off the event loop...
    remote: bool
    #: ...in at most this many threads (one connection each).
    max_connections: int

    def get(self, key: str) -> tuple[Any, dict[str, Any] | None] | None:
        """The answer and token usage stored under `key`, if any."""
        ...

    def put(self, key: str, model: str, step: str, answer: Any, usage: dict[str, Any] | None) -> None:
        """Store (or replace) the answer under `key`."""
        ...

    def recent_usage(self, model: str, step: str, limit: int) -> list[tuple[int, int]]:
        """(prompt, completion) tokens of the latest `limit` answers of `step` by `model`
        that a provider was paid for."""
        ...

    def save_session(self, session: int | None, hits: int, misses: int) -> int:
        """Record a session's counters (a new session when `session` is None); its id."""
        ...

    def stats(self, recent: int) -> CacheStats: ...

    def clear(self, older_than: float | None, model: str | None) -> int:
        """Delete the answers stored more than `older_than` seconds ago, of `model` (both
        optional; with neither, the session history too); how many answers went."""
        ...

    def close(self) -> None: ...


_SQLITE_DDL = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer TEXT NOT NULL, "
    "usage TEXT, created_at REAL NOT NULL, used_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS responses_by_model ON responses (model, created_at)",
    "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, "
    "hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0)",
)


class SQLiteResponses:
    """One SQLite key-value file (not a results store), shared safely between the processes
    of one machine through SQLite's own locking."""

    remote = False
    max_connections = 1

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            for statement in _SQLITE_DDL:
                self._db.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the response cache {self.path}: {exc} (--cache PATH picks another, --no-cache turns it off)") from None
        self._lock = threading.Lock()

    @contextmanager
    def _database(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                raise CacheStorageError(str(exc)) from exc

    def get(self, key: str) -> tuple[Any, dict[str, Any] | None] | None:
        with self._database() as db:
            row = db.execute("SELECT answer, usage FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return json.loads(row[0]), json.loads(row[1]) if row[1] else None

    def put(self, key: str, model: str, step: str, answer: Any, usage: dict[str, Any] | None) -> None:
        now = time.time()
        with self._database() as db:
            db.execute(
                "INSERT OR REPLACE INTO responses (key, model, step, answer, usage, created_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, model, step, json.dumps(answer, ensure_ascii=False), json.dumps(usage) if usage else None, now, now),
            )

    def recent_usage(self, model: str, step: str, limit: int) -> list[tuple[int, int]]:
        with self._database() as db:
            rows = db.execute(
                "SELECT json_extract(usage, '$.prompt_tokens'), json_extract(usage, '$.completion_tokens') FROM responses "
                "WHERE model = ? AND step = ? AND json_extract(usage, '$.completion_tokens') > 0 ORDER BY created_at DESC LIMIT ?",
                (model, step, limit),
            ).fetchall()
        return [(int(row[0] or 0), int(row[1])) for row in rows]

    def save_session(self, session: int | None, hits: int, misses: int) -> int:
        with self._database() as db:
            if session is None:
                cursor = db.execute("INSERT INTO sessions (started_at, hits, misses) VALUES (?, ?, ?)", (time.time(), hits, misses))
                assert cursor.lastrowid is not None
                return cursor.lastrowid
            db.execute("UPDATE sessions SET hits = ?, misses = ? WHERE id = ?", (hits, misses, session))
            return session

    def stats(self, recent: int) -> CacheStats:
        with self._database() as db:
            entries = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            models = dict(db.execute("SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY COUNT(*) DESC").fetchall())
            sessions = db.execute(
                "SELECT started_at, hits, misses FROM sessions WHERE hits + misses > 0 ORDER BY id DESC LIMIT ?", (recent,)
            ).fetchall()
        size = sum(path.stat().st_size for path in self.path.parent.glob(self.path.name + "*") if path.is_file())
        return CacheStats(self.location, "sqlite", entries, size, models, [tuple(row) for row in sessions])

    def clear(self, older_than: float | None, model: str | None) -> int:
        where: list[str] = []
        parameters: list[Any] = []
        if older_than is not None:
            where.append("created_at < ?")
            parameters.append(time.time() - older_than)
        if model is not None:
            where.append("model = ?")
            parameters.append(model)
        with self._database() as db:
            deleted = db.execute("DELETE FROM responses" + (" WHERE " + " AND ".join(where) if where else ""), parameters).rowcount
            if not where:
                db.execute("DELETE FROM sessions")
            db.execute("VACUUM")  # a file that shrinks when it is cleared
        return int(deleted)

    def close(self) -> None:
        with self._lock:
            self._db.close()
