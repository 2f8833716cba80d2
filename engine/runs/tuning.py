"""The prompt tuner's loop on top of batch runs: judge the same items several times to see
how stable a scorer is, compare two variants of a scorer on the same items, and pick the
pass/fail threshold from labelled data.

    repeated = run_repeated(data, [scorer], repeat=5, store=..., run="stability")
    compared = run_compare(data, baseline, variant, store=..., run="strict-vs-builtin")
    sweep = calibration(labelled, direction="lower_is_better", metric="f1")
"""

from __future__ import annotations

import copy
import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import ConfigError
from ..scoring import AnyScorer, Scorer, each_judge
from ..scoring.pass_line import Direction
from ..sync import blocking
from .batch import arun_evals, check_scorers
from .items import VARIANT_SEPARATOR, Data, base_id
from .results import Agreement, Comparison, EvalResult
from .measures.stats import (
    Labelled,
    agreement_of,
    binary_figures,
    compare_labelled,
    flags,
    read_label,
)


def as_variant(scorer: AnyScorer, label: str) -> AnyScorer:
    """The same scorer (or jury) under the id `<id>@<label>`, so two variants of one scorer
    can run side by side in one run; a variant reads the labels (`expected`) of its base id."""
    return each_judge(scorer, lambda member: _renamed(member, label))


def _renamed(scorer: Scorer, label: str) -> Scorer:
    renamed = copy.copy(scorer)
    renamed.plan = dataclasses.replace(scorer.plan, id=f"{scorer.id}{VARIANT_SEPARATOR}{label}")
    return renamed


def labelled_of(result: EvalResult, scorer_id: str) -> list[Labelled]:
    """Labelled items of one scorer from a run's per-item results."""
    labelled: list[Labelled] = []
    for item in result.items:
        outcome = item.results.get(scorer_id)
        if item.item is None or outcome is None or not outcome.ok or outcome.score is None:
            continue
        expected = item.item.expected_for(scorer_id)
        if expected is not None:
            labelled.append(Labelled(item.id or "", item.index, outcome.score, expected, outcome.reason, outcome.steps))
    return labelled


def _reusable(data: Data) -> Data:
    """Data that can be read more than once (a path is; a generator is not)."""
    if isinstance(data, (str, Path)) or isinstance(data, Sequence):
        return data
    if isinstance(data, Iterable):
        return list(data)
    raise ConfigError("repeated runs need data that can be read again: a path or a list of items")


# ----------------------------------------------------------------------------------- repeat


class ItemStability(BaseModel):
    """One item's scores over the repeats."""

    item_id: str
    scores: list[float | None] = Field(description="Per repeat (None: that repeat failed)")
    mean: float | None
    spread: float | None = Field(description="Standard deviation of the scores (0 when they all agree)")
    flips: int = Field(description="Repeats whose verdict differs from the majority verdict")
    expected: bool | float | None = None


class Stability(BaseModel):
    """How much one scorer's judgement moves when the same items are judged again."""

    scorer_id: str
    repeats: int
    threshold: float
    items: int
    unstable: int = Field(description="Items whose verdict is not the same in every repeat")
    consistency: float | None = Field(default=None, description="Share of items whose verdict is the same in every repeat")
    flip_rate: float | None = Field(description="Share of (item, repeat) verdicts that differ from the item's majority")
    mean_spread: float | None = Field(description="Mean per-item standard deviation of the score")
    agreement: list[Agreement | None] = Field(default_factory=list, description="Agreement with the labels, per repeat")
    per_item: list[ItemStability] = Field(default_factory=list, description="Most unstable first")


class RepeatedResult(BaseModel):
    runs: list[str]
    results: list[EvalResult] = Field(exclude=True)
    stability: dict[str, Stability]


def repeat_run_name(run: str, sample: int) -> str:
    return run if sample == 0 else f"{run}~{sample + 1}"


