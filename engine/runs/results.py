"""What a batch run reports: per item and scorer an outcome, per run counts, errors with
their causes, and summaries."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..judge import TokenUsage
from ..scoring import JudgeVerdict, ScoreResult, StepRecord
from ..store import Outcome, RunInfo, RunStatus, ScoreStats, Stage
from .items import EvalItem
from .verdict import Verdict


class ScorerOutcome(BaseModel):
    """One scorer's result for one item: a score and reason, the error that stopped it, or
    why the scorer could not judge the item (`not_scorable`)."""

    scorer_id: str
    score: float | None = None
    reason: str | None = None
    steps: dict[str, StepRecord] = Field(default_factory=dict, description="Each step's record (prompt, result, usage), by step id")
    judges: list[JudgeVerdict] | None = Field(default=None, description="A jury's judges, each with its own score and reason")
    disagreement: bool | None = Field(default=None, description="A jury's judges disagreed beyond its margin or on the verdict")
    error: str | None = None
    error_stage: Stage | None = None
    not_scorable: str | None = Field(default=None, description="Why the scorer could not judge this item (no score, no error)")
    resumed: bool = Field(default=False, description="Loaded from the store, scored by an earlier invocation")
    total_tokens: int = 0
    latency_ms: float | None = None
    result: ScoreResult | None = Field(default=None, exclude=True, description="The full result (not for resumed ones)")

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None

    @property
    def outcome(self) -> Outcome:
        if self.error is None and self.not_scorable is not None:
            return "not_scorable"
        return "scored" if self.ok else "error"


class ItemResult(BaseModel):
    """What `on_item_complete` receives: the item, the target's reply, the results by scorer id."""

    index: int = Field(description="Position in reading order, from 0")
    line: int = Field(default=0, description="The data file's line (1-based), or the position in the data (1-based)")
    id: str | None = Field(description="The item's key: its `id`, else `#LINE` (None when unreadable)")
    item: EvalItem | None = None
    output: Any = Field(default=None, description="The reply that was scored (the target's, or the item's own)")
    results: dict[str, ScorerOutcome] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="Why no scorer could run (unreadable item, target failure)")
    resumed: bool = Field(default=False, description="Every result was loaded from the store; nothing ran now")

    @property
    def ok(self) -> bool:
        """Nothing failed: every scorer scored the item or found it not scorable."""
        return self.error is None and all(outcome.outcome != "error" for outcome in self.results.values())


class EvalError(BaseModel):
    """One failure, with where it happened and why (one line)."""

    index: int
    line: int = Field(default=0, description="The data file's line (1-based), or the position in the data (1-based)")
    item_id: str | None
    scorer_id: str | None = None
    stage: Stage
    error: str


class FigureEstimate(BaseModel):
    """A figure with its bootstrap 95% interval (None when the figure is undefined, e.g. a
    correlation when one side never varies)."""

    value: float | None
    low: float | None = None
    high: float | None = None


class Confusion(BaseModel):
    """Counts of flagged (positive) and passed items, judge against humans."""

    true_positive: int = Field(default=0, description="Humans flag it, the judge flags it")
    false_positive: int = Field(default=0, description="Humans pass it, the judge flags it")
    false_negative: int = Field(default=0, description="Humans flag it, the judge passes it")
    true_negative: int = Field(default=0, description="Humans pass it, the judge passes it")


class BinaryAgreement(BaseModel):
    """Agreement with `expected: true/false` labels (true: the scorer should flag the item,
    i.e. score past `threshold` in the scorer's worse direction; a score on it passes)."""

    labelled: int
    threshold: float
    confusion: Confusion
    accuracy: FigureEstimate
    balanced_accuracy: FigureEstimate
    precision: FigureEstimate
    recall: FigureEstimate
    f1: FigureEstimate
    kappa: FigureEstimate = Field(description="Cohen's kappa: agreement beyond chance, -1..1")


class NumericAgreement(BaseModel):
    """Agreement with `expected` scores (numbers on the scorer's scale)."""

    labelled: int
    mean_abs_error: FigureEstimate
    pearson: FigureEstimate
    spearman: FigureEstimate = Field(description="Rank correlation: 1 means the judge orders the items as the humans do")


class Disagreement(BaseModel):
    """One labelled item the judge got wrong (boolean labels) or far off (numbers)."""

    item_id: str
    index: int | None = None
    score: float
    expected: float | bool
    flagged: bool | None = Field(default=None, description="Whether the judge's score flags the item (boolean labels)")
    gap: float = Field(description="How far off: |score - expected|, or the score's distance past the threshold")
    reason: str | None = None
    judged: dict[str, Any] = Field(default_factory=dict, description="Each judge step's answer (claims, verdicts ...)")


