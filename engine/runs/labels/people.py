"""How far people agree with each other on a queue, and what each item's label comes to.

Two reviewers: Cohen's kappa over the items both labelled. More: Krippendorff's alpha, which
takes any number of reviewers and items not everyone labelled (nominal for verdicts and
categories, interval for numbers). Every figure has a bootstrap 95% interval over the items
(the same `bootstrap` as the judge's agreement). An item's label is its settlement when
someone settled it, else the label its reviewers agree on once it has as many as the queue
asks; reviewers who do not agree leave it to be settled."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...catalog.queues import QueueSpec
from ...store import HumanLabel, ReviewItem, ReviewQueue, Settlement
from ..measures.stats import Figures, bootstrap
from ..results import FigureEstimate

Metric = Literal["nominal", "interval"]
ItemState = Literal["settled", "agreed", "disagreed", "open"]
LabelValue = bool | float | str


Unit = tuple[Hashable, ...]


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of two reviewers' labels of the same items (any categories); None when
    chance alone explains every label (both always gave one and the same)."""
    return _kappa_of(Counter(pairs))


def _kappa_of(pairs: Mapping[Unit, int]) -> float | None:
    """Cohen's kappa from how many items got each (first, second) pair of labels."""
    count = sum(pairs.values())
    if not count:
        return None
    observed = sum(times for (first, second), times in pairs.items() if first == second) / count
    firsts: Counter[Hashable] = Counter()
    seconds: Counter[Hashable] = Counter()
    for (first, second), times in pairs.items():
        firsts[first] += times
        seconds[second] += times
    chance = sum(firsts[value] * seconds[value] for value in firsts) / (count * count)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def _disagreement_sum(values: Sequence[Hashable | float], metric: Metric) -> float:
    """The sum of the distance between every ordered pair of different positions of `values`:
    for nominal values the pairs that differ, for numbers their squared differences."""
    size = len(values)
    if metric == "interval":
        numbers = [float(value) for value in values]  # type: ignore[arg-type]
        total, squares = sum(numbers), sum(number * number for number in numbers)
        return 2 * size * squares - 2 * total * total
    return size * size - sum(number * number for number in Counter(values).values())


def krippendorff_alpha(units: Sequence[Sequence[Hashable | float]], metric: Metric = "nominal") -> float | None:
    """Krippendorff's alpha over `units` (each item's labels, one per reviewer who gave one):
    1 - observed disagreement / the disagreement expected by chance. Items with fewer than
    two labels pair with nothing and are left out. None when every label is the same."""
    return _alpha_of(Counter(_canonical(unit) for unit in units if len(unit) >= 2), metric)


def _canonical(unit: Sequence[Hashable | float]) -> Unit:
    """An item's labels in one order (whose label is whose does not matter to alpha)."""
    return tuple(sorted(unit, key=repr))


def _alpha_of(units: Mapping[Unit, int], metric: Metric) -> float | None:
    """Krippendorff's alpha from how many items got each set of labels: the disagreement of
    each set is worked out once, so a bootstrap resample costs a count, not a pass over labels."""
    total = sum(len(unit) * times for unit, times in units.items())
    if total < 2:
        return None
    observed = sum(times * _disagreement_sum(unit, metric) / (len(unit) - 1) for unit, times in units.items()) / total
    if metric == "interval":
        numbers = {unit: [float(value) for value in unit] for unit in units}  # type: ignore[arg-type]
        sums = sum(times * sum(numbers[unit]) for unit, times in units.items())
        squares = sum(times * sum(number * number for number in numbers[unit]) for unit, times in units.items())
        spread = 2 * total * squares - 2 * sums * sums
    else:
        counts: Counter[Hashable] = Counter()
        for unit, times in units.items():
            for value in unit:
                counts[value] += times
        spread = total * total - sum(number * number for number in counts.values())
    expected = spread / (total * (total - 1))
    return None if expected == 0 else 1 - observed / expected


class PeopleFigure(BaseModel):
    """One figure of people's agreement with each other, with its interval."""

    name: str = Field(description="Cohen's kappa, Krippendorff's alpha (nominal) or (interval)")
    what: str = Field(description="What was compared: the labels, their pass/flag reading, the per-claim answers")
    estimate: FigureEstimate
    items: int = Field(description="Items labelled by two people or more")


