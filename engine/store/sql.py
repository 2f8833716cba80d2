"""What the two database stores share: reading results back is the same SQL but for the
driver's parameter placeholder, how timestamps are kept and how a run's row is read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from ..scoring import StepRecord
from .base import LabelledScore, ResultRecord, RunInfo, RunSummary, ScoreStats, ScorerUsage, Source


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


class SQLResults:
    """The read side of `Store` over a `results` table, for a store that provides `_read`
    (rows read by column name) and `_record` (a row back into a ResultRecord)."""

    #: The driver's parameter placeholder: `?` (sqlite3) or `%s` (psycopg).
    placeholder = "?"
    #: Every run's row, newest first, as `_run` reads it.
    runs_sql = "SELECT * FROM runs ORDER BY updated_at DESC"

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> Sequence[Any]:
        raise NotImplementedError

    @staticmethod
    def _record(row: Any) -> ResultRecord:
        raise NotImplementedError

    @staticmethod
    def _run(row: Any) -> RunInfo:
        raise NotImplementedError

    @staticmethod
    def _stored_moment(moment: datetime) -> Any:
        """A datetime as the timestamp columns hold it."""
        return moment

    @staticmethod
    def _label(stored: Any) -> Any:
        """A JSON column (`expected`, `steps`) as a value (stored as JSON text or JSON)."""
        return stored

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

    def records_by_id(self, ids: list[int]) -> list[ResultRecord]:
        if not ids:
            return []
        rows = {row["id"]: row for row in self._read(f"SELECT * FROM results WHERE id IN ({', '.join(self.placeholder for _ in ids)})", ids)}
        return [self._record(rows[record_id]) for record_id in ids if record_id in rows]

    def step_ids(self, ids: list[int]) -> list[str]:
        if not ids:
            return []
        rows = {row["id"]: row["steps"] for row in self._read(f"SELECT id, steps FROM results WHERE id IN ({', '.join(self.placeholder for _ in ids)})", ids)}
        return list(dict.fromkeys(step for record_id in ids for step in (self._label(rows.get(record_id)) or {})))

    def item_count(self, run: str) -> int:
        return int(self._read(f"SELECT COUNT(DISTINCT item_id) AS n FROM results WHERE run = {self.placeholder}", (run,))[0]["n"])

    def item_records(self, run: str, item_id: str) -> list[ResultRecord]:
        mark = self.placeholder
        rows = self._read(f"SELECT * FROM results WHERE run = {mark} AND item_id = {mark} ORDER BY id", (run, item_id))
        return [self._record(row) for row in rows]

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
        sql = "SELECT id FROM results" if limit is not None else "SELECT * FROM results"
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
            ids = [row["id"] for row in self._read(sql, parameters)]
            if not ids:
                return []
            rows = {row["id"]: row for row in self._read(f"SELECT * FROM results WHERE id IN ({', '.join(mark for _ in ids)})", ids)}
            return [self._record(rows[record_id]) for record_id in ids]
        return [self._record(row) for row in self._read(sql, parameters)]

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
