"""A jury: several judges score the same output with the same plan, and one aggregate score
comes out, with every judge's own score and reason kept beside it.

A jury is a runner over several scorers of one plan (one per judge), not a branch inside
the scorer: each judge runs the plan exactly as it would alone.

    jury = Jury([scorer_a, scorer_b, scorer_c], aggregate="majority", threshold=0.5)
    result = jury.run(output="...")
    result.score, result.judges, result.disagreement

Aggregations: `mean`, `median`, `majority` (each judge's pass/fail verdict against the
threshold; the score is the mean of the majority's scores, a tie counting as a fail) and
`strictest` (the worst score for the scorer's direction). The judges disagree when their
scores spread wider than `margin`, or, with a threshold, when their verdicts differ.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ConfigError, JudgeError
from ..judge.settings import AGGREGATIONS, Aggregation
from .calls import ScoringCalls
from .context import GetContext
from .plan import ScorerPlan
from .results import JudgeVerdict, ScoreResult
from .run_input import RunInput
from .scorer import Scorer
from .pass_line import PassLine

#: How far apart (on the scorer's scale) two judges' scores may be before they disagree.
DEFAULT_MARGIN = 0.3


@dataclass(frozen=True)
class Panel:
    """The judges of a jury, as one name (what results and the store record as the model):
    `a+b` for a jury, `a>b` for a cascade from a to b."""

    models: tuple[str, ...]
    joiner: str = "+"

    @property
    def model(self) -> str:
        return self.joiner.join(self.models)


class Jury(ScoringCalls):
    """Several judges scoring with one plan; see the module docstring."""

    def __init__(
        self,
        scorers: Sequence[Scorer],
        aggregate: Aggregation = "mean",
        threshold: float | None = None,
        margin: float | None = None,
    ) -> None:
        if len(scorers) < 2:
            raise ConfigError("a jury needs at least two judges")
        plans = {scorer.plan.fingerprint for scorer in scorers}
        if len(plans) != 1:
            raise ConfigError("every judge of a jury must score with the same scorer definition")
        models = [scorer.judge.model for scorer in scorers]
        repeated = sorted({model for model in models if models.count(model) > 1})
        if repeated:
            raise ConfigError(f"judge {', '.join(repeated)} is named twice in the jury")
        if aggregate not in AGGREGATIONS:
            raise ConfigError(f"unknown aggregation {aggregate!r}; choose one of {', '.join(AGGREGATIONS)}")
        if aggregate == "majority" and threshold is None:
            raise ConfigError(f"{scorers[0].id}: a majority vote needs a threshold (the pass line of each judge's verdict)")
        self.scorers = list(scorers)
        self.aggregate = aggregate
        #: Each judge's verdict line: the judges' own line moved to `threshold` (None: no verdicts).
        self.verdict_line: PassLine | None = scorers[0].pass_line.overridden(threshold) if threshold is not None else None
        self.margin = DEFAULT_MARGIN if margin is None else margin
        self.judge = Panel(tuple(models))

    @property
    def threshold(self) -> float | None:
        """The jury's own pass line for each judge's verdict, when it has one."""
        return self.verdict_line.value if self.verdict_line is not None else None

    @property
    def pass_line(self) -> PassLine:
        """Where the jury's score passes: its judges' line (they share plan and options)."""
        return self.scorers[0].pass_line

    @property
    def plan(self) -> ScorerPlan:
        return self.scorers[0].plan

    @property
    def id(self) -> str:
        return self.plan.id

    @property
    def context(self) -> list[str] | None:
        return self.scorers[0].context

    @property
    def fingerprint(self) -> str:
        """What decides whether a stored jury result still answers the same question: every
        judge's scorer fingerprint and how their scores combine."""
        described = [[scorer.fingerprint for scorer in self.scorers], self.aggregate, self.threshold, self.margin]
        return hashlib.sha256(json.dumps(described, default=str).encode()).hexdigest()[:16]

    @property
    def get_context(self) -> GetContext | None:
        return self.scorers[0].get_context

    def __repr__(self) -> str:
        return f"Jury({self.id!r}, models={list(self.judge.models)!r}, aggregate={self.aggregate!r})"

    @property
    def scored_by(self) -> tuple[ScorerPlan, str]:
        return self.plan, self.judge.model

    async def _ascore(self, given: RunInput, get_context: GetContext | None, sample: int) -> ScoreResult:
        started = time.perf_counter()
        judged = (scorer.ascore(given, get_context=get_context, sample=sample) for scorer in self.scorers)
        outcomes = await asyncio.gather(*judged, return_exceptions=True)
        results: list[ScoreResult] = []
        for scorer, outcome in zip(self.scorers, outcomes):
            if isinstance(outcome, BaseException):
                if isinstance(outcome, JudgeError):
                    raise type(outcome)(f"judge {scorer.judge.model}: {outcome.message}", outcome.step, parameter=outcome.parameter) from outcome
                raise outcome
            results.append(outcome)
        verdicts = [
            JudgeVerdict(
                model=result.model,
                score=result.score,
                reason=result.reason,
                passed=self.verdict_line.passes(result.score) if self.verdict_line is not None else None,
                usage=result.usage,
                steps=result.steps,
            )
            for result in results
        ]
        score, chosen = self._aggregate(results, verdicts)
        scores = [verdict.score for verdict in verdicts]
        disagreement = max(scores) - min(scores) > self.margin or len({verdict.passed for verdict in verdicts}) > 1
        return chosen.model_copy(
            update={
                "score": score,
                "model": self.judge.model,
                "judges": verdicts,
                "disagreement": disagreement,
                "duration_ms": (time.perf_counter() - started) * 1000,
            }
        )

    def _aggregate(self, results: list[ScoreResult], verdicts: list[JudgeVerdict]) -> tuple[float, ScoreResult]:
        """The jury's score, and the judge whose reason and steps stand for it (the one
        closest to the score)."""
        scores = [result.score for result in results]
        lower_is_better = self.plan.direction == "lower_is_better"
        if self.aggregate == "mean":
            score = statistics.fmean(scores)
        elif self.aggregate == "median":
            score = statistics.median(scores)
        elif self.aggregate == "strictest":
            score = max(scores) if lower_is_better else min(scores)
        else:
            passing = [verdict.score for verdict in verdicts if verdict.passed]
            failing = [verdict.score for verdict in verdicts if not verdict.passed]
            score = statistics.fmean(passing if len(passing) > len(failing) else failing)
        closest = min(range(len(results)), key=lambda index: abs(scores[index] - score))
        return round(score, 4), results[closest]


def each_judge(scorer: Scorer | Jury, change: Callable[[Scorer], Scorer]) -> Scorer | Jury:
    """`change` applied to a scorer, or to each judge of a jury (a copy of the jury, with its
    aggregation, thresholds and margin kept)."""
    if isinstance(scorer, Jury):
        jury = copy.copy(scorer)
        jury.scorers = [change(member) for member in scorer.scorers]
        return jury
    return change(scorer)


#: What the runners score with: one judge, or a jury of several.
AnyScorer = Scorer | Jury
