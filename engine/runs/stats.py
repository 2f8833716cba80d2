"""Summaries of a run per scorer: running aggregates (no per-item memory), pass/fail
against a threshold, and agreement with human labels told honestly: every figure with a
bootstrap 95% interval, the disagreements worst first, and paired comparisons of two
variants on the same items.

Plain Python: a few hundred labelled items and a thousand resamples take well under a
second, and the formulas are short enough to check by hand against the tests."""

from __future__ import annotations

import math
from collections import Counter
import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..judge import TokenUsage
from ..judge.prices import Price, price_table
from ..scoring import AnyScorer, JudgeVerdict, Jury, StepRecord
from ..scoring.jury import passes
from ..scoring.plan import Direction
from ..store import ScorerUsage
from .results import (
    Agreement,
    BinaryAgreement,
    Comparison,
    Confusion,
    Disagreement,
    FigureDelta,
    FigureEstimate,
    JuryAgreement,
    NumericAgreement,
    ScorerOutcome,
    ScorerSummary,
    VerdictChange,
)

RESAMPLES = 1000
#: Items one bootstrap resample draws at most (see `bootstrap`).
BOOTSTRAP_ITEMS = 1000
SEED = 20240601  # fixed: the same data gives the same intervals on every run


class ScoreSpread(BaseModel):
    """How one scorer's scores of a run are spread: the median, the 95th percentile, and
    the share that passes a threshold (None without one)."""

    p50: float | None = None
    p95: float | None = None
    pass_rate: float | None = None
    threshold: float | None = None


def spread_of(scores: Sequence[float], direction: Direction, threshold: float | None = None) -> ScoreSpread:
    """Percentiles by linear interpolation between the closest ranks (the usual 'inclusive'
    definition: p50 of [0, 1] is 0.5); the pass rate counts a score at the threshold as passing."""
    if not scores:
        return ScoreSpread(threshold=threshold)
    if len(scores) == 1:
        p50 = p95 = float(scores[0])
    else:
        cuts = statistics.quantiles(scores, n=100, method="inclusive")
        p50, p95 = cuts[49], cuts[94]
    pass_rate = None if threshold is None else sum(passes(score, threshold, direction) for score in scores) / len(scores)
    return ScoreSpread(p50=p50, p95=p95, pass_rate=pass_rate, threshold=threshold)


def window_figures(
    scores: Sequence[float], errors: int, not_scorable: int, direction: Direction, threshold: float | None = None, sampled: tuple[int, int] | None = None
) -> dict[str, float | None]:
    """A monitor's figures over one window's outcomes (`sampled`: replies queued for the scorer, replies seen)."""
    outcomes, spread = len(scores) + errors + not_scorable, spread_of(scores, direction, threshold).model_dump()
    rates = {"error_rate": _ratio(errors, outcomes), "not_scorable_rate": _ratio(not_scorable, outcomes), "sampled_rate": _ratio(*sampled) if sampled else None}
    return {**spread, **rates, "outcomes": outcomes, "scored": len(scores), "mean": statistics.fmean(scores) if scores else None}


def usage_cost(usage: ScorerUsage) -> float | None:
    """What stored token counts cost at today's prices (Batch API calls at its price);
    None when the model has no price."""
    return price_table().cost(usage.model, usage.tokens(), usage.batch) if usage.model else None


def judge_models(scorer: AnyScorer) -> list[str]:
    """The models a scorer asks: its judge's, or every judge's of a jury."""
    return [member.judge.model for member in scorer.scorers] if isinstance(scorer, Jury) else [scorer.judge.model]


def unpriced_models(scorer: AnyScorer) -> list[str]:
    """The models of `scorer` that the price table does not know."""
    table = price_table()
    return [model for model in judge_models(scorer) if table.price(model) is None]


def judge_steps(model: str, steps: Mapping[str, StepRecord], judges: Sequence[JudgeVerdict] | None) -> list[tuple[str, StepRecord]]:
    """Every step of one result with the model that answered it: for a jury, each judge's own
    steps (the result's steps are only those of the judge that stands for the verdict).
    Juries stored before judges kept their steps fall back to those."""
    if judges and any(judge.steps for judge in judges):
        return [(judge.model, step) for judge in judges for step in judge.steps.values()]
    return [(model, step) for step in steps.values()]


