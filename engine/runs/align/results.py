"""What `align` reports: the split, every candidate tried on dev, and the verdict on test."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from ..results import Comparison, FigureDelta

AlignMetric = Literal["kappa", "balanced_accuracy", "f1", "mae"]
CandidateKind = Literal["examples", "instructions", "threshold", "margin"]


class SplitSizes(BaseModel):
    train: int
    dev: int
    test: int
    unlabelled: int = Field(default=0, description="Items without a label for the scorer (left out)")


class Trial(BaseModel):
    """One candidate judged on dev."""

    name: str
    kind: CandidateKind
    change: str = Field(description="What the candidate changes, in words")
    dev: float | None = Field(description="The metric on dev (None: undefined or not measured)")
    best_before: float | None = Field(description="The best dev metric before this trial")
    kept: bool
    run: str | None = Field(default=None, description="The stored run of this trial on dev")


class AlignResult(BaseModel):
    """What `align` found: the split, the baseline, every candidate tried on dev, the best one's
    comparison with the baseline on the untouched test split, and whether it was accepted."""

    scorer_id: str
    metric: AlignMetric
    seed: int
    split: SplitSizes
    baseline_dev: float | None
    baseline_threshold: float
    trials: list[Trial] = Field(default_factory=list)
    chosen: list[str] = Field(default_factory=list, description="The changes of the best candidate on dev")
    threshold: float | None = Field(default=None, description="The calibrated threshold, when the best candidate has one")
    test: Comparison | None = Field(default=None, description="Baseline against the best candidate on the untouched test split")
    accepted: bool = False
    verdict: str
    variant_dir: str | None = None
    runs: list[str] = Field(default_factory=list)
    cost_usd: float = Field(default=0.0, description="What this align has spent: over every invocation when it has a budget, else this invocation's runs")
    estimated_cost_usd: float | None = None
    stopped: str | None = Field(default=None, description="Why align stopped before the end (the budget, the judge); rerun to continue")
    stopped_by_kind: str | None = Field(default=None, description="When the judge stopped it: the error's class, e.g. JudgeAuthenticationError")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether align did its whole job: a stopped align (the budget, the judge) did not."""
        return self.stopped is None

    @property
    def test_delta(self) -> FigureDelta | None:
        """The chosen metric's change on test, with its paired bootstrap interval."""
        if self.test is None:
            return None
        name = "mean_abs_error" if self.metric == "mae" else self.metric
        return next((figure for figure in self.test.figures if figure.name == name), None)
