"""Where the response cache keeps its answers: a small key-value table over the storage floor
(`engine/db`), in one of two homes: a private SQLite file (one machine), or tables in a
PostgreSQL database (a fleet of processes on many machines sharing what they were told),
which may be the results store's database too.

Both are one class over a `Database`: the SQL is the same, and what differs (the clock, JSON,
the placeholder) is the database's. Their schemas are versioned like the results store's, so
a cache file or table written by an older release is upgraded in place. A failure in use is
a `StoreError` (with no password in it); a cache that cannot be opened at all, a
`ConfigError`.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...db import Database, Migration, check_sequence, redact_url, url_passwords, url_scheme, where
from ...db.postgres import PostgresDatabase
from ...db.sqlite import SQLiteDatabase, failure_reason
from ...errors import ConfigError
from ...scrub import install_log_filter, remember_secret

_HINT = " (--cache picks another, --no-cache turns it off)"


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


#: The cache file's schema. Version 1 is the schema files had before it was versioned: its
#: statements are idempotent, so such a file is upgraded in place.
SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "answers by key, and the hit counts of sessions",
        (
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer TEXT NOT NULL, "
            "usage TEXT, created_at REAL NOT NULL, used_at REAL NOT NULL)",
            "CREATE INDEX IF NOT EXISTS responses_by_model ON responses (model, created_at)",
            "CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, "
            "hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0)",
        ),
    ),
)
#: The cache's tables in a PostgreSQL database, versioned in `scorers_cache_schema_version`
#: (apart from the results store's schema, which may share the database).
POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "answers by key, and the hit counts of sessions",
        (
            "CREATE TABLE IF NOT EXISTS scorers_responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer JSON NOT NULL, "
            "usage JSON, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), used_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            "CREATE INDEX IF NOT EXISTS scorers_responses_by_model ON scorers_responses (model, created_at)",
            "CREATE TABLE IF NOT EXISTS scorers_cache_sessions (id BIGSERIAL PRIMARY KEY, started_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
            "hits BIGINT NOT NULL DEFAULT 0, misses BIGINT NOT NULL DEFAULT 0)",
        ),
    ),
)
check_sequence(SQLITE_MIGRATIONS)
check_sequence(POSTGRES_MIGRATIONS)
# Any lock id this project owns: the processes opening the cache's tables migrate them in turn.
_POSTGRES_MIGRATION_LOCK = 7_715_123_002


class CachedResponses:
    """The cache's answers and sessions in `database`, in the tables `responses` and
    `sessions` (named per home). Safe to call from several threads and processes at once:
    every write is one statement (`INSERT ... ON CONFLICT`)."""

    def __init__(self, database: Database, responses: str, sessions: str) -> None:
        self.database = database
        self.location = database.location
        self.remote = database.remote
        self.max_connections = database.max_connections
        self._responses = responses
        self._sessions = sessions

    def get(self, key: str) -> tuple[Any, dict[str, Any] | None] | None:
        """The answer and token usage stored under `key`, if any."""
        mark = self.database.placeholder
        rows = self.database.read(f"SELECT answer, usage FROM {self._responses} WHERE key = {mark}", (key,))
        if not rows:
            return None
        return self.database.from_json(rows[0]["answer"]), self.database.from_json(rows[0]["usage"]) or None

    def put(self, key: str, model: str, step: str, answer: Any, usage: dict[str, Any] | None) -> None:
        """Store (or replace) the answer under `key`."""
        db, mark = self.database, self.database.placeholder
        now, moment = db.now()
        with db.transaction() as connection:
            connection.execute(
                f"INSERT INTO {self._responses} (key, model, step, answer, usage, created_at, used_at) "
                f"VALUES ({mark}, {mark}, {mark}, {mark}, {mark}, {now}, {now}) "
                "ON CONFLICT (key) DO UPDATE SET model = excluded.model, step = excluded.step, answer = excluded.answer, "
                "usage = excluded.usage, created_at = excluded.created_at, used_at = excluded.used_at",
                (key, model, step, db.json_value(answer), db.json_value(usage) if usage else None, *moment, *moment),
            )

    def recent_usage(self, model: str, step: str, limit: int) -> list[tuple[int, int]]:
        """(prompt, completion) tokens of the latest `limit` answers of `step` by `model`
        that a provider was paid for."""
        db, mark = self.database, self.database.placeholder
        prompt, completion = db.json_number("usage", "prompt_tokens"), db.json_number("usage", "completion_tokens")
        rows = db.read(
            f"SELECT {prompt} AS prompt, {completion} AS completion FROM {self._responses} "
            f"WHERE model = {mark} AND step = {mark} AND {completion} > 0 ORDER BY created_at DESC LIMIT {mark}",
            (model, step, limit),
        )
        return [(int(row["prompt"] or 0), int(row["completion"])) for row in rows]

    def save_session(self, session: int | None, hits: int, misses: int) -> int:
        """Record a session's counters (a new session when `session` is None); its id."""
        db, mark = self.database, self.database.placeholder
        with db.transaction() as connection:
            if session is None:
                now, moment = db.now()
                row = connection.execute(
                    f"INSERT INTO {self._sessions} (started_at, hits, misses) VALUES ({now}, {mark}, {mark}) RETURNING id",
                    (*moment, hits, misses),
                ).fetchone()
                return int(row["id"])
            connection.execute(f"UPDATE {self._sessions} SET hits = {mark}, misses = {mark} WHERE id = {mark}", (hits, misses, session))
            return session

    def stats(self, recent: int) -> CacheStats:
        db = self.database
        entries = int(db.read(f"SELECT COUNT(*) AS n FROM {self._responses}")[0]["n"])
        models = {row["model"]: int(row["n"]) for row in db.read(f"SELECT model, COUNT(*) AS n FROM {self._responses} GROUP BY model ORDER BY n DESC")}
        started = "EXTRACT(EPOCH FROM started_at)::float8" if db.dialect == "postgresql" else "started_at"
        sessions = db.read(
            f"SELECT {started} AS started, hits, misses FROM {self._sessions} WHERE hits + misses > 0 ORDER BY id DESC LIMIT {db.placeholder}",
            (recent,),
        )
        return CacheStats(
            self.location, db.dialect, entries, db.size_bytes((self._responses, self._sessions)), models,
            [(float(row["started"]), int(row["hits"]), int(row["misses"])) for row in sessions],
        )

    def clear(self, older_than: float | None, model: str | None) -> int:
        """Delete the answers stored more than `older_than` seconds ago, of `model` (both
        optional; with neither, the session history too); how many answers went."""
        conditions: list[tuple[str, list[Any]]] = []
        if older_than is not None:
            conditions.append(self.database.before("created_at", older_than))
        if model is not None:
            conditions.append((f"model = {self.database.placeholder}", [model]))
        condition, parameters = where(conditions)
        with self.database.transaction() as connection:
            deleted = connection.execute(f"DELETE FROM {self._responses}{condition}", parameters).rowcount
            if not conditions:
                connection.execute(f"DELETE FROM {self._sessions}")
        self.database.compact()  # a file that shrinks when it is cleared
        return int(deleted)

    def close(self) -> None:
        self.database.close()


