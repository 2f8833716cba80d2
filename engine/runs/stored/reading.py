"""Stored runs read back for the tuner: agreement with the labels kept beside each score,
two runs compared item by item, and every record exported as rows."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from ...errors import ConfigError
from ...formatting import to_json
from ...store import Direction, ReadsInBulk, ResultRecord, RunInfo, Store, StoredRecord
from ..items import base_id
from ..results import Agreement, Comparison
from ..measures.confidence import confidence_of
from ..measures.stats import AgreementStream, Labelled, ScoreSpread, agreement_of, compare_labelled, judged_answers, mean_estimate, spread_of
from ...scoring.pass_line import PassLine
from ..verdict import Standard, Verdict, decide, judge_scorer

EXPORT_FORMATS = ("csv", "jsonl", "json")


def existing_run(store: Store, name: str) -> RunInfo:
    found = store.get_run(name)
    if found is None:
        known = ", ".join(item.name for item in store.runs()[:10]) or "none"
        raise ConfigError(f"no run named {name!r} in the store (runs: {known})")
    return found


def run_threshold(run: RunInfo, scorer_id: str) -> float:
    """Where a score flagged an item in this run: as recorded, else the run's threshold,
    else half of a 0..1 scale (runs stored before thresholds were recorded)."""
    recorded = run.meta.get("scorers", {}).get(scorer_id, {}).get("flag_threshold")
    if isinstance(recorded, (int, float)):
        return float(recorded)
    limit = run.meta.get("thresholds", {}).get(scorer_id)
    return float(limit) if isinstance(limit, (int, float)) else 0.5


def run_line(run: RunInfo, scorer_id: str, direction: Direction) -> PassLine:
    """The scorer's pass line in this stored run: where its scores flagged items
    (`run_threshold`), on its recorded scale (1 for a run stored before it was recorded)."""
    return PassLine(run_threshold(run, scorer_id), direction, run_scale(run, scorer_id) or 1.0)


def stored_verdict(store: Store, run: RunInfo) -> Verdict:
    """Whether a stored run passed, decided as when it ran (`runs/verdict.py`), from what the
    store holds now: its scorers' counts, the standard it was run with, and how it ended
    (a run that did not end complete never passed). The CLI, the report and the workbench
    show this one verdict of a stored run."""
    meta = run.meta
    recorded = meta.get("standard")
    standard = Standard.model_validate(recorded) if isinstance(recorded, dict) else Standard(thresholds=dict(meta.get("thresholds") or {}))
    stats = store.summary(run.name)
    gated = standard.gate != "mean"
    verdicts = []
    for item in stats:
        threshold = standard.thresholds.get(item.scorer_id)
        interval = None
        if gated and threshold is not None:
            estimate = mean_estimate(run_scores(store, run.name, item.scorer_id))
            interval = (estimate.low, estimate.high)
        confidences: list[float] = []
        if standard.min_confidence is not None:  # the run gated on confidence: its scored records read whole
            found = (confidence_of(record.steps) for record in store.query(run=run.name, scorer=item.scorer_id, errors=False) if record.score is not None)
            confidences = [confidence for confidence in found if confidence is not None]
        verdicts.append(judge_scorer(item, PassLine(threshold, item.direction) if threshold is not None else None, standard, interval, confidences))
    last = meta.get("last_invocation") or {}
    stopped = None if run.status in ("complete", "incomplete") else f"the run is {run.status}" + (f": {last['stopped_by']}" if last.get("stopped_by") else "")
    failed = max((item.errors for item in stats), default=0)
    items = max((item.total for item in stats), default=0)
    return decide(verdicts, standard, items=items, failed_items=failed, stopped=stopped)


def run_scale(run: RunInfo, scorer_id: str) -> float | None:
    """The scorer's scale in this run, as recorded (None for a run stored before it was):
    how its labels are read (`read_label`)."""
    recorded = run.meta.get("scorers", {}).get(scorer_id, {}).get("scale")
    return float(recorded) if isinstance(recorded, (int, float)) else None


def labelled_records(records: Iterable[ResultRecord]) -> list[Labelled]:
    return [
        Labelled(record.item_id, record.item_index, record.score, record.expected, record.reason, record.steps)
        for record in records
        if record.ok and record.score is not None and record.expected is not None
    ]


def run_records(store: Store, run: str) -> dict[str, list[ResultRecord]]:
    """A run's records by scorer id (in the order the run listed its scorers), each in the
    data's order."""
    by_scorer: dict[str, list[ResultRecord]] = {}
    for record in store.query(run=run):
        by_scorer.setdefault(record.scorer_id, []).append(record)
    for records in by_scorer.values():
        records.sort(key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.item_id))
    info = store.get_run(run)
    listed = list(info.meta.get("scorers", {})) if info is not None else []
    order = {scorer_id: position for position, scorer_id in enumerate(listed)}
    return dict(sorted(by_scorer.items(), key=lambda pair: (order.get(pair[0], len(order)), pair[0])))


