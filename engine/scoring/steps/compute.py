"""`kind: compute`: named values computed in order without a model, each an expression
that may call the function library (words, keywords, similarity, sentiment,
trajectory_match ...) and read the values before it. The step's result, an object of the
values, is the variable named by its id."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator

from ...formatting import plain
from ..plan import Evaluable, StepPlan
from ..results import StepRecord
from ..shapes import Record, Shape
from .base import StepBuilder, StepCall, StepKindBase, StepSources, StepSpec, Written


class ComputeStep(StepSpec):
    """Computes named values without a model, in order, each an expression that may call
    the function library (words, keywords, similarity, sentiment, trajectory_match ...) and
    read the values before it. The step's result (an object of the values) is the variable
    named by its id."""

    kind: Literal["compute"]
    values: dict[str, str] = Field(description="Named values, in order: name -> expression")
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")

    @field_validator("values")
    @classmethod
    def _value_names(cls, values: dict[str, str]) -> dict[str, str]:
        if not values:
            raise ValueError("a compute step needs at least one value")
        for name in values:
            if not name.isidentifier():
                raise ValueError(f"value name {name!r} must be an identifier (letters, digits, _)")
        return values


@dataclass(frozen=True, kw_only=True)
class ComputeStepPlan(StepPlan):
    """Computes named values, in order, without a model; the result is an object of them."""

    kind: str = "compute"
    values: Mapping[str, Evaluable]
    on_skip: Any = None


class ComputeKind(StepKindBase[ComputeStep, ComputeStepPlan]):
    name = "compute"
    spec = ComputeStep

    def describe(self, spec: ComputeStep) -> str:
        return ", ".join(spec.values)

    def sources(self, spec: ComputeStep) -> StepSources:
        return StepSources(
            values=tuple(Written(name, ("values", name)) for name in spec.values),
            expressions=tuple(Written(source, ("values", name)) for name, source in spec.values.items()),
        )

    def compile(self, spec: ComputeStep, build: StepBuilder) -> ComputeStepPlan:
        """Each value sees the ones before it; later steps see an object of them (the step's
        id), whose fields are known from the expressions."""
        values: dict[str, Evaluable] = {}
        shapes: dict[str, Shape] = {}
        scope = build.scope
        for name, source in spec.values.items():
            values[name], shapes[name] = build.expression(source, "values", name, scope=scope)
            scope = scope.with_names({name: shapes[name]})
        build.gives({spec.id: Record(shapes, spec.id)})
        return ComputeStepPlan(id=spec.id, values=values, on_skip=spec.on_skip, reads=build.names_read() - set(spec.values))

    async def run(self, plan: ComputeStepPlan, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        values: dict[str, Any] = {}
        for name, compute in plan.values.items():
            value = call.evaluate(compute, {**scope, **values})
            # Jinja's filters (select, map ...) give generators: a result is kept as a list.
            values[name] = plain(list(value) if isinstance(value, Iterator) else value)
        return StepRecord(id=plan.id, kind=plan.kind, result=values)
