"""What a batch run reports: per item and scorer an outcome, per run counts, errors with
their causes, and summaries."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..judge import TokenUsage
from ..scoring import JudgeVerdict, ScoreResult, StepRecord
from ..store import ScoreStats, Stage
from .items import EvalItem


class ScorerOutcome(BaseModel):
    """One scorer's result for one item: a score and reason, or the error that stopped it."""

    scorer_id: str
    score: float | None = None
    reason: str | None = None
    steps: dict[str, StepRecord] = Field(default_factory=dict, description="Each step's record (prompt, result, usage), by step id")
    judges: list[JudgeVerdict] | None = Field(default=None, description="A jury's judges, each with its own score and reason")
    disagreement: bool | None = Field(default=None, description="A jury's judges disagreed beyond its margin or on the verdict")
    error: str | None = None
    error_stage: Stage | None = None
    resumed: bool = Field(default=False, description="Loaded from the store, scored by an earlier invocation")
    total_tokens: int = 0
    latency_ms: float | None = None
    result: ScoreResult | None = Field(default=None, exclude=True, description="The full result (not for resumed ones)")

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None


class ItemResult(BaseModel):
    """What `on_item_complete` receives: the item, the target's reply, the results by scorer id."""

    index: int
    id: str | None = Field(description="The item's key: its `id` or content hash (None when unreadable)")
    item: EvalItem | None = None
    output: Any = Field(default=None, description="The reply that was scored (the target's, or the item's own)")
    results: dict[str, ScorerOutcome] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="Why no scorer could run (unreadable item, target failure)")
    resumed: bool = Field(default=False, description="Every result was loaded from the store; nothing ran now")

    @property
    def ok(self) -> bool:
        return self.error is None and all(outcome.ok for outcome in self.results.values())


class EvalError(BaseModel):
    """One failure, with where it happened and why (one line)."""

    index: int
    item_id: str | None
    scorer_id: str | None = None
    stage: Stage
    error: str


class Agreement(BaseModel):
    """How well a scorer agrees with the human scores (`expected`) of the items: what a
    prompt tuner compares before and after changing a template."""

    labelled: int = Field(description="Items with both a human score and a judge score")
    rank_correlation: float | None = Field(
        description="Spearman's rho between judge and human scores, -1..1 (None when either side is constant); "
        "1 means the judge orders the items exactly as the humans do"
    )
    mean_abs_error: float = Field(description="Mean |judge score - human score|, on the scorer's scale")


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


class ScorerSummary(ScoreStats):
    threshold: float | None = None
    passed: bool | None = Field(default=None, description="Mean within the threshold (None without one)")
    agreement: Agreement | None = Field(default=None, description="Only when items carry `expected` scores")
    model: str | None = None
    judge_calls: int = Field(default=0, description="Steps answered by a provider")
    cached_calls: int = Field(default=0, description="Steps answered by the response cache (free)")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens of the judge calls, re-asks included")
    cost_usd: float | None = Field(default=None, description="Estimated from the price table (None: the model has no price)")
    jury: JuryAgreement | None = Field(default=None, description="Only for a jury of judges")


class EvalCounts(BaseModel):
    items: int = 0
    completed: int = Field(default=0, description="Items every scorer scored")
    failed: int = Field(default=0, description="Items with at least one error")
    resumed: int = Field(default=0, description="Items entirely loaded from the store")
    scored: int = Field(default=0, description="Scorer runs done in this invocation")


class EvalResult(BaseModel):
    run: str
    store: str | None = None
    scores: dict[str, float | None] = Field(description="Mean score per scorer id (None: nothing scored)")
    summary: dict[str, ScorerSummary]
    counts: EvalCounts
    errors: list[EvalError]
    items: list[ItemResult] = Field(default_factory=list, description="Per item, in input order (unless keep_results=False)")
    passed: bool | None = Field(default=None, description="Every threshold met (None without thresholds)")
    duration_s: float = 0.0
    cost_usd: float | None = Field(default=None, description="Estimated for every scorer (None when a judge model has no price)")
    stopped: str | None = Field(default=None, description="Why the run stopped before the end of the data (e.g. the budget)")
