"""Results in a PostgreSQL database: one store shared by many processes on many machines.

Live hosts and batch workers write into the same database at once; every write is one short
transaction keyed by (run, item, scorer), so nothing is lost or stored twice. A batch run
can be split across workers: each claims unfinished items with `FOR UPDATE SKIP LOCKED`
under a lease, and the items of a worker that dies go to the others when the lease ends.

Needs the `postgres` extra (psycopg 3 and psycopg_pool).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..db.postgres import PostgresDatabase
from ..formatting import to_json
from .base import (
    CONTENT_FIELDS,
    merged_meta,
    AlertDelivery,
    AlertRecord,
    BatchJob,
    ClaimedItem,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
)
from .postgres_schema import MIGRATIONS, PIECES
from .alerts_sql import CLAIM, DELIVERY_SELECT, LAST_ALERT, RELEASE, changes_state
from .labels import SQLLabels
from .sql import RESULT_COLUMNS, SQLResults

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import DictRow


_INSERT = (
    f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join('%s' for _ in RESULT_COLUMNS)}) "
    f"ON CONFLICT (run, item_id, scorer_id) DO UPDATE SET {', '.join(f'{column} = excluded.{column}' for column in RESULT_COLUMNS)}"
)
# The class of the locks taken per monitor (with the hash of its name) while an alert is
# kept: two processes seeing the same change of state store it one after the other.
_ALERT_LOCKS = 7715
# Any lock id shared by every process opening the schema: migrations run one at a time.
_MIGRATION_LOCK = 7_715_123_001
# Taken shared by every save (which may point to pieces it found stored) and alone by a
# sweep of the pieces no record holds, so a sweep never takes a piece a save is about to hold.
_PIECES_LOCK = 7_715_123_003
#: The digests only seen go too: a text seen again afterwards is kept in its record once more.
_SWEEP = "DELETE FROM contents WHERE body IS NULL OR id IN (SELECT id FROM contents EXCEPT SELECT unnest(pieces) FROM results)"




# A run's latest activity: records no longer touch the run's row (which every writer of a
# big shared run would otherwise queue on), so it is read from the records.
_RUN_UPDATED = "GREATEST(runs.updated_at, (SELECT MAX(finished_at) FROM results WHERE results.run = runs.name)) AS updated_at"


class PostgresStore(SQLResults, SQLLabels):
    """Results in a PostgreSQL database, through a pool of connections shared by the threads
    of this process."""

    pieces = PIECES
    placeholder = "%s"
    by_code_point = ' COLLATE "C"'
    runs_sql = f"SELECT name, source, status, created_at, meta, {_RUN_UPDATED} FROM runs ORDER BY updated_at DESC"

    def __init__(self, url: str, max_connections: int = 8, connect_timeout: float = 10.0) -> None:
        super().__init__()
        self.url = url
        self.database = PostgresDatabase(
            url, MIGRATIONS, what="store", named="PostgreSQL store", version_table="schema_version", migration_lock=_MIGRATION_LOCK,
            max_connections=max_connections, connect_timeout=connect_timeout, wait_timeout=connect_timeout * 3,
        )
        self.location = self.database.location

    @classmethod
    def open_location(cls, location: str | Path, *, reading: bool = False) -> PostgresStore:
        return cls(str(location))

    @classmethod
    def exists(cls, location: str | Path) -> bool:
        return True  # the server says when it is opened

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> AbstractContextManager[psycopg.Connection[DictRow]]:
        return self.database.transaction()

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> list[DictRow]:
        return self.database.read(sql, parameters)

    # runs

    def begin_run(self, run: RunInfo) -> RunInfo:
        now = datetime.now(timezone.utc)
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (name, source, status, created_at, updated_at, meta) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, "
                "meta = excluded.meta",
                (run.name, run.source, run.status, run.created_at, now, self.database.json_value(run.meta)),
            )
        stored = self.get_run(run.name)
        assert stored is not None
        return stored

    def end_run(self, name: str, status: RunStatus, meta: dict[str, Any] | None = None, added: Mapping[str, int] | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = %s, updated_at = now() WHERE name = %s", (status, name))
            if meta or added:
                row = db.execute("SELECT meta FROM runs WHERE name = %s FOR UPDATE", (name,)).fetchone()
                merged = merged_meta((row or {}).get("meta"), meta, added)
                db.execute("UPDATE runs SET meta = %s WHERE name = %s", (self.database.json_value(merged), name))

    def delete_run(self, name: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM results WHERE run = %s", (name,))
            db.execute("DELETE FROM runs WHERE name = %s", (name,))
        self._sweep()

    def prune_run(self, name: str, keep: set[str]) -> int:
        stale = [row["item_id"] for row in self._read("SELECT DISTINCT item_id FROM results WHERE run = %s", (name,)) if row["item_id"] not in keep]
        if stale:
            with self._transaction() as db:
                db.execute("DELETE FROM results WHERE run = %s AND item_id = ANY(%s)", (name, stale))
            self._sweep()
        return len(stale)

    def _sweep(self) -> None:
        """Delete the pieces no record holds, once no save is under way (saves wait meanwhile)."""
        with self._transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_PIECES_LOCK,))
            db.execute(_SWEEP)

    def lease_run(self, lease: RunLease) -> RunLease | None:
        # One statement takes the lease or leaves it: a SELECT ... FOR UPDATE locks no row that
        # is not there yet, so processes reaching for a free lease together each took it (6 of 8).
        while True:
            with self._transaction() as db:
                taken = db.execute(
                    "INSERT INTO run_leases (run, owner, pid, host, expires_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run) DO UPDATE SET "
                    "owner = excluded.owner, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at "
                    "WHERE run_leases.owner = excluded.owner OR run_leases.expires_at <= %s RETURNING owner",
                    (lease.run, lease.owner, lease.pid, lease.host, lease.expires_at, datetime.now(timezone.utc)),
                ).fetchone()
                if taken is not None:
                    return None
                row = db.execute("SELECT * FROM run_leases WHERE run = %s", (lease.run,)).fetchone()
            if row is not None:  # else its holder let go meanwhile: take it again
                return RunLease(run=row["run"], owner=row["owner"], pid=row["pid"], host=row["host"], expires_at=row["expires_at"])

    def release_run(self, name: str, owner: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM run_leases WHERE run = %s AND owner = %s", (name, owner))

    def get_run(self, name: str) -> RunInfo | None:
        rows = self._read(f"SELECT name, source, status, created_at, meta, {_RUN_UPDATED} FROM runs WHERE name = %s", (name,))
        return self._run(rows[0]) if rows else None

    @staticmethod
    def _run(row: DictRow) -> RunInfo:
        return RunInfo(
            name=row["name"], source=row["source"], status=row["status"], created_at=row["created_at"],
            updated_at=row["updated_at"], meta=row["meta"] or {},
        )

    # records

    def save(self, record: ResultRecord) -> None:
        self.save_many([record])

    def save_many(self, records: list[ResultRecord]) -> None:
        """Every record in one transaction (a batch run saves in batches)."""
        if not records:
            return
        clear_usage, keys, add_usage, usage_rows = self._usage_rows(records)
        with self._transaction() as db, db.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_PIECES_LOCK,))
            cursor.executemany(_INSERT, self._result_rows(db, records))
            cursor.executemany(clear_usage, keys)
            if usage_rows:
                cursor.executemany(add_usage, usage_rows)

    def _json(self, value: Any) -> Any:
        return self.database.json_value(value)

    @staticmethod
    def _values(row: Any) -> Sequence[Any]:
        return list(row.values())

    @staticmethod
    def _json_text(stored: Any) -> str | None:
        return None if stored is None else to_json(stored)

    # provider batch jobs

    def save_batch_job(self, job: BatchJob) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO batch_jobs (run, batch_id, model, status, requests, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, now()) "
                "ON CONFLICT (run, batch_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
                (job.run, job.batch_id, job.model, job.status, job.requests, job.created_at),
            )

    def batch_jobs(self, run: str) -> list[BatchJob]:
        rows = self._read("SELECT * FROM batch_jobs WHERE run = %s ORDER BY created_at, batch_id", (run,))
        return [BatchJob.model_validate(dict(row)) for row in rows]

    # the shared work queue of a run

    def queue_items(self, run: str, items: list[tuple[int, str | None, Any]]) -> None:
        if not items:
            return
        with self._transaction() as db, db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO work_items (run, item_index, item_id, payload) VALUES (%s, %s, %s, %s) "
                # A rerun after the data changed judges the items as they are now, as a local
                # rerun does: a finished item takes the new payload (reopen queues it again).
                "ON CONFLICT (run, item_index) DO UPDATE SET item_id = excluded.item_id, payload = excluded.payload "
                "WHERE work_items.finished_at IS NOT NULL AND work_items.payload::text <> excluded.payload::text",
                [(run, index, item_id, self.database.json_value(payload)) for index, item_id, payload in items],
            )

    def reopen(self, run: str) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE work_items SET finished_at = NULL, claimed_by = NULL, lease_until = NULL "
                "WHERE run = %s AND finished_at IS NOT NULL",
                (run,),
            )
            return cursor.rowcount

    def claim(self, run: str, worker: str, limit: int, lease_s: float) -> list[ClaimedItem]:
        with self._transaction() as db:
            rows = db.execute(
                "UPDATE work_items SET claimed_by = %s, lease_until = now() + make_interval(secs => %s), claims = claims + 1 "
                "WHERE (run, item_index) IN ("
                "  SELECT run, item_index FROM work_items WHERE run = %s AND finished_at IS NULL "
                "  AND (lease_until IS NULL OR lease_until < now()) ORDER BY item_index LIMIT %s FOR UPDATE SKIP LOCKED"
                ") RETURNING item_index, payload",
                (worker, lease_s, run, limit),
            ).fetchall()
        return sorted((ClaimedItem(index=row["item_index"], payload=row["payload"]) for row in rows), key=lambda item: item.index)

    def renew(self, run: str, worker: str, indexes: list[int], lease_s: float) -> None:
        if not indexes:
            return
        with self._transaction() as db:
            db.execute(
                "UPDATE work_items SET lease_until = now() + make_interval(secs => %s) "
                "WHERE run = %s AND claimed_by = %s AND item_index = ANY(%s) AND finished_at IS NULL",
                (lease_s, run, worker, indexes),
            )

    def finish(self, run: str, worker: str, indexes: list[int]) -> None:
        if not indexes:
            return
        with self._transaction() as db:
            # Finished whoever holds it now: the records are saved, so a worker whose lease
            # ran out while it was still scoring must not leave the item open for a third.
            db.execute(
                "UPDATE work_items SET finished_at = now(), lease_until = NULL WHERE run = %s AND item_index = ANY(%s)",
                (run, indexes),
            )

    def unfinished(self, run: str) -> int:
        rows = self._read("SELECT COUNT(*) AS n FROM work_items WHERE run = %s AND finished_at IS NULL", (run,))
        return int(rows[0]["n"])

    # monitors and the retention of live items' content

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord | None:
        with self._transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_ALERT_LOCKS, alert.monitor))
            if not changes_state(alert, db.execute(LAST_ALERT.format(mark="%s"), (alert.monitor,)).fetchone()):
                return None
            row = db.execute(
                "INSERT INTO monitor_alerts (monitor, scorer_id, kind, value, message, payload, fired_at, episode) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (alert.monitor, alert.scorer_id, alert.kind, alert.value, alert.message, self.database.json_value(alert.payload), alert.fired_at, alert.episode),
            ).fetchone()
            assert row is not None
            alert_id = int(row["id"])
            for target, name in deliveries:
                db.execute(
                    "INSERT INTO alert_deliveries (alert_id, target, target_name, state, next_attempt_at) VALUES (%s, %s, %s, 'pending', %s)",
                    (alert_id, target, name, alert.fired_at),
                )
        return alert.model_copy(update={"id": alert_id})

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        where, parameters = ("WHERE monitor = %s", [monitor]) if monitor is not None else ("", [])
        rows = self._read(f"SELECT * FROM monitor_alerts {where} ORDER BY fired_at DESC, id DESC LIMIT %s", [*parameters, int(limit)])
        return [AlertRecord.model_validate(dict(row)) for row in rows]

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]:
        conditions: list[str] = []
        parameters: list[Any] = []
        if pending_only:
            conditions.append("d.state = 'pending'")
        if due_by is not None:
            conditions.append("d.next_attempt_at <= %s")
            parameters.append(due_by)
        if monitor is not None:
            conditions.append("a.monitor = %s")
            parameters.append(monitor)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        return [_delivery(row) for row in self._read(f"{DELIVERY_SELECT} {where} ORDER BY a.fired_at, a.id, d.id", parameters)]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE alert_deliveries SET state = %s, attempts = %s, next_attempt_at = %s, last_error = %s, delivered_at = %s, "
                "claimed_by = NULL, claimed_until = NULL WHERE id = %s",
                (delivery.state, delivery.attempts, delivery.next_attempt_at, delivery.last_error, delivery.delivered_at, delivery.id),
            )

    def claim_delivery(self, delivery_id: int, owner: str, seconds: float, *, taking_from: str | None = None) -> AlertDelivery | None:
        now = datetime.now(timezone.utc)
        with self._transaction() as db:
            # A row another claim is updating is waited for, then the condition is read again.
            db.execute(CLAIM.format(mark="%s"), (owner, now + timedelta(seconds=seconds), delivery_id, now, owner, taking_from))
            row = db.execute(f"{DELIVERY_SELECT} WHERE d.id = %s", (delivery_id,)).fetchone()
        return _delivery(row) if row is not None else None

    def release_delivery(self, delivery_id: int, owner: str) -> None:
        with self._transaction() as db:
            db.execute(RELEASE.format(mark="%s"), (delivery_id, owner))

    def expire_content(self, run: str, before: datetime) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE results SET item = NULL, content_note = %s WHERE run = %s AND source = 'live' AND finished_at < %s AND item IS NOT NULL",
                (self.database.json_value({field: "expired" for field in CONTENT_FIELDS}), run, before),
            )
            return cursor.rowcount

    def close(self) -> None:
        self.database.close()


_ALERT_FIELDS = set(AlertRecord.model_fields)


def _delivery(row: DictRow) -> AlertDelivery:
    return AlertDelivery(
        id=row["delivery_id"], alert=AlertRecord.model_validate({key: value for key, value in row.items() if key in _ALERT_FIELDS}),
        target=row["target"], where=row["target_name"], state=row["state"], attempts=row["attempts"], next_attempt_at=row["next_attempt_at"],
        last_error=row["last_error"], delivered_at=row["delivered_at"], claimed_by=row["claimed_by"], claimed_until=row["claimed_until"],
    )
