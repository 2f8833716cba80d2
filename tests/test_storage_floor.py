"""The storage floor under the results store and the response cache: one versioned schema
each (the cache's too, upgraded in place), failures as `StoreError`, URLs without passwords."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

import engine
from engine.db import redact_url
from engine.judge import ResponseCache
from engine.judge.middleware.cache_storage import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS


def test_a_cache_file_from_before_its_schema_was_versioned_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with sqlite3.connect(path) as old:  # the tables as earlier releases made them, no version
        old.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, step TEXT, answer TEXT NOT NULL, "
            "usage TEXT, created_at REAL NOT NULL, used_at REAL NOT NULL)"
        )
        old.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0)")
        old.execute("INSERT INTO responses VALUES ('k', 'openai/gpt-4o-mini', 'claims', '{\"claims\": []}', NULL, ?, ?)", (time.time(), time.time()))
    old.close()

    with ResponseCache(path) as cache:
        assert cache.get("k") is not None and cache.get("k")[0] == {"claims": []}  # type: ignore[index]
        cache.put("k2", "openai/gpt-4o-mini", "claims", {"claims": ["a"]}, None)
        assert cache.stats().entries == 2
        assert cache.clear(model="openai/gpt-4o-mini") == 2
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SQLITE_MIGRATIONS[-1].version


def test_a_cache_file_from_a_newer_release_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with sqlite3.connect(path) as newer:
        newer.execute("PRAGMA user_version=99")
    newer.close()
    with pytest.raises(engine.ConfigError, match=r"written by a newer version of llm-scorers"):
        ResponseCache(path)


def test_the_cache_tables_in_postgresql_have_a_version_of_their_own(postgres_url: str) -> None:
    import psycopg

    with ResponseCache(postgres_url) as cache:
        cache.put("k", "m", "s", {"a": 1}, None)
        assert cache.get("k") is not None
    with psycopg.connect(postgres_url) as connection:
        versions = [row[0] for row in connection.execute("SELECT version FROM scorers_cache_schema_version")]
    assert versions == [migration.version for migration in POSTGRES_MIGRATIONS]


def test_store_failures_are_one_kind_a_caller_can_catch_and_urls_lose_their_password() -> None:
    assert "StoreError" in engine.__all__ and issubclass(engine.StoreError, engine.ScorerError)
    assert str(engine.StoreError("the disk is full", "/data/r.sqlite")) == "/data/r.sqlite: the disk is full"
    assert redact_url("postgresql://fleet:s3cret-pass@db:5432/x") == "postgresql://fleet:***@db:5432/x"
