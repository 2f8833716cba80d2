"""What the two database stores share: a result's row and its pieces (engine/store/contents.py)
are written and read back by the same SQL but for the driver's parameter placeholder, how
timestamps, JSON and lists of numbers are kept, and how a run's row is read."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from ..errors import StoreError
from ..scoring import JudgeVerdict, StepRecord
from .base import CONTENT_FIELDS, LabelledScore, ResultRecord, RunInfo, RunSummary, ScoreStats, ScorerUsage, Source, StoredRecord
from .contents import answers, digest, item_texts, numbers_in, pack_body, pack_item, step_ids, text_of, unpack, unpack_body, unpack_item


class ResultUsage(NamedTuple):
    """What one record's judge calls of one model spent, through the Batch API or not: a row
    of `result_usage`, written with the record so a run's usage is summed from these small
    rows, not from every step's JSON."""

    model: str | None
    batch: bool
    judge_calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    reasoning_tokens: int


USAGE_COLUMNS = ResultUsage._fields


def usage_of(record: ResultRecord) -> list[ResultUsage]:
    """The record's calls and tokens per (judge model, Batch API or not). A step answered by a
    provider carries its usage; one answered by the response cache has none and is a cached
    (free) call; a step that asked no judge is left out. A jury's calls are its judges' own
    steps, each under the judge's model (the record's steps then repeat them); a jury stored
    before judges kept their steps counts the record's steps under the record's model. Store
    schema 8 filled the rows of older records by the same rules, in SQL."""
    judged = [(judge.model, judge.steps) for judge in record.judges or [] if judge.steps]
    sources: list[tuple[str | None, dict[str, StepRecord]]] = [*judged] if judged else [(record.model, record.steps)]
    totals: dict[tuple[str | None, bool], list[int]] = {}
    for model, steps in sources:
        for step in steps.values():
            if step.usage is None and not step.cached:
                continue
            figures = totals.setdefault((model, step.batch), [0] * 6)
            usage = step.usage
            figures[0] += usage is not None
            figures[1] += step.cached
            if usage is not None:
                figures[2] += usage.prompt_tokens
                figures[3] += usage.completion_tokens
                figures[4] += usage.cached_prompt_tokens
                figures[5] += usage.reasoning_tokens
    return [ResultUsage(model, batch, *figures) for (model, batch), figures in totals.items()]


