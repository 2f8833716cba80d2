"""What a step kind is: the protocol every kind follows, the base of the YAML it reads,
what it is given to compile (a `StepBuilder`, which the catalog implements) and to run (a
`StepCall`, which the scorer gives).

A kind is one module holding everything about it: its spec (pydantic: the words an author
writes under `kind: <name>`), its plan (a frozen dataclass), how the spec compiles into the
plan, the names it gives the steps after it, and how the plan runs. The catalog's compiler
and name checks and the scorer know kinds only through this protocol and the registry
(`steps/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...errors import ConfigError, DivisionByZero, ExpressionError, NotScorable
from ...formatting import plain
from ...judge import AsksJudge, JudgeAnswer, JudgeRequest, Sampling
from ..answer_scope import answer_scope
from ..plan import Evaluable, Prompt, StepPlan
from ..results import StepRecord
from ..shapes import ANY, Scope, Shape
from .reducers import ReducerSpec

T = TypeVar("T")


class StepSpec(BaseModel):
    """What every step writes. A kind's spec adds `kind: Literal["<name>"]` and its keys,
    `on_skip` (its result when `skip_if` holds) among them when it can be skipped."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    skip_if: str | None = Field(default=None, description="Expression; when true the step is not run")

    if TYPE_CHECKING:
        # Declared by every kind's spec, in the place its keys are listed to authors.
        kind: str

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"step id {value!r} must be an identifier (letters, digits, _)")
        return value


class Rule(BaseModel):
    """A check the judge's answer must pass, beyond its shape."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    check: str = Field(description="Expression over the answer's fields and earlier steps")
    message: str = Field(description="Told to the judge when it fails (a template)")


class StepJudge(Sampling):
    """Per-step changes to the scorer's judge settings."""

    system: str | None = Field(default=None, description="Template of the system message")


@dataclass(frozen=True)
class Written:
    """A piece of a step as its author wrote it: its text, and the keys leading to it inside
    the step (`("values", "total")`), where the catalog finds its line."""

    text: str
    at: tuple[str | int, ...]


@dataclass(frozen=True)
class StepSources:
    """What a step is made of, as written, for the code outside its kind's module that reads
    steps (the catalog's list of files, its checks and notes, `scorers align`): the template
    files it renders (its prompt first), a system template of its own (in place of the
    scorer's), the schema file its answer must pass, its own named values (names, in the
    order they are computed, each seeing those above it), every expression it evaluates (in
    that order) and the checks of its rules."""

    templates: tuple[Written, ...] = ()
    system: Written | None = None
    schema: Written | None = None
    values: tuple[Written, ...] = ()
    expressions: tuple[Written, ...] = ()
    rules: tuple[Written, ...] = ()


class StepFailed(Exception):
    """A step had problems, already recorded through the builder; its plan is not built."""


class StepBuilder(Protocol):
    """What a kind's `compile` is given: checked pieces, each placed in the author's file.

    `at` is the path of the value inside the step (`"values", "faithful"`), for the line and
    column of a problem. A piece that cannot be built records its problem and raises
    `StepFailed`; `attempt` lets a kind go on checking the step's other parts."""

    @property
    def label(self) -> str:
        """`scorer.step`: how messages about this step start."""
        ...

    @property
    def scope(self) -> Scope:
        """The names the step may read: the run's, the options, earlier steps' results."""
        ...

    def expression(self, source: str, *at: Any, scope: Scope | None = None) -> tuple[Evaluable, Shape]:
        """A compiled expression, its names checked, and the shape of what it gives."""
        ...

    def reducer(self, spec: ReducerSpec, *at: Any) -> Evaluable:
        """A list reduced to one number, compiled (its names are checked by the kind, through `expression`)."""
        ...

    def template(self, name: str, *at: Any) -> Prompt:
        """A template file of the prompts folder, with the templates it includes, checked."""
        ...

    def inline_template(self, source: str, *at: Any) -> Prompt:
        """A short template written as the YAML value at `at`."""
        ...

    def sampling(self, step_judge: StepJudge | None, default_max_tokens: int) -> Sampling:
        """The scorer's judge sampling, changed by the step's `judge:`; every call has a token limit."""
        ...

    def system(self, step_judge: StepJudge | None) -> Prompt | None:
        """The system template: the step's own, else the scorer's (None: no system message)."""
        ...

    def answer_model(self, schema: str, *at: Any, rules: Sequence[Rule] = (), rules_at: Sequence[Any] = ("rules",)) -> type[BaseModel]:
        """The model the judge's answer must validate against: the schema file's, with its
        rules and the step's `rules`, whose names are checked against the answer's fields."""
        ...

    def problem(self, message: str, *at: Any) -> None:
        """Records a problem at the value at `at` (the step's place when `at` is empty)."""
        ...

    def warning(self, code: str, message: str, *at: Any) -> None:
        """Records a warning (silenced at its line by `# scorers: ignore[code]`) at the value at `at`."""
        ...

    def placed(self, *at: Any) -> AbstractContextManager[None]:
        """A ConfigError raised inside without a place gets the place of the value at `at`."""
        ...

    def sees(self, names: Mapping[str, Shape]) -> None:
        """Names only this step's own pieces read (its own data, such as an llm step's worked
        examples), added to its scope before they are built."""
        ...

    def gives(self, names: Mapping[str, Shape]) -> None:
        """The names the step gives later steps, when only compiling it tells their shapes
        (otherwise the kind's `names(spec)` are used)."""
        ...

    def names_read(self) -> frozenset[str]:
        """Every name read by the pieces built so far: the plan's `reads`, less the step's own."""
        ...

    def scores(self, shape: Shape, *at: Any) -> None:
        """What the scorer's score can be, as the step gives it from the value at `at` (its
        expression, or what a skipped step gives): a kind whose `result_part` is "score"
        tells each one, and the catalog checks its range against the scorer's scale."""
        ...


