"""The response cache in a PostgreSQL database, so every process of a fleet is served what
any of them was told. Its own tables (`scorers_responses`, `scorers_cache_sessions`), created
when missing, can share a database with the results store.

Writes are single statements (`INSERT ... ON CONFLICT`), so any number of processes on any
number of machines may store the same answer at once. Timestamps are the server's, so
`clear --older-than` means the same on every machine whatever its clock says.

Needs the `postgres` extra (psycopg 3 and psycopg_pool), imported only when a
`postgresql://` cache is opened.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...formatting import first_line, to_json
from ..secrets import install_log_filter, redact_url, remember_secret, url_passwords, without_url_password
from .cache_storage import CacheStats, CacheStorageError

if TYPE_CHECKING:
    import psycopg

_DDL = (
    "CREATE TABLE IF NOT EXISTS scorers_responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer JSON NOT NULL, "
    "usage JSON, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), used_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    "CREATE INDEX IF NOT EXISTS scorers_responses_by_model ON scorers_responses (model, created_at)",
    "CREATE TABLE IF NOT EXISTS scorers_cache_sessions (id BIGSERIAL PRIMARY KEY, started_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
    "hits BIGINT NOT NULL DEFAULT 0, misses BIGINT NOT NULL DEFAULT 0)",
)
# Concurrent CREATE TABLE IF NOT EXISTS of one table can still collide in the catalog: the
# processes opening the cache create its tables one at a time. Any id this project owns.
_DDL_LOCK = 7_715_123_002


def _json(value: Any) -> Any:
    from psycopg.types.json import Json

    return None if value is None else Json(value, dumps=to_json)


class PostgresResponses:
    """The cache's tables in the database at `url`, through a small pool of connections
    (a call holds one for a single statement)."""

    remote = True

    def __init__(self, url: str, max_connections: int = 4, connect_timeout: float = 10.0) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigError("a postgresql:// response cache needs the postgres extra: pip install 'llm-scorers[postgres]'") from None
        self.url = url
        self.location = redact_url(url)
        for secret in url_passwords(url):
            remember_secret(secret)
        install_log_filter()  # the pool logs failed connections on its own
        try:
            # One direct connection first: a wrong URL or password fails here, at once and
            # with the server's reason, rather than as a pool timeout later.
            with psycopg.connect(url, connect_timeout=int(connect_timeout), autocommit=True) as connection, connection.transaction():
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                for statement in _DDL:
                    connection.execute(statement)
        except psycopg.Error as exc:
            raise ConfigError(
                f"cannot open the response cache {self.location}: {self._message(exc)} (--cache picks another, --no-cache turns it off)"
            ) from None
        self.max_connections = max_connections
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=connect_timeout,
            kwargs={"autocommit": True, "connect_timeout": int(connect_timeout)},
            open=True,
            name="llm-scorers-cache",
        )

    def _message(self, exc: BaseException) -> str:
        return first_line(without_url_password(str(exc), self.url)) or type(exc).__name__

    @contextmanager
    def _database(self) -> Iterator[psycopg.Connection[Any]]:
        import psycopg

        try:
            with self._pool.connection() as connection:
                yield connection
        except psycopg.Error as exc:  # also the pool's timeout and its being closed
            raise CacheStorageError(self._message(exc)) from None

    def get(self, key: str) -> tuple[Any, dict[str, Any] | None] | None:
        with self._database() as db:
            row = db.execute("SELECT answer, usage FROM scorers_responses WHERE key = %s", (key,)).fetchone()
        return None if row is None else (row[0], row[1])

    def put(self, key: str, model: str, step: str, answer: Any, usage: dict[str, Any] | None) -> None:
        with self._database() as db:
            db.execute(
                "INSERT INTO scorers_responses (key, model, step, answer, usage) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET model = excluded.model, step = excluded.step, answer = excluded.answer, "
                "usage = excluded.usage, created_at = now(), used_at = now()",
                (key, model, step, _json(answer), _json(usage)),
            )

    def recent_usage(self, model: str, step: str, limit: int) -> list[tuple[int, int]]:
        with self._database() as db:
            rows = db.execute(
                "SELECT (usage ->> 'prompt_tokens')::bigint, (usage ->> 'completion_tokens')::bigint FROM scorers_responses "
                "WHERE model = %s AND step = %s AND (usage ->> 'completion_tokens')::bigint > 0 ORDER BY created_at DESC LIMIT %s",
                (model, step, limit),
            ).fetchall()
        return [(int(row[0] or 0), int(row[1])) for row in rows]

    def save_session(self, session: int | None, hits: int, misses: int) -> int:
        with self._database() as db:
            if session is None:
                row = db.execute("INSERT INTO scorers_cache_sessions (hits, misses) VALUES (%s, %s) RETURNING id", (hits, misses)).fetchone()
                assert row is not None
                return int(row[0])
            db.execute("UPDATE scorers_cache_sessions SET hits = %s, misses = %s WHERE id = %s", (hits, misses, session))
            return session

    def stats(self, recent: int) -> CacheStats:
        with self._database() as db:
            row = db.execute("SELECT COUNT(*) FROM scorers_responses").fetchone()
            entries = int(row[0]) if row else 0
            models = {model: int(count) for model, count in db.execute("SELECT model, COUNT(*) FROM scorers_responses GROUP BY model ORDER BY COUNT(*) DESC")}
            sessions = db.execute(
                "SELECT EXTRACT(EPOCH FROM started_at)::float8, hits, misses FROM scorers_cache_sessions "
                "WHERE hits + misses > 0 ORDER BY id DESC LIMIT %s",
                (recent,),
            ).fetchall()
            size_row = db.execute("SELECT pg_total_relation_size('scorers_responses') + pg_total_relation_size('scorers_cache_sessions')").fetchone()
        size = int(size_row[0]) if size_row else 0
        return CacheStats(self.location, "postgresql", entries, size, models, [(float(at), int(hits), int(misses)) for at, hits, misses in sessions])

    def clear(self, older_than: float | None, model: str | None) -> int:
        where: list[str] = []
        parameters: list[Any] = []
        if older_than is not None:
            where.append("created_at < now() - make_interval(secs => %s)")
            parameters.append(older_than)
        if model is not None:
            where.append("model = %s")
            parameters.append(model)
        with self._database() as db:
            deleted = db.execute("DELETE FROM scorers_responses" + (" WHERE " + " AND ".join(where) if where else ""), parameters).rowcount
            if not where:
                db.execute("DELETE FROM scorers_cache_sessions")
        return int(deleted)

    def close(self) -> None:
        self._pool.close()