def open_sqlite_responses(path: str | os.PathLike[str]) -> CachedResponses:
    """The cache file at `path` (created when missing, upgraded in place when older)."""
    try:
        database = SQLiteDatabase(Path(path), SQLITE_MIGRATIONS)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open the response cache {path}: {failure_reason(exc)}{_HINT}") from None
    return CachedResponses(database, "responses", "sessions")


def open_postgres_responses(url: str, max_connections: int = 4, connect_timeout: float = 10.0) -> CachedResponses:
    """The cache's tables in the database at `url` (created when missing), through a small
    pool of connections (a call holds one for a single statement)."""
    for secret in url_passwords(url):
        remember_secret(secret)
    install_log_filter()  # the pool logs failed connections on its own
    database = PostgresDatabase(
        url, POSTGRES_MIGRATIONS, what="response cache", version_table="scorers_cache_schema_version",
        migration_lock=_POSTGRES_MIGRATION_LOCK, max_connections=max_connections, connect_timeout=connect_timeout,
        wait_timeout=connect_timeout, hint=_HINT,
    )
    return CachedResponses(database, "scorers_responses", "scorers_cache_sessions")


#: The cache's homes by a location's URL scheme; a location without one is a SQLite file.
_HOMES = {scheme: open_postgres_responses for scheme in PostgresDatabase.schemes}


def open_responses(location: str | os.PathLike[str]) -> CachedResponses:
    """The storage at `location`: a database URL whose scheme has a home here, else a SQLite file path."""
    scheme = url_scheme(location)
    if scheme is None:
        return open_sqlite_responses(Path(location).expanduser())
    home = _HOMES.get(scheme)
    if home is None:
        known = " or ".join(f"a {name}:// URL" for name in _HOMES)
        raise ConfigError(f"response cache {redact_url(str(location))!r}: expected a file path or {known}")
    return home(str(location))


__all__ = ["CacheStats", "CachedResponses", "open_postgres_responses", "open_responses", "open_sqlite_responses"]
