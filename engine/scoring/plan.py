"""What a scorer runs: a frozen plan of steps (each step kind's plan type lives in its own
module under `steps/`), built by the catalog with keywords. The scorer reads plans only,
never the YAML they came from.

Templates, expressions and checks arrive compiled; this layer knows them only by the small
protocols below, so it does not depend on how the catalog compiles them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from ..judge import Sampling
from ..judge.settings import JudgeSettings
from .pass_line import Direction, PassLine

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
    """What every step's plan has; each step kind (`scoring/steps/`) adds its own fields."""

    id: str
    #: The step kind's name (`kind:` in the YAML): which kind in the registry runs it.
    kind: str
    skip_if: Evaluable | None = None
    uses_context: bool = False
    #: The variables the step reads: its templates', expressions' and answer rules' names.
    #: A step waits for the earlier steps it reads and runs beside the others.
    reads: frozenset[str] = frozenset()
    #: How the judge is asked, for the steps that ask one (None: the step asks no judge).
    sampling: Sampling | None = None
    #: What the judge's answer must validate against (None: text, or no judge asked).
    answer_model: type[BaseModel] | None = None

    def provides(self) -> frozenset[str]:
        """The variables the step's result sets for the steps after it."""
        return frozenset({self.id})


@dataclass(frozen=True, kw_only=True)
class JuryPlan:
    """The judges a scorer's definition names, and how their scores are combined."""

    models: tuple[str, ...]
    aggregate: Literal["mean", "median", "majority", "strictest"] = "mean"
    threshold: float | None = None
    margin: float | None = None


@dataclass(frozen=True, kw_only=True)
class CascadePlan:
    """The strong judge a definition's cascade escalates to, and when (see scoring/cascade.py)."""

    escalate_to: str
    margin: float | None = None
    samples: int = 1
    threshold: float | None = None
    min_confidence: float | None = None


@dataclass(frozen=True, kw_only=True)
class ScorerPlan:
    """A scorer definition ready to run; shared by every scorer created from it."""

    id: str
    name: str
    description: str
    direction: Direction
    requires: tuple[RunField, ...]
    steps: tuple[StepPlan, ...]
    options_model: type[BaseModel]
    option_rules: tuple[Check, ...] = ()
    jury: JuryPlan | None = None
    cascade: CascadePlan | None = None
    context_from_tool_results: bool = False
    #: Where a score passes or flags its item: the definition's `threshold:`, else half the
    #: default scale (a scorer made with another `scale` option moves the default with it).
    pass_line: PassLine
    #: Whether the scores run from 0 to the `scale` option (the score reads it, and fits it).
    on_scale: bool = False
    #: The range of the scores when it is known and they are not on the scale.
    score_range: tuple[float, float] | None = None
    pairwise: bool = False  # judges two outputs: the score says which is better (runs/pairwise.py)
    #: The scorer's `judge:` block (after a catalog's `defaults:`): its model, timeout,
    #: retries and rates, under what the caller, then the environment, chose.
    judge_defaults: JudgeSettings = JudgeSettings()
    max_input_chars: int = 100_000
    long_input: Literal["refuse", "truncate"] = "refuse"
    #: Samples of each answer whose shares are its verdicts' probabilities where the judge
    #: gives no log-probabilities (None: none taken).
    confidence_samples: int | None = None
    #: What an empty output is: not scorable (with the reason), or scored like any other.
    empty_output: Literal["not_scorable", "score"] = "not_scorable"
    fingerprint: str

    @property
    def threshold(self) -> float | None:
        """The definition's own `threshold:` (None: it sets none, and half the scale flags)."""
        return self.pass_line.gate

    @property
    def needs_judge(self) -> bool:
        """Whether a run asks a judge: a scorer made only of computed steps needs no model,
        no key and makes no request."""
        return any(step.sampling is not None for step in self.steps)

    def scores_range(self, options: Any) -> tuple[float, float] | None:
        """The range of the scores with `options` (a model or a mapping): 0 to its `scale`
        option when the score is on that scale (its expression reads `options.scale`, as
        every built-in's does, and fits it), else the range the catalog's checks found; None
        when it cannot be known (a count, a sum of an author's own)."""
        if not self.on_scale:
            return self.score_range
        scale = options.get("scale") if isinstance(options, Mapping) else getattr(options, "scale", None)
        if not isinstance(scale, (int, float)) or isinstance(scale, bool):
            return None
        return 0.0, float(scale)

    def threshold_off_scale(self, threshold: float | None, options: Any) -> str | None:
        """Why `threshold` cannot be a pass line of the scores with `options` (say, 70 on a 0
        to 1 scale), or None when it can."""
        found = self.scores_range(options)
        if threshold is None or found is None or found[0] <= threshold <= found[1]:
            return None
        where = " (the `scale` option)" if self.on_scale else ""
        return f"{threshold:g} is outside the range of {self.id}'s scores, {found[0]:g} to {found[1]:g}{where}"

    def step(self, step_id: str) -> StepPlan:
        return next(step for step in self.steps if step.id == step_id)

    def depends_on(self, step: StepPlan) -> tuple[str, ...]:
        """The ids of the earlier steps whose results `step` reads (a score step's result is
        read as `score` and `score_values`)."""
        earlier = self.steps[: self.steps.index(step)]
        return tuple(other.id for other in earlier if other.provides() & step.reads)
