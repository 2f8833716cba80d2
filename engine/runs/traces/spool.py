"""What the receiver accepted and has not finished scoring, kept in an SQLite file of its own
before the exporter is answered: spans of a trace stay until every score of its items is
recorded, so a restart scores them again (items already in the store are not scored twice)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from ...db.migrations import Migration
from ...db.sqlite import SQLiteDatabase
from .otlp import Span, span_of

_MIGRATIONS = (
    Migration(1, "spans accepted and not yet scored", (
        "CREATE TABLE spans (id INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, span TEXT NOT NULL, received REAL NOT NULL)",
        "CREATE INDEX spans_by_trace ON spans (trace_id)",
    )),
)


class Spool:
    """Spans accepted, by trace, in `path` (an SQLite file)."""

    def __init__(self, path: str | Path) -> None:
        self.database = SQLiteDatabase(path, _MIGRATIONS)

    def add(self, spans: Iterable[Span]) -> None:
        """Keep `spans`, in one transaction: once this returns they survive a crash."""
        now = time.time()
        rows = [(span.trace_id, json.dumps(span.as_json()), now) for span in spans]
        with self.database.transaction() as connection:
            connection.executemany("INSERT INTO spans (trace_id, span, received) VALUES (?, ?, ?)", rows)

    def pending(self) -> dict[str, list[Span]]:
        """Every trace kept, with its spans (what a restarted receiver scores)."""
        traces: dict[str, list[Span]] = {}
        for row in self.database.read("SELECT trace_id, span FROM spans ORDER BY id"):
            traces.setdefault(row[0], []).append(span_of(json.loads(row[1])))
        return traces

    def remove(self, trace_id: str) -> None:
        with self.database.transaction() as connection:
            connection.execute("DELETE FROM spans WHERE trace_id = ?", (trace_id,))

    def count(self) -> int:
        return int(self.database.read("SELECT count(*) FROM spans")[0][0])

    def close(self) -> None:
        self.database.close()
