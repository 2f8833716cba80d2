"""Results in one SQLite file: the embedded default store."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..db import Migration, check_sequence, split_statements
from ..db.sqlite import SQLiteDatabase, failure_name, failure_reason
from ..errors import ConfigError, StoreError
from ..formatting import to_json
from .base import (
    CONTENT_FIELDS,
    AlertDelivery,
    AlertRecord,
    BatchJob,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
)
from .labels import LABEL_MIGRATION_TITLE, SQLLabels, label_tables
from .sql import SQLResults

_RESULTS_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    name        TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    meta        TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS results (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run               TEXT NOT NULL,
    source            TEXT NOT NULL,
    item_id           TEXT NOT NULL,
    item_index        INTEGER,
    scorer_id         TEXT NOT NULL,
    scorer_hash       TEXT,
    model             TEXT,
    direction         TEXT NOT NULL,
    score             REAL,
    reason            TEXT,
    error             TEXT,
    error_stage       TEXT,
    input             TEXT,
    output            TEXT,
    context           TEXT,
    ground_truth      TEXT,
    metadata          TEXT,
    steps             TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens      INTEGER NOT NULL DEFAULT 0,
    latency_ms        REAL,
    started_at        REAL NOT NULL,
    finished_at       REAL NOT NULL,
    UNIQUE (run, item_id, scorer_id)
);
CREATE INDEX IF NOT EXISTS results_by_scorer ON results (scorer_id, finished_at);
CREATE INDEX IF NOT EXISTS results_by_time ON results (finished_at);
CREATE INDEX IF NOT EXISTS results_by_run_scorer ON results (run, scorer_id, score);
"""

