"""What a report shows, gathered from the store: per scorer its summary, agreement, score
histogram and confusion matrix; per item every scorer's score, verdict (or why it could not
be scored), reason, the judge's answers and the exact prompts sent; and, for two runs, their
comparison.

Figures come from the store's aggregates, the same functions `scorers results` shows. A big
run's page lists its worst items and a sample, not every item, so it stays a few megabytes;
it says how many it shows and the command that exports them all."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field

from ..runs.measures.confidence import confidence_of, sure_shown
from ..runs import Agreement, Comparison
from ..runs.items import base_id
from ..runs.measures.stats import compare_labelled, flags, usage_cost
from ..runs.traces.view import TraceLine, trace_lines
from ..runs.verdict import Verdict
from ..runs.results import calls_line, calls_sent
from ..runs.stored.reading import (
    stored_verdict,
    compare_runs,
    existing_run,
    labelled_of,
    run_agreement,
    run_item_count,
    run_item_ids,
    run_scores,
    run_scale,
    run_threshold,
    scorer_order,
)
from ..store import Direction, ResultRecord, RunInfo, ScoreStats, Store

BINS = 10
#: A run of at most this many items lists every item; a bigger one, the worst of each scorer,
#: its failures, and an even sample of the rest.
EVERY_ITEM_UP_TO = 1000
WORST_ITEMS = 50
FAILED_ITEMS = 50
SAMPLE_ITEMS = 200


class Bar(BaseModel):
    low: float
    high: float
    count: int
    x: float
    y: float
    width: float
    height: float


class Histogram(BaseModel):
    """Bars already laid out for an SVG of `width` x `height` (no charting library)."""

    bars: list[Bar]
    width: int = 320
    height: int = 120
    low: float
    high: float
    most: int


class ScorerSection(BaseModel):
    key: str = Field(description="`run:scorer`, unique in the report")
    label: str = Field(description="What the page calls it: the scorer id, with the run's name when two runs are shown")
    run: str
    scorer_id: str
    direction: Direction
    threshold: float
    stats: ScoreStats
    agreement: Agreement | None
    histogram: Histogram | None


class StepView(BaseModel):
    id: str
    kind: str
    skipped: bool
    system_prompt: str | None
    prompt: str | None
    result: str = Field(description="The step's answer as indented JSON (or text)")


class Cell(BaseModel):
    """One scorer's outcome for one item."""

    key: str
    score: float | None
    flagged: bool | None
    agrees: bool | None = Field(description="The verdict matches the human label (None: no label)")
    reason: str | None
    error: str | None
    not_scorable: str | None = Field(default=None, description="Why the scorer could not judge the item (then no score and no verdict)")
    steps: list[StepView]
    confidence: float | None = Field(default=None, description="The chance its pass/fail would be the same were the judge asked again")
    confidence_shown: str = Field(default="-", description="The confidence as every surface writes it, its calibrated value beside it where a map was kept")


class ItemRow(BaseModel):
    item_id: str
    index: int | None
    input: str
    output: str
    context: list[str]
    expected: str = Field(description="The human label as shown ('' when none)")
    cells: list[Cell]
    search: str = Field(description="Lower-cased text the search box matches")
    trace: list[TraceLine] = Field(default_factory=list, description="The spans of the item's trace, when it came from one")


class UsageLine(BaseModel):
    """What one scorer of a run spent on its judge (Batch API calls on a line of their own)."""

    run: str
    scorer_id: str
    model: str | None
    judge_calls: int
    cached_calls: int = Field(description="Steps the response cache answered (free)")
    prompt_tokens: int
    cached_prompt_share: float | None = Field(description="Of the prompt tokens, the share the provider's prefix cache served")
    completion_tokens: int
    cost_usd: float | None = Field(description="At today's prices (None: the model has no price)")
    batch: bool


class Report(BaseModel):
    title: str
    generated: str
    runs: list[RunInfo]
    #: Per run, its judge calls sent and answered, in the words of every surface (calls_line).
    calls: dict[str, str] = Field(default_factory=dict)
    sections: list[ScorerSection]
    columns: list[str] = Field(description="Section keys in the order of the items table's columns")
    labels: dict[str, str] = Field(description="Each section key's label")
    items: list[ItemRow]
    item_count: int = Field(default=0, description="Items in the run(s), listed or not")
    shown: str | None = Field(default=None, description="Which items the page lists, when not every one")
    export: str = Field(default="", description="The command that exports every item")
    comparisons: list[Comparison]
    usage: list[UsageLine]
    verdicts: dict[str, Verdict] = Field(default_factory=dict, description="Per run (not live runs): whether it passed, and why not")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, default=str)


