"""Results in one SQLite file: the embedded default store."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..db.sqlite import SQLiteDatabase, failure_name, failure_reason
from ..errors import ConfigError, StoreError
from ..formatting import to_json
from .base import (
    CONTENT_FIELDS,
    merged_meta,
    AlertDelivery,
    AlertRecord,
    BatchJob,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
)
from .alerts_sql import CLAIM, DELIVERY_SELECT, LAST_ALERT, RELEASE, changes_state
from .labels import SQLLabels
from .sql import RESULT_COLUMNS, SQLResults
from .sqlite_schema import MIGRATIONS, OUR_TABLES, PIECES, piece_list


_INSERT = (
    f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join('?' for _ in RESULT_COLUMNS)}) "
    f"ON CONFLICT (run, item_id, scorer_id) DO UPDATE SET {', '.join(f'{column} = excluded.{column}' for column in RESULT_COLUMNS)}"
)
#: Pieces no record holds any more (after a run is deleted or pruned, or a record replaced).
#: The digests only seen go too: a text seen again afterwards is kept in its record once more.
_SWEEP = (
    "DELETE FROM contents WHERE body IS NULL "
    "OR id IN (SELECT id FROM contents EXCEPT SELECT value FROM results, json_each(results.pieces))"
)


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
        if version == 0 and tables - OUR_TABLES:
            raise ConfigError(
                f"{where} is an SQLite database of something else (tables: {', '.join(sorted(tables - OUR_TABLES))}), "
                "not a results store; give another",
                parameter="store",
            )

    return check


class SQLiteStore(SQLResults, SQLLabels):
    """Results in one SQLite file, in WAL mode: readers never block the writer, and several
    processes may write the same file (each write is one short transaction, retried while
    another process holds the lock for up to `busy_timeout` seconds). `reading=True` (for
    callers that only read) opens a file that cannot be written read-only."""

    pieces = PIECES

    def __init__(self, path: str | Path, busy_timeout: float = 30.0, *, reading: bool = False) -> None:
        super().__init__()
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

    @classmethod
    def open_location(cls, location: str | Path, *, reading: bool = False) -> SQLiteStore:
        return cls(location, reading=reading)

    @classmethod
    def exists(cls, location: str | Path) -> bool:
        return Path(location).exists()

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

    def end_run(self, name: str, status: RunStatus, meta: dict[str, Any] | None = None, added: Mapping[str, int] | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = ?, updated_at = ? WHERE name = ?", (status, time.time(), name))
            if meta or added:
                row = db.execute("SELECT meta FROM runs WHERE name = ?", (name,)).fetchone()
                merged = merged_meta(_from_json(row["meta"]) if row is not None else None, meta, added)
                db.execute("UPDATE runs SET meta = ? WHERE name = ?", (_to_json(merged), name))

    def delete_run(self, name: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM results WHERE run = ?", (name,))
            db.execute("DELETE FROM runs WHERE name = ?", (name,))
            db.execute(_SWEEP)

    def prune_run(self, name: str, keep: set[str]) -> int:
        stale = [row[0] for row in self._read("SELECT DISTINCT item_id FROM results WHERE run = ?", (name,)) if row[0] not in keep]
        if stale:
            with self._transaction() as db:
                for start in range(0, len(stale), 500):
                    chunk = stale[start : start + 500]
                    db.execute(f"DELETE FROM results WHERE run = ? AND item_id IN ({', '.join('?' for _ in chunk)})", [name, *chunk])
                db.execute(_SWEEP)
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
        latest: dict[str, float] = {}
        for record in records:
            latest[record.run] = max(latest.get(record.run, 0.0), _timestamp(record.finished_at))
        clear_usage, keys, add_usage, usage_rows = self._usage_rows(records)
        with self._transaction() as db:
            db.executemany(_INSERT, self._result_rows(db, records))
            db.executemany(clear_usage, keys)
            db.executemany(add_usage, usage_rows)
            db.executemany("UPDATE runs SET updated_at = ? WHERE name = ?", [(moment, run) for run, moment in latest.items()])

    def _json(self, value: Any) -> str | None:
        return _to_json(value)

    @staticmethod
    def _piece_ids(stored: Any) -> list[int]:
        return [int(number) for number in stored[1:-1].split(",")] if stored else []

    @staticmethod
    def _stored_piece_ids(ids: list[int]) -> str | None:
        return piece_list(ids)

    @staticmethod
    def _stored_moment(moment: datetime) -> float:
        return _timestamp(moment)

    @staticmethod
    def _moment(stored: Any) -> datetime:
        return _moment(stored)

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
            )
            for row in rows
        ]

    # monitors and the retention of live items' content

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord | None:
        with self._transaction() as db:  # BEGIN IMMEDIATE: no other writer between the read and the insert
            if not changes_state(alert, db.execute(LAST_ALERT.format(mark="?"), (alert.monitor,)).fetchone()):
                return None
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
        return [_delivery(row) for row in self._read(f"{DELIVERY_SELECT} {where} ORDER BY a.fired_at, a.id, d.id", parameters)]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE alert_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_error = ?, delivered_at = ?, "
                "claimed_by = NULL, claimed_until = NULL WHERE id = ?",
                (
                    delivery.state, delivery.attempts, _timestamp(delivery.next_attempt_at), delivery.last_error,
                    _timestamp(delivery.delivered_at) if delivery.delivered_at is not None else None, delivery.id,
                ),
            )

    def claim_delivery(self, delivery_id: int, owner: str, seconds: float, *, taking_from: str | None = None) -> AlertDelivery | None:
        now = time.time()
        with self._transaction() as db:
            db.execute(CLAIM.format(mark="?"), (owner, now + seconds, delivery_id, now, owner, taking_from))
            row = db.execute(f"{DELIVERY_SELECT} WHERE d.id = ?", (delivery_id,)).fetchone()
        return _delivery(row) if row is not None else None

    def release_delivery(self, delivery_id: int, owner: str) -> None:
        with self._transaction() as db:
            db.execute(RELEASE.format(mark="?"), (delivery_id, owner))

    def expire_content(self, run: str, before: datetime) -> int:
        note = to_json({field: "expired" for field in CONTENT_FIELDS})
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE results SET item = NULL, content_note = ? WHERE run = ? AND source = 'live' AND finished_at < ? AND item IS NOT NULL",
                (note, run, _timestamp(before)),
            )
            return cursor.rowcount

    def close(self) -> None:
        self.database.close()


def _delivery(row: Any) -> AlertDelivery:
    return AlertDelivery(
        id=row["delivery_id"], alert=_alert(row), target=row["target"], where=row["target_name"], state=row["state"],
        attempts=row["attempts"], next_attempt_at=_moment(row["next_attempt_at"]), last_error=row["last_error"],
        delivered_at=_moment(row["delivered_at"]) if row["delivered_at"] is not None else None,
        claimed_by=row["claimed_by"], claimed_until=_moment(row["claimed_until"]) if row["claimed_until"] is not None else None,
    )


def _alert(row: Any) -> AlertRecord:
    return AlertRecord(
        id=row["id"], monitor=row["monitor"], scorer_id=row["scorer_id"], kind=row["kind"], value=row["value"], message=row["message"],
        payload=_from_json(row["payload"]) or {}, fired_at=_moment(row["fired_at"]), episode=row["episode"],
    )
