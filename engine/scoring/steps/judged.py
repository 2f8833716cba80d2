"""What the kinds that ask the judge share (llm, reason): a rendered prompt and system
message, the sampling of the call, and a record of what was asked and answered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ...judge import JudgeRequest, Sampling
from ..plan import Prompt, StepPlan
from ..results import StepRecord
from .base import StepBuilder, StepCall, StepFailed, StepJudge, StepKindBase, StepSources, StepSpec, Written
from .bounds import BoundPlan, FieldBounds, bounded_answer


class JudgedSpec(StepSpec):
    """A step that asks the judge; each such kind declares these keys, in its own order."""

    if TYPE_CHECKING:
        prompt: str
        uses_context: bool
        judge: StepJudge | None
        bounds: dict[str, FieldBounds]


@dataclass(frozen=True, kw_only=True)
class JudgedPlan(StepPlan):
    prompt: Prompt
    system: Prompt | None = None
    sampling: Sampling
    #: The answer's bounds, evaluated for each request (`bounds:` in the YAML).
    bounds: tuple[BoundPlan, ...] = ()


JudgedSpecT = TypeVar("JudgedSpecT", bound=JudgedSpec)
JudgedPlanT = TypeVar("JudgedPlanT", bound=JudgedPlan)


@dataclass(frozen=True)
class JudgeCall:
    """The compiled parts of a judge call; `failed` when the prompt or system template had a problem."""

    sampling: Sampling
    prompt: Prompt | None
    system: Prompt | None
    failed: bool


class JudgedKind(StepKindBase[JudgedSpecT, JudgedPlanT]):
    asks_judge = True
    #: max_tokens of the call when neither the scorer's nor the step's `judge:` sets it.
    default_max_tokens: int

    def describe(self, spec: JudgedSpecT) -> str:
        schema = self.sources(spec).schema
        return f"{spec.prompt} -> {schema.text if schema else 'text'}"

    def sources(self, spec: JudgedSpecT) -> StepSources:
        """The prompt and the step's own system template; each kind adds its schema and rules."""
        system = spec.judge.system if spec.judge is not None else None
        return StepSources(templates=(Written(spec.prompt, ("prompt",)),), system=Written(system, ("judge", "system")) if system else None)

    def uses_context(self, spec: JudgedSpecT) -> bool:
        return spec.uses_context

    def judge_call(self, spec: JudgedSpecT, build: StepBuilder) -> JudgeCall:
        sampling = build.sampling(spec.judge, self.default_max_tokens)
        try:
            system, system_failed = build.system(spec.judge), False
        except StepFailed:
            system, system_failed = None, True
        try:
            prompt: Prompt | None = build.template(spec.prompt, "prompt")
        except StepFailed:
            prompt = None
        return JudgeCall(sampling, prompt, system, failed=system_failed or prompt is None)

    def result(self, value: Any) -> Any:
        """The step's result from the judge's validated answer."""
        raise NotImplementedError

    async def run(self, plan: JudgedPlanT, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        system_prompt = plan.system.render(scope) if plan.system is not None else None
        prompt = plan.prompt.render(scope)
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [{"role": "user", "content": prompt}]
        answer_model = bounded_answer(plan.answer_model, plan.bounds, scope, call, plan.id) if plan.answer_model is not None else None
        request = JudgeRequest(messages=messages, sampling=plan.sampling, step=plan.id, response_model=answer_model, sample=call.sample)
        answer = await call.ask(request, scope)
        return StepRecord(
            id=plan.id,
            kind=plan.kind,
            system_prompt=system_prompt,
            prompt=prompt,
            result=self.result(answer.value),
            thinking=answer.thinking,
            usage=answer.usage,
            cached=answer.cached,
            batch=answer.batch,
            probabilities=list(answer.probabilities) if answer.probabilities else None,
        )
