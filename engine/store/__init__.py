"""Where results are kept: the `Store` interface and its implementations. This is the only
layer that talks to a database."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .base import (
    Direction,
    Outcome,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
    RunSummary,
    ScoreStats,
    Source,
    Stage,
    Store,
)
from .sqlite import SQLiteStore


def open_store(store: Store | str | Path | None) -> Store | None:
    """A store from what a caller passes: a Store, a SQLite file path, or None."""
    if store is None or isinstance(store, Store):
        return store
    if isinstance(store, (str, Path)):
        return SQLiteStore(store)
    raise ConfigError(f"store must be a Store or a SQLite file path, got {type(store).__name__}")


__all__ = [
    "Direction",
    "Outcome",
    "ResultRecord",
    "RunInfo",
    "RunLease",
    "RunStatus",
    "RunSummary",
    "SQLiteStore",
    "ScoreStats",
    "Source",
    "Stage",
    "Store",
    "open_store",
]