def stored_agreement(run: RunInfo, scorer_id: str, records: list[ResultRecord], threshold: float | None = None) -> Agreement | None:
    """Agreement of a stored scorer's scores with the labels stored beside them, flagged at
    `threshold` (default: where the run flagged them)."""
    labelled = labelled_records(records)
    if not labelled:
        return None
    return agreement_of(labelled, run_threshold(run, scorer_id) if threshold is None else threshold, records[0].direction, run_scale(run, scorer_id))


def labelled_of(store: Store, run: str, scorer_id: str) -> list[Labelled]:
    """The run's labelled scores of one scorer: only the columns agreement needs when the
    store reads in bulk, so a run of any size is measured in flat memory."""
    if isinstance(store, ReadsInBulk):
        return [Labelled(row.item_id, row.item_index, row.score, row.expected, row.reason) for row in store.labelled_scores(run, scorer_id)]
    return labelled_records(run_records(store, run).get(scorer_id, []))


#: Up to this many labelled items, agreement reads their whole records (each item's confidence
#: among them, for the calibration of the judge's confidence); beyond, scores and labels only.
WHOLE_RECORDS_UP_TO = 2000


def run_agreement(store: Store, run: RunInfo, scorer_id: str, direction: Direction, threshold: float | None = None, shown: int = 8) -> Agreement | None:
    """`stored_agreement` read straight from the store; the judge's answers are read for the
    `shown` worst disagreements only (the ones a table or the report shows)."""
    flagged_at = run_threshold(run, scorer_id) if threshold is None else threshold
    rows = store.labelled_scores(run.name, scorer_id) if isinstance(store, ReadsInBulk) else None
    if rows is not None and len(rows) > WHOLE_RECORDS_UP_TO:
        stream = AgreementStream(flagged_at, direction, scale=run_scale(run, scorer_id))
        for row in rows:  # straight from the rows: a big run's hundred thousand
            stream.add_score(row.item_id, row.item_index, row.score, row.expected, row.reason)
        agreement = stream.result()
    else:
        if rows is not None and not rows:
            return None
        if rows:  # few enough to read whole, in the data's order
            found = sorted(store.query(run=run.name, scorer=scorer_id, errors=False), key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.item_id))
            labelled = labelled_records(found)
        else:
            labelled = labelled_of(store, run.name, scorer_id)
        if not labelled:
            return None
        agreement = agreement_of(labelled, flagged_at, direction, run_scale(run, scorer_id))
    for disagreement in agreement.disagreements[:shown]:
        for record in store.item_records(run.name, disagreement.item_id):
            if record.scorer_id == scorer_id:
                disagreement.judged = judged_answers(record.steps)
                disagreement.reason = record.reason
    return agreement


def run_scores(store: Store, run: str, scorer_id: str) -> list[float]:
    """One scorer's scores in a stored run (scored items only)."""
    if isinstance(store, ReadsInBulk):
        return store.score_values(run, scorer_id)
    return [record.score for record in store.query(run=run, scorer=scorer_id, errors=False) if record.score is not None]


def run_spread(store: Store, run: str, scorer_id: str, direction: Direction, threshold: float | None) -> ScoreSpread:
    """The median, 95th percentile and pass rate of one scorer's scores in a stored run."""
    return spread_of(run_scores(store, run, scorer_id), direction, threshold)