async def arun_repeated(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    *,
    repeat: int,
    run: str,
    thresholds: Mapping[str, float] | None = None,
    **options: Any,
) -> RepeatedResult:
    """Judge every item `repeat` times: repeat k is the run `run~k` (the first is `run`
    itself) and sends sample index k-1 with each judge request, so the answers are distinct
    samples rather than a cached copy of the first."""
    if repeat < 1:
        raise ConfigError(f"--repeat must be at least 1, got {repeat}")
    listed = check_scorers(scorers)
    data = _reusable(data)
    results = [
        await arun_evals(data, listed, run=repeat_run_name(run, sample), thresholds=thresholds, sample=sample, keep_results=True, **options)
        for sample in range(repeat)
    ]
    limits = dict(thresholds or {})
    stability = {scorer.id: _stability(scorer, results, scorer.pass_line.overridden(limits.get(scorer.id)).value) for scorer in listed}
    return RepeatedResult(runs=[result.run for result in results], results=results, stability=stability)


run_repeated = blocking(arun_repeated)


def _stability(scorer: AnyScorer, results: list[EvalResult], threshold: float) -> Stability:
    direction = scorer.plan.direction
    scores: dict[str, list[float | None]] = {}
    expected: dict[str, bool | float | None] = {}
    for position, result in enumerate(results):
        for item in result.items:
            if item.id is None:
                continue
            outcome = item.results.get(scorer.id)
            row = scores.setdefault(item.id, [None] * len(results))
            row[position] = outcome.score if outcome is not None and outcome.ok else None
            if item.item is not None:
                expected[item.id] = item.item.expected_for(scorer.id)
    per_item: list[ItemStability] = []
    disagreeing = 0
    verdicts = 0
    for item_id, row in scores.items():
        present = [score for score in row if score is not None]
        flagged = [flags(score, threshold, direction) for score in present]
        majority = flagged.count(True) * 2 > len(flagged)
        flips = sum(verdict != majority for verdict in flagged)
        disagreeing += flips
        verdicts += len(flagged)
        per_item.append(
            ItemStability(
                item_id=item_id, scores=row, expected=expected.get(item_id), flips=flips,
                mean=round(statistics.fmean(present), 4) if present else None,
                spread=round(statistics.pstdev(present), 4) if present else None,
            )
        )
    per_item.sort(key=lambda item: (-item.flips, -(item.spread or 0), item.item_id))
    spreads = [item.spread for item in per_item if item.spread is not None]
    return Stability(
        scorer_id=scorer.id,
        repeats=len(results),
        threshold=threshold,
        items=len(per_item),
        unstable=sum(1 for item in per_item if item.flips),
        consistency=round(1 - sum(1 for item in per_item if item.flips) / len(per_item), 4) if per_item else None,
        flip_rate=round(disagreeing / verdicts, 4) if verdicts else None,
        mean_spread=round(statistics.fmean(spreads), 4) if spreads else None,
        agreement=[result.summary[scorer.id].agreement for result in results],
        per_item=per_item,
    )


# ---------------------------------------------------------------------------------- compare


class ComparedResult(BaseModel):
    """Two variants run side by side on the same items in one run."""

    result: EvalResult
    baseline: str
    variant: str
    comparison: Comparison


async def arun_compare(data: Data, baseline: AnyScorer, variant: AnyScorer, *, thresholds: Mapping[str, float] | None = None, **options: Any) -> ComparedResult:
    """Score every item with both variants in one run (the variant is renamed `<id>@<label>`
    when both have the same id; give it that label by `as_variant` beforehand). With a
    response cache among the judge's middleware, a step whose request is the same for both
    variants is sent once."""
    if baseline.id == variant.id:
        raise ConfigError(f"both variants are called {baseline.id!r}: rename one with as_variant(scorer, label)")
    if baseline.plan.direction != variant.plan.direction:
        raise ConfigError(f"{baseline.id} and {variant.id} score in opposite directions: they cannot be compared")
    limits = dict(thresholds or {})
    result = await arun_evals(data, [baseline, variant], thresholds=limits, keep_results=True, **options)
    comparison = compare_labelled(
        labelled_of(result, baseline.id),
        labelled_of(result, variant.id),
        names=(baseline.id, variant.id),
        thresholds=(baseline.pass_line.overridden(limits.get(baseline.id)).value, variant.pass_line.overridden(limits.get(variant.id)).value),
        direction=baseline.plan.direction,
        scale=baseline.pass_line.scale,
    )
    return ComparedResult(result=result, baseline=baseline.id, variant=variant.id, comparison=comparison)


run_compare = blocking(arun_compare)


# -------------------------------------------------------------------------------- calibrate

