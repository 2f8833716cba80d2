"""Summaries of a run per scorer: running aggregates (no per-item memory, labelled items
included), pass/fail against a threshold, agreement with human labels (from
`runs/measures/agreement.py`: every figure with a bootstrap 95% interval, the disagreements worst
first), and paired comparisons of two variants on the same items. Every figure a user sees
comes from here."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from ...judge import TokenUsage
from ...judge.prices import Price, price_table
from ...scoring import AnyScorer, Cascade, JudgeVerdict, Jury, StepRecord
from ...scoring.pass_line import Direction, PassLine, flags
from ...store import ScorerUsage
from .confidence import confidence_of
from .agreement import (
    BOOTSTRAP_ITEMS,
    FIGURE_TITLES,
    LOWER_IS_BETTER_FIGURES,
    RESAMPLES,
    SAMPLE_SIZE,
    SEED,
    WORST_KEPT,
    AgreementStream,
    Figures,
    Labelled,
    agreement_of,
    binary_figures,
    bootstrap,
    codes_figures,
    confusion_of,
    human_flags,
    judged_answers,
    numeric_figures,
    pair_code,
    pearson,
    read_label,
    ranks,
    ratio,
)
from ..verdict import ScorerVerdict, Standard, judge_scorer
from ..results import (
    CascadeSummary,
    Comparison,
    FigureEstimate,
    FigureDelta,
    JuryAgreement,
    ScorerOutcome,
    ScorerSummary,
    VerdictChange,
)

__all__ = [
    "BOOTSTRAP_ITEMS",
    "FIGURE_TITLES",
    "LOWER_IS_BETTER_FIGURES",
    "RESAMPLES",
    "SAMPLE_SIZE",
    "SEED",
    "WORST_KEPT",
    "Aggregate",
    "AgreementStream",
    "Figures",
    "Labelled",
    "ScoreSpread",
    "agreement_of",
    "binary_figures",
    "bootstrap",
    "compare_labelled",
    "confusion_of",
    "flags",
    "human_flags",
    "judged_answers",
    "kappa",
    "mean_estimate",
    "numeric_figures",
    "pearson",
    "judge_models",
    "judge_steps",
    "unpriced_models",
    "window_figures",
    "ranks",
    "ratio",
    "read_label",
    "spread_of",
    "usage_cost",
]

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
    line = PassLine(threshold, direction) if threshold is not None else None
    pass_rate = None if line is None else sum(line.passes(score) for score in scores) / len(scores)
    return ScoreSpread(p50=p50, p95=p95, pass_rate=pass_rate, threshold=threshold)


def window_figures(
    scores: Sequence[float], errors: int, not_scorable: int, direction: Direction, threshold: float | None = None, sampled: tuple[int, int] | None = None
) -> dict[str, float | None]:
    """A monitor's figures over one window's outcomes (`sampled`: replies queued for the scorer, replies seen)."""
    outcomes, spread = len(scores) + errors + not_scorable, spread_of(scores, direction, threshold).model_dump()
    rates = {"error_rate": ratio(errors, outcomes), "not_scorable_rate": ratio(not_scorable, outcomes), "sampled_rate": ratio(*sampled) if sampled else None}
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

    def __init__(self, scorer: AnyScorer, standard: Standard) -> None:
        self.scorer = scorer
        self.standard = standard
        #: The scorer's pass line in this run: the caller's, else its YAML `threshold:`, else
        #: half its scale; only a line someone set (`threshold`) is a gate the mean must meet.
        self.line = standard.line_for(scorer.id, scorer.pass_line)
        self.threshold = self.line.gate
        #: The scores, only when the gate compares a bound of the mean's interval (floats only).
        self.scores: list[float] | None = [] if standard.gate != "mean" else None
        self.count = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.errors = 0
        self.not_scorable = 0
        #: The scored items' confidences, kept only when the run's standard has a least confidence.
        self.confidences: list[float] = []
        # Agreement with the human labels, taken as items stream in (flat memory).
        self.agreement = AgreementStream(self.line.value, scorer.plan.direction, scale=self.line.scale)
        self.usage = TokenUsage()
        self.judge_calls = 0
        self.cached_calls = 0
        table = price_table()
        self.prices: dict[str, Price | None] = {model: table.price(model) for model in judge_models(scorer)}
        self.cost = 0.0
        # A jury's verdict line: its own threshold, else the run's.
        own = scorer.verdict_line if isinstance(scorer, Jury) else None
        self.jury_line: PassLine | None = own if own is not None else self.line if self.threshold is not None else None
        self.jury_verdicts: list[list[bool]] = []  # per item, each judge's pass/fail
        self.jury_labelled: dict[str, AgreementStream] = {}  # per judge model
        self.jury_items = 0
        self.disagreements = 0
        # A cascade: what reached its strong judge, and the cheap judge alone against the labels.
        self.escalated: dict[str, int] = {}
        self.strong_cost = 0.0
        self.strong_calls = 0
        self.cheap_alone = AgreementStream(self.line.value, scorer.plan.direction)

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
                self.agreement.add(Labelled(item_id or "", index, outcome.score, expected, outcome.reason, outcome.steps))
            if outcome.judges is not None and isinstance(self.scorer, Cascade):
                self._add_cascade(outcome, expected, item_id, index)
            elif outcome.judges is not None:
                self._add_jury(outcome, expected, item_id, index)
            if self.standard.min_confidence is not None and (confidence := confidence_of(outcome.steps)) is not None:
                self.confidences.append(confidence)
            self.count += 1
            self.total += outcome.score
            if self.scores is not None:
                self.scores.append(outcome.score)
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
            if self.scores is not None and score in self.scores:
                self.scores.remove(score)
        self.errors += 1

    def summary(self) -> tuple[ScorerSummary, ScorerVerdict]:
        """The scorer's figures, and its part of the run's verdict (which also sets the
        summary's `passed`)."""
        direction = self.scorer.plan.direction
        mean = self.total / self.count if self.count else None
        interval = mean_estimate(self.scores) if self.scores is not None else None
        summary = ScorerSummary(
            scorer_id=self.scorer.id,
            direction=direction,
            count=self.count,
            mean=mean,
            min=self.low if self.count else None,
            max=self.high if self.count else None,
            errors=self.errors,
            not_scorable=self.not_scorable,
            threshold=self.threshold,
            gate=self.standard.gate,
            mean_interval=interval,
            agreement=self.agreement.result() if self.agreement.labelled else None,
            model=self.scorer.judge.model,
            judge_calls=self.judge_calls,
            cached_calls=self.cached_calls,
            usage=self.usage,
            cost_usd=None if None in self.prices.values() else self.cost,
            jury=self._jury_summary(),
            cascade=self._cascade_summary(),
        )
        verdict = judge_scorer(summary, self.line, self.standard, (interval.low, interval.high) if interval is not None else None, self.confidences)
        return summary.model_copy(update={"passed": verdict.passed}), verdict

    def _add_jury(self, outcome: ScorerOutcome, expected: float | bool | None, item_id: str | None, index: int | None) -> None:
        assert outcome.judges is not None
        self.jury_items += 1
        self.disagreements += bool(outcome.disagreement)
        if self.jury_line is not None:
            line = self.jury_line
            self.jury_verdicts.append([line.passes(judge.score) for judge in outcome.judges])
        if expected is not None:
            for judge in outcome.judges:
                if judge.model not in self.jury_labelled:
                    self.jury_labelled[judge.model] = AgreementStream(self.line.value, self.scorer.plan.direction, scale=self.line.scale)
                self.jury_labelled[judge.model].add(Labelled(item_id or "", index, judge.score, expected))

    def _add_cascade(self, outcome: ScorerOutcome, expected: float | bool | None, item_id: str | None, index: int | None) -> None:
        assert outcome.judges is not None
        self.jury_items += 1
        strong = next((judge for judge in outcome.judges if judge.escalation is not None), None)
        if strong is not None:
            assert strong.escalation is not None
            cause = escalation_cause(strong.escalation)
            self.escalated[cause] = self.escalated.get(cause, 0) + 1
            self.strong_cost += self.cost_of(strong.steps, [strong]) or 0.0
            self.strong_calls += sum(step.usage is not None for step in strong.steps.values())
        cheap = next((judge for judge in outcome.judges if judge.escalation is None), None)
        if expected is not None and cheap is not None:
            self.cheap_alone.add(Labelled(item_id or "", index, cheap.score, expected))

    def _cascade_summary(self) -> CascadeSummary | None:
        if not isinstance(self.scorer, Cascade):
            return None
        priced = None not in self.prices.values()
        return CascadeSummary(
            cheap=self.scorer.cheap.judge.model, strong=self.scorer.strong.judge.model, items=self.jury_items,
            escalated=sum(self.escalated.values()), why=dict(self.escalated),
            strong_cost_share=round(self.strong_cost / self.cost, 4) if priced and self.cost else None,
            strong_call_share=round(self.strong_calls / self.judge_calls, 4) if self.judge_calls else None,
            cheap_alone=self.cheap_alone.result() if self.cheap_alone.labelled else None,
        )

    def _jury_summary(self) -> JuryAgreement | None:
        if not isinstance(self.scorer, Jury) or isinstance(self.scorer, Cascade):
            return None
        return JuryAgreement(
            judges=list(self.scorer.judge.models),
            items=self.jury_items,
            disagreements=self.disagreements,
            kappa=kappa(self.jury_verdicts) if self.jury_verdicts else None,
            with_humans={model: stream.result() for model, stream in self.jury_labelled.items()},
        )


def escalation_cause(escalation: str) -> str:
    """The kind of a cascade's escalation (its words, from scoring/cascade.py) it is counted under."""
    for words, cause in (("failed validation", "failed validation"), ("disagree", "samples disagree"), ("confidence", "unsure")):
        if words in escalation:
            return cause
    return "near the threshold"


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



def mean_estimate(scores: Sequence[float]) -> FigureEstimate:
    """The mean of the scores, with its bootstrap 95% interval; one score gives no interval
    (resampling one item always draws it: a zero-width interval no evidence supports)."""
    if not scores:
        return FigureEstimate(value=None)
    if len(scores) == 1:
        return FigureEstimate(value=scores[0])
    return bootstrap(len(scores), lambda picked: {"mean": sum(scores[i] for i in picked) / len(picked)})["mean"]


def compare_labelled(
    baseline: Sequence[Labelled],
    variant: Sequence[Labelled],
    *,
    names: tuple[str, str],
    thresholds: tuple[float, float],
    direction: Direction,
    scale: float | None = None,
) -> Comparison:
    """Two variants on the items both scored and labelled (paired by item id; labels read by
    `read_label` on the scorer's `scale`): each figure, its delta with a paired bootstrap
    interval (the same resampled items for both), and the items whose verdict changed."""
    by_id = {item.item_id: item for item in variant}
    pairs = [(item, by_id[item.item_id]) for item in baseline if item.item_id in by_id]
    comparison = Comparison(baseline=names[0], variant=names[1], items=len(pairs))
    if not pairs:
        return comparison
    labels = [read_label(before.expected, scale, direction) for before, _ in pairs]
    # Each side's verdict against each label, read once: the bootstrap counts a thousand
    # resamples of them (reading them again per resample took most of `compare`'s time).
    codes = [
        [pair_code(flags(pair[side].score, threshold, direction), label.flagged) if label.flagged is not None else None for pair, label in zip(pairs, labels)]
        for side, threshold in enumerate(thresholds)
    ]
    numbers = [
        [(pair[side].score, label.number) if label.number is not None else None for pair, label in zip(pairs, labels)] for side in (0, 1)
    ]

    def figures_of(picked: list[int]) -> Figures:
        out: Figures = {}
        for side in (0, 1):
            picked_codes = [code for code in map(codes[side].__getitem__, picked) if code is not None]
            picked_numbers = [number for number in map(numbers[side].__getitem__, picked) if number is not None]
            values: Figures = {}
            if picked_codes:
                values.update(codes_figures(picked_codes))
            if picked_numbers:
                values.update(numeric_figures(picked_numbers))
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
            )
        )
    for (before, after), label in zip(pairs, labels):
        if before.score != after.score:
            comparison.score_changed += 1
        human = label.flagged if label.flagged is not None else human_flags(before.expected, thresholds[0], direction)
        right_before = flags(before.score, thresholds[0], direction) == human
        right_after = flags(after.score, thresholds[1], direction) == human
        if right_before != right_after:
            change = VerdictChange(item_id=before.item_id, expected=before.expected, baseline_score=before.score, variant_score=after.score)
            (comparison.fixed if right_after else comparison.broken).append(change)
    return comparison
