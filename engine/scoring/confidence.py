"""How sure the judge was of an item's pass or fail: its verdicts' probabilities (what the
judge layer read from its token log-probabilities, or counted over samples) carried through
the plan's own score.

Each outcome the judge might have given instead (a "no" where it wrote "yes", a 3 where it
wrote 4) is scored by the plan's computed steps as the real answer was, and weighed by its
probability: exactly when the outcomes are few, else by a fixed-seed sample of them. The
item's confidence is the weight of the outcomes whose pass/fail is the item's; the expected
score is their probability-weighted mean. A later step that asks the judge keeps its real
answer (it is not asked again for each outcome), and a computed step runs or is skipped as
it was for the real answer.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError, DivisionByZero, NotScorable
from ..judge import FieldProbabilities
from .plan import ScorerPlan, StepPlan
from .results import StepRecord
from .steps import StepCall, step_kind
from .pass_line import PassLine

#: A value the judge gave with at least this probability is taken as given (no other outcome weighed).
SURE = 0.999
#: Up to this many outcomes are weighed exactly; beyond, SAMPLED outcomes are drawn.
EXACT_OUTCOMES = 256
SAMPLED = 200

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _unsure(records: Mapping[str, StepRecord]) -> list[tuple[str, FieldProbabilities]]:
    return [
        (step, figure) for step, record in records.items() for figure in record.probabilities or ()
        if figure.probability(figure.chosen) < SURE and len(figure.values) > 1
    ]


def _set(answer: Any, path: str, value: Any) -> None:
    parts = [int(index) if index else key for key, index in _PART.findall(path)]
    for part in parts[:-1]:
        answer = answer[part]
    answer[parts[-1]] = value


def _outcomes(unsure: Sequence[tuple[str, FieldProbabilities]], seed: str) -> list[tuple[float, tuple[Any, ...]]]:
    """(weight, one value per unsure field) of the outcomes weighed."""
    count = math.prod(len(figure.values) for _, figure in unsure)
    if count <= EXACT_OUTCOMES:
        combined = itertools.product(*(list(zip(figure.values, figure.probabilities)) for _, figure in unsure))
        return [(math.prod(p for _, p in outcome), tuple(v for v, _ in outcome)) for outcome in combined]
    draw = random.Random(seed)
    return [
        (1.0, tuple(draw.choices(figure.values, weights=figure.probabilities)[0] for _, figure in unsure))
        for _ in range(SAMPLED)
    ]


async def weighed_score(
    plan: ScorerPlan, score_step: StepPlan, records: Mapping[str, StepRecord], variables: Mapping[str, Any],
    line: PassLine, call: StepCall, seed: str,
) -> tuple[float, float] | None:
    """(confidence, expected score) of the score `score_step` gave with `variables`, from the
    probabilities in `records` (the steps run so far); None when no step has any."""
    if not any(record.probabilities for record in records.values()):
        return None
    score = float(variables["score"])
    unsure = _unsure(records)
    if not unsure:
        return 1.0, score
    passed = line.passes(score)
    first = min(plan.steps.index(step) for step in plan.steps if step.id in {name for name, _ in unsure})
    after = [step for step in plan.steps[first + 1 : plan.steps.index(score_step) + 1] if not step_kind(step.kind).asks_judge and not records[step.id].skipped]
    same = total = expected = 0.0
    for weight, values in _outcomes(unsure, seed):
        if weight <= 0:
            continue
        answers = {name: copy.deepcopy(records[name].result) for name in {name for name, _ in unsure}}
        for (name, figure), value in zip(unsure, values):
            _set(answers[name], figure.field, value)
        scope = dict(variables)
        for name, answer in answers.items():
            scope.update(step_kind(_step(plan, name).kind).variables(_step(plan, name), answer))
        try:
            for step in after:
                kind = step_kind(step.kind)
                scope.update(kind.variables(step, (await kind.run(step, scope, call)).result))
        except (ConfigError, DivisionByZero, NotScorable):
            continue  # an outcome the plan cannot score: not weighed
        outcome = float(scope["score"])
        total += weight
        expected += weight * outcome
        same += weight if line.passes(outcome) == passed else 0.0
    if total <= 0:
        return None
    return same / total, expected / total


def _step(plan: ScorerPlan, step_id: str) -> StepPlan:
    return next(step for step in plan.steps if step.id == step_id)


class ConfidenceMap(BaseModel):
    """Confidence in, chance of agreeing with people out: straight between the fitted points,
    flat beyond them. Fitted and kept by `scorers calibrate --fit-confidence`
    (runs/confidence_map.py) for one version of a scorer, which then carries it."""

    points: list[tuple[float, float]]

    def __call__(self, confidence: float) -> float:
        xs = [x for x, _ in self.points]
        at = bisect.bisect_right(xs, confidence)
        if at == 0:
            return self.points[0][1]
        if at == len(xs):
            return self.points[-1][1]
        (x0, y0), (x1, y1) = self.points[at - 1], self.points[at]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (confidence - x0) / (x1 - x0)
