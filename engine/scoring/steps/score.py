"""`kind: score`: computes named values, then the score, from earlier steps, without a
model. Its result sets `score` and `score_values` for the steps after it, and is the
scorer's score."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ConfigError, NotScorable
from ..plan import Evaluable, StepPlan
from ..results import StepRecord
from ..shapes import ANY, NUMBER, Boolean, ListOf, Number, Record, Scope, Shape, Text
from .base import ResultPart, StepBuilder, StepCall, StepKindBase, StepSources, StepSpec, Written
from .. import ranges
from .reducers import ReducerSpec, reduced


class NotScorableSpec(BaseModel):
    """A score step's `on_skip` that leaves the item unscored: it is counted as not
    scorable, with the reason, and kept out of the means (as an item without a needed field is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    not_scorable: str = Field(min_length=1, description="Why such an item cannot be scored, shown with it")


class ScoreStep(StepSpec):
    """Computes the score from earlier steps, without a model."""

    kind: Literal["score"]
    values: dict[str, Union[ReducerSpec, str]] = Field(default_factory=dict, description="Named values, in order")
    score: str = Field(description="Expression of the final score")
    round: int | None = Field(default=2, ge=0)
    expected_value: bool = Field(
        default=False,
        description="The score is its expected value over the judge's verdict probabilities (the plain one kept as `plain_score`), where the judge gives them",
    )
    on_skip: float | NotScorableSpec | None = Field(
        default=None, description="The score when skipped, or {not_scorable: reason} to leave the item unscored"
    )


@dataclass(frozen=True, kw_only=True)
class ScoreStepPlan(StepPlan):
    """Computes named values, then the score, from earlier steps, without a model."""

    kind: str = "score"
    values: Mapping[str, Evaluable]
    score: Evaluable
    round: int | None = 2
    #: The score is its expected value over the verdicts' probabilities (see scoring/confidence.py).
    expected_value: bool = False
    #: The score when skipped; text is why the item is not scorable then.
    on_skip: float | str | None = None

    def provides(self) -> frozenset[str]:
        return frozenset({"score", "score_values"})


def _not_a_number(shape: Shape) -> bool:
    return isinstance(shape, (Boolean, Text, ListOf, Record))


class ScoreKind(StepKindBase[ScoreStep, ScoreStepPlan]):
    name = "score"
    spec = ScoreStep
    result_part: ResultPart = "score"

    def names(self, spec: ScoreStep) -> Mapping[str, Shape]:
        return {"score": NUMBER, "score_values": Record({name: NUMBER for name in spec.values}, "score_values")}

    def describe(self, spec: ScoreStep) -> str:
        return f"score = {spec.score}"

    def sources(self, spec: ScoreStep) -> StepSources:
        expressions: list[Written] = []
        for name, value in spec.values.items():
            if isinstance(value, ReducerSpec):
                parts = {"items": value.items, "where": value.where, "value": value.value}
                expressions += [Written(text, ("values", name, key)) for key, text in parts.items() if text is not None]
            else:
                expressions.append(Written(value, ("values", name)))
        values = tuple(Written(name, ("values", name)) for name in spec.values)
        return StepSources(values=values, expressions=(*expressions, Written(spec.score, ("score",))))

    def compile(self, spec: ScoreStep, build: StepBuilder) -> ScoreStepPlan:
        values: dict[str, Evaluable] = {}
        scope = build.scope
        for name, value in spec.values.items():
            if isinstance(value, ReducerSpec):
                values[name], given = self.reducer(value, build, scope, ("values", name))
            else:
                values[name], given = build.expression(value, "values", name, scope=scope)
                if isinstance(given, (ListOf, Record)):
                    # Read as a number by the score and what reports it (`score_values`): a
                    # count that lost its `| length`, most often.
                    build.warning(
                        "score-value-not-a-number",
                        f"{build.label}.values.{name}: {value!r} gives {given.describe()}, not a number: the values of a score step are "
                        "the score's named numbers (`score_values`); count it (`| length`), or compute it in a `kind: compute` step",
                        "values", name,
                    )
            scope = scope.with_names({name: given if isinstance(given, Number) else NUMBER})
        score, shape = build.expression(spec.score, "score", scope=scope)
        build.scores(shape, "score")
        if isinstance(spec.on_skip, (int, float)):
            build.scores(ranges.constant(spec.on_skip), "on_skip")
        if _not_a_number(shape):
            build.problem(
                f"{build.label}.score: {spec.score!r} gives {shape.describe()}, not a number"
                + (" (write `1 if ... else 0` to turn a condition into a number)" if isinstance(shape, Boolean) else ""),
                "score",
            )
        reads = build.names_read() - set(spec.values)
        on_skip = spec.on_skip.not_scorable if isinstance(spec.on_skip, NotScorableSpec) else spec.on_skip
        return ScoreStepPlan(id=spec.id, values=values, score=score, round=spec.round, on_skip=on_skip, reads=reads, expected_value=spec.expected_value)

    @staticmethod
    def reducer(spec: ReducerSpec, build: StepBuilder, scope: Scope, at: tuple[str, str]) -> tuple[Evaluable, Shape]:
        """A reducer whose `items` must be a list, and whose `where`/`value` see the fields of
        its items; and what it gives."""
        where = f"{build.label}.{'.'.join(at)}"
        reducer = build.reducer(spec, *at)
        _, listed = build.expression(spec.items, *at, "items", scope=scope)
        if not isinstance(listed, ListOf) and listed is not ANY:
            lists = [f"{spec.items}.{name}" for name, shape in listed.fields.items() if isinstance(shape, ListOf)] if isinstance(listed, Record) else []
            hint = f"; did you mean {lists[0]!r}?" if len(lists) == 1 else (f" (lists there: {', '.join(lists)})" if lists else "")
            what = f"has the fields {', '.join(listed.fields)}" if isinstance(listed, Record) else f"is {listed.describe()}"
            build.problem(f"{where}.items: {spec.items!r} is not a list (it {what}){hint}", *at, "items")
        item = listed.item if isinstance(listed, ListOf) else ANY
        per_item = scope.with_names({"item": item, "rank": NUMBER})
        if spec.where is not None:
            build.expression(spec.where, *at, "where", scope=per_item)
        value: Shape = ANY
        if spec.value is not None:
            _, value = build.expression(spec.value, *at, "value", scope=per_item)
            if _not_a_number(value) and spec.reduce in ("mean", "sum", "min", "max"):
                build.problem(
                    f"{where}.value: {spec.value!r} gives {value.describe()}, not a number"
                    + (" (count items with `reduce: ratio` or `count` and `where:`, or write `1 if ... else 0`)" if isinstance(value, Boolean) else ""),
                    *at, "value",
                )
        return reducer, reduced(spec, listed, value)

    def skipped(self, plan: ScoreStepPlan, scope: Mapping[str, Any]) -> Any:
        assert plan.on_skip is not None  # the spec requires on_skip with skip_if
        if isinstance(plan.on_skip, str):
            raise NotScorable(plan.on_skip)
        return {"score": float(plan.on_skip)}

    async def run(self, plan: ScoreStepPlan, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        values: dict[str, float] = {}
        for name, compute in plan.values.items():
            values[name] = call.evaluate(compute, {**scope, **values})
        score = call.evaluate(plan.score, {**scope, **values})
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ConfigError(f"{call.scorer_id}.{plan.id}: score expression gave {score!r}, not a number")
        rounded = round(float(score), plan.round) if plan.round is not None else float(score)
        return StepRecord(id=plan.id, kind=plan.kind, result={**values, "score": rounded})

    def variables(self, plan: ScoreStepPlan, result: Any) -> Mapping[str, Any]:
        return {"score": result["score"], "score_values": {name: value for name, value in result.items() if name not in ("score", "plain_score")}}
