"""What a scorer runs: a frozen plan, one type per step kind, built by the catalog with
keywords. The scorer reads plans only, never the YAML they came from.

Templates, expressions and checks arrive compiled; this layer knows them only by the small
protocols below, so it does not depend on how the catalog compiles them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from ..judge import Sampling

Direction = Literal["higher_is_better", "lower_is_better"]
RunField = Literal["output", "input", "context", "ground_truth", "turns", "expected_trajectory"]


class Prompt(Protocol):
    """A compiled template."""

    @property
    def names(self) -> frozenset[str]:
        """The variables it reads."""
        ...

    def render(self, variables: Mapping[str, Any]) -> str: ...


class Evaluable(Protocol):
    """A compiled expression (or reducer): a value from the variables of a run."""

    @property
    def names(self) -> frozenset[str]:
        """The variables it reads."""
        ...

    def __call__(self, variables: Mapping[str, Any]) -> Any: ...


class Check(Protocol):
    """A compiled rule: None when it holds, else the message that says why not."""

    def failure(self, variables: Mapping[str, Any]) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class StepPlan:
    id: str
    skip_if: Evaluable | None = None
    uses_context: bool = False
    #: The variables the step reads: its templates', expressions' and answer rules' names.
    #: A step waits for the earlier steps it reads and runs beside the others.
    reads: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True)
class JudgeStepPlan(StepPlan):
    """Asks the judge with a rendered prompt; the answer must validate against `answer_model`."""

    kind: Literal["llm"] = "llm"
    prompt: Prompt
    system: Prompt | None = None
    answer_model: type[BaseModel]
    sampling: Sampling
    on_skip: Any = None


@dataclass(frozen=True, kw_only=True)
class ReasonStepPlan(StepPlan):
    """Asks the judge to explain the score; the result is text."""

    kind: Literal["reason"] = "reason"
    prompt: Prompt
    system: Prompt | None = None
    answer_model: type[BaseModel] | None = None
    sampling: Sampling
    on_skip: Prompt | None = None


@dataclass(frozen=True, kw_only=True)
class ScoreStepPlan(StepPlan):
    """Computes named values, then the score, from earlier steps, without a model."""

    kind: Literal["score"] = "score"
    values: Mapping[str, Evaluable]
    score: Evaluable
    round: int | None = 2
    #: The score when skipped; text is why the item is not scorable then.
    on_skip: float | str | None = None


@dataclass(frozen=True, kw_only=True)
class ComputeStepPlan(StepPlan):
    """Computes named values, in order, without a model; the result is an object of them."""

    kind: Literal["compute"] = "compute"
    values: Mapping[str, Evaluable]
    on_skip: Any = None


AnyStepPlan = JudgeStepPlan | ReasonStepPlan | ScoreStepPlan | ComputeStepPlan


@dataclass(frozen=True, kw_only=True)
class JuryPlan:
    """The judges a scorer's definition names, and how their scores are combined."""

    models: tuple[str, ...]
    aggregate: Literal["mean", "median", "majority", "strictest"] = "mean"
    threshold: float | None = None
    margin: float | None = None


@dataclass(frozen=True, kw_only=True)
class ScorerPlan:
    """A scorer definition ready to run; shared by every scorer created from it."""

    id: str
    name: str
    description: str
    direction: Direction
    requires: tuple[RunField, ...]
    steps: tuple[AnyStepPlan, ...]
    options_model: type[BaseModel]
    option_rules: tuple[Check, ...] = ()
    default_model: str | None = None
    rpm: float | None = None
    tpm: float | None = None
    jury: JuryPlan | None = None
    context_from_tool_results: bool = False
    judge_defaults: Mapping[str, Any] = field(default_factory=dict)
    max_input_chars: int = 100_000
    long_input: Literal["refuse", "truncate"] = "refuse"
    fingerprint: str

    @property
    def needs_judge(self) -> bool:
        """Whether a run asks a judge: a scorer made only of computed steps needs no model,
        no key and makes no request."""
        return any(isinstance(step, (JudgeStepPlan, ReasonStepPlan)) for step in self.steps)

    def step(self, step_id: str) -> AnyStepPlan:
        return next(step for step in self.steps if step.id == step_id)

    def depends_on(self, step: AnyStepPlan) -> tuple[str, ...]:
        """The ids of the earlier steps whose results `step` reads (a score step's result is
        read as `score` and `score_values`)."""
        earlier = self.steps[: self.steps.index(step)]
        return tuple(
            other.id
            for other in earlier
            if other.id in step.reads or (isinstance(other, ScoreStepPlan) and {"score", "score_values"} & step.reads)
        )