def attempt(build: Callable[[], T]) -> T | None:
    """Builds a part; a failure was recorded (None), and the step's other parts can still be checked."""
    try:
        return build()
    except StepFailed:
        return None


@dataclass(frozen=True)
class StepCall:
    """What a step is given to run, beside its scope: the judge, and how to evaluate."""

    scorer_id: str
    judge: AsksJudge
    #: Which of several judgements of the same output this is (each judge request carries it).
    sample: int = 0

    def evaluate(self, expression: Evaluable, scope: Mapping[str, Any]) -> Any:
        try:
            return expression(scope)
        except DivisionByZero:
            raise  # this item's values made a count 0: the item's error, placed in the catalog
        except ExpressionError as exc:
            raise ConfigError(f"{self.scorer_id}: {exc}") from None
        except NotScorable as exc:  # a function found the item lacks what it needs
            raise NotScorable(f"{self.scorer_id}: {exc.message}", parameter=exc.parameter) from None

    async def ask(self, request: JudgeRequest, scope: Mapping[str, Any]) -> JudgeAnswer:
        """The judge's answer; its rules see `scope` (the earlier steps' results)."""
        with answer_scope(scope):
            return await self.judge.ask(request)


SpecT = TypeVar("SpecT", bound=StepSpec)
PlanT = TypeVar("PlanT", bound=StepPlan)

#: The part of the scorer's result a step gives, beside its variables.
ResultPart = Literal["score", "reason"] | None


class StepKind(Protocol[SpecT, PlanT]):
    """A step kind, as the registry holds it. `StepKindBase` gives the usual defaults."""

    #: The word after `kind:` in the YAML.
    name: str
    #: The pydantic model of a step of this kind, with `kind: Literal[name]`.
    spec: type[SpecT]
    #: "score": the step gives the scorer's score (a scorer has exactly one such step);
    #: "reason": its result is the score's reason (at most one, after the score).
    result_part: ResultPart
    #: Whether a step of this kind asks the judge (its plan has a `sampling`): a scorer whose
    #: steps never do needs no model, as `scorers list` says without compiling it.
    asks_judge: bool
    #: The key under which a step of this kind takes worked examples (items people judged,
    #: which its template shows as `examples`); None for a kind that takes none. `scorers
    #: align` changes the last step of such a kind: its examples, and its first template.
    examples_key: str | None

    def sources(self, spec: SpecT) -> StepSources:
        """What the step is made of, as written (see `StepSources`)."""
        ...

    def uses_context(self, spec: SpecT) -> bool:
        """Whether the step reads the run's context (its scope has `context`, and the context is
        resolved for it)."""
        ...

    def names(self, spec: SpecT) -> Mapping[str, Shape]:
        """The names the step gives later steps, known before it is compiled."""
        ...

    def compile(self, spec: SpecT, build: StepBuilder) -> PlanT:
        """The step's plan; problems go through `build` (raise StepFailed when no plan can be made)."""
        ...

    def describe(self, spec: SpecT) -> str:
        """One line of what the step asks or computes (`scorers show`)."""
        ...

    def skipped(self, plan: PlanT, scope: Mapping[str, Any]) -> Any:
        """The step's result when its `skip_if` holds."""
        ...

    async def run(self, plan: PlanT, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        """The step's record, its result included; `scope` holds every variable it may read."""
        ...

    def variables(self, plan: PlanT, result: Any) -> Mapping[str, Any]:
        """The variables the step's result sets for the steps after it (`plan.provides()`)."""
        ...


class StepKindBase(Generic[SpecT, PlanT]):
    """The usual defaults: the step's result is the variable named by its id, of a shape
    known only once compiled, and `on_skip` is the result of a skipped step."""

    name: str
    spec: type[SpecT]
    result_part: ResultPart = None
    asks_judge: bool = False
    examples_key: str | None = None

    def names(self, spec: SpecT) -> Mapping[str, Shape]:
        return {spec.id: ANY}

    def sources(self, spec: SpecT) -> StepSources:
        return StepSources()

    def uses_context(self, spec: SpecT) -> bool:
        return False

    def describe(self, spec: SpecT) -> str:
        return ""

    def skipped(self, plan: PlanT, scope: Mapping[str, Any]) -> Any:
        return plain(getattr(plan, "on_skip", None))

    def variables(self, plan: PlanT, result: Any) -> Mapping[str, Any]:
        return {plan.id: result}
