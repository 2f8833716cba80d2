"""A PostgreSQL database through a pool of connections shared by the threads of a process:
opened with one direct connection first (a wrong URL or password fails at once with the
server's reason, not as a pool timeout later), its schema migrated under an advisory lock,
then served by the pool. Failures in use are `StoreError`, with no password in them.

psycopg and psycopg_pool (the `postgres` extra) are imported only when a database is opened.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, StoreError
from ..formatting import first_line, to_json
from .migrations import Migration, pending
from .urls import redact_url, without_url_password

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import DictRow
    from psycopg_pool import ConnectionPool


class PostgresDatabase:
    """The database at `url` with a schema of its own (`migrations`, versioned in
    `version_table`, so several schemas may share one database). `what` it holds, and how
    its messages name it (`named`, default `what`), say whose database it is."""

    dialect = "postgresql"
    #: The URL schemes that name a PostgreSQL database.
    schemes = ("postgresql", "postgres")
    placeholder = "%s"
    #: Calls wait on a network: async callers run them off the event loop.
    remote = True

    def __init__(
        self,
        url: str,
        migrations: Sequence[Migration],
        *,
        what: str,
        named: str | None = None,
        version_table: str,
        migration_lock: int,
        max_connections: int = 8,
        connect_timeout: float = 10.0,
        wait_timeout: float = 30.0,
        hint: str = "",
    ) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigError(f"a postgresql:// {what} needs the postgres extra: pip install 'llm-scorers[postgres]'") from None
        self.url = url
        self.location = redact_url(url)
        self.max_connections = max_connections
        try:
            with psycopg.connect(url, connect_timeout=int(connect_timeout), autocommit=True) as connection:
                self._migrate(connection, migrations, version_table, migration_lock)
        except psycopg.Error as exc:
            raise ConfigError(f"cannot open the {named or what} {self.location}: {self.reason(exc)}{hint}") from None
        # Autocommit: a read is one statement; a write block is a transaction of its own.
        self._pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=wait_timeout,
            kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": int(connect_timeout)},
            open=True,
            name=f"llm-scorers {what}",
        )

    def _migrate(self, connection: psycopg.Connection[Any], migrations: Sequence[Migration], version_table: str, lock: int) -> None:
        with connection.transaction():
            # Concurrent CREATE TABLE IF NOT EXISTS of one table can still collide in the
            # catalog: the processes opening the schema migrate it one at a time.
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
            connection.execute(f"CREATE TABLE IF NOT EXISTS {version_table} (version INTEGER NOT NULL)")
            row = connection.execute(f"SELECT MAX(version) FROM {version_table}").fetchone()
            version = (row[0] if row else None) or 0
            for migration in pending(migrations, version, self.location):
                for statement in migration.statements:
                    connection.execute(statement)
                if migration.convert is not None:
                    migration.convert(connection)
                connection.execute(f"INSERT INTO {version_table} (version) VALUES (%s)", (migration.version,))

    def reason(self, exc: BaseException) -> str:
        """A driver's error in one line, without the URL's password."""
        return first_line(without_url_password(str(exc), self.url)) or type(exc).__name__

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[DictRow]]:
        """One transaction: committed at the end of the block, rolled back on an error."""
        import psycopg

        try:
            with self._pool.connection() as connection, connection.transaction():
                yield connection
        except psycopg.Error as exc:  # also the pool's timeout and its being closed
            raise StoreError(self.reason(exc), self.location) from None

    def read(self, sql: str, parameters: Sequence[Any] = ()) -> list[DictRow]:
        import psycopg

        try:
            with self._pool.connection() as connection:
                return connection.execute(sql, parameters).fetchall()
        except psycopg.Error as exc:
            raise StoreError(self.reason(exc), self.location) from None

    # what differs from SQLite

    def now(self) -> tuple[str, list[Any]]:
        """The present moment by the server's clock, the same for every machine."""
        return "now()", []

    def before(self, column: str, seconds_ago: float) -> tuple[str, list[Any]]:
        """A condition: `column` is more than `seconds_ago` in the past."""
        return f"{column} < now() - make_interval(secs => %s)", [seconds_ago]

    def json_value(self, value: Any) -> Any:
        from psycopg.types.json import Json

        # Items may hold anything a host passes (dates, objects): stored as their text then.
        return None if value is None else Json(value, dumps=to_json)

    def from_json(self, stored: Any) -> Any:
        return stored  # JSON columns come back parsed

    def json_number(self, column: str, field: str) -> str:
        """SQL for the number under `field` of the JSON in `column`."""
        return f"({column} ->> '{field}')::bigint"

    def size_bytes(self, tables: Sequence[str]) -> int:
        rows = self.read("SELECT " + " + ".join("pg_total_relation_size(%s)" for _ in tables) + " AS size", list(tables))
        return int(rows[0]["size"]) if rows else 0

    def compact(self) -> None:
        """Nothing to do: autovacuum gives the space of deleted rows back."""

    def close(self) -> None:
        self._pool.close()
