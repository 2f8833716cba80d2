"""Previewing a scorer without a judge: the exact prompts each step would send, rendered
from a sample output, with the judge's answers for earlier steps given by hand.

For prompt tuners: edit a template, preview, and see precisely what the judge will read.
The given answers pass through the same schemas and rules as real ones, so a preview also
shows whether an example answer would be accepted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..formatting import refusal
from ..judge import JudgeAnswer, JudgeRequest
from ..judge.bounds import bounds_of, longest_answer_characters, max_tokens_for
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


#: The item `scorers show` works out a scorer's bounds for: an input, an output of two
#: sentences, two context pieces, a ground truth, a short conversation and a tool call.
SAMPLE_ITEM = RunInput(
    input="When did the first iPhone go on sale, and who introduced it?",
    output="The first iPhone went on sale on June 29, 2007. Steve Jobs introduced it at Macworld in January 2007.",
    context=[
        "Steve Jobs introduced the first iPhone at the Macworld conference on January 9, 2007.",
        "The first iPhone went on sale in the United States on June 29, 2007.",
    ],
    ground_truth="It went on sale on June 29, 2007, after Steve Jobs introduced it at Macworld in January 2007.",
    turns=[
        {"role": "user", "content": "When did the first iPhone go on sale?"},
        {"role": "assistant", "content": "The first iPhone went on sale on June 29, 2007."},
    ],
    metadata={"second_output": "The first iPhone came out in 2008."},
)
#: Its output as an agent's transcript with one tool call, for scorers that judge tool use.
SAMPLE_TOOL_OUTPUT = [
    {"role": "user", "content": "When did the first iPhone go on sale?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "first iPhone"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "The first iPhone went on sale on June 29, 2007."},
    {"role": "assistant", "content": "The first iPhone went on sale on June 29, 2007."},
]


class AskedBounds(BaseModel):
    """What one judged step asks for on the sample item: its answer's bounds and max_tokens."""

    step: str
    bounds: list[str]
    max_tokens: int | None
    #: The characters of the longest answer these bounds allow, as compact JSON (None when a
    #: string or list is left unbounded): what the step's max_tokens must hold for this item.
    answer_characters: int | None = None


class _AnswersAtTheirBounds:
    """Stands in for the judge: answers each step with the largest answer its bounds allow
    (every list as long as it may be), so the steps after it get their own bounds from it."""

    model = "preview/answers-at-their-bounds"

    def __init__(self) -> None:
        self.asked: list[AskedBounds] = []

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        model = request.response_model
        bounds = bounds_of(model)
        self.asked.append(
            AskedBounds(
                step=request.step, bounds=bounds.described() if bounds else [], max_tokens=max_tokens_for(request.sampling.max_tokens, model, thinks=False),
                answer_characters=longest_answer_characters(model) if model is not None else None,
            )
        )
        if model is None:
            return JudgeAnswer(value="A sample reason.")
        schema = model.model_json_schema()
        return JudgeAnswer(value=model.model_validate(_largest(schema, schema.get("$defs", {}), request.step)))


#: Items of a sample list whose only bound is the default one (DEFAULT_MAX_ITEMS).
_SAMPLE_ITEMS = 2
DEFAULT_MAX_ITEMS = 100


def _largest(node: Mapping[str, Any], definitions: Mapping[str, Any], name: str, index: int = 0) -> Any:
    """A value of `node` with its lists as long as they may be (capped at a few when only the
    default bound holds them) and its strings short and distinct."""
    if "$ref" in node:
        return _largest(definitions[str(node["$ref"]).rsplit("/", 1)[-1]], definitions, name, index)
    if "anyOf" in node:
        return _largest(next(option for option in node["anyOf"] if option.get("type") != "null"), definitions, name, index)
    if "enum" in node:
        return node["enum"][index % len(node["enum"])]
    kind = node.get("type")
    if kind == "object":
        return {key: _largest(child, definitions, key, index) for key, child in (node.get("properties") or {}).items()}
    if kind == "array":
        most = int(node.get("maxItems", DEFAULT_MAX_ITEMS))
        count = int(node["minItems"]) if "minItems" in node else (most if most < DEFAULT_MAX_ITEMS else _SAMPLE_ITEMS)
        return [_largest(node.get("items") or {}, definitions, name, position) for position in range(count)]
    if kind == "string":
        return f"{name} {index + 1}"[: int(node.get("maxLength", 100))]
    if kind in ("integer", "number"):
        return node.get("minimum", 0)
    return False


def sample_bounds(plan: ScorerPlan, options: Mapping[str, Any] | None = None) -> list[AskedBounds]:
    """The bounds and max_tokens each judged step of `plan` asks with, for SAMPLE_ITEM (a
    tool-call transcript as its output for a scorer that judges tool calls), every earlier
    step answered as fully as its bounds allow. Raises ConfigError (or NotScorable) when the
    scorer cannot run on it, e.g. an abstract scorer without its options."""
    judge = _AnswersAtTheirBounds()
    Scorer(plan, judge, dict(options or {})).score(sample_item(plan))
    return judge.asked


def sample_item(plan: ScorerPlan) -> RunInput:
    """SAMPLE_ITEM as `plan` reads it: a tool-call transcript as its output for a scorer that
    judges tool calls, and an expected trajectory (the call it makes) for one that needs it."""
    given = SAMPLE_ITEM
    if any("tool_calls" in step.reads for step in plan.steps):
        given = dataclasses.replace(given, output=SAMPLE_TOOL_OUTPUT)
    if "expected_trajectory" in plan.requires:
        given = dataclasses.replace(given, expected_trajectory=[{"tool_name": "search", "args": {"query": "first iPhone"}}])
    return given
