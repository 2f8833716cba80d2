"""What the two database stores share: a result's row and its pieces (engine/store/contents.py)
are written and read back by the same SQL but for the driver's parameter placeholder, how
timestamps, JSON and lists of numbers are kept, and how a run's row is read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from ..errors import StoreError
from ..scoring import JudgeVerdict, StepRecord
from .base import CONTENT_FIELDS, LabelledScore, ResultRecord, RunInfo, RunSummary, ScoreStats, ScorerUsage, Source, StoredRecord
from .contents import answers, digest, item_texts, listed_ids, long_texts, pack, pack_body, pack_item, unpack, unpack_body, unpack_item


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
    "total_tokens", "latency_ms", "started_at", "finished_at", "item", "step_ids", "body", "pieces",
)
#: What a record is read from (its id first), and where each column is in its row.
_READ = "SELECT id, " + ", ".join(RESULT_COLUMNS) + " FROM results"
_AT = {column: position for position, column in enumerate(("id", *RESULT_COLUMNS))}
_PLAIN = RESULT_COLUMNS[: RESULT_COLUMNS.index("expected")] + ("disagreement", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms")
_PLAIN_AT = [_AT[column] for column in _PLAIN]
_ITEM, _STEP_IDS, _BODY, _PIECES = _AT["item"], _AT["step_ids"], _AT["body"], _AT["pieces"]
#: Pieces' texts kept in memory by each store: a template's paragraphs are read once in a
#: while. A piece's id is never given to another text, so what is kept never goes stale.
_TEXTS_KEPT = 4096
#: Ids in one `IN (...)` list.
_CHUNK = 500
#: The columns store schema 10 took a row's content from (kept in `item`, `body` and pieces since).
LEGACY_FIELDS = (*CONTENT_FIELDS, "steps", "judges")


def _item_blob(values: list[Any]) -> bytes | None:
    """The item's fields (CONTENT_FIELDS order) as stored; metadata's default, {}, is not kept
    (a record reads back {} for none)."""
    return pack_item([None if value == {} and field == "metadata" else value for field, value in zip(CONTENT_FIELDS, values)])


class PieceTable(Protocol):
    """How a store finds and keeps pieces in its `contents` table, in the transaction of `db`
    (which must keep them from being swept until it commits)."""

    def find(self, db: Any, names: list[bytes]) -> dict[bytes, tuple[int, bool]]:
        """The id of each digest in the table, and whether its text is kept there (or only
        its digest, as seen once: its text stays in the record that held it)."""
        ...

    def keep(self, db: Any, texts: dict[bytes, bytes], seen: list[bytes]) -> dict[bytes, int]:
        """Keep the (compressed) texts by digest and mark the `seen` digests; the ids of the texts."""
        ...


Steps = tuple[dict[str, StepRecord], list[JudgeVerdict] | None]


def pack_bodies(db: Any, table: PieceTable, records: list[Steps]) -> list[tuple[bytes | None, str | None, list[int]]]:
    """Each record's body blob and piece ids, its new pieces kept. A long text is a piece
    when another record holds it too: another of these, or one saved before (the table
    knows its digest); otherwise it stays in its record's blob and its digest is marked
    seen, so the next record that holds it makes it a piece. A text is kept twice at most
    (in its first record, then as a piece), and a record reads back with few pieces: an
    item's own text is in its blob."""
    answers: dict[int, str] = {}
    longs = [long_texts(steps, judges, answers) for steps, judges in records]
    counts = Counter(text for texts in longs for text in texts)
    names = {text: digest(text) for text in counts}
    found = table.find(db, sorted(names.values())) if names else {}
    shared = {text for text, count in counts.items() if count > 1 or names[text] in found}
    bodies = [pack_body(steps, judges, shared, answers) for steps, judges in records]
    needed = {names[text]: text for body in bodies for text in body.pieces}
    ids = {name: found[name][0] for name in needed if name in found and found[name][1]}
    new = {name: pack(text) for name, text in sorted(needed.items()) if name not in ids}
    seen = sorted(names[text] for text in counts if text not in shared)
    if new or seen:
        ids.update(table.keep(db, new, seen))
    return [(body.blob, body.step_ids, [ids[names[text]] for text in body.pieces]) for body in bodies]


def converted_row(values: dict[str, Any]) -> tuple[bytes | None, Steps]:
    """A row as stores kept it before schema 10 (LEGACY_FIELDS, read as values): its item's
    blob as kept now, and its steps and jury for `pack_bodies`."""
    steps = {key: StepRecord.model_validate(step) for key, step in (values["steps"] or {}).items()}
    judges = None if values["judges"] is None else [JudgeVerdict.model_validate(judge) for judge in values["judges"]]
    return _item_blob([values[field] for field in CONTENT_FIELDS]), (steps, judges)


