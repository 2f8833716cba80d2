"""The storage floor: what the results store and the response cache share about keeping data
in a database. Connections (one SQLite file per process, or a pool of PostgreSQL
connections), versioned schemas upgraded in place, short transactions, a driver's failure as
one `StoreError`, and database URLs without their password.

Nothing here knows what is stored: the store and the cache bring their own tables."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .migrations import Migration, check_sequence, latest_version, pending, split_statements
from .urls import redact_url, url_passwords, url_scheme, without_url_password


class Database(Protocol):
    """What a store or a cache asks of its database, whichever it is."""

    dialect: str
    #: The driver's parameter placeholder: `?` (sqlite3) or `%s` (psycopg).
    placeholder: str
    #: Where it is, fit for messages (a URL's password masked).
    location: str
    #: Its calls wait on a network (async callers run them off the event loop).
    remote: bool
    max_connections: int

    def transaction(self) -> AbstractContextManager[Any]: ...

    def read(self, sql: str, parameters: Sequence[Any] = ()) -> Sequence[Any]: ...

    def now(self) -> tuple[str, list[Any]]: ...

    def before(self, column: str, seconds_ago: float) -> tuple[str, list[Any]]: ...

    def json_value(self, value: Any) -> Any: ...

    def from_json(self, stored: Any) -> Any: ...

    def json_number(self, column: str, field: str) -> str: ...

    def size_bytes(self, tables: Sequence[str]) -> int: ...

    def compact(self) -> None: ...

    def close(self) -> None: ...


def where(conditions: Sequence[tuple[str, Sequence[Any]]]) -> tuple[str, list[Any]]:
    """` WHERE a AND b` and the parameters of each condition, in order ('' for none)."""
    if not conditions:
        return "", []
    return " WHERE " + " AND ".join(sql for sql, _ in conditions), [value for _, values in conditions for value in values]


__all__ = [
    "Database",
    "Migration",
    "check_sequence",
    "latest_version",
    "pending",
    "redact_url",
    "split_statements",
    "url_passwords",
    "url_scheme",
    "where",
    "without_url_password",
]
