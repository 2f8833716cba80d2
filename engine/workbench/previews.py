"""The preview of every step of a scorer for one item, before a run: the exact prompts, as
`scorers preview` renders them. A step that needs an earlier step's answer is shown with that
answer taken from the response cache (the same question asked before, by any run: exactly what
the judge would be told again) or else from the last stored run of the item (the answer to an
earlier wording, said so); with neither, the preview stops there and says which answer it
needs (the page offers to run that one item, its cost shown)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..judge import JudgeAnswer, JudgeRequest, ResponseCache
from ..judge.middleware.cache import cache_key
from ..runs import EvalItem
from ..scoring import AnyScorer, Jury, Scorer
from ..store import ResultRecord


@dataclass(frozen=True)
class StoredAnswer:
    """A step's answer in a stored run: what it answered, to which prompt, in which run."""

    value: Any
    prompt: str | None
    run: str


class _NoAnswer(Exception):
    def __init__(self, step: str) -> None:
        self.step = step


@dataclass
class _Sources:
    """Stands in for the judge: notes each prompt, and answers it from the response cache,
    else from a stored run of the item, else stops the preview there."""

    model: str
    identity: dict[str, Any] | None
    cache: ResponseCache | None
    stored: Mapping[str, StoredAnswer]
    shown: list[dict[str, Any]] = field(default_factory=list)

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        system = next((message["content"] for message in request.messages if message["role"] == "system"), None)
        prompt = request.messages[-1]["content"]
        step: dict[str, Any] = {"step": request.step, "system": system, "prompt": prompt, "answer": None, "answer_from": None, "asked_differently": False}
        self.shown.append(step)
        if self.cache is not None and self.identity is not None:
            cached = await self.cache.stored_answer(cache_key(self.identity, request), request)
            if cached is not None:
                step.update(answer=_plain(cached[0]), answer_from="the response cache")
                return JudgeAnswer(value=cached[0], usage=None, cached=True)
        earlier = self.stored.get(request.step)
        if earlier is not None:
            value = _validated(earlier.value, request.response_model)
            if value is not None:
                step.update(answer=_plain(value), answer_from=f"run {earlier.run}", asked_differently=earlier.prompt is not None and earlier.prompt != prompt)
                return JudgeAnswer(value=value, usage=None)
        raise _NoAnswer(request.step)


def _validated(value: Any, model: type[BaseModel] | None) -> Any:
    if model is None:
        return value if isinstance(value, str) else None
    try:
        return model.model_validate(value)
    except ValidationError:  # the schema changed since: that answer no longer fits
        return None


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def stored_answers(record: ResultRecord, run: str) -> dict[str, StoredAnswer]:
    """The judge's answers of a stored result, per step, to show the steps after them."""
    return {
        step_id: StoredAnswer(step.result, step.prompt, run)
        for step_id, step in record.steps.items()
        if step.kind in ("llm", "reason") and not step.skipped and step.result is not None
    }


async def preview_item(scorer: AnyScorer, raw: Mapping[str, Any], cache: ResponseCache | None, stored: Mapping[str, StoredAnswer]) -> dict[str, Any]:
    """Every step's prompt for one item (see the module's docstring), the step whose answer
    is missing when one is, and the score when every answer was found."""
    single: Scorer = scorer.scorers[0] if isinstance(scorer, Jury) else scorer
    sources = _Sources(single.judge.model, getattr(single.judge, "identity", None), cache, stored)
    item = EvalItem.of(dict(raw))
    try:
        result = await single.with_judge(sources).ascore(item.run_input(item.output))
    except _NoAnswer as missing:
        return {"prompts": sources.shown, "needs_answer_for": missing.step, "score": None}
    return {"prompts": sources.shown, "needs_answer_for": None, "score": result.score}
