"""Where results are kept: the `Store` interface and its implementations, over the storage
floor (`engine/db`) that connects to the database; `registry.py` says which one a location
names."""

from __future__ import annotations

from pathlib import Path

from ..db import redact_url
from ..errors import ConfigError
from .base import (
    CONTENT_FIELDS,
    AlertDelivery,
    AlertRecord,
    BatchJob,
    ClaimedItem,
    ContentNote,
    DeliveryState,
    Direction,
    KeepsAlerts,
    KeepsBatchJobs,
    LabelledScore,
    Outcome,
    ReadsInBulk,
    ResultRecord,
    RunInfo,
    RunKind,
    RunLease,
    RunStatus,
    RunSummary,
    ScorerUsage,
    ScoreStats,
    SharesWork,
    Source,
    Stage,
    Store,
    StoredRecord,
)
from .labels import HumanLabel, JudgedItem, KeepsLabels, ReviewItem, ReviewQueue, Settlement
from .registry import FILE_PATH, StoreBackend, register_store_backend, store_backend, store_shares_work
from .sqlite import SQLiteStore


def open_store(store: Store | str | Path | None, *, reading: bool = False) -> Store | None:
    """A store from what a caller passes: a Store, a location (a URL whose scheme names the
    store's backend, or a SQLite file path), or None. `reading`: the caller only reads, so a
    file that cannot be written (a read-only disk) is opened read-only instead of refused."""
    if store is None or isinstance(store, Store):
        return store
    if isinstance(store, (str, Path)):
        return store_backend(store).open_location(store, reading=reading)
    raise ConfigError(f"store must be a Store, a database URL or a SQLite file path, got {type(store).__name__}")


def store_location(store: Store) -> str:
    """Where a store keeps its results, for messages (a URL without its password)."""
    describe = getattr(store, "location", None)
    return str(describe) if describe is not None else str(getattr(store, "path", store))


__all__ = [
    "CONTENT_FIELDS",
    "AlertDelivery",
    "AlertRecord",
    "BatchJob",
    "ContentNote",
    "DeliveryState",
    "FILE_PATH",
    "KeepsAlerts",
    "KeepsLabels",
    "HumanLabel",
    "JudgedItem",
    "ReviewItem",
    "ReviewQueue",
    "Settlement",
    "ClaimedItem",
    "Direction",
    "KeepsBatchJobs",
    "LabelledScore",
    "Outcome",
    "ReadsInBulk",
    "ResultRecord",
    "RunInfo",
    "RunKind",
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
    "StoreBackend",
    "StoredRecord",
    "open_store",
    "redact_url",
    "register_store_backend",
    "store_backend",
    "store_location",
    "store_shares_work",
]
