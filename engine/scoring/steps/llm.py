"""`kind: llm`: asks the judge with a rendered template; the answer must pass the step's
schema and rules, and becomes the variable named by the step's id."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import ConfigError
from ...formatting import plain
from ..results import StepRecord
from ..shapes import TEXT, ListOf, Record, Shape, shape_of
from .base import Rule, StepBuilder, StepCall, StepFailed, StepJudge, StepSources, Written
from .bounds import FieldBounds, bound_expressions, compile_bounds
from .judged import JudgedKind, JudgedPlan, JudgedSpec

#: One of an llm step's worked examples, as its templates see it (the `examples` variable).
WORKED_EXAMPLE = Record({"input": TEXT, "output": TEXT, "context": ListOf(TEXT), "answer": TEXT}, "a worked example")


class WorkedExample(BaseModel):
    """An item people judged, shown to the judge with the answer they gave. Its text is
    data: a template renders it (prompts/partials/examples.j2) as material, never as
    instructions. `scorers align` writes these; a tuner edits them like any other text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: str | None = None
    output: str | None = None
    context: list[str] | None = None
    answer: str = Field(description="The answer people gave, in words")


class LLMStep(JudgedSpec):
    """Asks the judge with a rendered template; the answer must pass the schema."""

    kind: Literal["llm"]
    prompt: str = Field(description="Template under the prompts folder")
    answer_schema: str = Field(alias="schema", description="Schema file under the schemas folder")
    uses_context: bool = False
    judge: StepJudge | None = None
    rules: list[Rule] = Field(default_factory=list)
    bounds: dict[str, FieldBounds] = Field(
        default_factory=dict, description="Per field of the answer (`verdicts`, `claims[]`, `verdicts[].reason`): its bounds, worked out per request"
    )
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")
    examples: list[WorkedExample] = Field(
        default_factory=list, description="Worked examples the step's template shows the judge (the `examples` variable)"
    )


@dataclass(frozen=True, kw_only=True)
class JudgeStepPlan(JudgedPlan):
    """Asks the judge with a rendered prompt; the answer must validate against `answer_model`."""

    kind: str = "llm"
    answer_model: type[BaseModel]
    on_skip: Any = None
    #: Worked examples (items people judged, with their answer) the prompt may show: its `examples`.
    examples: tuple[Mapping[str, Any], ...] = ()


class LLMKind(JudgedKind[LLMStep, JudgeStepPlan]):
    name = "llm"
    spec = LLMStep
    examples_key: str | None = "examples"
    # Room for a long list of claims or verdicts with reasons.
    default_max_tokens = 2048

    def compile(self, spec: LLMStep, build: StepBuilder) -> JudgeStepPlan:
        build.sees({"examples": ListOf(WORKED_EXAMPLE)})
        call = self.judge_call(spec, build)
        answer_model = build.answer_model(spec.answer_schema, "schema", rules=spec.rules)
        build.gives(self.answer_names(spec, answer_model))  # later steps are checked against it, even if this one failed
        bounds = compile_bounds(spec.bounds, answer_model, build)
        if spec.on_skip is not None:
            try:
                answer_model.model_validate(spec.on_skip)
            except ValidationError as exc:
                with build.placed("on_skip"):
                    raise ConfigError(f"{build.label}.on_skip does not fit {spec.answer_schema}: {exc.errors()[0]['msg']}") from None
        if call.failed or call.prompt is None:
            raise StepFailed
        return JudgeStepPlan(
            id=spec.id, uses_context=spec.uses_context, prompt=call.prompt, system=call.system,
            answer_model=answer_model, sampling=call.sampling, on_skip=spec.on_skip, reads=build.names_read(), bounds=bounds,
            examples=tuple(example.model_dump() for example in spec.examples),
        )

    def sources(self, spec: LLMStep) -> StepSources:
        rules = tuple(Written(rule.check, ("rules", index, "check")) for index, rule in enumerate(spec.rules))
        return dataclasses.replace(super().sources(spec), schema=Written(spec.answer_schema, ("schema",)), expressions=bound_expressions(spec.bounds), rules=rules)

    @staticmethod
    def answer_names(spec: LLMStep, answer_model: type[BaseModel]) -> Mapping[str, Shape]:
        return {spec.id: shape_of(answer_model, spec.id)}

    async def run(self, plan: JudgeStepPlan, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        return await super().run(plan, {**scope, "examples": [dict(example) for example in plan.examples]}, call)

    def result(self, value: Any) -> Any:
        return plain(value)