def histogram(scores: Sequence[float]) -> Histogram | None:
    if not scores:
        return None
    low, high = min(0.0, min(scores)), max(1.0, max(scores))
    step = (high - low) / BINS
    counts = [0] * BINS
    for score in scores:
        counts[min(int((score - low) / step), BINS - 1)] += 1
    shape = Histogram(bars=[], low=low, high=high, most=max(counts))
    width = shape.width / BINS
    for position, count in enumerate(counts):
        height = (shape.height - 30) * count / shape.most if shape.most else 0  # room for the counts above
        shape.bars.append(
            Bar(
                low=round(low + position * step, 4), high=round(low + (position + 1) * step, 4), count=count,
                x=round(position * width + 1, 2), y=round(shape.height - 14 - height, 2), width=round(width - 2, 2), height=round(height, 2),
            )
        )
    return shape


def _expected(value: bool | float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "flag" if value else "pass"
    return f"{value:g}"


def _cell(key: str, record: ResultRecord, threshold: float) -> Cell:
    flagged = flags(record.score, threshold, record.direction) if record.score is not None else None
    human: bool | None = None
    if record.expected is not None:
        human = record.expected if isinstance(record.expected, bool) else flags(record.expected, threshold, record.direction)
    steps = [
        StepView(id=step.id, kind=step.kind, skipped=step.skipped, system_prompt=step.system_prompt, prompt=step.prompt, result=_text(step.result))
        for step in record.steps.values()
    ]
    return Cell(
        key=key, score=record.score, flagged=flagged, agrees=None if flagged is None or human is None else flagged == human,
        reason=record.reason, error=record.error, not_scorable=record.not_scorable if record.error is None else None, steps=steps,
        confidence=confidence_of(record.steps), confidence_shown=sure_shown(record.steps),
    )


def _missing_cell(key: str, row: ItemRow) -> Cell:
    """A scorer with no outcome for the item: a failure, except for an item of a trace, which
    goes only to the scorers of its kind (an LLM span's or a whole run's)."""
    if row.trace:
        return Cell(key=key, score=None, flagged=None, agrees=None, reason=None, error=None, not_scorable="not this scorer's kind of item", steps=[])
    return Cell(key=key, score=None, flagged=None, agrees=None, reason=None, error="not scored", steps=[])


def build_report(store: Store, run: str, compare: str | None = None) -> Report:
    """Everything the page shows for `run` (and `compare`, a second run), from the store."""
    names = [run] + ([compare] if compare is not None else [])
    infos = [existing_run(store, name) for name in names]
    sections: list[ScorerSection] = []
    rows: dict[str, ItemRow] = {}
    thresholds: dict[str, float] = {}
    item_count, shown_notes = 0, []
    for info in infos:
        stats = {item.scorer_id: item for item in store.summary(info.name)}
        for scorer_id in scorer_order(info, stats):
            key = f"{info.name}:{scorer_id}"
            thresholds[key] = run_threshold(info, scorer_id)
            direction = stats[scorer_id].direction
            sections.append(
                ScorerSection(
                    key=key, label=key if compare is not None else scorer_id, run=info.name, scorer_id=scorer_id, direction=direction,
                    threshold=thresholds[key], stats=stats[scorer_id], agreement=run_agreement(store, info, scorer_id, direction),
                    histogram=histogram(run_scores(store, info.name, scorer_id)),
                )
            )
        count = run_item_count(store, info.name)
        item_count += count
        records, note = _listed_records(store, info.name, list(stats), count)
        if note is not None:
            shown_notes.append(note if compare is None else f"{info.name}: {note}")
        for record in records:
            key = f"{info.name}:{record.scorer_id}"
            row = rows.get(record.item_id)
            if row is None:
                row = rows[record.item_id] = ItemRow(
                    item_id=record.item_id, index=record.item_index, input=_text(record.input), output=_text(record.output),
                    context=list(record.context or []), expected=_expected(record.expected), cells=[], search="", trace=trace_lines(record.metadata),
                )
            elif not row.expected:
                row.expected = _expected(record.expected)
            row.cells.append(_cell(key, record, thresholds.get(key, 0.5)))
    columns = [section.key for section in sections]
    ordered = sorted(rows.values(), key=lambda row: (row.index if row.index is not None else 1 << 62, row.item_id))
    for row in ordered:
        by_key = {cell.key: cell for cell in row.cells}
        row.cells = [by_key.get(key) or _missing_cell(key, row) for key in columns]
        row.search = " ".join([row.item_id, row.input, row.output, *[cell.reason or cell.not_scorable or "" for cell in row.cells]]).lower()
    comparisons = compare_runs(store, run, compare) if compare is not None else []
    if compare is None and len(sections) == 2 and base_id(sections[0].scorer_id) == base_id(sections[1].scorer_id):
        comparisons = _variants_in_one_run(store, infos[0])
    title = f"{run} compared with {compare}" if compare is not None else run
    usage = [
        UsageLine(
            run=info.name, scorer_id=row.scorer_id, model=row.model, judge_calls=row.judge_calls, cached_calls=row.cached_calls,
            prompt_tokens=row.prompt_tokens, completion_tokens=row.completion_tokens, cost_usd=usage_cost(row), batch=row.batch,
            cached_prompt_share=row.cached_prompt_tokens / row.prompt_tokens if row.prompt_tokens else None,
        )
        for info in infos
        for row in store.usage(info.name)
    ]
    return Report(
        title=title, generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), runs=infos, sections=sections,
        columns=columns, labels={section.key: section.label for section in sections}, items=ordered, item_count=item_count,
        shown="; ".join(shown_notes) or None, export=" · ".join(f"scorers results --run {name} --format csv" for name in names),
        comparisons=comparisons, usage=usage, calls=_calls(infos, usage), verdicts={info.name: stored_verdict(store, info) for info in infos if info.kind != "live"},
    )


