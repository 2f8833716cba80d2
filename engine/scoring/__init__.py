"""One output in, one ScoreResult out: the scorer runs a plan's steps, asks the judge
through the judge protocol, and computes the score. It knows step kinds, never scorers."""

from __future__ import annotations

from .context import ContextList, GetContext, context_strings
from .plan import ScorerPlan
from .results import Run, ScoreResult, StepRecord
from .scorer import Scorer

__all__ = ["ContextList", "GetContext", "Run", "ScoreResult", "Scorer", "ScorerPlan", "StepRecord", "context_strings"]
