"""`kind: llm`: asks the judge with a rendered template; the answer must pass the step's
schema and rules, and becomes the variable named by the step's id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ...errors import ConfigError
from ...formatting import plain
from ..shapes import Shape, shape_of
from .base import Rule, StepBuilder, StepFailed, StepJudge
from .judged import JudgedKind, JudgedPlan, JudgedSpec


class LLMStep(JudgedSpec):
    """Asks the judge with a rendered template; the answer must pass the schema."""

    kind: Literal["llm"]
    prompt: str = Field(description="Template under the prompts folder")
    answer_schema: str = Field(alias="schema", description="Schema file under the schemas folder")
    uses_context: bool = False
    judge: StepJudge | None = None
    rules: list[Rule] = Field(default_factory=list)
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")


@dataclass(frozen=True, kw_only=True)
class JudgeStepPlan(JudgedPlan):
    """Asks the judge with a rendered prompt; the answer must validate against `answer_model`."""

    kind: str = "llm"
    answer_model: type[BaseModel]
    on_skip: Any = None


class LLMKind(JudgedKind[LLMStep, JudgeStepPlan]):
    name = "llm"
    spec = LLMStep
    # Room for a long list of claims or verdicts with reasons.
    default_max_tokens = 2048

    def compile(self, spec: LLMStep, build: StepBuilder) -> JudgeStepPlan:
        call = self.judge_call(spec, build)
        answer_model = build.answer_model(spec.answer_schema, "schema", rules=spec.rules)
        build.gives(self.answer_names(spec, answer_model))  # later steps are checked against it, even if this one failed
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
            answer_model=answer_model, sampling=call.sampling, on_skip=spec.on_skip, reads=build.names_read(),
        )  # fmt: skip

    @staticmethod
    def answer_names(spec: LLMStep, answer_model: type[BaseModel]) -> Mapping[str, Shape]:
        return {spec.id: shape_of(answer_model, spec.id)}

    def result(self, value: Any) -> Any:
        return plain(value)
