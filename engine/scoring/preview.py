"""Previewing a scorer without a judge: the exact prompts each step would send, rendered
from a sample output, with the judge's answers for earlier steps given by hand.

For prompt tuners: edit a template, preview, and see precisely what the judge will read.
The given answers pass through the same schemas and rules as real ones, so a preview also
shows whether an example answer would be accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..formatting import refusal
from ..judge import JudgeAnswer, JudgeRequest
from .plan import ScorerPlan
from .results import ScoreResult
from .run_input import RunInput
from .scorer import Scorer


class PromptPreview(BaseModel):
    step: str
    system: str | None
    prompt: str


class Preview(BaseModel):
    prompts: list[PromptPreview]
    result: ScoreResult | None = None
    needs_answer_for: str | None = None


class _AnswerMissing(Exception):
    def __init__(self, step: str) -> None:
        self.step = step


class GivenAnswers:
    """Stands in for the judge: answers each step with what the caller supplied."""

    model = "preview/given-answers"

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = dict(answers)
        self.prompts: list[PromptPreview] = []

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        step, messages, response_model = request.step, request.messages, request.response_model
        system = next((m["content"] for m in messages if m["role"] == "system"), None)
        self.prompts.append(PromptPreview(step=step, system=system, prompt=messages[-1]["content"]))
        if step not in self.answers:
            raise _AnswerMissing(step)
        answer = self.answers[step]
        if response_model is None:
            return JudgeAnswer(value=str(answer), usage=None)
        if not isinstance(answer, (dict, response_model)):
            fields = ", ".join(response_model.model_fields)
            raise ConfigError(f"the answer given for step {step!r} must be an object with the fields {fields}, e.g. '{{...}}'; got {answer!r}")
        try:
            return JudgeAnswer(value=response_model.model_validate(answer), usage=None)
        except ValidationError as exc:
            raise ConfigError(f"the answer given for step {step!r} would be refused: {refusal(exc)}") from None


def preview(
    plan: ScorerPlan,
    output: Any = None,
    input: Any = None,  # noqa: A002
    ground_truth: Any = None,
    answers: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    turns: Any = None,
    expected_trajectory: Any = None,
) -> Preview:
    """Render the scorer's prompts for one output. Steps run in order until one needs a judge
    answer that `answers` (step id -> answer) does not hold; with every answer given, the
    preview also holds the score the scorer would compute. A pairwise scorer's second output
    is `metadata["second_output"]`, as `run_pairwise` gives it."""
    if plan.pairwise and "second_output" not in (metadata or {}):
        raise ConfigError(f"{plan.id} judges two outputs: give the second as metadata={{'second_output': ...}}")
    judge = GivenAnswers(answers or {})
    scorer = Scorer(plan, judge, dict(options or {}))
    try:
        result = scorer.score(
            RunInput(output=output, input=input, ground_truth=ground_truth, metadata=metadata, turns=turns, expected_trajectory=expected_trajectory)
        )
    except _AnswerMissing as missing:
        return Preview(prompts=judge.prompts, needs_answer_for=missing.step)
    return Preview(prompts=judge.prompts, result=result)