class ItemVerdict(BaseModel):
    """What an item's labels come to."""

    item_id: str
    position: int
    state: ItemState
    value: LabelValue | None = Field(default=None, description="The item's label: settled or agreed")
    answers: list[str | None] = Field(default_factory=list)
    labels: list[HumanLabel] = Field(default_factory=list)
    settlement: Settlement | None = None


class PeopleAgreement(BaseModel):
    """A queue's labels and people's agreement over them."""

    reviewers: list[str]
    items: int
    labels: int
    labelled_items: int = Field(description="Items with at least one label")
    complete_items: int = Field(description="Items with every label the queue asks for, or settled")
    figures: list[PeopleFigure] = Field(default_factory=list)
    disagreements: list[ItemVerdict] = Field(default_factory=list, description="Items people labelled differently, not settled yet")
    settled: int = 0


@dataclass
class QueueLabels:
    """A queue with its items, labels and settlements, read once."""

    queue: ReviewQueue
    spec: QueueSpec
    items: list[ReviewItem]
    labels: list[HumanLabel]
    settlements: list[Settlement]
    by_item: dict[str, list[HumanLabel]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_item = {}
        for label in self.labels:
            self.by_item.setdefault(label.item_id, []).append(label)
        self._settled = {settlement.item_id: settlement for settlement in self.settlements}

    def flags(self, value: LabelValue) -> bool:
        return self.spec.flags(value, self.queue.threshold, self.queue.direction == "lower_is_better")

    def verdict(self, item: ReviewItem) -> ItemVerdict:
        labels = self.by_item.get(item.item_id, [])
        settlement = self._settled.get(item.item_id)
        common: dict[str, Any] = {"item_id": item.item_id, "position": item.position, "labels": labels, "settlement": settlement}
        if settlement is not None:
            return ItemVerdict(**common, state="settled", value=settlement.value, answers=settlement.answers)
        if not labels:
            return ItemVerdict(**common, state="open")
        if self.spec.label.kind == "score":
            agreed = len({self.flags(label.value) for label in labels}) == 1
            value: LabelValue | None = round(statistics.fmean(float(label.value) for label in labels), 4) if agreed else None
        else:
            agreed = len({label.value for label in labels}) == 1
            value = labels[0].value if agreed else None
        if not agreed:
            return ItemVerdict(**common, state="disagreed")
        if len(labels) < self.spec.labels_per_item:
            return ItemVerdict(**common, state="open")
        return ItemVerdict(**common, state="agreed", value=value, answers=_agreed_answers(labels))

    def verdicts(self) -> list[ItemVerdict]:
        return [self.verdict(item) for item in self.items]

    def progress(self) -> dict[ItemState, int]:
        """How many items are settled, agreed, disagreed on and open."""
        counts: dict[ItemState, int] = {"settled": 0, "agreed": 0, "disagreed": 0, "open": 0}
        for verdict in self.verdicts():
            counts[verdict.state] += 1
        return counts

    def still_needing(self, reviewer: str, passed: Sequence[str] = ()) -> int:
        """How many items still need a label and have none of `reviewer`'s (leaving out the
        ones they `passed`): when none is offered to them, others hold these right now."""
        skipped = set(passed)
        return sum(
            1
            for item in self.items
            if item.item_id not in skipped
            and item.item_id not in self._settled
            and len(labels := self.by_item.get(item.item_id, [])) < self.spec.labels_per_item
            and all(label.reviewer != reviewer for label in labels)
        )


def step_entries(spec: QueueSpec, item: ReviewItem) -> list[dict[str, Any]]:
    """The entries of the labelled step's answer (each claim and the judge's verdict on it)."""
    if spec.steps is None or item.judged is None:
        return []
    answer = item.judged.answers.get(spec.steps.step)
    entries = answer.get(spec.steps.field) if isinstance(answer, dict) else None
    if not isinstance(entries, list):
        return []
    found = []
    for entry in entries:
        text = entry.get(spec.steps.text) if isinstance(entry, dict) and spec.steps.text else entry
        judged = entry.get(spec.steps.judged) if isinstance(entry, dict) and spec.steps.judged else None
        found.append({"text": str(text), "judged": judged})
    return found



def _agreed_answers(labels: Sequence[HumanLabel]) -> list[str | None]:
    """Each answer's label where every reviewer who answered it gave the same one (None where
    they differ, or nobody answered it)."""
    width = max((len(label.answers) for label in labels), default=0)
    agreed: list[str | None] = []
    for position in range(width):
        given = {label.answers[position] for label in labels if position < len(label.answers) and label.answers[position] is not None}
        agreed.append(given.pop() if len(given) == 1 else None)
    return agreed


def _estimate(units: Sequence[Unit], figure: Callable[[Mapping[Unit, int]], float | None]) -> FigureEstimate:
    """`figure` of the units (from how many of each there are), with its bootstrap interval
    over resamples of the units."""
    kinds = list(dict.fromkeys(units))
    place = {unit: number for number, unit in enumerate(kinds)}
    codes = [place[unit] for unit in units]

    def figures(picked: list[int]) -> Figures:
        counted = Counter(codes[index] for index in picked)
        return {"figure": figure({kinds[code]: times for code, times in counted.items()})}

    return bootstrap(len(units), figures)["figure"]


def people_agreement(labelled: QueueLabels) -> PeopleAgreement:
    """Labels per item, how far people agree (Cohen's kappa for two reviewers, Krippendorff's
    alpha for more; on numbers, alpha by their differences and kappa or alpha on their
    pass/flag reading; on per-answer labels, alpha over every answer), and the items they
    disagree on that nobody settled."""
    reviewers = sorted({label.reviewer for label in labelled.labels})
    verdicts = labelled.verdicts()
    figures: list[PeopleFigure] = []
    kind = labelled.spec.label.kind
    shared = [labelled.by_item[item.item_id] for item in labelled.items if len(labelled.by_item.get(item.item_id, [])) >= 2]
    if shared:
        nominal: list[list[Hashable | float]]
        if kind == "score":
            numbers = [_canonical([float(label.value) for label in labels]) for labels in shared]
            figures.append(_figure("Krippendorff's alpha (interval)", "the numbers given", numbers, lambda units: _alpha_of(units, "interval")))
            nominal = [[labelled.flags(label.value) for label in labels] for labels in shared]
            what = "their pass/flag reading"
        else:
            nominal = [[label.value for label in labels] for labels in shared]
            what = "the labels given"
        if len(reviewers) == 2:
            by_reviewer = [{label.reviewer: value for label, value in zip(labels, values)} for labels, values in zip(shared, nominal)]
            pairs = [(given[reviewers[0]], given[reviewers[1]]) for given in by_reviewer if len(given) == 2]
            figures.append(_figure("Cohen's kappa", what, pairs, _kappa_of))
        else:
            figures.append(_figure("Krippendorff's alpha (nominal)", what, [_canonical(unit) for unit in nominal], lambda units: _alpha_of(units, "nominal")))
        answers: list[list[Hashable | float]] = []
        for labels in shared:
            width = max(len(label.answers) for label in labels)
            for position in range(width):
                given = [label.answers[position] for label in labels if position < len(label.answers) and label.answers[position] is not None]
                answers.append(list(given))
        if any(len(unit) >= 2 for unit in answers):
            paired_answers = [_canonical(unit) for unit in answers if len(unit) >= 2]
            figures.append(_figure("Krippendorff's alpha (nominal)", "each answer's label (per claim)", paired_answers, lambda units: _alpha_of(units, "nominal")))
    return PeopleAgreement(
        reviewers=reviewers,
        items=len(labelled.items),
        labels=len(labelled.labels),
        labelled_items=sum(bool(labelled.by_item.get(item.item_id)) for item in labelled.items),
        complete_items=sum(verdict.state in ("settled", "agreed") for verdict in verdicts),
        figures=figures,
        disagreements=[verdict for verdict in verdicts if verdict.state == "disagreed"],
        settled=sum(verdict.state == "settled" for verdict in verdicts),
    )


def _figure(name: str, what: str, units: Sequence[Unit], figure: Callable[[Mapping[Unit, int]], float | None]) -> PeopleFigure:
    return PeopleFigure(name=name, what=what, estimate=_estimate(units, figure), items=len(units))
