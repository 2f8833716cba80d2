"""Agreement of a judge with human labels, told honestly: every figure with a bootstrap 95%
interval, and the disagreements worst first. Figures are taken as items stream in
(`AgreementStream`), so a run of any size measures agreement in flat memory.

Plain Python: a few thousand labelled items and a thousand resamples take about a second,
and the formulas are short enough to check by hand against the tests."""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...scoring import StepRecord
from ...scoring.pass_line import Direction
from ...scoring.pass_line import flags
from ..results import Agreement, BinaryAgreement, Confusion, Disagreement, FigureEstimate, NumericAgreement, Calibration
from .confidence import calibration_figures, confidence_of, reliability

RESAMPLES = 1000
SEED = 20240601  # fixed: the same data gives the same intervals on every run
#: Items one bootstrap resample draws at most (see `bootstrap`).
BOOTSTRAP_ITEMS = 1000
#: Labelled items of each kind (true/false labels, numbers) a streamed agreement keeps to
#: resample: all of them up to this many; beyond, a uniform sample of this many.
SAMPLE_SIZE = BOOTSTRAP_ITEMS
#: Disagreements listed (the worst); all of them are counted.
WORST_KEPT = 1000


@dataclass(frozen=True)
class Labelled:
    """One item's judge score beside its human label."""

    item_id: str
    index: int | None
    score: float
    expected: float | bool
    reason: str | None = None
    steps: Mapping[str, StepRecord] = field(default_factory=dict)


def human_flags(expected: float | bool, threshold: float, direction: Direction) -> bool:
    return expected if isinstance(expected, bool) else flags(expected, threshold, direction)


@dataclass(frozen=True)
class LabelReading:
    """What a human label says: that the item should be flagged or pass (`flagged`), the
    score a perfect judge would give (`number`), or both."""

    flagged: bool | None
    number: float | None