def _listed_records(store: Store, run: str, scorers: list[str], count: int) -> tuple[list[ResultRecord], str | None]:
    """The records of the items the page lists: every item of a run up to EVERY_ITEM_UP_TO
    items; of a bigger one, each scorer's worst, the failures and an even sample (with a
    note that says so)."""
    if count <= EVERY_ITEM_UP_TO:
        return store.query(run=run), None
    chosen: dict[str, None] = {}
    for scorer_id in scorers:
        chosen.update((record.item_id, None) for record in store.query(run=run, scorer=scorer_id, errors=False, worst_first=True, limit=WORST_ITEMS))
    failed = dict.fromkeys(record.item_id for record in store.query(run=run, errors=True, limit=FAILED_ITEMS))
    chosen.update(failed)
    worst = len(chosen) - len(failed)
    sample = [item_id for item_id in run_item_ids(store, run, SAMPLE_ITEMS, every=max(count // SAMPLE_ITEMS, 1)) if item_id not in chosen]
    chosen.update(dict.fromkeys(sample))
    records = [record for item_id in chosen for record in store.item_records(run, item_id)]
    note = (
        f"{len(chosen):,} of {count:,} items listed: the {WORST_ITEMS} worst of each scorer ({worst:,} items), "
        f"{len(failed):,} that failed, and an even sample of {len(sample):,}"
    )
    return records, note


def _variants_in_one_run(store: Store, info: RunInfo) -> list[Comparison]:
    """A run made by `scorers compare` holds two variants of one scorer: compare them."""
    directions = {item.scorer_id: item.direction for item in store.summary(info.name)}
    a, b = scorer_order(info, directions)
    return [
        compare_labelled(
            labelled_of(store, info.name, a), labelled_of(store, info.name, b), names=(a, b),
            thresholds=(run_threshold(info, a), run_threshold(info, b)), direction=directions[a], scale=run_scale(info, a),
        )
    ]


def _calls(infos: list[RunInfo], usage: list[UsageLine]) -> dict[str, str]:
    """The judge calls each run sent and had answered, for the runs that sent or had any."""
    calls = {}
    for info in infos:
        sent, answered = calls_sent(info), sum(line.judge_calls for line in usage if line.run == info.name)
        if sent or answered:
            calls[info.name] = calls_line(sent, answered)
    return calls
