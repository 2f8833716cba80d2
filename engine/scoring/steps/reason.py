"""`kind: reason`: asks the judge to explain the score; the result is text, and is the
reason of the scorer's result."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...judge import Sampling
from ...judge.bounds import text_token_limit

from ...errors import ConfigError
from ..plan import Prompt
from ..shapes import TEXT, Shape
from .base import ResultPart, StepBuilder, StepFailed, StepJudge, StepSources, Written, attempt
from .bounds import FieldBounds, bound_expressions, compile_bounds
from .judged import JudgedKind, JudgedPlan, JudgedSpec


class ReasonStep(JudgedSpec):
    """Asks the judge to explain the score; the result is text."""

    kind: Literal["reason"]
    prompt: str
    answer_schema: str | None = Field(default=None, alias="schema", description="Must have a `reason` string")
    uses_context: bool = False
    judge: StepJudge | None = None
    bounds: dict[str, FieldBounds] = Field(default_factory=dict, description="Per field of the answer (`reason`): its bounds, worked out per request")
    on_skip: str | None = Field(default=None, description="Template of the reason when skipped")


@dataclass(frozen=True, kw_only=True)
class ReasonStepPlan(JudgedPlan):
    """Asks the judge to explain the score; the result is text."""

    kind: str = "reason"
    on_skip: Prompt | None = None


class ReasonKind(JudgedKind[ReasonStep, ReasonStepPlan]):
    name = "reason"
    spec = ReasonStep
    result_part: ResultPart = "reason"
    # Room for a reason paragraph.
    default_max_tokens = 1024

    def names(self, spec: ReasonStep) -> Mapping[str, Shape]:
        return {spec.id: TEXT}

    def sources(self, spec: ReasonStep) -> StepSources:
        schema = Written(spec.answer_schema, ("schema",)) if spec.answer_schema is not None else None
        return dataclasses.replace(super().sources(spec), schema=schema, expressions=bound_expressions(spec.bounds))

    def compile(self, spec: ReasonStep, build: StepBuilder) -> ReasonStepPlan:
        call = self.judge_call(spec, build)
        answer_model = attempt(lambda: self.answer_model(spec, build)) if spec.answer_schema is not None else None
        bounds = compile_bounds(spec.bounds, answer_model, build) if spec.answer_schema is not None else ()
        sampling = call.sampling if spec.answer_schema is not None else self.free_text_sampling(spec, call.sampling, build)
        if call.failed or call.prompt is None or (spec.answer_schema is not None and answer_model is None):
            raise StepFailed
        on_skip = build.inline_template(spec.on_skip, "on_skip") if spec.on_skip is not None else None
        return ReasonStepPlan(
            id=spec.id, uses_context=spec.uses_context, prompt=call.prompt, system=call.system,
            answer_model=answer_model, sampling=sampling, on_skip=on_skip, reads=build.names_read(), bounds=bounds,
        )

    @staticmethod
    def answer_model(spec: ReasonStep, build: StepBuilder) -> type[BaseModel]:
        assert spec.answer_schema is not None
        model = build.answer_model(spec.answer_schema, "schema")
        if model.model_fields.get("reason") is None:
            with build.placed("schema"):
                raise ConfigError(f"{build.label}: a reason schema needs a `reason` string property")
        return model

    @staticmethod
    def free_text_sampling(spec: ReasonStep, sampling: Sampling, build: StepBuilder) -> Sampling:
        """A reason asked as free text is bounded by its length alone (`reason: {max_length: N}`,
        a number): the call's max_tokens leaves room for N characters and no more."""
        if not spec.bounds:
            return sampling
        written = spec.bounds.get("reason")
        if set(spec.bounds) != {"reason"} or written is None or not isinstance(written.max_length, int) or written.model_fields_set != {"max_length"}:
            build.problem(f"{build.label}.bounds: a reason asked as free text (no `schema:`) takes only `reason: {{max_length: N}}`, a number", "bounds")
            return sampling
        limit = text_token_limit(written.max_length)
        return sampling.model_copy(update={"max_tokens": min(limit, sampling.max_tokens or limit)})

    def skipped(self, plan: ReasonStepPlan, scope: Mapping[str, Any]) -> Any:
        assert plan.on_skip is not None  # the spec requires on_skip with skip_if
        return plan.on_skip.render(scope)

    def result(self, value: Any) -> str:
        """A reason is text: a `{reason}` answer is unwrapped, and so is a model that answered
        a free-text request with a JSON object holding a `reason`."""
        if isinstance(value, BaseModel):
            return str(getattr(value, "reason", ""))
        text = str(value).strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                return text
            if isinstance(parsed, dict) and isinstance(parsed.get("reason"), str):
                return str(parsed["reason"])
        return text
