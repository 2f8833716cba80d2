"""Where results are kept: the `Store` interface and its implementations. This is the only
layer that talks to a database."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..judge.secrets import redact_url
from .base import (
    CONTENT_FIELDS,
    AlertRecord,
    BatchJob,
    ClaimedItem,
    ContentNote,
    Direction,
    KeepsAlerts,
    KeepsBatchJobs,
    Outcome,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
    RunSummary,
    ScorerUsage,
    ScoreStats,
    SharesWork,
    Source,
    Stage,
    Store,
)
from .sqlite import SQLiteStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def open_store(store: Store | str | Path | None) -> Store | None:
    """A store from what a caller passes: a Store, a `postgresql://` URL, a SQLite file path,
    or None."""
    if store is None or isinstance(store, Store):
        return store
    if is_postgres_url(store):
        from .postgres import (
            PostgresStore,  # psycopg is an optional extra: loaded only for it
        )

        return PostgresStore(str(store))
    if isinstance(store, (str, Path)):
        return SQLiteStore(store)
    raise ConfigError(f"store must be a Store, a postgresql:// URL or a SQLite file path, got {type(store).__name__}")


def store_location(store: Store) -> str:
    """Where a store keeps its results, for messages (a URL without its password)."""
    describe = getattr(store, "location", None)
    return str(describe) if describe is not None else str(getattr(store, "path", store))


__all__ = [
    "CONTENT_FIELDS",
    "AlertRecord",
    "BatchJob",
    "ContentNote",
    "KeepsAlerts",
    "ClaimedItem",
    "Direction",
    "KeepsBatchJobs",
    "Outcome",
    "ResultRecord",
    "RunInfo",
    "RunLease",
    "RunStatus",
    "RunSummary",
    "SQLiteStore",
    "ScorerUsage",
    "ScoreStats",
    "Source",
    "SharesWork",
    "Stage",
    "Store",
    "is_postgres_url",
    "open_store",
    "redact_url",
    "store_location",
]
