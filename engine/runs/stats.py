"""Summaries of a run per scorer: running aggregates (no per-item memory), pass/fail
against a threshold, and agreement with human scores."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from ..judge import TokenUsage
from ..judge.prices import Price, price_table
from ..scoring import AnyScorer, Jury, StepRecord
from ..scoring.jury import passes
from ..scoring.plan import Direction
from .results import Agreement, JuryAgreement, ScorerOutcome, ScorerSummary


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


def price_of(scorer: AnyScorer) -> Price | None:
    """The price of a scorer's judge calls: its model's, or, for a jury, the one price all its
    judges share (a jury's steps are not told apart by judge, so mixed prices stay unknown)."""
    table = price_table()
    models = [member.judge.model for member in scorer.scorers] if isinstance(scorer, Jury) else [scorer.judge.model]
    prices = {table.price(model) for model in models}
    return prices.pop() if len(prices) == 1 else None


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
        self.labelled: list[tuple[float, float]] = []  # (judge, human): two numbers per labelled item
        self.usage = TokenUsage()
        self.judge_calls = 0
        self.cached_calls = 0
        self.price = price_of(scorer)
        # A jury's verdict line: its own threshold, else the run's.
        self.jury_threshold = scorer.threshold if isinstance(scorer, Jury) and scorer.threshold is not None else threshold
        self.jury_verdicts: list[list[bool]] = []  # per item, each judge's pass/fail
        self.jury_labelled: dict[str, list[tuple[float, float]]] = {}
        self.jury_items = 0
        self.disagreements = 0

    def cost_of_steps(self, steps: Iterable[StepRecord]) -> float | None:
        usage = sum((step.usage for step in steps if step.usage is not None), TokenUsage())
        return None if self.price is None else self.price.cost(usage)

    def add(self, outcome: ScorerOutcome, expected: float | None) -> None:
        for step in outcome.steps.values():
            if step.usage is not None:
                self.usage = self.usage + step.usage
                self.judge_calls += 1
            self.cached_calls += step.cached
        if outcome.ok:
            assert outcome.score is not None
            if expected is not None:
                self.labelled.append((outcome.score, expected))
            if outcome.judges is not None:
                self._add_jury(outcome, expected)
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
            agreement=agreement_of(self.labelled) if self.labelled else None,
            model=self.scorer.judge.model,
            judge_calls=self.judge_calls,
            cached_calls=self.cached_calls,
            usage=self.usage,
            cost_usd=None if self.price is None else self.price.cost(self.usage),
            jury=self._jury_summary(),
        )

    def _add_jury(self, outcome: ScorerOutcome, expected: float | None) -> None:
        assert outcome.judges is not None
        self.jury_items += 1
        self.disagreements += bool(outcome.disagreement)
        if self.jury_threshold is not None:
            line = self.jury_threshold
            self.jury_verdicts.append([passes(judge.score, line, self.scorer.plan.direction) for judge in outcome.judges])
        if expected is not None:
            for judge in outcome.judges:
                self.jury_labelled.setdefault(judge.model, []).append((judge.score, expected))

    def _jury_summary(self) -> JuryAgreement | None:
        if not isinstance(self.scorer, Jury):
            return None
        return JuryAgreement(
            judges=list(self.scorer.judge.models),
            items=self.jury_items,
            disagreements=self.disagreements,
            kappa=kappa(self.jury_verdicts) if self.jury_verdicts else None,
            with_humans={model: agreement_of(pairs) for model, pairs in self.jury_labelled.items()},
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


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def agreement_of(pairs: list[tuple[float, float]]) -> Agreement:
    judge, human = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    judge_ranks, human_ranks = _ranks(judge), _ranks(human)
    mean_judge, mean_human = sum(judge_ranks) / len(pairs), sum(human_ranks) / len(pairs)
    covariance = sum((a - mean_judge) * (b - mean_human) for a, b in zip(judge_ranks, human_ranks))
    spread = math.sqrt(sum((a - mean_judge) ** 2 for a in judge_ranks) * sum((b - mean_human) ** 2 for b in human_ranks))
    return Agreement(
        labelled=len(pairs),
        rank_correlation=round(covariance / spread, 4) if spread else None,
        mean_abs_error=round(sum(abs(a - b) for a, b in pairs) / len(pairs), 4),
    )
