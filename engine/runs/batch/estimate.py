"""What a batch run will cost, before it is paid for. No judge is called and no key is needed.

Each item is replayed through the scorer with a stand-in judge that answers only from the
response cache: every prompt up to the first question the cache cannot answer is rendered
exactly, the cached steps are free, and an item the cache answers entirely costs nothing.
Rendered prompts are counted at about four characters a token.

What cannot be rendered is taken from what is known: the latest paid answers of the same
step by the same model in the response cache, whose token counts the provider reported.
A step after the first unanswered question (it reads that answer) is assumed to send the
median prompt of those answers, else one as long as the unanswered question. An answer is
assumed as long as their median, in a range from the shortest to the longest; with none
known, `DEFAULT_ANSWER_TOKENS` for the step's kind, in a range from half to twice that. No
answer is counted longer than the step's `max_tokens`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from ...judge import JudgeAnswer, JudgeRequest, ResponseCache, TokenUsage
from ...judge.middleware.shared import cache_key
from ...judge.prices import price_table
from ...scoring import AnyScorer, Jury, Scorer
from ...scoring.plan import StepPlan
from ...sync import run_sync
from ..items import Data, EvalItem, UnreadableItem, data_source, numbered

#: Tokens assumed for an answer when nothing is known of the step's answers: by step kind.
DEFAULT_ANSWER_TOKENS = {"llm": 250, "reason": 150}
#: The range around a default: nothing was seen, so it is wide.
DEFAULT_RANGE = (0.5, 2.0)


class AnswerLength(BaseModel):
    """The answer tokens assumed for one step: typical, and the range."""

    step: str
    typical: int
    low: int
    high: int
    seen: int = Field(default=0, description="Cached answers of this step and model it was measured on (0: the default)")


class ScorerEstimate(BaseModel):
    scorer_id: str
    model: str
    items: int = Field(default=0, description="Items whose questions could be rendered")
    calls: int = Field(default=0, description="Judge calls to expect (skipped steps are not known yet)")
    cached_calls: int = Field(default=0, description="Questions the response cache already answers (free)")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Approximate tokens, answers at their typical length")
    cost_usd: float | None = Field(default=None, description="At the typical answer length; None when the model has no price")
    cost_low_usd: float | None = Field(default=None, description="With every answer at the short end of its range")
    cost_high_usd: float | None = Field(default=None, description="With every answer at the long end of its range")
    answers: list[AnswerLength] = Field(default_factory=list, description="The answer length assumed per judge step")
    not_rendered: int = Field(default=0, description="Items whose questions could not be rendered (the run would report why)")


class Estimate(BaseModel):
    items: int = 0
    unreadable: int = 0
    scorers: list[ScorerEstimate]
    cost_usd: float | None = None
    cost_low_usd: float | None = None
    cost_high_usd: float | None = None
    batch_api: bool = Field(default=False, description="Priced as calls through the provider's Batch API")


class _CacheReplay:
    """Stands in for the judge: answers from the response cache only, and notes every
    question it cannot answer (the run stops there, as it would wait for the judge)."""

    def __init__(self, model: str, identity: dict[str, object] | None, cache: ResponseCache | None) -> None:
        self.model = model
        self.identity = identity
        self.cache = cache
        self.answered: list[JudgeRequest] = []
        self.unanswered: list[JudgeRequest] = []

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        if self.cache is not None and self.identity is not None:
            stored = await self.cache.stored_answer(cache_key(self.identity, request), request)
            if stored is not None:
                self.answered.append(request)
                return JudgeAnswer(value=stored[0], usage=None, cached=True)
        self.unanswered.append(request)
        raise _NotInCache(request.step)


class _NotInCache(Exception):
    """The cache holds no answer: from here on the run would pay."""


def _prompt_tokens(request: JudgeRequest) -> int:
    return sum(len(message["content"]) for message in request.messages) // 4 + 1


@dataclass
class _Tally:
    """What one judge's replays found, step by step, and what the cache knows of its steps:
    (prompt, completion) tokens of earlier paid answers."""

    history: dict[str, list[tuple[int, int]]]
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    prompt_tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @classmethod
    def of(cls, scorer: Scorer, cache: ResponseCache | None) -> _Tally:
        steps = _judge_steps(scorer)
        return cls({step.id: cache.recent_usage(scorer.judge.model, step.id) if cache is not None else [] for step in steps})

    def typical_prompt(self, step: str, otherwise: int) -> int:
        known = [prompt for prompt, _ in self.history.get(step, []) if prompt]
        return int(statistics.median(known)) if known else otherwise


async def _replay(scorer: Scorer, item: EvalItem, cache: ResponseCache | None, estimate: ScorerEstimate, tally: _Tally) -> None:
    """One item through `scorer` with the cache as its only judge: what it would pay."""
    judge = _CacheReplay(scorer.judge.model, getattr(scorer.judge, "identity", None), cache)
    try:
        await scorer.with_judge(judge).ascore(item.run_input(item.output))
    except Exception:  # an item the run would reject is only counted here; the run says why
        if not judge.unanswered:
            estimate.not_rendered += 1
            return
    estimate.items += 1
    estimate.cached_calls += len(judge.answered)
    seen = {request.step: _prompt_tokens(request) for request in judge.answered}
    for request in judge.unanswered:
        seen[request.step] = _prompt_tokens(request)
        tally.calls[request.step] += 1
        tally.prompt_tokens[request.step] += seen[request.step]
    if not judge.unanswered:
        return
    longest_unanswered = max(_prompt_tokens(request) for request in judge.unanswered)
    for step in _judge_steps(scorer):
        if step.id not in seen:  # not reached: it waits on an answer the cache does not hold
            tally.calls[step.id] += 1
            tally.prompt_tokens[step.id] += tally.typical_prompt(step.id, longest_unanswered)


def _judge_steps(scorer: Scorer) -> list[StepPlan]:
    return [step for step in scorer.plan.steps if step.sampling is not None]


def _answer_length(step: StepPlan, seen: list[int]) -> AnswerLength:
    cap = step.sampling.max_tokens if step.sampling is not None else None
    if seen:
        typical, low, high = int(statistics.median(seen)), min(seen), max(seen)
    else:
        typical = DEFAULT_ANSWER_TOKENS.get(step.kind, DEFAULT_ANSWER_TOKENS["llm"])
        low, high = int(typical * DEFAULT_RANGE[0]), int(typical * DEFAULT_RANGE[1])
    if cap:
        typical, low, high = min(typical, cap), min(low, cap), min(high, cap)
    return AnswerLength(step=step.id, typical=typical, low=low, high=high, seen=len(seen))


def _settle(scorer: Scorer, estimate: ScorerEstimate, tally: _Tally, batch_api: bool) -> None:
    """Prices the calls found, at the typical answer length and at both ends of its range."""
    prices = price_table()
    totals = {"typical": TokenUsage(), "low": TokenUsage(), "high": TokenUsage()}
    for step in _judge_steps(scorer):
        length = _answer_length(step, [answer for _, answer in tally.history.get(step.id, [])])
        estimate.answers.append(length)
        calls, prompt = tally.calls.get(step.id, 0), tally.prompt_tokens.get(step.id, 0)
        estimate.calls += calls
        for end in totals:
            answer = calls * getattr(length, end)
            totals[end] = totals[end] + TokenUsage(prompt_tokens=prompt, completion_tokens=answer, total_tokens=prompt + answer)
    estimate.usage = totals["typical"]
    estimate.cost_usd = prices.cost(estimate.model, totals["typical"], batch_api)
    estimate.cost_low_usd = prices.cost(estimate.model, totals["low"], batch_api)
    estimate.cost_high_usd = prices.cost(estimate.model, totals["high"], batch_api)


def _sum(costs: Sequence[float | None]) -> float | None:
    return None if any(cost is None for cost in costs) else sum(cost for cost in costs if cost is not None)


async def aestimate_evals(data: Data, scorers: Sequence[AnyScorer], cache: ResponseCache | None = None, batch_api: bool = False) -> Estimate:
    """The calls, approximate tokens and cost of scoring `data` with `scorers` (each judge of
    a jury on a line of its own); `batch_api`: at the price of the provider's Batch API."""
    judges: list[Scorer] = [member for scorer in scorers for member in (scorer.scorers if isinstance(scorer, Jury) else [scorer])]
    estimates = [ScorerEstimate(scorer_id=scorer.id, model=scorer.judge.model) for scorer in judges]
    tallies = [_Tally.of(scorer, cache) for scorer in judges]
    result = Estimate(scorers=estimates, batch_api=batch_api)
    async for _, _, raw in numbered(data_source(data)):
        result.items += 1
        try:
            item = EvalItem.of(raw) if not isinstance(raw, UnreadableItem) else None
        except (ValidationError, ValueError):
            item = None
        if item is None:
            result.unreadable += 1
            continue
        for scorer, estimate, tally in zip(judges, estimates, tallies):
            await _replay(scorer, item, cache, estimate, tally)
    for scorer, estimate, tally in zip(judges, estimates, tallies):
        _settle(scorer, estimate, tally, batch_api)
    result.cost_usd = _sum([estimate.cost_usd for estimate in estimates])
    result.cost_low_usd = _sum([estimate.cost_low_usd for estimate in estimates])
    result.cost_high_usd = _sum([estimate.cost_high_usd for estimate in estimates])
    return result


def estimate_evals(data: Data, scorers: Sequence[AnyScorer], cache: ResponseCache | None = None, batch_api: bool = False) -> Estimate:
    """Sync wrapper of `aestimate_evals`."""
    return run_sync(aestimate_evals(data, scorers, cache, batch_api))
