"""What a report shows, gathered from the store: per scorer its summary, agreement, score
histogram and confusion matrix; per item every scorer's score, verdict, reason, the judge's
answers and the exact prompts sent; and, for two runs, their comparison."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field

from ..runs import Agreement, Comparison
from ..runs.items import base_id
from ..runs.stats import compare_labelled, flags, usage_cost
from ..runs.stored import (
    compare_runs,
    existing_run,
    labelled_records,
    run_records,
    run_threshold,
    stored_agreement,
)
from ..store import Direction, ResultRecord, RunInfo, ScoreStats, Store

BINS = 10


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
    steps: list[StepView]


class ItemRow(BaseModel):
    item_id: str
    index: int | None
    input: str
    output: str
    context: list[str]
    expected: str = Field(description="The human label as shown ('' when none)")
    cells: list[Cell]
    search: str = Field(description="Lower-cased text the search box matches")


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
    sections: list[ScorerSection]
    columns: list[str] = Field(description="Section keys in the order of the items table's columns")
    labels: dict[str, str] = Field(description="Each section key's label")
    items: list[ItemRow]
    comparisons: list[Comparison]
    usage: list[UsageLine]


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
            )  # fmt: skip
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
        reason=record.reason, error=record.error, steps=steps,
    )  # fmt: skip


def build_report(store: Store, run: str, compare: str | None = None) -> Report:
    """Everything the page shows for `run` (and `compare`, a second run), from the store."""
    names = [run] + ([compare] if compare is not None else [])
    infos = [existing_run(store, name) for name in names]
    sections: list[ScorerSection] = []
    rows: dict[str, ItemRow] = {}
    for info in infos:
        for scorer_id, records in run_records(store, info.name).items():
            key = f"{info.name}:{scorer_id}"
            threshold = run_threshold(info, scorer_id)
            scores = [record.score for record in records if record.ok and record.score is not None]
            stats = next((item for item in store.summary(info.name) if item.scorer_id == scorer_id), ScoreStats(scorer_id=scorer_id))
            sections.append(
                ScorerSection(
                    key=key, label=key if compare is not None else scorer_id, run=info.name, scorer_id=scorer_id, direction=records[0].direction, threshold=threshold, stats=stats,
                    agreement=stored_agreement(info, scorer_id, records), histogram=histogram(scores),
                )  # fmt: skip
            )
            for record in records:
                row = rows.get(record.item_id)
                if row is None:
                    row = rows[record.item_id] = ItemRow(
                        item_id=record.item_id, index=record.item_index, input=_text(record.input), output=_text(record.output),
                        context=list(record.context or []), expected=_expected(record.expected), cells=[], search="",
                    )  # fmt: skip
                elif not row.expected:
                    row.expected = _expected(record.expected)
                row.cells.append(_cell(key, record, threshold))
    columns = [section.key for section in sections]
    ordered = sorted(rows.values(), key=lambda row: (row.index if row.index is not None else 1 << 62, row.item_id))
    for row in ordered:
        by_key = {cell.key: cell for cell in row.cells}
        row.cells = [by_key.get(key) or Cell(key=key, score=None, flagged=None, agrees=None, reason=None, error="not scored", steps=[]) for key in columns]
        row.search = " ".join([row.item_id, row.input, row.output, *[cell.reason or "" for cell in row.cells]]).lower()
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
    ]  # fmt: skip
    return Report(
        title=title, generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), runs=infos, sections=sections,
        columns=columns, labels={section.key: section.label for section in sections}, items=ordered, comparisons=comparisons,
        usage=usage,
    )  # fmt: skip


def _variants_in_one_run(store: Store, info: RunInfo) -> list[Comparison]:
    """A run made by `scorers compare` holds two variants of one scorer: compare them."""
    records = run_records(store, info.name)
    (a, first), (b, second) = records.items()
    return [
        compare_labelled(
            labelled_records(first), labelled_records(second), names=(a, b),
            thresholds=(run_threshold(info, a), run_threshold(info, b)), direction=first[0].direction,
        )  # fmt: skip
    ]