def run_item_count(store: Store, run: str) -> int:
    if isinstance(store, ReadsInBulk):
        return store.item_count(run)
    return len({record.item_id for record in store.query(run=run)})


def run_item_ids(store: Store, run: str, limit: int, every: int = 1) -> list[str]:
    """Up to `limit` of the run's item ids in the data's order, every `every`th one."""
    if isinstance(store, ReadsInBulk):
        return store.item_ids(run, limit, every)
    records = sorted(store.query(run=run), key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.item_id))
    return list(dict.fromkeys(record.item_id for record in records))[::every][:limit]


def paired_scorers(first: list[str], second: list[str]) -> list[tuple[str, str]]:
    """Which scorer of one run to compare with which of the other: the same id, else the
    same base id (variants), else the only scorer of each."""
    pairs = [(scorer_id, scorer_id) for scorer_id in first if scorer_id in second]
    if pairs:
        return pairs
    pairs = [(a, b) for a in first for b in second if base_id(a) == base_id(b)]
    if len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs}) and pairs:
        return pairs
    if len(first) == 1 and len(second) == 1:
        return [(first[0], second[0])]
    raise ConfigError(f"cannot tell which scorers to compare: {', '.join(first)} against {', '.join(second)}")


def compare_runs(store: Store, baseline: str, variant: str) -> list[Comparison]:
    """Each scorer of run `baseline` against its counterpart in run `variant`, on the labelled
    items both scored."""
    runs = existing_run(store, baseline), existing_run(store, variant)
    directions = ({item.scorer_id: item.direction for item in store.summary(baseline)}, {item.scorer_id: item.direction for item in store.summary(variant)})
    comparisons = []
    for a, b in paired_scorers(scorer_order(runs[0], directions[0]), scorer_order(runs[1], directions[1])):
        if directions[0][a] != directions[1][b]:
            raise ConfigError(f"{a} and {b} score in opposite directions: they cannot be compared")
        comparisons.append(
            compare_labelled(
                labelled_of(store, baseline, a),
                labelled_of(store, variant, b),
                names=(f"{baseline}:{a}", f"{variant}:{b}"),
                thresholds=(run_threshold(runs[0], a), run_threshold(runs[1], b)),
                direction=directions[0][a],
                scale=run_scale(runs[0], a),
            )
        )
    return comparisons


def scorer_order(run: RunInfo, stored: Iterable[str]) -> list[str]:
    """The scorers with records in `run`, in the order the run listed them."""
    listed = list(run.meta.get("scorers", {}))
    order = {scorer_id: position for position, scorer_id in enumerate(listed)}
    return sorted(stored, key=lambda scorer_id: (order.get(scorer_id, len(order)), scorer_id))


# ----------------------------------------------------------------------------------- export

_CSV_FIELDS = (
    "item_id", "item_index", "scorer_id", "score", "expected", "reason", "error", "error_stage", "input", "output",
    "context", "ground_truth", "metadata", "model", "scorer_hash", "prompt_tokens", "completion_tokens", "total_tokens",
    "latency_ms", "finished_at",
)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):  # as JSON writes it, not Python's True
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return value
    if isinstance(value, datetime):
        return f'"{value}"'  # to_json's text of it (its str() in quotes), without JSON's encoder
    return to_json(value)


def _cells(record: ResultRecord, steps: list[str]) -> list[Any]:
    return [*(_cell(getattr(record, name)) for name in _CSV_FIELDS), *(_cell(record.steps[step].result) if step in record.steps else "" for step in steps)]


_JSON = json.JSONDecoder()


def _saved_cell(text: str | None) -> Any:
    """The cell of a value saved as the JSON `text`: what `_cell` gives for the value."""
    if text is None:
        return ""
    if text[0] in "{[":
        return text  # to_json's text of the value, as `_cell` would write it again
    return _cell(_JSON.raw_decode(text)[0])  # a string, a number or true/false


#: Cells written as they are (bool is not among them: `_cell` writes JSON's true and false).
_AS_THEY_ARE = frozenset({str, int, float})