#: A result's row: the columns a record is saved into, in this order, by both stores.
RESULT_COLUMNS = (
    "run", "source", "item_id", "item_index", "scorer_id", "scorer_hash", "item_hash", "model", "direction", "score", "reason",
    "error", "error_stage", "not_scorable", "expected", "content_note", "disagreement", "prompt_tokens", "completion_tokens",
    "total_tokens", "latency_ms", "started_at", "finished_at", "item", "body", "pieces",
)  # fmt: skip
#: What a record is read from (its id first).
_READ = "SELECT id, " + ", ".join(RESULT_COLUMNS) + " FROM results"
_PLAIN = RESULT_COLUMNS[: RESULT_COLUMNS.index("expected")] + ("disagreement", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms")
#: Pieces' texts kept in memory by each store: a template's paragraphs are read once. A
#: piece's id is never given to another text, so what is kept never goes stale.
_TEXTS_KEPT = 4096
#: Ids in one `IN (...)` list.
_CHUNK = 500
#: The columns store schema 9 took a row's content from (kept in `item`, `body` and pieces since).
LEGACY_FIELDS = (*CONTENT_FIELDS, "steps", "judges")


def _item_blob(values: list[Any]) -> bytes | None:
    """The item's fields (CONTENT_FIELDS order) as stored; metadata's default, {}, is not kept
    (a record reads back {} for none)."""
    return pack_item([None if value == {} and field == "metadata" else value for field, value in zip(CONTENT_FIELDS, values)])


def converted_row(values: dict[str, Any]) -> tuple[bytes | None, bytes | None, dict[bytes, str]]:
    """A row as stores kept it before schema 9 (LEGACY_FIELDS, read as values) as it is kept
    now: the item's blob, the body's, and the body's pieces by digest, in its order."""
    steps = {key: StepRecord.model_validate(step) for key, step in (values["steps"] or {}).items()}
    judges = None if values["judges"] is None else [JudgeVerdict.model_validate(judge) for judge in values["judges"]]
    body = pack_body(steps, judges)
    return _item_blob([values[field] for field in CONTENT_FIELDS]), body.blob, {digest(text): text for text in body.pieces}


class SQLResults:
    """`Store` over a `results` table and the `contents` table of its pieces, for a store
    that provides `_read` (rows read by column name), `_run` (a run's row back into a
    RunInfo) and `_keep_pieces` (the ids of pieces, stored if new)."""

    #: The driver's parameter placeholder: `?` (sqlite3) or `%s` (psycopg).
    placeholder = "?"
    #: Every run's row, newest first, as `_run` reads it.
    runs_sql = "SELECT * FROM runs ORDER BY updated_at DESC"

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._texts_lock = threading.Lock()

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> Sequence[Any]:
        raise NotImplementedError

    @staticmethod
    def _run(row: Any) -> RunInfo:
        raise NotImplementedError

    def _keep_pieces(self, db: Any, pieces: dict[bytes, str]) -> dict[bytes, int]:
        """The id of every piece (by digest) in the `contents` table, the new ones stored, in
        the transaction of `db` (which must keep them from being swept until it commits)."""
        raise NotImplementedError

    @staticmethod
    def _stored_moment(moment: datetime) -> Any:
        """A datetime as the timestamp columns hold it."""
        return moment

    @staticmethod
    def _moment(stored: Any) -> datetime:
        """A timestamp column as a datetime."""
        return stored  # type: ignore[no-any-return]

    @staticmethod
    def _label(stored: Any) -> Any:
        """A JSON column (`expected`, `content_note`) as a value (stored as JSON text or JSON)."""
        return stored

    @staticmethod
    def _json_text(stored: Any) -> str | None:
        """A JSON column as the JSON text it was saved as."""
        return stored  # type: ignore[no-any-return]

    def _json(self, value: Any) -> Any:
        """A value as a JSON column holds it."""
        raise NotImplementedError

    @staticmethod
    def _piece_ids(stored: Any) -> list[int]:
        """The `pieces` column (a record's piece ids, in the order its blob numbers them)."""
        return stored or []

    @staticmethod
    def _stored_piece_ids(ids: list[int]) -> Any:
        return ids or None

    # a record as a row, and back

    def _result_rows(self, db: Any, records: list[ResultRecord]) -> list[list[Any]]:
        """The rows of `records` (in RESULT_COLUMNS order), their new pieces stored in `db`'s
        transaction."""
        encoded = []
        pieces: dict[bytes, str] = {}
        for record in records:
            body = pack_body(record.steps, record.judges)
            names = [digest(text) for text in body.pieces]
            pieces.update(zip(names, body.pieces))
            encoded.append((record, _item_blob([getattr(record, field) for field in CONTENT_FIELDS]), body.blob, names))
        ids = self._keep_pieces(db, pieces) if pieces else {}
        rows = []
        for record, item, body_blob, names in encoded:
            values = {column: getattr(record, column) for column in _PLAIN}
            values.update(
                expected=self._json(record.expected), content_note=self._json(record.content_note),
                started_at=self._stored_moment(record.started_at), finished_at=self._stored_moment(record.finished_at),
                item=item, body=body_blob, pieces=self._stored_piece_ids([ids[name] for name in names]),
            )  # fmt: skip
            rows.append([values[column] for column in RESULT_COLUMNS])
        return rows

    def _piece_texts(self, ids: Iterable[int]) -> dict[int, str]:
        """The texts of the pieces `ids`, from memory where read before."""
        wanted = set(ids)
        found = {number: self._texts[number] for number in wanted if number in self._texts}
        missing = sorted(wanted - found.keys())
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            rows = self._read(f"SELECT id, body FROM contents WHERE id IN ({', '.join(self.placeholder for _ in chunk)})", chunk)
            found.update((int(row["id"]), unpack(bytes(row["body"]))) for row in rows)
        if len(found) < len(wanted):
            # Only a record deleted while it was read loses its pieces.
            raise StoreError(f"{len(wanted) - len(found)} piece(s) of text of the records read are gone (deleted at the same time?); read them again")
        with self._texts_lock:
            if len(self._texts) > _TEXTS_KEPT:
                self._texts.clear()
            self._texts.update((number, found[number]) for number in missing)
        return found

    def _records(self, rows: Sequence[Any]) -> list[ResultRecord]:
        """Rows read by `_READ` back into the records saved."""
        texts = self._piece_texts(number for row in rows for number in self._piece_ids(row["pieces"]))
        records = []
        for row in rows:
            data: dict[str, Any] = {column: row[column] for column in _PLAIN}
            data.update(zip(CONTENT_FIELDS, unpack_item(row["item"], len(CONTENT_FIELDS))))
            data["metadata"] = data["metadata"] or {}
            data["steps"], data["judges"] = unpack_body(row["body"], [texts[number] for number in self._piece_ids(row["pieces"])])
            data["expected"], data["content_note"] = self._label(row["expected"]), self._label(row["content_note"])
            data["started_at"], data["finished_at"] = self._moment(row["started_at"]), self._moment(row["finished_at"])
            records.append(ResultRecord.model_validate(data))
        return records

    # a big run read in bulk (ReadsInBulk): one column, not the records

    def score_values(self, run: str, scorer: str) -> list[float]:
        mark = self.placeholder
        rows = self._read(
            f"SELECT score FROM results WHERE run = {mark} AND scorer_id = {mark} AND error IS NULL AND score IS NOT NULL ORDER BY score",
            (run, scorer),
        )
        return [float(row["score"]) for row in rows]

    def labelled_scores(self, run: str, scorer: str) -> list[LabelledScore]:
        mark = self.placeholder
        # The reason is not read here (nor kept in the index): agreement reads it for the few
        # disagreements it shows.
        rows = self._read(
            "SELECT item_id, item_index, score, expected FROM results "
            f"WHERE run = {mark} AND scorer_id = {mark} AND error IS NULL AND score IS NOT NULL AND expected IS NOT NULL "
            "ORDER BY item_index, item_id",
            (run, scorer),
        )
        labelled = []
        for row in rows:
            expected = self._label(row["expected"])
            if isinstance(expected, (bool, int, float)):
                labelled.append(LabelledScore(row["item_id"], row["item_index"], row["score"], expected, None))
        return labelled

    def item_ids(self, run: str, limit: int, every: int = 1) -> list[str]:
        mark = self.placeholder
        rows = self._read(
            f"SELECT item_id FROM (SELECT item_id, MIN(item_index) AS position FROM results WHERE run = {mark} GROUP BY item_id) AS items "
            "ORDER BY position, item_id",
            (run,),
        )
        return [row["item_id"] for row in rows[::every][:limit]]

    def ordered_ids(self, run: str) -> list[int]:
        rows = self._read(f"SELECT id, item_index, item_id, scorer_id FROM results WHERE run = {self.placeholder}", (run,))
        rows = sorted(rows, key=lambda row: (row["item_index"] if row["item_index"] is not None else 1 << 62, row["item_id"], row["scorer_id"]))
        return [int(row["id"]) for row in rows]

    def _by_id(self, columns: str, ids: list[int]) -> list[Any]:
        """The rows of `ids` (that still exist), in that order."""
        rows = {row["id"]: row for row in self._read(f"{columns} WHERE id IN ({', '.join(self.placeholder for _ in ids)})", ids)} if ids else {}
        return [rows[record_id] for record_id in ids if record_id in rows]

    def records_by_id(self, ids: list[int]) -> list[ResultRecord]:
        return self._records(self._by_id(_READ, ids))

    def step_ids(self, ids: list[int]) -> list[str]:
        rows = self._by_id("SELECT id, body FROM results", ids)
        return list(dict.fromkeys(step for row in rows for step in step_ids(row["body"])))

    def stored_records(self, ids: list[int]) -> list[StoredRecord]:
        rows = [(row, self._piece_ids(row["pieces"]), answers(row["body"])) for row in self._by_id(_READ, ids)]
        # Only the pieces of answers are read: a step's prompt is not exported.
        texts = self._piece_texts(numbers[number] for _, numbers, encoded in rows for answer in encoded.values() for number in numbers_in(answer))
        stored = []
        for row, numbers, encoded in rows:
            fields = {column: row[column] for column in _PLAIN}
            fields["finished_at"] = self._moment(row["finished_at"])
            items = dict(zip(CONTENT_FIELDS, item_texts(row["item"], len(CONTENT_FIELDS))))
            items["metadata"] = items["metadata"] or "{}"  # as the record reads back: no metadata is {}
            items["expected"] = self._json_text(row["expected"])

            def piece(number: int, numbers: list[int] = numbers) -> str:
                return texts[numbers[number]]

            stored.append(StoredRecord(fields, items, {step: None if answer is None else text_of(answer, piece) for step, answer in encoded.items()}))
        return stored

    def item_count(self, run: str) -> int:
        return int(self._read(f"SELECT COUNT(DISTINCT item_id) AS n FROM results WHERE run = {self.placeholder}", (run,))[0]["n"])

    def item_records(self, run: str, item_id: str) -> list[ResultRecord]:
        mark = self.placeholder
        return self._records(self._read(f"{_READ} WHERE run = {mark} AND item_id = {mark} ORDER BY id", (run, item_id)))

    def scorer_versions(self, run: str) -> dict[str, set[tuple[str | None, str | None]]]:
        """Per scorer, the (scorer_hash, model) pairs of the run's successful records."""
        rows = self._read(f"SELECT DISTINCT scorer_id, scorer_hash, model FROM results WHERE run = {self.placeholder} AND error IS NULL", (run,))
        versions: dict[str, set[tuple[str | None, str | None]]] = {}
        for row in rows:
            versions.setdefault(row["scorer_id"], set()).add((row["scorer_hash"], row["model"]))
        return versions

    def query(
        self,
        run: str | None = None,
        scorer: str | None = None,
        source: Source | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        errors: bool | None = None,
        worst_first: bool = False,
        limit: int | None = None,
    ) -> list[ResultRecord]:
        """Records matching every filter given. `errors=True` only failures, `False` only
        scores. `worst_first` sorts by badness in each scorer's own direction (highest
        first for lower-is-better scorers, lowest first otherwise), failures last;
        otherwise the newest come first."""
        mark = self.placeholder
        where: list[str] = []
        parameters: list[Any] = []
        for column, value in (("run", run), ("scorer_id", scorer), ("source", source)):
            if value is not None:
                where.append(f"{column} = {mark}")
                parameters.append(value)
        if since is not None:
            where.append(f"finished_at >= {mark}")
            parameters.append(self._stored_moment(since))
        if until is not None:
            where.append(f"finished_at < {mark}")
            parameters.append(self._stored_moment(until))
        if errors is not None:
            where.append("error IS NOT NULL" if errors else "(error IS NULL AND score IS NOT NULL)")
        sql = "SELECT id FROM results" if limit is not None else _READ
        if where:
            sql += " WHERE " + " AND ".join(where)
        if worst_first:
            badness = "CASE direction WHEN 'lower_is_better' THEN -score ELSE score END"
            sql += f" ORDER BY score IS NULL, {badness}, id"
        else:
            sql += " ORDER BY finished_at DESC, id DESC"
        if limit is not None:
            # The few ids first (from an index for a run's scores), then only their records:
            # sorting whole records would read every record of a big run.
            sql += f" LIMIT {mark}"
            parameters.append(int(limit))
            return self.records_by_id([row["id"] for row in self._read(sql, parameters)])
        return self._records(self._read(sql, parameters))

    def _usage_rows(self, records: list[ResultRecord]) -> tuple[str, list[tuple[str, str, str]], str, list[tuple[Any, ...]]]:
        """The statements (and their rows) that replace the `result_usage` rows of `records`,
        run after the records themselves in the same transaction. A record is found by its
        key, so a record saved again keeps its id and gets its new figures."""
        mark = self.placeholder
        key = f"run = {mark} AND item_id = {mark} AND scorer_id = {mark}"
        latest = {(record.run, record.item_id, record.scorer_id): record for record in records}  # the last of a key saved wins
        delete = f"DELETE FROM result_usage WHERE result_id = (SELECT id FROM results WHERE {key})"
        insert = (
            f"INSERT INTO result_usage (result_id, {', '.join(USAGE_COLUMNS)}) "
            f"SELECT id, {', '.join(mark for _ in USAGE_COLUMNS)} FROM results WHERE {key}"
        )
        rows = [(*usage, *record_key) for record_key, record in latest.items() for usage in usage_of(record)]
        return delete, list(latest), insert, rows

    def usage(self, run: str) -> list[ScorerUsage]:
        """Per scorer, judge model and Batch API or not, the run's calls and tokens (each
        record's are kept beside it in `result_usage` when it is saved)."""
        sums = ", ".join(f"SUM(u.{column}) AS {column}" for column in USAGE_COLUMNS if column not in ("model", "batch"))
        rows = self._read(
            f"SELECT r.scorer_id AS scorer_id, u.model AS model, u.batch AS batch, {sums} "
            f"FROM results AS r JOIN result_usage AS u ON u.result_id = r.id WHERE r.run = {self.placeholder} "
            "GROUP BY r.scorer_id, u.model, u.batch ORDER BY MIN(r.id), u.batch",
            (run,),
        )
        return [ScorerUsage.model_validate(dict(row)) for row in rows]

    def summary(self, run: str) -> list[ScoreStats]:
        rows = self._read(
            "SELECT scorer_id, MAX(direction) AS direction, COUNT(score) AS count, AVG(score) AS mean, "
            "MIN(score) AS min, MAX(score) AS max, COUNT(error) AS errors, "
            "SUM(CASE WHEN error IS NULL AND not_scorable IS NOT NULL THEN 1 ELSE 0 END) AS not_scorable "
            f"FROM results WHERE run = {self.placeholder} GROUP BY scorer_id ORDER BY MIN(id)",
            (run,),
        )
        return [ScoreStats.model_validate(dict(row)) for row in rows]

    def runs(self) -> list[RunSummary]:
        summaries = []
        for row in self._read(self.runs_sql):
            run = self._run(row)
            summaries.append(RunSummary(**run.model_dump(), items=self.item_count(run.name), scorers=self.summary(run.name)))
        return summaries