class Aggregate:
    """Running count/sum/min/max per scorer, so a long run needs no per-item memory."""

    def __init__(self, scorer: AnyScorer, threshold: float | None) -> None:
        self.scorer = scorer
        self.threshold = threshold
        self.count = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.errors = 0
        self.not_scorable = 0
        # Labelled items only: what a human labelled is small enough to keep, and the
        # disagreements must name them.
        self.labelled: list[Labelled] = []
        self.usage = TokenUsage()
        self.judge_calls = 0
        self.cached_calls = 0
        table = price_table()
        self.prices: dict[str, Price | None] = {model: table.price(model) for model in judge_models(scorer)}
        self.cost = 0.0
        # A jury's verdict line: its own threshold, else the run's.
        self.jury_threshold = scorer.threshold if isinstance(scorer, Jury) and scorer.threshold is not None else threshold
        self.jury_verdicts: list[list[bool]] = []  # per item, each judge's pass/fail
        self.jury_labelled: dict[str, list[Labelled]] = {}
        self.jury_items = 0
        self.disagreements = 0

    def cost_of(self, steps: Mapping[str, StepRecord], judges: Sequence[JudgeVerdict] | None) -> float | None:
        """US dollars for the judge calls of one result (every judge of a jury, each at its
        model's price), each call at its own billing (a step asked through the Batch API
        costs its batch price); None when a judge's model has no price."""
        total = 0.0
        for model, step in judge_steps(self.scorer.judge.model, steps, judges):
            if step.usage is None:
                continue
            price = self.prices.get(model)
            if price is None:
                return None
            total += price.cost(step.usage, step.batch)
        return total

    def add(self, outcome: ScorerOutcome, expected: float | bool | None, item_id: str | None = None, index: int | None = None) -> None:
        for _, step in judge_steps(self.scorer.judge.model, outcome.steps, outcome.judges):
            if step.usage is not None:
                self.usage = self.usage + step.usage
                self.judge_calls += 1
            self.cached_calls += step.cached
        self.cost += self.cost_of(outcome.steps, outcome.judges) or 0.0
        if outcome.ok:
            assert outcome.score is not None
            if expected is not None:
                self.labelled.append(Labelled(item_id or "", index, outcome.score, expected, outcome.reason, outcome.steps))
            if outcome.judges is not None:
                self._add_jury(outcome, expected, item_id, index)
            self.count += 1
            self.total += outcome.score
            self.low = min(self.low, outcome.score)
            self.high = max(self.high, outcome.score)
        elif outcome.outcome == "not_scorable":
            self.not_scorable += 1
        else:
            self.errors += 1

    def unsaved(self, score: float | None) -> None:
        """A result counted as scored could not be written to the store: it is an error now
        (a rerun judges it again), so it leaves the mean. Min and max still bound the scores
        the judge gave."""
        if score is not None:
            self.count -= 1
            self.total -= score
        self.errors += 1

    def summary(self) -> ScorerSummary:
        direction = self.scorer.plan.direction
        mean = self.total / self.count if self.count else None
        passed: bool | None = None
        if self.threshold is not None:
            # No score at all cannot pass: a CI gate must not turn green on a dead judge.
            passed = mean is not None and (mean <= self.threshold if direction == "lower_is_better" else mean >= self.threshold)
        return ScorerSummary(
            scorer_id=self.scorer.id,
            direction=direction,
            count=self.count,
            mean=mean,
            min=self.low if self.count else None,
            max=self.high if self.count else None,
            errors=self.errors,
            not_scorable=self.not_scorable,
            threshold=self.threshold,
            passed=passed,
            agreement=agreement_of(self.labelled, self.flag_threshold, direction) if self.labelled else None,
            model=self.scorer.judge.model,
            judge_calls=self.judge_calls,
            cached_calls=self.cached_calls,
            usage=self.usage,
            cost_usd=None if None in self.prices.values() else self.cost,
            jury=self._jury_summary(),
        )

    @property
    def flag_threshold(self) -> float:
        return flag_threshold(self.scorer, self.threshold)

    def _add_jury(self, outcome: ScorerOutcome, expected: float | bool | None, item_id: str | None, index: int | None) -> None:
        assert outcome.judges is not None
        self.jury_items += 1
        self.disagreements += bool(outcome.disagreement)
        if self.jury_threshold is not None:
            line = self.jury_threshold
            self.jury_verdicts.append([passes(judge.score, line, self.scorer.plan.direction) for judge in outcome.judges])
        if expected is not None:
            for judge in outcome.judges:
                self.jury_labelled.setdefault(judge.model, []).append(Labelled(item_id or "", index, judge.score, expected))

    def _jury_summary(self) -> JuryAgreement | None:
        if not isinstance(self.scorer, Jury):
            return None
        return JuryAgreement(
            judges=list(self.scorer.judge.models),
            items=self.jury_items,
            disagreements=self.disagreements,
            kappa=kappa(self.jury_verdicts) if self.jury_verdicts else None,
            with_humans={
                model: agreement_of(labelled, self.flag_threshold, self.scorer.plan.direction) for model, labelled in self.jury_labelled.items()
            },
        )