#: The schema, one migration per release that changed it (see engine/db/migrations.py). Version 1 is
#: the first released schema: its statements are idempotent because files of that release
#: already hold its tables.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs and results", split_statements(_RESULTS_DDL)),
    Migration(
        2,
        "a jury's judges and whether they disagreed",
        ("ALTER TABLE results ADD COLUMN judges TEXT", "ALTER TABLE results ADD COLUMN disagreement INTEGER"),
    ),
    Migration(
        3,
        "provider batch jobs of a run, so a stopped --batch-api run resumes polling",
        (
            "CREATE TABLE batch_jobs (run TEXT NOT NULL, batch_id TEXT NOT NULL, model TEXT NOT NULL, "
            "status TEXT NOT NULL, requests INTEGER NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, "
            "PRIMARY KEY (run, batch_id))",
        ),
    ),
    Migration(
        4,
        "fingerprints of what produced a result, the not-scorable outcome, and one process per run",
        (
            # Reuse a stored result only for the same item content (and the same scorer, whose
            # fingerprint scorer_hash now also covers options and judge settings).
            "ALTER TABLE results ADD COLUMN item_hash TEXT",
            # The scorer could not judge the item: a third outcome beside scores and errors.
            "ALTER TABLE results ADD COLUMN not_scorable TEXT",
            "CREATE TABLE run_leases (run TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, "
            "host TEXT NOT NULL, expires_at REAL NOT NULL)",
        ),
    ),
    Migration(5, "each item's human label beside its score, for agreement measured from stored runs", ("ALTER TABLE results ADD COLUMN expected TEXT",)),
    Migration(
        6,
        "a big run's figures read from one index, not from its records (scorers results, the report)",
        ("CREATE INDEX results_outcomes ON results (run, scorer_id, score, direction, expected, item_index, item_id, error, not_scorable)",),
    ),
    Migration(
        7,
        "monitors' alerts, and which fields of a live item were not kept whole (for re-scoring)",
        (
            "ALTER TABLE results ADD COLUMN content_note TEXT",
            "CREATE TABLE monitor_alerts (id INTEGER PRIMARY KEY AUTOINCREMENT, monitor TEXT NOT NULL, scorer_id TEXT NOT NULL, "
            "kind TEXT NOT NULL, value REAL, message TEXT NOT NULL, payload TEXT NOT NULL, fired_at REAL NOT NULL)",
            "CREATE INDEX monitor_alerts_by_monitor ON monitor_alerts (monitor, fired_at)",
        ),
    ),
    Migration(
        8,
        "each result's judge calls and tokens in rows of their own, so a run's usage is summed without reading its steps; "
        "a run's failures and its items' order read from indexes (scorers results, the report)",
        (
            "CREATE INDEX results_failures ON results (run, finished_at) WHERE error IS NOT NULL",
            "CREATE INDEX results_item_positions ON results (run, item_id, item_index)",
            "CREATE TABLE result_usage (result_id INTEGER NOT NULL, model TEXT, batch INTEGER NOT NULL, judge_calls INTEGER NOT NULL, "
            "cached_calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
            "cached_prompt_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL)",
            "CREATE INDEX result_usage_by_result ON result_usage (result_id)",
            # Whatever deletes a result (a run deleted, items pruned) deletes its usage.
            "CREATE TRIGGER result_usage_goes_with_its_result AFTER DELETE ON results "
            "BEGIN DELETE FROM result_usage WHERE result_id = OLD.id; END",
            # The figures of the results already stored, read from their steps as usage() did
            # before this version (engine/store/sql.py's usage_of follows the same rules).
            "INSERT INTO result_usage (result_id, model, batch, judge_calls, cached_calls, prompt_tokens, completion_tokens, "
            "cached_prompt_tokens, reasoning_tokens) "
            "SELECT c.result_id, c.model, COALESCE(json_extract(c.step, '$.batch'), 0) AS batch, "
            "SUM(json_extract(c.step, '$.usage') IS NOT NULL), SUM(COALESCE(json_extract(c.step, '$.cached'), 0)), "
            "SUM(COALESCE(json_extract(c.step, '$.usage.prompt_tokens'), 0)), SUM(COALESCE(json_extract(c.step, '$.usage.completion_tokens'), 0)), "
            "SUM(COALESCE(json_extract(c.step, '$.usage.cached_prompt_tokens'), 0)), SUM(COALESCE(json_extract(c.step, '$.usage.reasoning_tokens'), 0)) "
            "FROM ("
            "SELECT r.id AS result_id, r.model AS model, s.value AS step FROM results AS r, json_each(r.steps) AS s "
            "WHERE NOT EXISTS (SELECT 1 FROM json_each(r.judges) AS j, json_each(j.value, '$.steps')) "
            "UNION ALL SELECT r.id, json_extract(j.value, '$.model'), s.value "
            "FROM results AS r, json_each(r.judges) AS j, json_each(j.value, '$.steps') AS s"
            ") AS c "
            "WHERE json_extract(c.step, '$.usage') IS NOT NULL OR json_extract(c.step, '$.cached') "
            "GROUP BY c.result_id, c.model, batch",
        ),
    ),
    Migration(
        9,
        "an outbox of monitors' alerts: each alert's episode, and its deliveries to webhooks kept until a receiver takes them",
        (
            "ALTER TABLE monitor_alerts ADD COLUMN episode TEXT",
            "CREATE TABLE alert_deliveries (id INTEGER PRIMARY KEY AUTOINCREMENT, alert_id INTEGER NOT NULL, target TEXT NOT NULL, "
            "target_name TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL, "
            "last_error TEXT, delivered_at REAL)",
            "CREATE INDEX alert_deliveries_pending ON alert_deliveries (state, next_attempt_at)",
        ),
    ),
    Migration(10, LABEL_MIGRATION_TITLE, label_tables("REAL")),
)
check_sequence(MIGRATIONS)
#: Tables a results store may hold; an SQLite file with others is something else.
_OUR_TABLES = {"runs", "results", "result_usage", "batch_jobs", "run_leases", "monitor_alerts", "alert_deliveries", "sqlite_sequence",
               "review_queues", "review_items", "review_labels", "review_leases", "review_settlements"}

