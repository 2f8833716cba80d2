"""Many outputs: batch runs over data sets and live scoring of an agent's replies. Both are
clients of the scorer and of the store, never second copies of either."""

from __future__ import annotations

from .batch import arun_evals, check_scorers, default_run_name, run_evals
from .items import EvalItem, read_jsonl
from .live import LiveScorer, LiveStats, attach_scorers
from .results import (
    Agreement,
    BinaryAgreement,
    Comparison,
    Disagreement,
    Estimate,
    EvalError,
    FigureDelta,
    NumericAgreement,
    VerdictChange,
    EvalResult,
    ItemResult,
    ScorerOutcome,
    ScorerSummary,
)

__all__ = [
    "Agreement",
    "BinaryAgreement",
    "Comparison",
    "Disagreement",
    "Estimate",
    "FigureDelta",
    "NumericAgreement",
    "VerdictChange",
    "EvalError",
    "EvalItem",
    "EvalResult",
    "ItemResult",
    "LiveScorer",
    "LiveStats",
    "ScorerOutcome",
    "ScorerSummary",
    "arun_evals",
    "attach_scorers",
    "check_scorers",
    "default_run_name",
    "read_jsonl",
    "run_evals",
]