class SQLResults:
    """`Store` over a `results` table and the `contents` table of its pieces, for a store
    that provides `_read` (rows read by column name), `_run` (a run's row back into a
    RunInfo) and `pieces` (its PieceTable)."""

    #: The driver's parameter placeholder: `?` (sqlite3) or `%s` (psycopg).
    placeholder = "?"
    #: Every run's row, newest first, as `_run` reads it.
    runs_sql = "SELECT * FROM runs ORDER BY updated_at DESC"
    #: How text is ordered as Python orders it (by code point): SQLite's default does.
    by_code_point = ""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> Sequence[Any]:
        raise NotImplementedError

    @staticmethod
    def _run(row: Any) -> RunInfo:
        raise NotImplementedError

    pieces: PieceTable

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
    def _values(row: Any) -> Sequence[Any]:
        """A row's values in the order of its columns."""
        return row  # type: ignore[no-any-return]

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
        bodies = pack_bodies(db, self.pieces, [(record.steps, record.judges) for record in records])
        rows = []
        for record, (body, step_ids, ids) in zip(records, bodies):
            values = {column: getattr(record, column) for column in _PLAIN}
            values.update(
                expected=self._json(record.expected),
                content_note=self._json(record.content_note),
                started_at=self._stored_moment(record.started_at),
                finished_at=self._stored_moment(record.finished_at),
                item=_item_blob([getattr(record, field) for field in CONTENT_FIELDS]),
                step_ids=step_ids,
                body=body,
                pieces=self._stored_piece_ids(ids),
            )
            rows.append([values[column] for column in RESULT_COLUMNS])
        return rows

    def _piece_texts(self, ids: Iterable[int]) -> dict[int, str]:
        """The texts of the pieces `ids`, from memory where read lately."""
        kept, found, missing = self._texts, {}, []
        for number in ids:
            text = kept.get(number)
            if text is None:
                missing.append(number)
            else:
                found[number] = text
        missing = sorted(set(missing))
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            rows = self._read(f"SELECT id, body FROM contents WHERE id IN ({', '.join(self.placeholder for _ in chunk)})", chunk)
            read = {int(row["id"]): unpack(bytes(row["body"])) for row in rows}
            if len(read) < len(chunk):
                # Only a record deleted while it was read loses its pieces.
                raise StoreError(f"{len(chunk) - len(read)} piece(s) of text of the records read are gone (deleted at the same time?); read them again")
            found.update(read)
            if len(kept) + len(read) > _TEXTS_KEPT:
                kept.clear()  # a template's paragraphs are read again once, the next time
            kept.update(read)
        return found

    def _records(self, rows: Sequence[Any]) -> list[ResultRecord]:
        """Rows read by `_READ` back into the records saved."""
        rows = [self._values(row) for row in rows]
        numbers = [self._piece_ids(row[_PIECES]) for row in rows]
        texts = self._piece_texts(number for row_numbers in numbers for number in row_numbers)
        records = []
        for row, row_numbers in zip(rows, numbers):
            data: dict[str, Any] = dict(zip(_PLAIN, [row[position] for position in _PLAIN_AT]))
            data.update(zip(CONTENT_FIELDS, unpack_item(row[_ITEM], len(CONTENT_FIELDS))))
            data["metadata"] = data["metadata"] or {}
            data["steps"], data["judges"] = unpack_body(row[_BODY], row[_STEP_IDS], [texts[number] for number in row_numbers])
            data["expected"], data["content_note"] = self._label(row[_AT["expected"]]), self._label(row[_AT["content_note"]])
            data["started_at"], data["finished_at"] = self._moment(row[_AT["started_at"]]), self._moment(row[_AT["finished_at"]])
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
        # Sorted by the database, ids alone read: a big run's export holds a number a record.
        order = ", ".join(f"{column}{self.by_code_point}" for column in ("item_id", "scorer_id"))
        rows = self._read(f"SELECT id FROM results WHERE run = {self.placeholder} ORDER BY item_index IS NULL, item_index, {order}", (run,))
        return [int(row["id"]) for row in rows]

    def _by_id(self, columns: str, ids: list[int]) -> list[Any]:
        """The rows of `ids` (that still exist), in that order."""
        rows = {row["id"]: row for row in self._read(f"{columns} WHERE id IN ({', '.join(self.placeholder for _ in ids)})", ids)} if ids else {}
        return [rows[record_id] for record_id in ids if record_id in rows]

    def records_by_id(self, ids: list[int]) -> list[ResultRecord]:
        return self._records(self._by_id(_READ, ids))

    def step_ids(self, ids: list[int]) -> list[str]:
        rows = self._by_id("SELECT id, step_ids FROM results", ids)
        return list(dict.fromkeys(step for listed in dict.fromkeys(row["step_ids"] for row in rows) if listed for step in listed_ids(listed)))

    def stored_records(self, ids: list[int]) -> list[StoredRecord]:
        rows = [self._values(row) for row in self._by_id(_READ, ids)]
        saved = [answers(row[_BODY], row[_STEP_IDS]) for row in rows]
        numbers = [self._piece_ids(row[_PIECES]) for row in rows]
        # Only the pieces of answers are read: a step's prompt is not exported.
        texts = self._piece_texts(numbers[n][answer] for n, row_answers in enumerate(saved) for answer in row_answers.values() if isinstance(answer, int))
        stored = []
        for row, row_answers, row_numbers in zip(rows, saved, numbers):
            fields = dict(zip(_PLAIN, [row[position] for position in _PLAIN_AT]))
            fields["finished_at"] = self._moment(row[_AT["finished_at"]])
            items = dict(zip(CONTENT_FIELDS, item_texts(row[_ITEM], len(CONTENT_FIELDS))))
            items["metadata"] = items["metadata"] or "{}"  # as the record reads back: no metadata is {}
            items["expected"] = self._json_text(row[_AT["expected"]])
            results = {step: texts[row_numbers[answer]] if isinstance(answer, int) else answer for step, answer in row_answers.items()}
            stored.append(StoredRecord(fields, items, results))
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