def kappa(verdicts: list[list[bool]]) -> float | None:
    """Chance-corrected agreement of several judges' pass/fail verdicts over the items:
    Cohen's kappa for two judges, Fleiss' for more. None when chance alone explains every
    verdict (all judges always pass, or always fail)."""
    judges = len(verdicts[0])
    if judges == 2:
        agreed = sum(first == second for first, second in verdicts) / len(verdicts)
        first_pass = sum(first for first, _ in verdicts) / len(verdicts)
        second_pass = sum(second for _, second in verdicts) / len(verdicts)
        expected = first_pass * second_pass + (1 - first_pass) * (1 - second_pass)
        return None if expected == 1 else round((agreed - expected) / (1 - expected), 4)
    per_item = []
    for row in verdicts:
        passing = sum(row)
        per_item.append((passing * (passing - 1) + (judges - passing) * (judges - passing - 1)) / (judges * (judges - 1)))
    observed = sum(per_item) / len(per_item)
    share = sum(sum(row) for row in verdicts) / (len(verdicts) * judges)
    expected = share**2 + (1 - share) ** 2
    return None if expected == 1 else round((observed - expected) / (1 - expected), 4)


def scale_of(scorer: AnyScorer) -> float:
    """The scorer's maximum score (its `scale` option; 1 without one). A jury's judges share it."""
    options = scorer.scorers[0].options if isinstance(scorer, Jury) else scorer.options
    scale = getattr(options, "scale", None)
    return float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0


def flag_threshold(scorer: AnyScorer, threshold: float | None) -> float:
    """Where a score flags an item: the run's threshold for the scorer, else the one its
    definition sets (`threshold:`), else half the scale."""
    if threshold is not None:
        return threshold
    return scorer.plan.threshold if scorer.plan.threshold is not None else scale_of(scorer) / 2


@dataclass(frozen=True)
class Labelled:
    """One item's judge score beside its human label."""

    item_id: str
    index: int | None
    score: float
    expected: float | bool
    reason: str | None = None
    steps: Mapping[str, StepRecord] = field(default_factory=dict)


def flags(score: float, threshold: float, direction: Direction) -> bool:
    """Whether a score flags its item: at or past the threshold on the scorer's worse side."""
    return score >= threshold if direction == "lower_is_better" else score <= threshold


Figures = dict[str, "float | None"]

FIGURE_TITLES = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced accuracy",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "kappa": "Cohen's kappa",
    "mean_abs_error": "mean absolute error",
    "pearson": "Pearson r",
    "spearman": "Spearman rho",
}
LOWER_IS_BETTER_FIGURES = frozenset({"mean_abs_error"})


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def confusion_of(pairs: Sequence[tuple[bool, bool]]) -> Confusion:
    """(judge flags, human flags) pairs counted."""
    # Counted in plain integers, then one model: a bootstrap counts a thousand resamples.
    cells = Counter(pairs)
    return Confusion(
        true_positive=cells[(True, True)], false_positive=cells[(True, False)],
        false_negative=cells[(False, True)], true_negative=cells[(False, False)],
    )  # fmt: skip