Metric = Literal["f1", "kappa", "balanced_accuracy"]


class ThresholdPoint(BaseModel):
    threshold: float
    flagged: int = Field(description="Items the judge flags at this threshold")
    accuracy: float | None
    balanced_accuracy: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    kappa: float | None


class Calibration(BaseModel):
    """The pass/fail threshold swept over every score the judge gave."""

    scorer_id: str
    metric: Metric
    labelled: int
    points: list[ThresholdPoint]
    best: ThresholdPoint | None = Field(description="The point that maximises the metric (the lowest threshold among ties)")
    agreement: Agreement | None = Field(default=None, description="All the figures, with intervals, at the best threshold")


def candidate_lines(scores: Sequence[float], scale: float, direction: Direction) -> list[float]:
    """The thresholds a sweep tries: each distinct score (a line on a score splits the items
    as a line between it and the next does), and the line that flags every item: midway
    from the end of the scale to the lowest score (lower is better) or the highest (higher
    is better), left out when that score is the end of the scale itself."""
    distinct = sorted(set(scores))
    if not distinct:
        return []
    if direction == "lower_is_better":
        extra = distinct[0] / 2 if distinct[0] > 0 else None
    else:
        extra = (distinct[-1] + scale) / 2 if distinct[-1] < scale else None
    return sorted(set(distinct) | ({round(extra, 6)} if extra is not None else set()))


def calibration(scorer: AnyScorer, labelled: Sequence[Labelled], metric: Metric = "f1") -> Calibration:
    """Sweep the threshold over the distinct judge scores and the line that flags them all
    (`candidate_lines`). Labels are read as every figure
    reads them (`read_label`); items labelled with another number are flagged by the humans
    when that number is past half the scale."""
    direction = scorer.plan.direction
    scale = scorer.pass_line.scale
    labels = [read_label(item.expected, scale, direction) for item in labelled]
    humans = [label.flagged if label.flagged is not None else flags(float(item.expected), scale / 2, direction) for item, label in zip(labelled, labels)]
    points: list[ThresholdPoint] = []
    for threshold in candidate_lines([item.score for item in labelled], scale, direction):
        judged = [flags(item.score, threshold, direction) for item in labelled]
        figures = binary_figures(list(zip(judged, humans)))
        rounded = {name: None if value is None else round(value, 4) for name, value in figures.items()}
        points.append(ThresholdPoint(threshold=threshold, flagged=sum(judged), **rounded))
    scored = [point for point in points if getattr(point, metric) is not None]
    best = max(scored, key=lambda point: getattr(point, metric), default=None)  # max keeps the first of ties
    agreement = None
    if best is not None:
        as_booleans = [dataclasses.replace(item, expected=human) for item, human in zip(labelled, humans)]
        agreement = agreement_of(as_booleans, best.threshold, direction)
    return Calibration(scorer_id=scorer.id, metric=metric, labelled=len(labelled), points=points, best=best, agreement=agreement)


def calibration_caution(found: Calibration) -> str | None:
    """Why the best threshold of a sweep is not worth taking, in one line (None when it is):
    it agrees with the labels no more than chance (kappa 0 or below, or undefined), or it
    flags every item, or none; the figure the sweep maximised can still look good there."""
    best = found.best
    if best is None:
        return None
    reasons = []
    if best.kappa is None:
        reasons.append("no kappa (every verdict the same): it agrees with the labels no more than chance")
    elif best.kappa <= 0:
        reasons.append(f"kappa {round(best.kappa, 3):g}: it agrees with the labels no more than chance")
    if best.flagged == found.labelled:
        reasons.append(f"it flags all {found.labelled} items")
    elif best.flagged == 0:
        reasons.append(f"it flags none of the {found.labelled} items")
    if not reasons:
        return None
    return f"Not a threshold to use: {'; '.join(reasons)}. The scores do not tell the labelled items apart; change the prompt, or label more items."


__all__ = [
    "Calibration",
    "ComparedResult",
    "ItemStability",
    "RepeatedResult",
    "Stability",
    "ThresholdPoint",
    "arun_compare",
    "arun_repeated",
    "as_variant",
    "base_id",
    "calibration",
    "calibration_caution",
    "labelled_of",
    "repeat_run_name",
    "run_compare",
    "run_repeated",
]
