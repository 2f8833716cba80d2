"""The SQLite store's tables: its schema as numbered migrations (run by engine/db/migrations.py),
the conversion of the results stored before schema 10, and the SQL of its `contents` table
(the pieces of engine/store/contents.py)."""

from __future__ import annotations

import json
import sqlite3

from ..db import Migration, check_sequence, split_statements
from .labels import LABEL_MIGRATION_TITLE, label_tables
from ..formatting import to_json
from .sql import LEGACY_FIELDS, converted_row, pack_bodies

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
    Migration(
        10,
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
                "BEGIN SELECT RAISE(ABORT, 'this results store was upgraded by a newer release of llm-scorers: "
                "upgrade llm-scorers to write to it'); END"
                for event in ("INSERT", f"UPDATE OF {', '.join(LEGACY_FIELDS)}")
            ),
        ),
        lambda connection: _convert_rows(connection),
        shrinks=True,
    ),
    Migration(11, LABEL_MIGRATION_TITLE, label_tables("REAL")),
    Migration(
        12,
        "a claim of each pending alert delivery, so only one process posts it at a time; a claim its process left expires",
        ("ALTER TABLE alert_deliveries ADD COLUMN claimed_by TEXT", "ALTER TABLE alert_deliveries ADD COLUMN claimed_until REAL"),
    ),
)
check_sequence(MIGRATIONS)
#: Tables a results store may hold; an SQLite file with others is something else.
OUR_TABLES = {"runs", "results", "result_usage", "contents", "batch_jobs", "run_leases", "monitor_alerts", "alert_deliveries", "sqlite_sequence",
              "review_queues", "review_items", "review_labels", "review_leases", "review_settlements"}


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
    """Schema 10: each result stored before it re-encoded as `save_many` writes it, a thousand
    at a time (the migration's one transaction holds them all)."""
    last = 0
    cleared = ", ".join(f"{field} = NULL" for field in LEGACY_FIELDS)
    while rows := db.execute(f"SELECT id, {', '.join(LEGACY_FIELDS)} FROM results WHERE id > ? ORDER BY id LIMIT 1000", (last,)).fetchall():
        converted = [converted_row({field: None if row[field] is None else json.loads(row[field]) for field in LEGACY_FIELDS}) for row in rows]
        bodies = pack_bodies(db, PIECES, [steps for _, steps in converted])
        db.executemany(
            f"UPDATE results SET item = ?, step_ids = ?, body = ?, pieces = ?, {cleared} WHERE id = ?",
            [(item, step_ids, body, piece_list(ids), row["id"]) for row, (item, _), (body, step_ids, ids) in zip(rows, converted, bodies)],
        )
        last = rows[-1]["id"]


def piece_list(ids: list[int]) -> str | None:
    return to_json(ids, separators=(",", ":")) if ids else None
