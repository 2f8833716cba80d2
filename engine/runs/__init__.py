"""Many outputs: batch runs over data sets and live scoring of an agent's replies. Both are
clients of the scorer and of the store, never second copies of either."""

from __future__ import annotations

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
from .live_sampling import LiveStats
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

__all__ = [
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