def read_label(expected: float | bool, scale: float | None, direction: Direction) -> LabelReading:
    """How every figure reads a label (`scorers eval`, `calibrate`, `compare`, stored runs, the
    report and the workbench): true/false is flag/pass; a number is a score on the scorer's
    scale, and 0 or 1 on a scorer scored from 0 to 1 (`scale` 1) is also flag/pass (the worse
    end flags), so labels such as HaluEval's 0/1 get the confusion matrix, F1 and kappa
    beside the numeric figures. `scale` None (a run stored before its scale was recorded)
    reads numbers as numbers only."""
    if isinstance(expected, bool):
        return LabelReading(expected, None)
    number = float(expected)
    if scale == 1.0 and number in (0.0, 1.0):
        return LabelReading(flags(number, 0.5, direction), number)
    return LabelReading(None, number)


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


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, None when there is nothing to divide by."""
    return numerator / denominator if denominator else None


def confusion_of(pairs: Sequence[tuple[bool, bool]]) -> Confusion:
    """(judge flags, human flags) pairs counted."""
    counts = Confusion()
    for judged, human in pairs:
        count_into(counts, judged, human)
    return counts


def count_into(counts: Confusion, judged: bool, human: bool) -> None:
    """One (judge flags, human flags) pair added to `counts`."""
    if judged and human:
        counts.true_positive += 1
    elif judged:
        counts.false_positive += 1
    elif human:
        counts.false_negative += 1
    else:
        counts.true_negative += 1


def binary_figures(pairs: Sequence[tuple[bool, bool]]) -> Figures:
    return confusion_figures(confusion_of(pairs))


def confusion_figures(c: Confusion) -> Figures:
    tp, fp, fn, tn = c.true_positive, c.false_positive, c.false_negative, c.true_negative
    n = tp + fp + fn + tn
    precision, recall, specificity = ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(tn, tn + fp)
    observed = (tp + tn) / n
    # Chance agreement from each side's own rate of flagging (Cohen, 1960).
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    return {
        "accuracy": observed,
        "balanced_accuracy": (recall + specificity) / 2 if recall is not None and specificity is not None else None,
        "precision": precision,
        "recall": recall,
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "kappa": (observed - chance) / (1 - chance) if chance < 1 else None,
    }


def pair_code(judged: bool, human: bool) -> int:
    """A (judge flags, human flags) pair as one small number, to count resamples quickly."""
    return 2 * judged + human


def codes_figures(codes: list[int]) -> Figures:
    return confusion_figures(
        Confusion(true_positive=codes.count(3), false_positive=codes.count(2), false_negative=codes.count(1), true_negative=codes.count(0))
    )


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


def _resampled(count: int, figures: Callable[[list[int]], Figures], resamples: int, size: int) -> tuple[Figures, dict[str, list[float]]]:
    """Each figure on all `count` items, and its values over `resamples` resamples of `size`
    items drawn with replacement (sorted; a resample where a figure is undefined is left out)."""
    everyone = list(range(count))
    point = figures(everyone)
    drawn: dict[str, list[float]] = {name: [] for name in point}
    generator = random.Random(SEED)
    for _ in range(resamples):
        sample = generator.choices(everyone, k=size)
        for name, value in figures(sample).items():
            if value is not None:
                drawn[name].append(value)
    return point, {name: sorted(values) for name, values in drawn.items()}


def bootstrap(count: int, figures: Callable[[list[int]], Figures], resamples: int = RESAMPLES) -> dict[str, FigureEstimate]:
    """Each figure on all `count` items, with the 2.5th and 97.5th percentiles of the figure
    over `resamples` resamples of the items drawn with replacement (a resample where the
    figure is undefined, e.g. no positive item, is left out of that figure's interval).

    Above `BOOTSTRAP_ITEMS` items, each resample draws that many (an m-out-of-n bootstrap)
    and the interval's distance from the figure is narrowed by sqrt(m/n), as the spread of
    a figure shrinks with the square root of the items: a run of 100,000 labelled items gets
    its intervals in the time of one of 1,000."""
    size = min(count, BOOTSTRAP_ITEMS)
    point, drawn = _resampled(count, figures, resamples, size)
    narrowed = math.sqrt(size / count) if count else 1.0
    estimates: dict[str, FigureEstimate] = {}
    for name, value in point.items():
        values = drawn[name]
        if value is None or len(values) < resamples // 2:
            estimates[name] = FigureEstimate(value=_rounded(value))
            continue
        low, high = _percentile(values, 0.025), _percentile(values, 0.975)
        if size < count:
            low, high = value + (low - value) * narrowed, value + (high - value) * narrowed
        estimates[name] = FigureEstimate(value=_rounded(value), low=_rounded(low), high=_rounded(high))
    return estimates


def sampled_bootstrap(
    exact: Figures, seen: int, sample_size: int, figures: Callable[[list[int]], Figures], resamples: int = RESAMPLES
) -> dict[str, FigureEstimate]:
    """Intervals for `seen` items from a uniform sample of `sample_size` of them: the figures'
    spread over resamples of the sample, narrowed by sqrt(sample / seen) as the spread of an
    average narrows with the number of items (the m-out-of-n bootstrap), around the `exact`
    figures of all items (a figure `exact` lacks is the sample's)."""
    point, drawn = _resampled(sample_size, figures, resamples, sample_size)
    narrowing = math.sqrt(sample_size / seen)
    estimates: dict[str, FigureEstimate] = {}
    for name, on_sample in point.items():
        value = exact.get(name, on_sample)
        values = drawn[name]
        if value is None or on_sample is None or len(values) < resamples // 2:
            estimates[name] = FigureEstimate(value=_rounded(value))
            continue
        low = value - (on_sample - _percentile(values, 0.025)) * narrowing
        high = value + (_percentile(values, 0.975) - on_sample) * narrowing
        estimates[name] = FigureEstimate(value=_rounded(value), low=_rounded(min(low, value)), high=_rounded(max(high, value)))
    return estimates


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def judged_answers(steps: Mapping[str, StepRecord]) -> dict[str, Any]:
    """What each judge step of a result answered (claims, verdicts ...)."""
    return {step_id: record.result for step_id, record in steps.items() if record.kind == "llm" and not record.skipped}


def agreement_of(labelled: Sequence[Labelled], threshold: float, direction: Direction, scale: float | None = None) -> Agreement:
    """Figures for the boolean labels and for the numeric ones (a data set may hold both;
    labels read by `read_label`), and the disagreements, worst first."""
    stream = AgreementStream(threshold, direction, scale=scale)
    for item in labelled:
        stream.add(item)
    return stream.result()


class _Moments:
    """Running sums of (judge, human) score pairs: the mean absolute error and Pearson's r of
    every pair seen, in constant memory (Welford's updates, stable over many items)."""

    def __init__(self) -> None:
        self.count = 0
        self.mean_x = self.mean_y = 0.0
        self.spread_x = self.spread_y = self.comoment = 0.0
        self.absolute_errors = 0.0

    def add(self, x: float, y: float) -> None:
        self.count += 1
        self.absolute_errors += abs(x - y)
        dx, dy = x - self.mean_x, y - self.mean_y
        self.mean_x += dx / self.count
        self.mean_y += dy / self.count
        self.spread_x += dx * (x - self.mean_x)
        self.spread_y += dy * (y - self.mean_y)
        self.comoment += dx * (y - self.mean_y)

    def figures(self) -> Figures:
        spread = math.sqrt(self.spread_x * self.spread_y)
        return {"mean_abs_error": self.absolute_errors / self.count, "pearson": self.comoment / spread if spread else None}


class AgreementStream:
    """Agreement with human labels, taken one labelled item at a time, in memory that does not
    grow with the run: exact counts (true/false labels) and running sums (numeric ones) give
    the figures of every item; the intervals are resampled from all items up to SAMPLE_SIZE
    of each kind, and beyond from a uniform sample of that many (reservoir sampling), narrowed
    to the number of items (so a run of BOOTSTRAP_ITEMS labels or fewer gets exactly the
    intervals of a bootstrap over all of them). Spearman's rho past SAMPLE_SIZE numeric labels is the
    sample's. The WORST_KEPT worst disagreements are listed; all are counted."""

    def __init__(
        self, threshold: float, direction: Direction, sample_size: int = SAMPLE_SIZE, worst_kept: int = WORST_KEPT, scale: float | None = None
    ) -> None:
        self.threshold = threshold
        self.direction = direction
        self.scale = scale  # how labels are read (`read_label`)
        self.sample_size = sample_size
        self.worst_kept = worst_kept
        self.labelled = 0
        # (judge flags, human flags) pairs counted by their code (see pair_code): plain ints, as a
        # big run adds a hundred thousand.
        self._flag_counts = [0, 0, 0, 0]
        self.binary_seen = 0
        self.binary_sample: list[int] = []
        self.moments = _Moments()
        self.numeric_sample: list[tuple[float, float]] = []
        self._picker = random.Random(SEED)  # which items a full sample keeps
        # The worst disagreements: a heap whose top is the least bad of them.
        self._worst: list[tuple[float, int, int, int, Labelled, bool | None]] = []
        self.disagreements = 0
        # (confidence, the judge's pass/fail agreed with people's) of items whose judge gave one.
        self.confidences: list[tuple[float, bool]] = []
        self.confident_seen = 0

    @property
    def confusion(self) -> Confusion:
        counts = self._flag_counts
        return Confusion(true_positive=counts[3], false_positive=counts[2], false_negative=counts[1], true_negative=counts[0])

    def add(self, item: Labelled) -> None:
        self._add(item.score, item.expected, item.index, lambda: item, confidence_of(item.steps))

    def add_score(self, item_id: str, index: int | None, score: float, expected: float | bool, reason: str | None = None) -> None:
        """`add` for an item read in bulk: its `Labelled` is made only if it is listed among
        the worst disagreements (a big run adds a hundred thousand items)."""
        self._add(score, expected, index, lambda: Labelled(item_id, index, score, expected, reason))

    def _add(self, score: float, expected: float | bool, index: int | None, item: Callable[[], Labelled], confidence: float | None = None) -> None:
        self.labelled += 1
        label = read_label(expected, self.scale, self.direction)
        if label.flagged is not None:
            judged = flags(score, self.threshold, self.direction)
            code = pair_code(judged, label.flagged)
            self._flag_counts[code] += 1
            self.binary_seen += 1
            self._keep(self.binary_sample, self.binary_seen, code)
            if judged != label.flagged and label.number is None:  # a number's disagreement is its gap, below
                self._disagree(item, index, abs(score - self.threshold), judged)
            if confidence is not None:
                self.confident_seen += 1
                self._keep(self.confidences, self.confident_seen, (confidence, judged == label.flagged))
        if label.number is not None:
            number = label.number
            self.moments.add(score, number)
            self._keep(self.numeric_sample, self.moments.count, (score, number))
            if score != number:
                self._disagree(item, index, abs(score - number), None)

    def _keep(self, sample: list[Any], seen: int, value: Any) -> None:
        """Reservoir sampling: after `seen` items, each is in the sample with the same chance."""
        if len(sample) < self.sample_size:
            sample.append(value)
            return
        slot = self._picker.randrange(seen)
        if slot < self.sample_size:
            sample[slot] = value

    def _disagree(self, item: Callable[[], Labelled], index: int | None, gap: float, flagged: bool | None) -> None:
        self.disagreements += 1
        # Worse: a wider gap, then an earlier item, then a true/false label before a number,
        # then the one met first.
        rank = (round(gap, 4), -(index or 0), -(flagged is None), -self.disagreements)
        if len(self._worst) < self.worst_kept:
            heapq.heappush(self._worst, (*rank, item(), flagged))
        elif rank > self._worst[0][:4]:
            heapq.heapreplace(self._worst, (*rank, item(), flagged))

    def result(self) -> Agreement:
        binary: BinaryAgreement | None = None
        numeric: NumericAgreement | None = None
        if self.binary_seen:
            codes, confusion = self.binary_sample, self.confusion
            estimates = self._estimates(confusion_figures(confusion), self.binary_seen, lambda picked: codes_figures([codes[i] for i in picked]))
            binary = BinaryAgreement(labelled=self.binary_seen, threshold=self.threshold, confusion=confusion, **estimates)
        if self.moments.count:
            pairs = self.numeric_sample
            estimates = self._estimates(self.moments.figures(), self.moments.count, lambda picked: numeric_figures([pairs[i] for i in picked]))
            numeric = NumericAgreement(labelled=self.moments.count, **estimates)
        worst = sorted(self._worst, key=lambda entry: (-entry[0], -entry[1], -entry[2], -entry[3]))
        listed = [_disagreement(item, gap, flagged) for gap, _, _, _, item, flagged in worst]
        return Agreement(
            labelled=self.labelled, binary=binary, numeric=numeric, disagreements=listed, disagreement_count=self.disagreements,
            calibration=self._calibration(),
        )

    def _calibration(self) -> Calibration | None:
        """The confidence's calibration against people (over the kept sample past SAMPLE_SIZE items)."""
        pairs = self.confidences
        if not pairs:
            return None
        estimates = bootstrap(len(pairs), calibration_figures(pairs))
        return Calibration(items=self.confident_seen, ece=estimates["ece"], auroc=estimates["auroc"], curve=reliability(pairs))

    def _estimates(self, exact: Figures, seen: int, figures: Callable[[list[int]], Figures]) -> dict[str, FigureEstimate]:
        if seen <= self.sample_size:
            return bootstrap(seen, figures)  # the sample is every item
        return sampled_bootstrap(exact, seen, self.sample_size, figures)


def _disagreement(item: Labelled, gap: float, flagged: bool | None = None) -> Disagreement:
    # Built from values already checked (a big run lists a thousand): not validated again.
    return Disagreement.model_construct(
        item_id=item.item_id, index=item.index, score=item.score, expected=item.expected, flagged=flagged,
        gap=round(gap, 4), reason=item.reason, judged=judged_answers(item.steps),
    )
