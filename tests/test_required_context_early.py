"""A scorer that requires a context and cannot get one fails before its first judge call,
so a misconfigured run costs nothing (engine/scorer.py, Scorer.arun)."""

from __future__ import annotations

import pytest

from engine import RunInputError, create_scorer
from engine.testing import JudgeServer


def test_missing_required_context_fails_before_the_claims_are_extracted(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["Paris is in France"]})
    with pytest.raises(RunInputError, match="needs a context"):
        create_scorer("hallucination", model="openai/test-model").run(output="Paris is in France.")
    assert judge.requests == []


def test_get_context_is_still_asked_only_by_the_steps_that_use_it(judge: JudgeServer) -> None:
    asked: list[str] = []

    def get_context(run: object, step: str) -> list[str]:
        asked.append(step)
        return ["Paris is the capital of France."]

    judge.on("Claims", {"claims": ["Paris is in France"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "Paris is in France", "verdict": "no", "reason": "r"}]})
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("hallucination", model="openai/test-model", options={"get_context": get_context}).run(output="Paris is in France.")
    assert result.score == 0.0
    assert asked == ["analyze", "generate_reason"]
