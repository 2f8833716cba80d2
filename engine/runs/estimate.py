"""What a batch run will cost, before it is paid for: every item's first judge question is
rendered exactly (no judge is called), and the rest is extrapolated from it.

Only the first step can be rendered without an answer; each later judge step is assumed to
send a prompt about as long as the first one, and every answer to be `ANSWER_TOKENS` long
unless the step sets `max_tokens`. Tokens are counted at about four characters each. With a
response cache, first questions already in it are counted as free.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from ..judge import ResponseCache, TokenUsage
from ..judge.middleware.cache import cache_key
from ..judge.prices import price_table
from ..scoring import AnyScorer, Jury, Scorer
from ..scoring.preview import first_request
from ..sync import run_sync
from .items import Data, EvalItem, UnreadableItem, data_source, numbered

#: Tokens assumed for an answer when its step does not cap them.
ANSWER_TOKENS = 250


class ScorerEstimate(BaseModel):
    scorer_id: str
    model: str
    items: int = Field(default=0, description="Items whose first question could be rendered")
    calls: int = Field(default=0, description="Judge calls to expect (every judge step of every item; skipped steps are not known yet)")
    cached_calls: int = Field(default=0, description="First questions the response cache already answers")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Approximate tokens")
    cost_usd: float | None = Field(default=None, description="None when the model has no price")
    not_rendered: int = Field(default=0, description="Items whose first question could not be rendered (the run would report why)")


class Estimate(BaseModel):
    items: int = 0
    unreadable: int = 0
    scorers: list[ScorerEstimate]
    cost_usd: float | None = None
    answer_tokens: int = ANSWER_TOKENS
    batch_api: bool = Field(default=False, description="Priced as calls through the provider's Batch API")


async def aestimate_evals(data: Data, scorers: Sequence[AnyScorer], cache: ResponseCache | None = None, batch_api: bool = False) -> Estimate:
    """The calls, approximate tokens and cost of scoring `data` with `scorers` (each judge of
    a jury on a line of its own); `batch_api`: at the price of the provider's Batch API."""
    judges: list[Scorer] = [member for scorer in scorers for member in (scorer.scorers if isinstance(scorer, Jury) else [scorer])]
    prices = price_table()
    estimates = [ScorerEstimate(scorer_id=scorer.id, model=scorer.judge.model) for scorer in judges]
    steps = {
        scorer.id: [step.sampling for step in scorer.plan.steps if step.sampling is not None] for scorer in judges
    }
    identities = {id(scorer): getattr(scorer.judge, "identity", None) for scorer in judges}
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
        for scorer, estimate in zip(judges, estimates):
            try:
                request = await first_request(scorer, item.output, item.input, item.ground_truth, item.context)
            except Exception:  # the run reports it, item by item; here it is only counted
                estimate.not_rendered += 1
                continue
            estimate.items += 1
            if request is None:
                continue
            prompt_tokens = sum(len(message["content"]) for message in request.messages) // 4 + 1
            identity = identities[id(scorer)]
            first_cached = cache is not None and identity is not None and await cache.aget(cache_key(identity, request)) is not None
            estimate.cached_calls += first_cached
            for index, sampling in enumerate(steps[scorer.id]):
                if index == 0 and first_cached:
                    continue
                estimate.calls += 1
                answer = sampling.max_tokens or ANSWER_TOKENS
                estimate.usage = estimate.usage + TokenUsage(
                    prompt_tokens=prompt_tokens, completion_tokens=answer, total_tokens=prompt_tokens + answer
                )
    for estimate in estimates:
        estimate.cost_usd = prices.cost(estimate.model, estimate.usage, batch_api)
    costs = [estimate.cost_usd for estimate in estimates]
    result.cost_usd = None if any(cost is None for cost in costs) else sum(cost for cost in costs if cost is not None)
    return result


def estimate_evals(data: Data, scorers: Sequence[AnyScorer], cache: ResponseCache | None = None, batch_api: bool = False) -> Estimate:
    """Sync wrapper of `aestimate_evals`."""
    return run_sync(aestimate_evals(data, scorers, cache, batch_api))