_JSON_COLUMNS = ("input", "output", "context", "ground_truth", "metadata", "expected", "steps", "judges", "content_note")
_COLUMNS = (
    "run", "source", "item_id", "item_index", "scorer_id", "scorer_hash", "item_hash", "model", "direction", "score", "reason",
    "error", "error_stage", "not_scorable", *_JSON_COLUMNS, "disagreement", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms",
    "started_at", "finished_at",
)  # fmt: skip


def _to_json(value: Any) -> str | None:
    # Items may hold anything a host passes (dates, objects): stored as their text then.
    return None if value is None else to_json(value)


def _from_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


_LABELS: dict[Any, bool | None] = {"true": True, "false": False, None: None}


def _timestamp(moment: datetime) -> float:
    return moment.timestamp()


def _moment(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=timezone.utc)


def _refuse_other_databases(where: str) -> Callable[[sqlite3.Connection, int], None]:
    def check(connection: sqlite3.Connection, version: int) -> None:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version == 0 and tables - _OUR_TABLES:
            raise ConfigError(
                f"{where} is an SQLite database of something else (tables: {', '.join(sorted(tables - _OUR_TABLES))}), "
                "not a results store; give another",
                parameter="store",
            )

    return check


class SQLiteStore(SQLResults, SQLLabels):
    """Results in one SQLite file, in WAL mode: readers never block the writer, and several
    processes may write the same file (each write is one short transaction, retried while
    another process holds the lock for up to `busy_timeout` seconds). `reading=True` (for
    callers that only read) opens a file that cannot be written read-only."""

    def __init__(self, path: str | Path, busy_timeout: float = 30.0, *, reading: bool = False) -> None:
        self.path = Path(path)
        if str(path) != ":memory:" and self.path.is_dir():
            raise ConfigError(f"the results store {path} is a folder; give a file path (e.g. {self.path / 'results.sqlite'})")
        try:
            self.database = SQLiteDatabase(path, MIGRATIONS, busy_timeout=busy_timeout, reading=reading, before_migrating=_refuse_other_databases(str(path)))
        except (OSError, sqlite3.Error) as exc:
            if failure_name(exc) in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
                raise ConfigError(f"{path} is not a results database of llm-scorers ({exc}); give another", parameter="store") from None
            reason = failure_reason(exc, self.path)
            if "full" in reason or failure_name(exc).startswith("SQLITE_IOERR"):  # the disk's failure, not the path's
                raise StoreError(f"cannot open the results store {path}: {reason}") from None
            raise ConfigError(f"cannot open the results store {path}: {reason}") from None

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.database.transaction()

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.database.read(sql, parameters)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # runs

    def begin_run(self, run: RunInfo) -> RunInfo:
        now = time.time()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (name, source, status, created_at, updated_at, meta) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, "
                "meta = excluded.meta",
                (run.name, run.source, run.status, _timestamp(run.created_at), now, _to_json(run.meta)),
            )
        stored = self.get_run(run.name)
        assert stored is not None
        return stored

    def end_run(self, name: str, status: RunStatus, meta: dict[str, Any] | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = ?, updated_at = ? WHERE name = ?", (status, time.time(), name))
            if meta:
                row = db.execute("SELECT meta FROM runs WHERE name = ?", (name,)).fetchone()
                merged = {**(_from_json(row["meta"]) or {}), **meta} if row is not None else meta
                db.execute("UPDATE runs SET meta = ? WHERE name = ?", (_to_json(merged), name))

    def delete_run(self, name: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM results WHERE run = ?", (name,))
            db.execute("DELETE FROM runs WHERE name = ?", (name,))

    def prune_run(self, name: str, keep: set[str]) -> int:
        stale = [row[0] for row in self._read("SELECT DISTINCT item_id FROM results WHERE run = ?", (name,)) if row[0] not in keep]
        with self._transaction() as db:
            for start in range(0, len(stale), 500):
                chunk = stale[start : start + 500]
                db.execute(f"DELETE FROM results WHERE run = ? AND item_id IN ({', '.join('?' for _ in chunk)})", [name, *chunk])
        return len(stale)

    def lease_run(self, lease: RunLease) -> RunLease | None:
        now = time.time()
        with self._transaction() as db:
            row = db.execute("SELECT * FROM run_leases WHERE run = ?", (lease.run,)).fetchone()
            if row is not None and row["owner"] != lease.owner and row["expires_at"] > now:
                return RunLease(run=row["run"], owner=row["owner"], pid=row["pid"], host=row["host"], expires_at=_moment(row["expires_at"]))
            db.execute(
                "INSERT INTO run_leases (run, owner, pid, host, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run) DO UPDATE SET "
                "owner = excluded.owner, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at",
                (lease.run, lease.owner, lease.pid, lease.host, _timestamp(lease.expires_at)),
            )
        return None

    def release_run(self, name: str, owner: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM run_leases WHERE run = ? AND owner = ?", (name, owner))

    def get_run(self, name: str) -> RunInfo | None:
        rows = self._read("SELECT * FROM runs WHERE name = ?", (name,))
        return self._run(rows[0]) if rows else None

    @staticmethod
    def _run(row: sqlite3.Row) -> RunInfo:
        return RunInfo(
            name=row["name"],
            source=row["source"],
            status=row["status"],
            created_at=_moment(row["created_at"]),
            updated_at=_moment(row["updated_at"]),
            meta=_from_json(row["meta"]) or {},
        )

    # records

    def save(self, record: ResultRecord) -> None:
        self.save_many([record])

    def save_many(self, records: list[ResultRecord]) -> None:
        """One transaction for all of `records`: a batch run saves in batches, so the disk
        is synced once per batch rather than once per result."""
        if not records:
            return
        rows = []
        for record in records:
            values = record.model_dump(include=set(_COLUMNS))
            for column in _JSON_COLUMNS:
                values[column] = _to_json(values[column])
            values["started_at"] = _timestamp(record.started_at)
            values["finished_at"] = _timestamp(record.finished_at)
            rows.append([values[column] for column in _COLUMNS])
        placeholders = ", ".join("?" for _ in _COLUMNS)
        updates = ", ".join(f"{column} = excluded.{column}" for column in _COLUMNS)
        latest: dict[str, float] = {}
        for record in records:
            latest[record.run] = max(latest.get(record.run, 0.0), _timestamp(record.finished_at))
        clear_usage, keys, add_usage, usage_rows = self._usage_rows(records)
        with self._transaction() as db:
            db.executemany(
                f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({placeholders}) "
                f"ON CONFLICT (run, item_id, scorer_id) DO UPDATE SET {updates}",
                rows,
            )
            db.executemany(clear_usage, keys)
            db.executemany(add_usage, usage_rows)
            db.executemany("UPDATE runs SET updated_at = ? WHERE name = ?", [(moment, run) for run, moment in latest.items()])

    @staticmethod
    def _record(row: sqlite3.Row) -> ResultRecord:
        data: dict[str, Any] = {column: row[column] for column in _COLUMNS}
        for column in _JSON_COLUMNS:
            data[column] = _from_json(data[column])
        data["metadata"] = data["metadata"] or {}
        data["steps"] = data["steps"] or {}
        data["started_at"] = _moment(data["started_at"])
        data["finished_at"] = _moment(data["finished_at"])
        return ResultRecord.model_validate(data)

    @staticmethod
    def _stored_moment(moment: datetime) -> float:
        return _timestamp(moment)

    @staticmethod
    def _label(stored: Any) -> Any:
        # Labels are true, false or a number: read without a JSON parse per row.
        return _LABELS[stored] if stored in _LABELS else _from_json(stored)

    # provider batch jobs

    def save_batch_job(self, job: BatchJob) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO batch_jobs (run, batch_id, model, status, requests, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (run, batch_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
                (job.run, job.batch_id, job.model, job.status, job.requests, _timestamp(job.created_at), time.time()),
            )

    def batch_jobs(self, run: str) -> list[BatchJob]:
        rows = self._read("SELECT * FROM batch_jobs WHERE run = ? ORDER BY created_at, batch_id", (run,))
        return [
            BatchJob(
                run=row["run"], batch_id=row["batch_id"], model=row["model"], status=row["status"], requests=row["requests"],
                created_at=_moment(row["created_at"]), updated_at=_moment(row["updated_at"]),
            )  # fmt: skip
            for row in rows
        ]

    # monitors and the retention of live items' content

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO monitor_alerts (monitor, scorer_id, kind, value, message, payload, fired_at, episode) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (alert.monitor, alert.scorer_id, alert.kind, alert.value, alert.message, to_json(alert.payload), _timestamp(alert.fired_at), alert.episode),
            )
            alert_id = cursor.lastrowid
            for target, name in deliveries:
                db.execute(
                    "INSERT INTO alert_deliveries (alert_id, target, target_name, state, next_attempt_at) VALUES (?, ?, ?, 'pending', ?)",
                    (alert_id, target, name, _timestamp(alert.fired_at)),
                )
        return alert.model_copy(update={"id": alert_id})

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        where, parameters = ("WHERE monitor = ?", [monitor]) if monitor is not None else ("", [])
        rows = self._read(f"SELECT * FROM monitor_alerts {where} ORDER BY fired_at DESC, id DESC LIMIT ?", [*parameters, int(limit)])
        return [_alert(row) for row in rows]

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]:
        conditions: list[str] = []
        parameters: list[Any] = []
        if pending_only:
            conditions.append("d.state = 'pending'")
        if due_by is not None:
            conditions.append("d.next_attempt_at <= ?")
            parameters.append(_timestamp(due_by))
        if monitor is not None:
            conditions.append("a.monitor = ?")
            parameters.append(monitor)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._read(
            "SELECT d.id AS delivery_id, d.target, d.target_name, d.state, d.attempts, d.next_attempt_at, d.last_error, d.delivered_at, a.* "
            f"FROM alert_deliveries AS d JOIN monitor_alerts AS a ON a.id = d.alert_id {where} ORDER BY a.fired_at, a.id, d.id",
            parameters,
        )
        return [
            AlertDelivery(
                id=row["delivery_id"], alert=_alert(row), target=row["target"], where=row["target_name"], state=row["state"],
                attempts=row["attempts"], next_attempt_at=_moment(row["next_attempt_at"]), last_error=row["last_error"],
                delivered_at=_moment(row["delivered_at"]) if row["delivered_at"] is not None else None,
            )  # fmt: skip
            for row in rows
        ]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE alert_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_error = ?, delivered_at = ? WHERE id = ?",
                (
                    delivery.state, delivery.attempts, _timestamp(delivery.next_attempt_at), delivery.last_error,
                    _timestamp(delivery.delivered_at) if delivery.delivered_at is not None else None, delivery.id,
                ),
            )  # fmt: skip

    def expire_content(self, run: str, before: datetime) -> int:
        cleared = ", ".join(f"{field} = NULL" for field in CONTENT_FIELDS)
        note = to_json({field: "expired" for field in CONTENT_FIELDS})
        with self._transaction() as db:
            cursor = db.execute(
                f"UPDATE results SET {cleared}, content_note = ? WHERE run = ? AND source = 'live' AND finished_at < ? "
                "AND (output IS NOT NULL OR input IS NOT NULL OR context IS NOT NULL)",
                (note, run, _timestamp(before)),
            )
            return cursor.rowcount

    def close(self) -> None:
        self.database.close()


def _alert(row: Any) -> AlertRecord:
    return AlertRecord(
        id=row["id"], monitor=row["monitor"], scorer_id=row["scorer_id"], kind=row["kind"], value=row["value"], message=row["message"],
        payload=_from_json(row["payload"]) or {}, fired_at=_moment(row["fired_at"]), episode=row["episode"],
    )  # fmt: skip
