"""Many outputs: batch runs over data sets and live scoring of an agent's replies. Both are
clients of the scorer and of the store, never second copies of either."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:  # read on first use (PEP 562), so importing one part loads only what it uses
    from .batch import (
        arun_evals,
        check_scorers,
        default_run_name,
        error_budget,
        run_evals,
        where_item,
    )
    from .estimate import Estimate, ScorerEstimate, aestimate_evals, estimate_evals
    from .items import EvalItem, read_jsonl
    from .live import LiveScorer, attach_scorers
    from .live_content import ContentPolicy
    from .live_sampling import LiveStats
    from .monitors import (
        Alert,
        CallbackAlert,
        LogAlert,
        Monitor,
        MonitorCheck,
        WebhookAlert,
        check_monitors,
        load_monitors,
        slack_webhook,
    )
    from .pairwise import PairwiseResult, arun_pairwise, pairs_from_items, pairs_from_runs, run_pairwise
    from .rescoring import RescoreResult, ScoreChanges, arescore, rescore, score_changes
    from .openai_batch import BatchProgress, arun_batch_api, run_batch_api
    from .results import (
        Agreement,
        BinaryAgreement,
        Comparison,
        Disagreement,
        EvalError,
        EvalResult,
        FigureDelta,
        FigureEstimate,
        ItemResult,
        JuryAgreement,
        NumericAgreement,
        ScorerOutcome,
        ScorerSummary,
        VerdictChange,
    )
    from .tuning import (
        Calibration,
        ComparedResult,
        RepeatedResult,
        Stability,
        arun_compare,
        arun_repeated,
        as_variant,
        calibration,
        labelled_of,
        run_compare,
        run_repeated,
    )

_LAZY_EXPORTS: dict[str, str] = {
    "arun_evals": ".batch",
    "check_scorers": ".batch",
    "default_run_name": ".batch",
    "error_budget": ".batch",
    "run_evals": ".batch",
    "where_item": ".batch",
    "Estimate": ".estimate",
    "ScorerEstimate": ".estimate",
    "aestimate_evals": ".estimate",
    "estimate_evals": ".estimate",
    "EvalItem": ".items",
    "read_jsonl": ".items",
    "LiveScorer": ".live",
    "attach_scorers": ".live",
    "ContentPolicy": ".live_content",
    "LiveStats": ".live_sampling",
    "Alert": ".monitors",
    "CallbackAlert": ".monitors",
    "LogAlert": ".monitors",
    "Monitor": ".monitors",
    "MonitorCheck": ".monitors",
    "WebhookAlert": ".monitors",
    "check_monitors": ".monitors",
    "load_monitors": ".monitors",
    "slack_webhook": ".monitors",
    "PairwiseResult": ".pairwise",
    "arun_pairwise": ".pairwise",
    "pairs_from_items": ".pairwise",
    "pairs_from_runs": ".pairwise",
    "run_pairwise": ".pairwise",
    "RescoreResult": ".rescoring",
    "ScoreChanges": ".rescoring",
    "arescore": ".rescoring",
    "rescore": ".rescoring",
    "score_changes": ".rescoring",
    "BatchProgress": ".openai_batch",
    "arun_batch_api": ".openai_batch",
    "run_batch_api": ".openai_batch",
    "Agreement": ".results",
    "BinaryAgreement": ".results",
    "Comparison": ".results",
    "Disagreement": ".results",
    "EvalError": ".results",
    "EvalResult": ".results",
    "FigureDelta": ".results",
    "FigureEstimate": ".results",
    "ItemResult": ".results",
    "JuryAgreement": ".results",
    "NumericAgreement": ".results",
    "ScorerOutcome": ".results",
    "ScorerSummary": ".results",
    "VerdictChange": ".results",
    "Calibration": ".tuning",
    "ComparedResult": ".tuning",
    "RepeatedResult": ".tuning",
    "Stability": ".tuning",
    "arun_compare": ".tuning",
    "arun_repeated": ".tuning",
    "as_variant": ".tuning",
    "calibration": ".tuning",
    "labelled_of": ".tuning",
    "run_compare": ".tuning",
    "run_repeated": ".tuning",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module when the name is first read."""
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_EXPORTS})


__all__ = [
    "Alert",
    "CallbackAlert",
    "ContentPolicy",
    "LogAlert",
    "Monitor",
    "MonitorCheck",
    "PairwiseResult",
    "RescoreResult",
    "ScoreChanges",
    "WebhookAlert",
    "arescore",
    "arun_pairwise",
    "check_monitors",
    "load_monitors",
    "pairs_from_items",
    "pairs_from_runs",
    "rescore",
    "run_pairwise",
    "score_changes",
    "slack_webhook",
    "Calibration",
    "ComparedResult",
    "RepeatedResult",
    "Stability",
    "arun_compare",
    "arun_repeated",
    "as_variant",
    "calibration",
    "labelled_of",
    "run_compare",
    "run_repeated",
    "Agreement",
    "Estimate",
    "BatchProgress",
    "BinaryAgreement",
    "Comparison",
    "Disagreement",
    "FigureEstimate",
    "FigureDelta",
    "JuryAgreement",
    "NumericAgreement",
    "VerdictChange",
    "EvalError",
    "EvalItem",
    "EvalResult",
    "ItemResult",
    "LiveScorer",
    "LiveStats",
    "ScorerEstimate",
    "ScorerOutcome",
    "ScorerSummary",
    "aestimate_evals",
    "arun_batch_api",
    "arun_evals",
    "attach_scorers",
    "check_scorers",
    "default_run_name",
    "error_budget",
    "estimate_evals",
    "read_jsonl",
    "run_batch_api",
    "run_evals",
    "where_item",
]