def _saved_cells(stored: StoredRecord, steps: list[str]) -> list[Any]:
    fields, texts, answers = stored
    row = []
    for name in _CSV_FIELDS:
        if name in texts:
            row.append(_saved_cell(texts[name]))
        else:
            value = fields[name]
            row.append(value if type(value) in _AS_THEY_ARE else _cell(value))  # most cells: no call
    row += [_saved_cell(answers.get(step)) for step in steps]
    return row


#: Records read from the store at a time while exporting: a run of any size in flat memory.
EXPORT_CHUNK = 500
#: CSV rows handed on at a time (each a few KiB at most).
_ROWS_A_CHUNK = 100


class RunExport:
    """A stored run's records in the data's order, read a chunk at a time when the store
    reads in bulk; `count` is how many have been read so far."""

    def __init__(self, store: Store, run: str) -> None:
        self.store = store
        self.run = run
        self.count = 0
        self._ids = store.ordered_ids(run) if isinstance(store, ReadsInBulk) else None

    def step_ids(self) -> list[str]:
        """Every step id of the run's records, in the order they first appear."""
        if self._ids is None or not isinstance(self.store, ReadsInBulk):
            return list(dict.fromkeys(step for record in self._all() for step in record.steps))
        found: dict[str, None] = {}
        for start in range(0, len(self._ids), EXPORT_CHUNK):
            found.update(dict.fromkeys(self.store.step_ids(self._ids[start : start + EXPORT_CHUNK])))
        return list(found)

    @property
    def as_saved(self) -> bool:
        """Whether the store hands over the records as saved (`stored`)."""
        return self._ids is not None and isinstance(self.store, ReadsInBulk)

    def stored(self) -> Iterator[StoredRecord]:
        """The records as saved, a chunk at a time (a store that reads in bulk only)."""
        assert self._ids is not None and isinstance(self.store, ReadsInBulk)
        for start in range(0, len(self._ids), EXPORT_CHUNK):
            for stored in self.store.stored_records(self._ids[start : start + EXPORT_CHUNK]):
                self.count += 1
                yield stored

    def __iter__(self) -> Iterator[ResultRecord]:
        if self._ids is None or not isinstance(self.store, ReadsInBulk):
            chunks: Iterable[list[ResultRecord]] = [self._all()]
        else:
            store, ids = self.store, self._ids
            chunks = (store.records_by_id(ids[start : start + EXPORT_CHUNK]) for start in range(0, len(ids), EXPORT_CHUNK))
        for chunk in chunks:
            for record in chunk:
                self.count += 1
                yield record

    def _all(self) -> list[ResultRecord]:
        records = [record for records in run_records(self.store, self.run).values() for record in records]
        records.sort(key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.item_id, record.scorer_id))
        return records


def export_records(records: Iterable[ResultRecord], form: str, steps: list[str] | None = None) -> Iterator[str]:
    """Every record as text: CSV (one row per item and scorer, each step's result in a
    `step:<id>` column as JSON; `steps` names those columns when known beforehand), JSON
    Lines (one record per line) or one JSON list. Written as the records come."""
    if form not in EXPORT_FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(EXPORT_FORMATS)}, got {form!r}")
    if form == "jsonl":
        for record in records:
            yield record.model_dump_json() + "\n"
        return
    if form == "json":
        # The same text as json.dumps(list, indent=2), one record at a time.
        opened = False
        for record in records:
            text = json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False).replace("\n", "\n  ")
            yield ("[\n  " if not opened else ",\n  ") + text
            opened = True
        yield "\n]\n" if opened else "[]\n"
        return
    if steps is None:
        records = list(records)
        steps = list(dict.fromkeys(step for record in records for step in record.steps))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*_CSV_FIELDS, *(f"step:{step}" for step in steps)])
    # A store that hands over what it saved has its JSON written through as it was saved:
    # the same cells, without reading each record into a ResultRecord and writing it again.
    if isinstance(records, RunExport) and records.as_saved:
        rows = (_saved_cells(stored, steps) for stored in records.stored())
    else:
        rows = (_cells(record, steps) for record in records)
    for written, row in enumerate(rows, 1):
        writer.writerow(row)
        if written % _ROWS_A_CHUNK == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():  # the last rows, or the header alone
        yield buffer.getvalue()
