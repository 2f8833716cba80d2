"""One output in, one ScoreResult out: the scorer runs a plan's steps, asks the judge
through the judge protocol, and computes the score. It knows step kinds, never scorers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:  # read on first use (PEP 562): compiling a catalog needs plans and step kinds, not the runner
    from .cascade import Cascade
    from .context import ContextList, GetContext, context_strings
    from .jury import AnyScorer, Jury, each_judge
    from .plan import ScorerPlan
    from .results import JudgeVerdict, Run, ScoreResult, StepRecord
    from .run_input import RunInput
    from .scorer import Scorer

_LAZY_EXPORTS: dict[str, str] = {
    "Cascade": ".cascade",
    **dict.fromkeys(["ContextList", "GetContext", "context_strings"], ".context"),
    **dict.fromkeys(["Jury", "each_judge", "AnyScorer"], ".jury"),
    "ScorerPlan": ".plan",
    **dict.fromkeys(["JudgeVerdict", "Run", "ScoreResult", "StepRecord"], ".results"),
    "RunInput": ".run_input",
    "Scorer": ".scorer",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY_EXPORTS)

__all__ = [
    "AnyScorer",
    "Cascade",
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