def binary_figures(pairs: Sequence[tuple[bool, bool]]) -> Figures:
    c = confusion_of(pairs)
    tp, fp, fn, tn = c.true_positive, c.false_positive, c.false_negative, c.true_negative
    n = tp + fp + fn + tn
    precision, recall, specificity = _ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(tn, tn + fp)
    observed = (tp + tn) / n
    # Chance agreement from each side's own rate of flagging (Cohen, 1960).
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    return {
        "accuracy": observed,
        "balanced_accuracy": (recall + specificity) / 2 if recall is not None and specificity is not None else None,
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "kappa": (observed - chance) / (1 - chance) if chance < 1 else None,
    }


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranked = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranked[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranked


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    spread = math.sqrt(sum((x - mean_x) ** 2 for x in xs) * sum((y - mean_y) ** 2 for y in ys))
    return covariance / spread if spread else None


def numeric_figures(pairs: Sequence[tuple[float, float]]) -> Figures:
    """(judge score, human score) pairs."""
    judge, human = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    return {
        "mean_abs_error": sum(abs(a - b) for a, b in pairs) / len(pairs),
        "pearson": pearson(judge, human),
        "spearman": pearson(ranks(judge), ranks(human)),
    }


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap(count: int, figures: Callable[[list[int]], Figures], resamples: int = RESAMPLES) -> dict[str, FigureEstimate]:
    """Each figure on all `count` items, with the 2.5th and 97.5th percentiles of the figure
    over `resamples` resamples of the items drawn with replacement (a resample where the
    figure is undefined, e.g. no positive item, is left out of that figure's interval).

    Above `BOOTSTRAP_ITEMS` items, each resample draws that many (an m-out-of-n bootstrap)
    and the interval's distance from the figure is narrowed by sqrt(m/n), as the spread of
    a figure shrinks with the square root of the items: a run of 100,000 labelled items gets
    its intervals in the time of one of 1,000."""
    everyone = list(range(count))
    point = figures(everyone)
    size = min(count, BOOTSTRAP_ITEMS)
    narrowed = math.sqrt(size / count) if count else 1.0
    drawn: dict[str, list[float]] = {name: [] for name in point}
    generator = random.Random(SEED)
    for _ in range(resamples):
        sample = generator.choices(everyone, k=size)
        for name, value in figures(sample).items():
            if value is not None:
                drawn[name].append(value)
    estimates: dict[str, FigureEstimate] = {}
    for name, value in point.items():
        values = sorted(drawn[name])
        if value is None or len(values) < resamples // 2:
            estimates[name] = FigureEstimate(value=_rounded(value))
        else:
            low, high = _percentile(values, 0.025), _percentile(values, 0.975)
            if size < count:
                low, high = value + (low - value) * narrowed, value + (high - value) * narrowed
            estimates[name] = FigureEstimate(value=_rounded(value), low=_rounded(low), high=_rounded(high))
    return estimates


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def judged_answers(steps: Mapping[str, StepRecord]) -> dict[str, Any]:
    return {step_id: record.result for step_id, record in steps.items() if record.kind == "llm" and not record.skipped}


def agreement_of(labelled: Sequence[Labelled], threshold: float, direction: Direction) -> Agreement:
    """Figures for the boolean labels and for the numeric ones (a data set may hold both),
    and every disagreement, worst first."""
    booleans = [item for item in labelled if isinstance(item.expected, bool)]
    numbers = [item for item in labelled if not isinstance(item.expected, bool)]
    binary: BinaryAgreement | None = None
    numeric: NumericAgreement | None = None
    disagreements: list[Disagreement] = []
    if booleans:
        pairs = [(flags(item.score, threshold, direction), bool(item.expected)) for item in booleans]
        estimates = bootstrap(len(pairs), lambda picked: binary_figures([pairs[i] for i in picked]))
        binary = BinaryAgreement(labelled=len(pairs), threshold=threshold, confusion=confusion_of(pairs), **estimates)
        for item, (judged, human) in zip(booleans, pairs):
            if judged != human:
                disagreements.append(_disagreement(item, abs(item.score - threshold), judged))
    if numbers:
        scored = [(item.score, float(item.expected)) for item in numbers]
        estimates = bootstrap(len(scored), lambda picked: numeric_figures([scored[i] for i in picked]))
        numeric = NumericAgreement(labelled=len(scored), **estimates)
        disagreements += [_disagreement(item, abs(item.score - float(item.expected))) for item in numbers if item.score != item.expected]
    disagreements.sort(key=lambda item: (-item.gap, item.index if item.index is not None else 0))
    return Agreement(labelled=len(labelled), binary=binary, numeric=numeric, disagreements=disagreements)


def _disagreement(item: Labelled, gap: float, flagged: bool | None = None) -> Disagreement:
    # Built from values already checked (a big run has tens of thousands): not validated again.
    return Disagreement.model_construct(
        item_id=item.item_id, index=item.index, score=item.score, expected=item.expected, flagged=flagged,
        gap=round(gap, 4), reason=item.reason, judged=judged_answers(item.steps),
    )  # fmt: skip


def human_flags(expected: float | bool, threshold: float, direction: Direction) -> bool:
    return expected if isinstance(expected, bool) else flags(expected, threshold, direction)


def compare_labelled(
    baseline: Sequence[Labelled],
    variant: Sequence[Labelled],
    *,
    names: tuple[str, str],
    thresholds: tuple[float, float],
    direction: Direction,
) -> Comparison:
    """Two variants on the items both scored and labelled (paired by item id): each figure,
    its delta with a paired bootstrap interval (the same resampled items for both), and
    the items whose verdict changed."""
    by_id = {item.item_id: item for item in variant}
    pairs = [(item, by_id[item.item_id]) for item in baseline if item.item_id in by_id]
    comparison = Comparison(baseline=names[0], variant=names[1], items=len(pairs))
    if not pairs:
        return comparison

    def figures_of(picked: list[int]) -> Figures:
        out: Figures = {}
        for side, threshold in ((0, thresholds[0]), (1, thresholds[1])):
            chosen = [pairs[i][side] for i in picked]
            booleans = [item for item in chosen if isinstance(item.expected, bool)]
            numbers = [(item.score, float(item.expected)) for item in chosen if not isinstance(item.expected, bool)]
            values: Figures = {}
            if booleans:
                values.update(binary_figures([(flags(item.score, threshold, direction), bool(item.expected)) for item in booleans]))
            if numbers:
                values.update(numeric_figures(numbers))
            out.update({f"{side}:{name}": value for name, value in values.items()})
        for name in FIGURE_TITLES:
            before, after = out.get(f"0:{name}"), out.get(f"1:{name}")
            if f"0:{name}" in out:
                out[f"delta:{name}"] = after - before if before is not None and after is not None else None
        return out

    estimates = bootstrap(len(pairs), figures_of)
    for name, title in FIGURE_TITLES.items():
        if f"delta:{name}" not in estimates:
            continue
        delta = estimates[f"delta:{name}"]
        beyond = None if delta.low is None or delta.high is None else (delta.low > 0 or delta.high < 0)
        improved = None
        if delta.value:
            improved = delta.value < 0 if name in LOWER_IS_BETTER_FIGURES else delta.value > 0
        comparison.figures.append(
            FigureDelta(
                name=name, title=title, baseline=estimates[f"0:{name}"].value, variant=estimates[f"1:{name}"].value,
                delta=delta, improved=improved, beyond_noise=beyond,
            )  # fmt: skip
        )
    for before, after in pairs:
        if before.score != after.score:
            comparison.score_changed += 1
        human = human_flags(before.expected, thresholds[0], direction)
        right_before = flags(before.score, thresholds[0], direction) == human
        right_after = flags(after.score, thresholds[1], direction) == human
        if right_before != right_after:
            change = VerdictChange(item_id=before.item_id, expected=before.expected, baseline_score=before.score, variant_score=after.score)
            (comparison.fixed if right_after else comparison.broken).append(change)
    return comparison
