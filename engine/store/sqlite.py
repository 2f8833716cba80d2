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
    AlertRecord,
    BatchJob,
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
)
from .sql import LEGACY_FIELDS, RESULT_COLUMNS, SQLResults, converted_row, pack_bodies

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
        "each paragraph of the steps' prompts and answers kept once, compressed, and shared by every result that holds it; "
        "the rest of a result compressed on its row (engine/store/contents.py); the results already stored converted",
        (
            # AUTOINCREMENT: an id is never given to another text, so readers may keep texts by id.
            # A row without a body is a text seen once, kept in the record that held it.
            "CREATE TABLE contents (id INTEGER PRIMARY KEY AUTOINCREMENT, digest BLOB NOT NULL UNIQUE, body BLOB)",
            "ALTER TABLE results ADD COLUMN item BLOB",
            "ALTER TABLE results ADD COLUMN body BLOB",
            "ALTER TABLE results ADD COLUMN pieces TEXT",
            "ALTER TABLE results ADD COLUMN step_ids TEXT",
            # results_outcomes begins with the same columns.
            "DROP INDEX results_by_run_scorer",
            # The columns the rows leave (input, output, context, ground_truth, metadata, steps,
            # judges) stay, empty: dropping a column needs SQLite 3.35 and rewrites the table.
            # A process of an older release still writing them would leave results this one
            # reads empty: its writes fail instead, saying why.
            *(
                f"CREATE TRIGGER results_of_an_older_release_{event.split()[0].lower()} BEFORE {event} ON results "
                f"WHEN {' OR '.join(f'NEW.{field} IS NOT NULL' for field in LEGACY_FIELDS)} "
                "BEGIN SELECT RAISE(ABORT, 'this results store was upgraded by a newer release of llm-scorers (store schema 9): "
                "upgrade llm-scorers to write to it'); END"
                for event in ("INSERT", f"UPDATE OF {', '.join(LEGACY_FIELDS)}")
            ),
        ),
        lambda connection: _convert_rows(connection),
        shrinks=True,
    ),
)
check_sequence(MIGRATIONS)
#: Tables a results store may hold; an SQLite file with others is something else.
_OUR_TABLES = {"runs", "results", "result_usage", "contents", "batch_jobs", "run_leases", "monitor_alerts", "sqlite_sequence"}

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


class _Pieces:
    """The `contents` table of an SQLite store (written inside a write transaction, which a
    sweep cannot run beside)."""

    def find(self, db: sqlite3.Connection, names: list[bytes]) -> dict[bytes, tuple[int, bool]]:
        found: dict[bytes, tuple[int, bool]] = {}
        for start in range(0, len(names), 500):
            chunk = names[start : start + 500]
            rows = db.execute(f"SELECT id, digest, body IS NOT NULL FROM contents WHERE digest IN ({', '.join('?' for _ in chunk)})", chunk)
            found.update((bytes(row[1]), (row[0], bool(row[2]))) for row in rows)
        return found

    def keep(self, db: sqlite3.Connection, texts: dict[bytes, bytes], seen: list[bytes]) -> dict[bytes, int]:
        db.executemany("INSERT INTO contents (digest) VALUES (?) ON CONFLICT (digest) DO NOTHING", [(name,) for name in seen])
        db.executemany(
            "INSERT INTO contents (digest, body) VALUES (?, ?) ON CONFLICT (digest) DO UPDATE SET body = excluded.body WHERE body IS NULL",
            list(texts.items()),
        )
        return {name: number for name, (number, _) in self.find(db, list(texts)).items()}


PIECES = _Pieces()


def _convert_rows(db: sqlite3.Connection) -> None:
    """Schema 9: each result stored before it re-encoded as `save_many` writes it, a thousand
    at a time (the migration's one transaction holds them all)."""
    last = 0
    cleared = ", ".join(f"{field} = NULL" for field in LEGACY_FIELDS)
    while rows := db.execute(f"SELECT id, {', '.join(LEGACY_FIELDS)} FROM results WHERE id > ? ORDER BY id LIMIT 1000", (last,)).fetchall():
        converted = [converted_row({field: _from_json(row[field]) for field in LEGACY_FIELDS}) for row in rows]
        bodies = pack_bodies(db, PIECES, [steps for _, steps in converted])
        db.executemany(
            f"UPDATE results SET item = ?, step_ids = ?, body = ?, pieces = ?, {cleared} WHERE id = ?",
            [(item, step_ids, body, _piece_list(ids), row["id"]) for row, (item, _), (body, step_ids, ids) in zip(rows, converted, bodies)],
        )
        last = rows[-1]["id"]


def _piece_list(ids: list[int]) -> str | None:
    return to_json(ids, separators=(",", ":")) if ids else None


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


class SQLiteStore(SQLResults):
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
        return _piece_list(ids)

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
            )  # fmt: skip
            for row in rows
        ]

    # monitors and the retention of live items' content

    def save_alert(self, alert: AlertRecord) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO monitor_alerts (monitor, scorer_id, kind, value, message, payload, fired_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (alert.monitor, alert.scorer_id, alert.kind, alert.value, alert.message, to_json(alert.payload), _timestamp(alert.fired_at)),
            )

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        where, parameters = ("WHERE monitor = ?", [monitor]) if monitor is not None else ("", [])
        rows = self._read(f"SELECT * FROM monitor_alerts {where} ORDER BY fired_at DESC, id DESC LIMIT ?", [*parameters, int(limit)])
        return [
            AlertRecord(
                monitor=row["monitor"], scorer_id=row["scorer_id"], kind=row["kind"], value=row["value"], message=row["message"],
                payload=_from_json(row["payload"]) or {}, fired_at=_moment(row["fired_at"]),
            )  # fmt: skip
            for row in rows
        ]

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
