"""The PostgreSQL store's tables: its schema as numbered migrations (run by
engine/db/migrations.py), the conversion of the results stored before schema 10, and the SQL
of its `contents` table (the pieces of engine/store/contents.py). psycopg is imported only
when a database is opened."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..db import Migration, check_sequence, split_statements
from .labels import LABEL_MIGRATION_TITLE, label_tables
from .sql import LEGACY_FIELDS, converted_row, pack_bodies

if TYPE_CHECKING:
    import psycopg

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
    Migration(
        10,
        "each paragraph of the steps' prompts and answers kept once, compressed, and shared by every result that holds it; "
        "the rest of a result compressed on its row (engine/store/contents.py); the results already stored converted",
        (
            # A row without a body is a text seen once, kept in the record that held it.
            "CREATE TABLE contents (id BIGSERIAL PRIMARY KEY, digest BYTEA NOT NULL UNIQUE, body BYTEA)",
            "ALTER TABLE results ADD COLUMN item BYTEA, ADD COLUMN step_ids TEXT, ADD COLUMN body BYTEA, ADD COLUMN pieces BIGINT[]",
            # Compressed already: not compressed again when moved out of line.
            "ALTER TABLE contents ALTER COLUMN body SET STORAGE EXTERNAL",
            "ALTER TABLE results ALTER COLUMN item SET STORAGE EXTERNAL, ALTER COLUMN body SET STORAGE EXTERNAL",
            # results_outcomes begins with the same columns.
            "DROP INDEX results_by_run_scorer",
        ),
        # The rows' old versions are space autovacuum gives to later writes; only VACUUM FULL,
        # which locks the table while it copies it, would give it back to the disk.
        lambda connection: _convert_rows(connection),
    ),
    Migration(11, LABEL_MIGRATION_TITLE, label_tables("DOUBLE PRECISION")),
    Migration(
        12,
        "a claim of each pending alert delivery, so only one process posts it at a time; a claim its process left expires",
        ("ALTER TABLE alert_deliveries ADD COLUMN claimed_by TEXT", "ALTER TABLE alert_deliveries ADD COLUMN claimed_until TIMESTAMPTZ"),
    ),
)
check_sequence(MIGRATIONS)


class _Pieces:
    """The `contents` table of a PostgreSQL store. Written in the digests' order, the same
    for every writer, so two saves storing the same new pieces never wait on each other in
    a circle."""

    def find(self, db: psycopg.Connection[Any], names: list[bytes]) -> dict[bytes, tuple[int, bool]]:
        from psycopg.rows import tuple_row

        with db.cursor(row_factory=tuple_row) as cursor:
            rows = cursor.execute("SELECT id, digest, body IS NOT NULL FROM contents WHERE digest = ANY(%s)", (names,)).fetchall()
        return {bytes(name): (int(number), bool(kept)) for number, name, kept in rows}

    def keep(self, db: psycopg.Connection[Any], texts: dict[bytes, bytes], seen: list[bytes]) -> dict[bytes, int]:
        names = sorted(texts)
        if seen:
            db.execute("INSERT INTO contents (digest) SELECT unnest(%s::bytea[]) ON CONFLICT (digest) DO NOTHING", (seen,))
        if names:
            db.execute(
                "INSERT INTO contents (digest, body) SELECT * FROM unnest(%s::bytea[], %s::bytea[]) "
                "ON CONFLICT (digest) DO UPDATE SET body = excluded.body WHERE contents.body IS NULL",
                (names, [texts[name] for name in names]),
            )
        return {name: number for name, (number, _) in self.find(db, names).items()}


PIECES = _Pieces()


def _convert_rows(db: psycopg.Connection[Any]) -> None:
    """Schema 10: each result stored before it re-encoded as `save_many` writes it, a thousand
    at a time (the migration's one transaction holds them all); then the columns it leaves."""
    from psycopg.rows import dict_row

    last = 0
    with db.cursor(row_factory=dict_row) as cursor:
        while rows := cursor.execute(f"SELECT id, {', '.join(LEGACY_FIELDS)} FROM results WHERE id > %s ORDER BY id LIMIT 1000", (last,)).fetchall():
            converted = [converted_row(row) for row in rows]
            bodies = pack_bodies(db, PIECES, [steps for _, steps in converted])
            cursor.executemany(
                "UPDATE results SET item = %s, step_ids = %s, body = %s, pieces = %s WHERE id = %s",
                [(item, step_ids, body, ids or None, row["id"]) for row, (item, _), (body, step_ids, ids) in zip(rows, converted, bodies)],
            )
            last = rows[-1]["id"]
    db.execute("ALTER TABLE results " + ", ".join(f"DROP COLUMN {field}" for field in LEGACY_FIELDS))