class ReliabilityBin(BaseModel):
    """Items whose confidence fell in [low, high): their mean confidence beside the share of
    them on which the judge's pass/fail agreed with people's (equal on a calibrated judge)."""

    low: float
    high: float
    confidence: float
    agreement: float
    items: int


class Calibration(BaseModel):
    """How well the judge's confidence tells when it agrees with people: the expected
    calibration error (the items' gap between confidence and agreement, bin by bin, weighted
    by the bin's items; 0 is perfect) and how well confidence separates the verdicts people
    agree with from the others (AUROC; 0.5 is chance), each with its bootstrap 95% interval,
    and the reliability curve."""

    items: int = Field(description="Labelled items whose judge gave a confidence")
    ece: FigureEstimate
    auroc: FigureEstimate
    curve: list[ReliabilityBin] = Field(default_factory=list)


class Agreement(BaseModel):
    """How well a scorer agrees with the human labels (`expected`) of the items: what a
    prompt tuner compares before and after changing a template. Every figure carries a
    bootstrap 95% interval: on a few hundred items, a change inside it may be noise."""

    labelled: int = Field(description="Items with both a human label and a judge score")
    binary: BinaryAgreement | None = None
    numeric: NumericAgreement | None = None
    disagreements: list[Disagreement] = Field(default_factory=list, description="Worst first (the worst 1,000 at most)")
    disagreement_count: int = Field(default=0, description="Every disagreement, also those past the listed ones")
    calibration: Calibration | None = Field(default=None, description="Of the judge's confidence, where it gave one (true/false labels)")


class FigureDelta(BaseModel):
    """One agreement figure of two variants on the same items, and the change."""

    name: str
    title: str
    baseline: float | None
    variant: float | None
    delta: FigureEstimate = Field(description="variant - baseline, with a paired bootstrap 95% interval")
    improved: bool | None = Field(default=None, description="Whether the change is for the better (None: no change)")
    beyond_noise: bool | None = Field(default=None, description="The delta's interval excludes 0 (None: undefined)")


class VerdictChange(BaseModel):
    item_id: str
    expected: bool | float
    baseline_score: float
    variant_score: float


class Comparison(BaseModel):
    """Two variants judged on the same labelled items: each figure side by side with its
    delta, and the items whose verdict changed."""

    baseline: str
    variant: str
    items: int = Field(description="Labelled items both variants scored")
    figures: list[FigureDelta] = Field(default_factory=list)
    fixed: list[VerdictChange] = Field(default_factory=list, description="Wrong before, right now")
    broken: list[VerdictChange] = Field(default_factory=list, description="Right before, wrong now")
    score_changed: int = Field(default=0, description="Items whose score changed at all")


class JuryAgreement(BaseModel):
    """How a jury's judges agree with each other, and each with the human scores: which
    judge a team can trust."""

    judges: list[str]
    items: int = Field(description="Items every judge scored")
    disagreements: int = Field(description="Items flagged: scores apart by more than the margin, or verdicts split")
    kappa: float | None = Field(
        default=None,
        description="Fleiss' kappa of the judges' pass/fail verdicts (Cohen's for two judges), -1..1; "
        "1 is full agreement, 0 no more than chance (None without a threshold, or when every verdict is the same)",
    )
    with_humans: dict[str, Agreement] = Field(default_factory=dict, description="Per judge: its agreement with the human scores")


class CascadeSummary(BaseModel):
    """What a cascade sent to its strong judge, and what that cost: how much of the strong
    judge a run paid for beside the agreement the cascade reached."""

    cheap: str
    strong: str
    items: int = Field(description="Items the cascade scored")
    escalated: int = Field(description="Items the strong judge decided")
    why: dict[str, int] = Field(default_factory=dict, description="Escalated items by cause: near the threshold, samples disagree, unsure (confidence below the bound), failed validation")
    strong_cost_share: float | None = Field(default=None, description="The strong judge's share of the cost (None when a model has no price)")
    strong_call_share: float | None = Field(default=None, description="The strong judge's share of the judge calls")
    cheap_alone: Agreement | None = Field(default=None, description="The cheap judge's first sample against the human labels, on every item")


