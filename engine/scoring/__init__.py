"""One output in, one ScoreResult out: the scorer runs a plan's steps, asks the judge
through the judge protocol, and computes the score. It knows step kinds, never scorers."""

from __future__ import annotations

from .context import ContextList, GetContext, context_strings
from .jury import AGGREGATIONS, Aggregation, Jury, each_judge
from .plan import ScorerPlan
from .results import JudgeVerdict, Run, ScoreResult, StepRecord
from .run_input import RunInput
from .scorer import Scorer

#: What the runners score with: one judge, or a jury of several.
AnyScorer = Scorer | Jury

__all__ = [
    "AGGREGATIONS",
    "Aggregation",
    "AnyScorer",
    "ContextList",
    "GetContext",
    "JudgeVerdict",
    "Jury",
    "Run",
    "RunInput",
    "ScoreResult",
    "Scorer",
    "ScorerPlan",
    "StepRecord",
    "context_strings",
    "each_judge",
]
