"""A scorer that asks no judge, run on items varied in what its steps read: an agent's
transcript whose tool results all succeed, fail in part or all fail (flagged `is_error`, as
the data format documents `tool_results`), or that calls no tool; an output identical to
the expected answer, nearly so, or unrelated to it. What each step gave and the score, per
item, are what properties of such a scorer are proved on (computed.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigError, ExpressionError, NotScorable
from ...judge import JudgeAnswer, JudgeRequest
from ...scoring.plan import ScorerPlan
from ...scoring.preview import SAMPLE_ITEM
from ...scoring.run_input import RunInput
from ...scoring.scorer import Scorer
from ..source import Place, position


@dataclass
class ItemTrial:
    """What the scorer did with one item."""

    label: str
    score: float | None = None
    #: What each step gave (its record's result), by step id; empty when the run failed.
    results: dict[str, Any] = field(default_factory=dict)


class _NoJudge:
    """The judge of a scorer that asks none: never called."""

    model = "check/no-judge"

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        raise ConfigError(f"step {request.step!r} asks a judge")


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"query": "first iPhone"}}


def _result(call_id: str, failed: bool) -> dict[str, Any]:
    content = "Error: the service did not answer." if failed else "The first iPhone went on sale on June 29, 2007."
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": failed}


def _transcript(failures: tuple[bool | None, ...], tools: tuple[str, ...] = ("search", "fetch")) -> list[dict[str, Any]]:
    """An agent's transcript (Anthropic's message format) with a tool call per entry of
    `failures` (naming `tools` in turn), its result flagged as an error where the entry is
    true, and no result where it is None (a call left unanswered)."""
    ids = [f"c{index + 1}" for index in range(len(failures))]
    return [
        {"role": "user", "content": "When did the first iPhone go on sale?"},
        {"role": "assistant", "content": [_call(call_id, tools[index % len(tools)]) for index, call_id in enumerate(ids)]},
        {"role": "user", "content": [_result(call_id, failed) for call_id, failed in zip(ids, failures) if failed is not None]},
        {"role": "assistant", "content": "The first iPhone went on sale on June 29, 2007."},
    ]


#: The tool calls of the items made for a scorer that reads them: which of them fail, and the
#: tools they call in turn (one tool called again and again, as agents retry).
_TOOL_RUNS: dict[str, tuple[tuple[bool | None, ...], tuple[str, ...]]] = {
    "one tool, which succeeded": ((False,), ("search", "fetch")),
    "two tools, one unanswered": ((False, None), ("search", "fetch")),
    "two tools, one failed": ((False, True), ("search", "fetch")),
    "three tools, two failed": ((True, False, True), ("search", "fetch")),
    "two tools, both failed": ((True, True), ("search", "fetch")),
    "one tool called three times, failing twice": ((True, True, False), ("search",)),
}
_TOOL_NAMES = frozenset({"tool_calls", "tool_results", "trajectory"})
_NEAR = "It went on sale on June 29, 2007, after Steve Jobs introduced it at Macworld in January 2008."
_UNRELATED = "Bananas are rich in potassium."


def varied_items(plan: ScorerPlan) -> dict[str, RunInput]:
    """The items tried on `plan`, by label: varied in the tool calls when a step reads them,
    else in how close the output is to the expected answer."""
    reads = frozenset().union(*(step.reads for step in plan.steps))
    if reads & _TOOL_NAMES:
        return {label: dataclasses.replace(SAMPLE_ITEM, output=_transcript(failures, tools)) for label, (failures, tools) in _TOOL_RUNS.items()}
    truth = SAMPLE_ITEM.ground_truth or ""
    return {
        "the output is the expected answer": dataclasses.replace(SAMPLE_ITEM, output=truth),
        "the output is nearly the expected answer": dataclasses.replace(SAMPLE_ITEM, output=_NEAR),
        "the output is the sample's": SAMPLE_ITEM,
        "the output is unrelated": dataclasses.replace(SAMPLE_ITEM, output=_UNRELATED),
    }


def numbers_items() -> dict[str, RunInput]:
    """The items tried on a scorer that reads its output and expected answer as numbers (a
    grade, a count): on texts, each reads as 0 and every output scores alike."""
    return {
        "the output is the expected answer": dataclasses.replace(SAMPLE_ITEM, output="4", ground_truth="4"),
        "the output is nearly the expected answer": dataclasses.replace(SAMPLE_ITEM, output="5", ground_truth="4"),
        "the output is unrelated": dataclasses.replace(SAMPLE_ITEM, output="1", ground_truth="4"),
        "the output is far below the expected answer": dataclasses.replace(SAMPLE_ITEM, output="1", ground_truth="9"),
        "the output is far above the expected answer": dataclasses.replace(SAMPLE_ITEM, output="9", ground_truth="1"),
    }


def run_items(plan: ScorerPlan, items: dict[str, RunInput], options: Mapping[str, Any] | None = None) -> list[ItemTrial]:
    """`plan` run on each item, with `options` (an empty list when it cannot run without
    options the author must give)."""
    try:
        scorer = Scorer(plan, _NoJudge(), dict(options or {}))
    except ConfigError:
        return []
    return asyncio.run(_run(scorer, items))


async def _run(scorer: Scorer, items: dict[str, RunInput]) -> list[ItemTrial]:
    return list(await asyncio.gather(*(_one(scorer, label, item) for label, item in items.items())))


async def _one(scorer: Scorer, label: str, item: RunInput) -> ItemTrial:
    trial = ItemTrial(label)
    try:
        result = await scorer.ascore(item)
    except (ConfigError, ExpressionError, NotScorable, ArithmeticError, TypeError, ValueError):
        return trial  # a failure is the other checks' to name
    trial.score = result.score
    trial.results = {step: record.result for step, record in result.steps.items() if not record.skipped}
    return trial


def option_defaults(plan: ScorerPlan) -> dict[str, Any]:
    """The scorer's options as it runs without any given (empty when it needs some)."""
    try:
        return dict(plan.options_model().model_dump())
    except (ConfigError, ValueError):
        return {}


def own_values(own: Any, kind: str | None = None) -> Iterator[tuple[str, str, str, Place]]:
    """Each value the author wrote as an expression in a step of their scorer (of `kind`, when
    given): the step's id, the value's name, its expression and where it is written."""
    steps = own.get("steps") if isinstance(own, Mapping) else None
    for step in steps if isinstance(steps, list) else []:
        values = step.get("values") if isinstance(step, Mapping) and (kind is None or step.get("kind") == kind) else None
        for name, written in (values.items() if isinstance(values, Mapping) else ()):
            place = position(values, [name], value=True)
            if isinstance(written, str) and place is not None:
                yield str(step.get("id")), str(name), written, place