class ScorerSummary(ScoreStats):
    threshold: float | None = None
    passed: bool | None = Field(
        default=None, description="Mean within the threshold (None without one); False when nothing was scored, threshold or not"
    )
    gate: Literal["mean", "lower", "upper"] = Field(default="mean", description="What the threshold was compared with: the mean or a bound of its interval")
    mean_interval: FigureEstimate | None = Field(default=None, description="The mean's bootstrap 95% interval (when the gate is a bound of it)")
    agreement: Agreement | None = Field(default=None, description="Only when items carry `expected` scores")
    model: str | None = None
    judge_calls: int = Field(default=0, description="Steps answered by a provider")
    cached_calls: int = Field(default=0, description="Steps answered by the response cache (free)")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens of the judge calls, re-asks included")
    cost_usd: float | None = Field(default=None, description="Estimated from the price table (None: the model has no price)")
    jury: JuryAgreement | None = Field(default=None, description="Only for a jury of judges")
    cascade: CascadeSummary | None = Field(default=None, description="Only for a cascade from a cheap judge to a strong one")


def _no_outcomes() -> dict[Outcome, int]:
    return {"scored": 0, "error": 0, "not_scorable": 0}


class EvalCounts(BaseModel):
    items: int = 0
    completed: int = Field(default=0, description="Items with no error (every scorer scored them or found them not scorable)")
    failed: int = Field(default=0, description="Items with at least one error, at any stage")
    resumed: int = Field(default=0, description="Items entirely loaded from the store")
    scored: int = Field(default=0, description="Scorer runs done in this invocation")
    reused: int = Field(default=0, description="Results loaded from the store (same item content, same scorer and judge)")
    outcomes: dict[Outcome, int] = Field(
        default_factory=_no_outcomes,
        description="(item, scorer) pairs by outcome, over the whole run (reused results included)",
    )


class Uncovered(BaseModel):
    """An item a scorer did not score because it could not judge it (not scorable), with why."""

    index: int
    line: int = 0
    item_id: str | None
    scorer_id: str
    reason: str


#: The name, in a stored run's meta, of the judge calls its invocations sent (answered or not),
#: and in its `last_invocation`, of the last invocation's.
CALLS_SENT = "judge_calls_sent"


def calls_sent(run: RunInfo, last_invocation: bool = False) -> int | None:
    """The judge calls a stored run sent, answered or not (each retry too), over all its
    invocations and workers, or in its last invocation only; None for a run that does not
    record them (stored before they were counted, or a kind that does not count them)."""
    recorded = run.meta.get("last_invocation") if last_invocation else run.meta
    sent = recorded.get(CALLS_SENT) if isinstance(recorded, dict) else None
    return sent if isinstance(sent, int) else None


def calls_line(sent: int | None, answered: int) -> str:
    """The judge calls of a run as every surface words them: those that left, and of them
    those answered (a failed call has no usage, so it costs nothing, but it was sent)."""
    if sent is None:
        return f"{answered} judge call(s) answered"
    return f"{sent} judge call(s) sent (retries included), {answered} answered"


class EvalResult(BaseModel):
    """What a batch run (`run_evals`, `scorers eval`) returns: its status, the mean and summary
    per scorer, every item's outcome, the errors and the items not scorable, and the verdict."""

    run: str
    store: str | None = None
    status: RunStatus = Field(
        default="complete", description="complete; incomplete (some items failed: a rerun retries them); failed (stopped by `stopped_by`)"
    )
    scores: dict[str, float | None] = Field(description="Mean score per scorer id, over scored items only (None: nothing scored)")
    summary: dict[str, ScorerSummary]
    counts: EvalCounts
    errors: list[EvalError]
    not_scorable: list[Uncovered] = Field(default_factory=list, description="Items a scorer could not judge, with why (the first 1,000)")
    stopped_by: str | None = Field(default=None, description="The judge failure that stopped the run (what to fix), if one did")
    stopped_by_kind: str | None = Field(default=None, description="Its error class, e.g. JudgeAuthenticationError")
    max_errors: int = Field(default=0, description="Failed items the run may have and still pass")
    items: list[ItemResult] = Field(default_factory=list, description="Per item, in input order (unless keep_results=False)")
    verdict: Verdict = Field(description="Whether the run passed and every reason it did not (runs/verdict.py)")
    passed: bool = Field(
        default=False,
        description="The verdict: not stopped early, every scorer scored at least min_coverage of the items and met its threshold, "
        "and no more failed items than max_errors",
    )
    duration_s: float = 0.0
    cost_usd: float | None = Field(default=None, description="Estimated for every scorer (None when a judge model has no price)")
    stopped: str | None = Field(default=None, description="Why the run stopped before the end of the data (e.g. the budget)")
    judge_calls_sent: int = Field(
        default=0,
        description="Judge calls the run sent, answered or not (each retry too), over its invocations when stored; `summary`'s judge_calls are those answered",
    )
