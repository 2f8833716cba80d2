"""Results in a PostgreSQL database: one store shared by many processes on many machines.

Live hosts and batch workers write into the same database at once; every write is one short
transaction keyed by (run, item, scorer), so nothing is lost or stored twice. A batch run
can be split across workers: each claims unfinished items with `FOR UPDATE SKIP LOCKED`
under a lease, and the items of a worker that dies go to the others when the lease ends.

Needs the `postgres` extra (psycopg 3 and psycopg_pool).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..db import Migration, check_sequence, split_statements
from ..db.postgres import PostgresDatabase
from .base import (
    CONTENT_FIELDS,
    AlertDelivery,
    AlertRecord,
    BatchJob,
    ClaimedItem,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
)
from .labels import LABEL_MIGRATION_TITLE, SQLLabels, label_tables
from .sql import SQLResults

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import DictRow

_SCHEMA_V1 = """
CREATE TABLE runs (
    name        TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    meta        JSON NOT NULL DEFAULT '{}'
);
CREATE TABLE results (
    id                BIGSERIAL PRIMARY KEY,
    run               TEXT NOT NULL,
    source            TEXT NOT NULL,
    item_id           TEXT NOT NULL,
    item_index        INTEGER,
    scorer_id         TEXT NOT NULL,
    scorer_hash       TEXT,
    model             TEXT,
    direction         TEXT NOT NULL,
    score             DOUBLE PRECISION,
    reason            TEXT,
    error             TEXT,
    error_stage       TEXT,
    input             JSON,
    output            JSON,
    context           JSON,
    ground_truth      JSON,
    metadata          JSON,
    steps             JSON,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens      INTEGER NOT NULL DEFAULT 0,
    latency_ms        DOUBLE PRECISION,
    started_at        TIMESTAMPTZ NOT NULL,
    finished_at       TIMESTAMPTZ NOT NULL,
    UNIQUE (run, item_id, scorer_id)
);
CREATE INDEX results_by_scorer ON results (scorer_id, finished_at);
CREATE INDEX results_by_time ON results (finished_at);
CREATE INDEX results_by_run_scorer ON results (run, scorer_id, score);
CREATE INDEX results_by_run_time ON results (run, finished_at);
CREATE TABLE work_items (
    run          TEXT NOT NULL,
    item_index   INTEGER NOT NULL,
    item_id      TEXT,
    payload      JSON NOT NULL,
    claimed_by   TEXT,
    lease_until  TIMESTAMPTZ,
    claims       INTEGER NOT NULL DEFAULT 0,
    finished_at  TIMESTAMPTZ,
    PRIMARY KEY (run, item_index)
);
CREATE INDEX work_items_open ON work_items (run, item_index) WHERE finished_at IS NULL
"""

# A record's jury and each judge's steps as rows, for JSON that may hold something else.
_JUDGES = "json_array_elements(CASE WHEN json_typeof(r.judges) = 'array' THEN r.judges ELSE '[]'::json END)"
_JUDGE_STEPS = "json_each(CASE WHEN json_typeof(j.value -> 'steps') = 'object' THEN j.value -> 'steps' ELSE '{}'::json END)"

#: Numbered like the SQLite store's migrations where the two hold the same tables, so one
#: version means one set of features in either store.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, results and the shared work queue", split_statements(_SCHEMA_V1)),
    Migration(
        2,
        "a jury's judges and whether they disagreed",
        ("ALTER TABLE results ADD COLUMN judges JSON", "ALTER TABLE results ADD COLUMN disagreement BOOLEAN"),
    ),
    Migration(
        3,
        "provider batch jobs of a run, so a stopped --batch-api run resumes polling",
        (
            "CREATE TABLE batch_jobs (run TEXT NOT NULL, batch_id TEXT NOT NULL, model TEXT NOT NULL, "
            "status TEXT NOT NULL, requests INTEGER NOT NULL, created_at TIMESTAMPTZ NOT NULL, "
            "updated_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (run, batch_id))",
        ),
    ),
    Migration(
        4,
        "fingerprints of what produced a result, the not-scorable outcome, and one process per run",
        (
            "ALTER TABLE results ADD COLUMN item_hash TEXT",
            "ALTER TABLE results ADD COLUMN not_scorable TEXT",
            "CREATE TABLE run_leases (run TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, "
            "host TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)",
        ),
    ),
    Migration(5, "each item's human label beside its score, for agreement measured from stored runs", ("ALTER TABLE results ADD COLUMN expected JSON",)),
    Migration(
        6,
        "a big run's figures read from one index, not from its records (scorers results, the report)",
        # Labels are JSON here, which a btree cannot hold: the rest of SQLite's index.
        ("CREATE INDEX results_outcomes ON results (run, scorer_id, score, direction, item_index, item_id)",),
    ),
    Migration(
        7,
        "monitors' alerts, and which fields of a live item were not kept whole (for re-scoring)",
        (
            "ALTER TABLE results ADD COLUMN content_note JSON",
            "CREATE TABLE monitor_alerts (id BIGSERIAL PRIMARY KEY, monitor TEXT NOT NULL, scorer_id TEXT NOT NULL, "
            "kind TEXT NOT NULL, value DOUBLE PRECISION, message TEXT NOT NULL, payload JSON NOT NULL, fired_at TIMESTAMPTZ NOT NULL)",
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
            # Whatever deletes a result (a run deleted, items pruned) deletes its usage.
            "CREATE TABLE result_usage (result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE, model TEXT, "
            "batch BOOLEAN NOT NULL, judge_calls INTEGER NOT NULL, cached_calls INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
            "completion_tokens INTEGER NOT NULL, cached_prompt_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL)",
            "CREATE INDEX result_usage_by_result ON result_usage (result_id)",
            # The figures of the results already stored, read from their steps as usage() did
            # before this version (engine/store/sql.py's usage_of follows the same rules).
            "INSERT INTO result_usage (result_id, model, batch, judge_calls, cached_calls, prompt_tokens, completion_tokens, "
            "cached_prompt_tokens, reasoning_tokens) "
            "SELECT c.result_id, c.model, COALESCE((c.step ->> 'batch') = 'true', false) AS batch, "
            "SUM(CASE WHEN json_typeof(c.step -> 'usage') = 'object' THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN (c.step ->> 'cached') = 'true' THEN 1 ELSE 0 END), "
            + ", ".join(
                f"SUM(COALESCE((c.step -> 'usage' ->> '{field}')::bigint, 0))"
                for field in ("prompt_tokens", "completion_tokens", "cached_prompt_tokens", "reasoning_tokens")
            )
            + " FROM ("
            "SELECT r.id AS result_id, r.model AS model, s.value AS step FROM results AS r, json_each(r.steps) AS s"
            f" WHERE NOT EXISTS (SELECT 1 FROM {_JUDGES} AS j, {_JUDGE_STEPS} AS s2)"
            f" UNION ALL SELECT r.id, j.value ->> 'model', s.value FROM results AS r, {_JUDGES} AS j, {_JUDGE_STEPS} AS s"
            ") AS c WHERE json_typeof(c.step -> 'usage') = 'object' OR (c.step ->> 'cached') = 'true'"
            " GROUP BY c.result_id, c.model, batch",
        ),
    ),
    Migration(
        9,
        "an outbox of monitors' alerts: each alert's episode, and its deliveries to webhooks kept until a receiver takes them",
        (
            "ALTER TABLE monitor_alerts ADD COLUMN episode TEXT",
            "CREATE TABLE alert_deliveries (id BIGSERIAL PRIMARY KEY, alert_id BIGINT NOT NULL REFERENCES monitor_alerts (id) ON DELETE CASCADE, "
            "target TEXT NOT NULL, target_name TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
            "next_attempt_at TIMESTAMPTZ NOT NULL, last_error TEXT, delivered_at TIMESTAMPTZ)",
            "CREATE INDEX alert_deliveries_pending ON alert_deliveries (state, next_attempt_at)",
        ),
    ),
    Migration(10, LABEL_MIGRATION_TITLE, label_tables("DOUBLE PRECISION")),
)
check_sequence(MIGRATIONS)

_JSON_COLUMNS = ("input", "output", "context", "ground_truth", "metadata", "expected", "steps", "judges", "content_note")
_COLUMNS = (
    "run", "source", "item_id", "item_index", "scorer_id", "scorer_hash", "item_hash", "model", "direction", "score", "reason",
    "error", "error_stage", "not_scorable", *_JSON_COLUMNS, "disagreement", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms",
    "started_at", "finished_at",
)  # fmt: skip
# Any lock id shared by every process opening the schema: migrations run one at a time.
_MIGRATION_LOCK = 7_715_123_001
# A run's latest activity: records no longer touch the run's row (which every writer of a
# big shared run would otherwise queue on), so it is read from the records.
_RUN_UPDATED = "GREATEST(runs.updated_at, (SELECT MAX(finished_at) FROM results WHERE results.run = runs.name)) AS updated_at"


class PostgresStore(SQLResults, SQLLabels):
    """Results in a PostgreSQL database, through a pool of connections shared by the threads
    of this process."""

    placeholder = "%s"
    runs_sql = f"SELECT name, source, status, created_at, meta, {_RUN_UPDATED} FROM runs ORDER BY updated_at DESC"

    def __init__(self, url: str, max_connections: int = 8, connect_timeout: float = 10.0) -> None:
        self.url = url
        self.database = PostgresDatabase(
            url, MIGRATIONS, what="store", named="PostgreSQL store", version_table="schema_version", migration_lock=_MIGRATION_LOCK,
            max_connections=max_connections, connect_timeout=connect_timeout, wait_timeout=connect_timeout * 3,
        )  # fmt: skip
        self.location = self.database.location

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

    def end_run(self, name: str, status: RunStatus, meta: dict[str, Any] | None = None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE runs SET status = %s, updated_at = now() WHERE name = %s", (status, name))
            if meta:
                row = db.execute("SELECT meta FROM runs WHERE name = %s FOR UPDATE", (name,)).fetchone()
                merged = {**((row or {}).get("meta") or {}), **meta}
                db.execute("UPDATE runs SET meta = %s WHERE name = %s", (self.database.json_value(merged), name))

    def delete_run(self, name: str) -> None:
        with self._transaction() as db:
            db.execute("DELETE FROM results WHERE run = %s", (name,))
            db.execute("DELETE FROM runs WHERE name = %s", (name,))

    def prune_run(self, name: str, keep: set[str]) -> int:
        stale = [row["item_id"] for row in self._read("SELECT DISTINCT item_id FROM results WHERE run = %s", (name,)) if row["item_id"] not in keep]
        if stale:
            with self._transaction() as db:
                db.execute("DELETE FROM results WHERE run = %s AND item_id = ANY(%s)", (name, stale))
        return len(stale)

    def lease_run(self, lease: RunLease) -> RunLease | None:
        with self._transaction() as db:
            row = db.execute("SELECT * FROM run_leases WHERE run = %s FOR UPDATE", (lease.run,)).fetchone()
            if row is not None and row["owner"] != lease.owner and row["expires_at"] > datetime.now(timezone.utc):
                return RunLease(run=row["run"], owner=row["owner"], pid=row["pid"], host=row["host"], expires_at=row["expires_at"])
            db.execute(
                "INSERT INTO run_leases (run, owner, pid, host, expires_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run) DO UPDATE SET "
                "owner = excluded.owner, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at",
                (lease.run, lease.owner, lease.pid, lease.host, lease.expires_at),
            )
        return None

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
        )  # fmt: skip

    # records

    def save(self, record: ResultRecord) -> None:
        self.save_many([record])

    def save_many(self, records: list[ResultRecord]) -> None:
        """Every record in one transaction (a batch run saves in batches)."""
        if not records:
            return
        rows = []
        for record in records:
            values = record.model_dump(include=set(_COLUMNS))
            for column in _JSON_COLUMNS:
                values[column] = self.database.json_value(values[column])
            rows.append([values[column] for column in _COLUMNS])
        placeholders = ", ".join("%s" for _ in _COLUMNS)
        updates = ", ".join(f"{column} = excluded.{column}" for column in _COLUMNS)
        clear_usage, keys, add_usage, usage_rows = self._usage_rows(records)
        with self._transaction() as db, db.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({placeholders}) "
                f"ON CONFLICT (run, item_id, scorer_id) DO UPDATE SET {updates}",
                rows,
            )
            cursor.executemany(clear_usage, keys)
            if usage_rows:
                cursor.executemany(add_usage, usage_rows)

    @staticmethod
    def _record(row: DictRow) -> ResultRecord:
        data: dict[str, Any] = {column: row[column] for column in _COLUMNS}
        data["metadata"] = data["metadata"] or {}
        data["steps"] = data["steps"] or {}
        return ResultRecord.model_validate(data)

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
                "ON CONFLICT (run, item_index) DO NOTHING",
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

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord:
        with self._transaction() as db:
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
        rows = self._read(
            "SELECT d.id AS delivery_id, d.target, d.target_name, d.state, d.attempts, d.next_attempt_at, d.last_error, d.delivered_at, a.* "
            f"FROM alert_deliveries AS d JOIN monitor_alerts AS a ON a.id = d.alert_id {where} ORDER BY a.fired_at, a.id, d.id",
            parameters,
        )
        alert_fields = set(AlertRecord.model_fields)
        return [
            AlertDelivery(
                id=row["delivery_id"], alert=AlertRecord.model_validate({key: value for key, value in row.items() if key in alert_fields}),
                target=row["target"], where=row["target_name"], state=row["state"], attempts=row["attempts"],
                next_attempt_at=row["next_attempt_at"], last_error=row["last_error"], delivered_at=row["delivered_at"],
            )  # fmt: skip
            for row in rows
        ]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE alert_deliveries SET state = %s, attempts = %s, next_attempt_at = %s, last_error = %s, delivered_at = %s WHERE id = %s",
                (delivery.state, delivery.attempts, delivery.next_attempt_at, delivery.last_error, delivery.delivered_at, delivery.id),
            )

    def expire_content(self, run: str, before: datetime) -> int:
        cleared = ", ".join(f"{field} = NULL" for field in CONTENT_FIELDS)
        with self._transaction() as db:
            cursor = db.execute(
                f"UPDATE results SET {cleared}, content_note = %s WHERE run = %s AND source = 'live' AND finished_at < %s "
                "AND (output IS NOT NULL OR input IS NOT NULL OR context IS NOT NULL)",
                (self.database.json_value({field: "expired" for field in CONTENT_FIELDS}), run, before),
            )
            return cursor.rowcount

    def close(self) -> None:
        self.database.close()

