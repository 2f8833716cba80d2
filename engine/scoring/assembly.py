"""A runnable scorer from a compiled plan and the judge settings: which judges (one, the
plan's jury or cascade, or the caller's), each resolved, connected through the middleware and
the response cache, and put together as a `Scorer`, a `Jury` or a `Cascade`.

The catalog compiles plans and hands one here (`Catalog.create`); nothing in this module reads
YAML. A plan without judge steps gets no judge at all: no model, no key, no request.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..judge import Chain, JudgeConfig, JudgeMiddleware, JudgeSettings, NoJudge, Provider, ResponseCache, connect, resolve_judge
from ..judge.middleware.budget import SpendLimit
from .cascade import Cascade
from .jury import AnyScorer, Jury, each_judge
from .plan import ScorerPlan
from .scorer import Scorer


def assemble(
    plan: ScorerPlan,
    settings: JudgeSettings,
    options: Mapping[str, Any] | None = None,
    *,
    providers: Mapping[str, Provider] | None = None,
    middleware: Sequence[JudgeMiddleware] = (),
    cache: ResponseCache | str | os.PathLike[str] | bool | None = None,
    check_key: bool = True,
) -> AnyScorer:
    """The scorer of `plan` judged as `settings` say: the caller's jury (`models`) or cascade
    (`escalate_to`), else the plan's own (`judges:`, `cascade:`; an explicit `model` replaces
    a plan's jury with one judge), else one judge. `providers` are a catalog's presets;
    `check_key`: a missing key fails now (False for a scorer only replayed, as an estimate)."""
    if settings.max_input_chars is not None:
        plan = dataclasses.replace(plan, max_input_chars=settings.max_input_chars)
    if not plan.needs_judge:
        return Scorer(plan, NoJudge(), dict(options or {}))
    models, model = settings.models, settings.model
    jury = plan.jury
    chosen = list(models) if models else (list(jury.models) if jury is not None and model is None else None)
    if models is not None and len(models) == 1:
        model, chosen = models[0], None
    response_cache = ResponseCache.of(cache)
    judge_middleware = list(middleware)
    if plan.confidence_samples is not None:  # verdict probabilities counted over samples where a judge gives no log-probabilities
        from ..judge.middleware.sampled import SampledProbabilities

        judge_middleware.append(SampledProbabilities(plan.confidence_samples))

    def single(judge_model: str | JudgeConfig | None) -> Scorer:
        config = resolve_judge(judge_model, owner=plan.id, settings=settings, defaults=plan.judge_defaults, providers=providers)
        scorer = Scorer(plan, connect(config, judge_middleware, cache=response_cache), dict(options or {}), judge_config=config)
        if check_key:
            config.endpoint()  # a missing key fails now rather than mid-run, once the options are known good
        return scorer

    cascade = plan.cascade if models is None and jury is None else None
    strong = settings.escalate_to or (cascade.escalate_to if cascade is not None else None)
    if strong is not None:
        if chosen:
            raise ConfigError(f"{plan.id}: a scorer judges with a jury or a cascade, not both", parameter="escalate_to")
        cheap = single(model)
        if off := plan.threshold_off_scale(settings.threshold, cheap.options):
            raise ConfigError(f"{plan.id}: threshold {off}")
        return Cascade(
            cheap,
            single(strong),
            margin=settings.margin if settings.margin is not None else (cascade.margin if cascade else None),
            samples=settings.samples if settings.samples is not None else (cascade.samples if cascade else 1),
            threshold=settings.threshold if settings.threshold is not None else (cascade.threshold if cascade else None),
            min_confidence=cascade.min_confidence if cascade else None,
        )
    if not chosen:
        return single(model)
    scorers = [single(each) for each in chosen]
    if off := plan.threshold_off_scale(settings.threshold, scorers[0].options):
        raise ConfigError(f"{plan.id}: threshold {off}")
    return Jury(
        scorers,
        aggregate=settings.aggregate or (jury.aggregate if jury else "mean"),
        threshold=settings.threshold if settings.threshold is not None else (jury.threshold if jury else None),
        margin=settings.margin if settings.margin is not None else (jury.margin if jury else None),
    )


def within_budget(scorer: AnyScorer, limit: SpendLimit | None) -> AnyScorer:
    """`scorer` with each judge's calls held to `limit` (the budget middleware, at each
    judge's own price, every judge sharing the one limit). A judge whose model has no price
    is refused: what its calls cost could not be counted against the budget."""
    if limit is None:
        return scorer
    unpriced: set[str] = set()

    def held(member: Scorer) -> Scorer:
        if not member.plan.needs_judge:
            return member
        spending = limit.for_model(member.judge.model)
        if spending.price is None:
            unpriced.add(member.judge.model)
        return member.with_judge(Chain(member.judge, [spending]))

    bounded = each_judge(scorer, held)
    if unpriced:
        raise ConfigError(f"max_cost needs a price for {', '.join(sorted(unpriced))}; add it to your prices file (see docs/performance.md)")
    return bounded
