"""The store contract: what every results store does, run against each backend alike.

Every test here takes `backend` (a fresh, empty store's location and what the migration tests
need to build its database as an earlier release left it) or `store` (that store, open), and
runs once per backend in `BACKENDS`. What one backend alone does (SQLite's files and WAL, a
PostgreSQL server's pool, workers on many machines) is tested beside it, in
tests/test_store*.py and tests/test_postgres_store.py.

A third backend runs the whole suite by one more entry in `BACKENDS`: a function that makes
its fresh store for one test. For a store registered as `register_store_backend("mystore",
MyStore)` whose schema is the numbered `MIGRATIONS` of `mystore.py` over a `Database` of
engine/db:

    def mystore(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
        server = request.getfixturevalue("mystore_server")  # started for the session
        location = server.new_database()                    # "mystore://..."
        return Backend("mystore", location, mystore.MIGRATIONS,
                       database=lambda migrations: MyDatabase(location, migrations),
                       moment=lambda moment: moment, json=lambda value: value)

    BACKENDS = {"sqlite": sqlite, "postgresql": postgresql, "mystore": mystore}

A capability the backend lacks (say `SharesWork`) skips the tests of that capability, saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.db import Database, Migration
from engine.db.sqlite import SQLiteDatabase
from engine.formatting import to_json
from engine.store import Store, open_store


@dataclass(frozen=True)
class Backend:
    """One store for one test, and how its database is written as an earlier release wrote it."""

    name: str
    #: A fresh, empty store: a URL, or a file path.
    location: str
    #: The backend's schema, one migration per version.
    migrations: tuple[Migration, ...]
    #: The database at `location` with only the given migrations applied (an earlier release's schema).
    database: Callable[[Sequence[Migration]], Database]
    #: How the database's timestamp and JSON columns hold a value (as the releases wrote them).
    moment: Callable[[datetime], Any]
    json: Callable[[Any], Any]

    def open(self) -> Store:
        opened = open_store(self.location)
        assert opened is not None
        return opened


def sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    from engine.store.sqlite_schema import MIGRATIONS

    path = tmp_path / "results.sqlite"
    return Backend(
        "sqlite",
        str(path),
        MIGRATIONS,
        database=lambda migrations: SQLiteDatabase(path, migrations),
        moment=lambda moment: moment.timestamp(),
        json=lambda value: None if value is None else to_json(value),
    )


def postgresql(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    from psycopg.types.json import Json

    from engine.db.postgres import PostgresDatabase
    from engine.store.postgres_schema import MIGRATIONS

    url: str = request.getfixturevalue("postgres_url")

    def database(migrations: Sequence[Migration]) -> Database:
        return PostgresDatabase(url, migrations, what="store", version_table="schema_version", migration_lock=1)

    return Backend(
        "postgresql",
        url,
        MIGRATIONS,
        database=database,
        moment=lambda moment: moment,
        json=lambda value: None if value is None else Json(value, dumps=to_json),
    )


#: Every backend the contract is held to, by name.
BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], Backend]] = {"sqlite": sqlite, "postgresql": postgresql}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BACKENDS[request.param](request, tmp_path)


@pytest.fixture
def store(backend: Backend) -> Iterator[Store]:
    opened = backend.open()
    yield opened
    opened.close()
