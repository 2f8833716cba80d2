"""What the two database stores share: reading results back is the same SQL but for the
driver's parameter placeholder, how timestamps are kept and how a run's row is read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .base import LabelledScore, ResultRecord, RunInfo, RunSummary, ScoreStats, Source


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
