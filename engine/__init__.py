"""Score LLM outputs with LLM judges; every scorer is YAML, Jinja templates and schemas.

    from engine import create_hallucination_scorer

    scorer = create_hallucination_scorer(model="openai/gpt-4o-mini", options={"context": [...]})
    result = scorer.run(output="...")
    result.score, result.reason
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .lazy import lazy_exports

if TYPE_CHECKING:  # the names below are read on first use (PEP 562): `scorers list` needs few of them
    from .catalog import Catalog, ScorerDefinition, builtin_catalog, load_scorers
    from .errors import (
        AnswerCutOffError,
        CatalogErrors,
        ConfigError,
        DataError,
        InvalidAnswerError,
        JudgeAuthenticationError,
        JudgeCircuitOpenError,
        JudgeError,
        JudgeModelNotFoundError,
        JudgeModeUnsupportedError,
        JudgeNeverAnsweredError,
        JudgeNeverReachedError,
        JudgeRateLimitError,
        JudgeRequestError,
        JudgeServerError,
        JudgeTimeoutError,
        JudgeUnreachableError,
        NotScorable,
        BudgetReached,
        RunInputError,
        ScorerError,
        StoreError,
    )
    from .judge import JudgeConfig, JudgeMiddleware, JudgeRequest, JudgeSettings, TokenUsage
    from .runs.stored.rescoring import rescore
    from .runs import (
        Agreement,
        CallbackAlert,
        ContentPolicy,
        LogAlert,
        Monitor,
        WebhookAlert,
        check_monitors,
        load_monitors,
        pairs_from_items,
        pairs_from_runs,
        run_pairwise,
        score_changes,
        slack_webhook,
        Comparison,
        EvalItem,
        EvalResult,
        ItemResult,
        LiveScorer,
        LiveStats,
        ScorerOutcome,
        arun_batch_api,
        arun_evals,
        as_variant,
        attach_scorers,
        read_jsonl,
        run_batch_api,
        run_compare,
        run_evals,
        run_repeated,
    )
    from .scoring import AnyScorer, JudgeVerdict, Jury, Run, RunInput, Scorer, ScoreResult, StepRecord
    from .scoring.transcripts import (
        assistant_text,
        extract_tool_calls,
        extract_tool_results,
    )
    from .runs.align import AlignResult, aalign, align
    from .store import ResultRecord, RunInfo, SQLiteStore, Store, register_store_backend
    from .judge import ResponseCache
    from .testing import assert_score

_LAZY_EXPORTS: dict[str, str] = {
    "Catalog": ".catalog",
    "ScorerDefinition": ".catalog",
    "builtin_catalog": ".catalog",
    "load_scorers": ".catalog",
    "AnswerCutOffError": ".errors",
    "CatalogErrors": ".errors",
    "ConfigError": ".errors",
    "DataError": ".errors",
    "InvalidAnswerError": ".errors",
    "JudgeAuthenticationError": ".errors",
    "JudgeCircuitOpenError": ".errors",
    "JudgeError": ".errors",
    "JudgeModelNotFoundError": ".errors",
    "JudgeModeUnsupportedError": ".errors",
    "JudgeNeverAnsweredError": ".errors",
    "JudgeNeverReachedError": ".errors",
    "JudgeRateLimitError": ".errors",
    "JudgeRequestError": ".errors",
    "JudgeServerError": ".errors",
    "JudgeTimeoutError": ".errors",
    "JudgeUnreachableError": ".errors",
    "NotScorable": ".errors",
    "BudgetReached": ".errors",
    "RunInputError": ".errors",
    "ScorerError": ".errors",
    "StoreError": ".errors",
    "JudgeConfig": ".judge",
    "JudgeMiddleware": ".judge",
    "JudgeRequest": ".judge",
    "JudgeSettings": ".judge",
    "TokenUsage": ".judge",
    "Agreement": ".runs",
    "CallbackAlert": ".runs",
    "ContentPolicy": ".runs",
    "LogAlert": ".runs",
    "Monitor": ".runs",
    "WebhookAlert": ".runs",
    "check_monitors": ".runs",
    "load_monitors": ".runs",
    "pairs_from_items": ".runs",
    "pairs_from_runs": ".runs",
    "rescore": ".runs.stored.rescoring",
    "run_pairwise": ".runs",
    "score_changes": ".runs",
    "slack_webhook": ".runs",
    "Comparison": ".runs",
    "EvalItem": ".runs",
    "EvalResult": ".runs",
    "ItemResult": ".runs",
    "LiveScorer": ".runs",
    "LiveStats": ".runs",
    "ScorerOutcome": ".runs",
    "arun_batch_api": ".runs",
    "arun_evals": ".runs",
    "as_variant": ".runs",
    "attach_scorers": ".runs",
    "read_jsonl": ".runs",
    "run_batch_api": ".runs",
    "run_compare": ".runs",
    "run_evals": ".runs",
    "run_repeated": ".runs",
    "AnyScorer": ".scoring",
    "JudgeVerdict": ".scoring",
    "Jury": ".scoring",
    "Run": ".scoring",
    "RunInput": ".scoring",
    "Scorer": ".scoring",
    "ScoreResult": ".scoring",
    "StepRecord": ".scoring",
    "assistant_text": ".scoring.transcripts",
    "extract_tool_calls": ".scoring.transcripts",
    "extract_tool_results": ".scoring.transcripts",
    "AlignResult": ".runs.align",
    "aalign": ".runs.align",
    "align": ".runs.align",
    "ResultRecord": ".store",
    "RunInfo": ".store",
    "SQLiteStore": ".store",
    "Store": ".store",
    "register_store_backend": ".store",
    "ResponseCache": ".judge",
    "assert_score": ".testing",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY_EXPORTS)


def create_scorer(
    scorer_id: str,
    model: str | JudgeConfig | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    judge: JudgeSettings | None = None,
    cache: ResponseCache | str | os.PathLike[str] | bool | None = None,
    middleware: Sequence[JudgeMiddleware] = (),
) -> AnyScorer:
    """A built-in scorer by id (see `scorers list`), judged by `model` or as `judge` (a
    JudgeSettings) says: base_url, api_key, mode, timeout, retries; for a jury of judges
    models=(...), aggregate, threshold, margin; for a cascade from `model` to a strong judge
    escalate_to, margin, samples, threshold.
    `middleware` wraps every judge call (a limiter, a tracer); `cache` answers repeated
    questions from a response cache."""
    from .catalog import builtin_catalog

    return builtin_catalog().create(scorer_id, model, options, judge=judge, cache=cache, middleware=middleware)


def create_hallucination_scorer(
    model: str | JudgeConfig | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    judge: JudgeSettings | None = None,
    cache: ResponseCache | str | os.PathLike[str] | bool | None = None,
    middleware: Sequence[JudgeMiddleware] = (),
) -> AnyScorer:
    """The hallucination scorer: options `scale`, `context`, `get_context`, `language`."""
    return create_scorer("hallucination", model, options, judge=judge, cache=cache, middleware=middleware)


__all__ = [
    "Agreement",
    "AlignResult",
    "aalign",
    "align",
    "CallbackAlert",
    "ContentPolicy",
    "LogAlert",
    "Monitor",
    "WebhookAlert",
    "check_monitors",
    "load_monitors",
    "pairs_from_items",
    "pairs_from_runs",
    "rescore",
    "run_pairwise",
    "score_changes",
    "slack_webhook",
    "AnyScorer",
    "AnswerCutOffError",
    "Catalog",
    "CatalogErrors",
    "Comparison",
    "ConfigError",
    "DataError",
    "EvalItem",
    "EvalResult",
    "InvalidAnswerError",
    "ItemResult",
    "JudgeAuthenticationError",
    "JudgeCircuitOpenError",
    "JudgeConfig",
    "JudgeError",
    "JudgeMiddleware",
    "JudgeModeUnsupportedError",
    "JudgeModelNotFoundError",
    "JudgeNeverAnsweredError",
    "JudgeNeverReachedError",
    "JudgeRateLimitError",
    "JudgeRequest",
    "JudgeRequestError",
    "JudgeSettings",
    "JudgeServerError",
    "JudgeTimeoutError",
    "JudgeUnreachableError",
    "JudgeVerdict",
    "Jury",
    "LiveScorer",
    "LiveStats",
    "NotScorable",
    "BudgetReached",
    "ResponseCache",
    "ResultRecord",
    "Run",
    "RunInfo",
    "RunInput",
    "RunInputError",
    "SQLiteStore",
    "ScoreResult",
    "Scorer",
    "ScorerDefinition",
    "ScorerError",
    "ScorerOutcome",
    "StepRecord",
    "Store",
    "StoreError",
    "TokenUsage",
    "arun_batch_api",
    "arun_evals",
    "as_variant",
    "assert_score",
    "assistant_text",
    "attach_scorers",
    "builtin_catalog",
    "create_hallucination_scorer",
    "create_scorer",
    "extract_tool_calls",
    "extract_tool_results",
    "load_scorers",
    "read_jsonl",
    "register_store_backend",
    "run_batch_api",
    "run_compare",
    "run_evals",
    "run_repeated",
]
