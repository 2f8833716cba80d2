"""One run input: the scorer, a jury, the runners and the CLI pass one `RunInput` value
instead of the fields one by one; `run(output=...)` stays for users."""

from __future__ import annotations

from engine.judge import JudgeSettings
import dataclasses

import pytest
from engine.testing import JudgeServer
from helpers.scripted import script_hallucination

import engine
from engine import RunInput


def test_a_scorer_scores_a_run_input_as_it_scores_keywords() -> None:
    scorer = engine.create_scorer("includes", options={"texts": ["Paris", "Seine"]})
    given = RunInput(output="Paris lies on the Seine.", run_id="r-1", metadata={"topic": "geography"})
    by_value = scorer.score(given)
    by_keywords = scorer.run(output="Paris lies on the Seine.", run_id="r-1", metadata={"topic": "geography"})
    assert by_value.score == by_keywords.score == 1
    assert by_value.run_id == "r-1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.output = "changed"  # type: ignore[misc]


def test_a_jury_scores_a_run_input_with_every_judge(judge: JudgeServer) -> None:
    script_hallucination(judge)
    jury = engine.create_scorer("hallucination", judge=JudgeSettings(models=["openai/a", "openai/b"]))
    result = jury.score(RunInput(output="ok. WRONG", context=["facts"]))
    assert result.score == 0.5 and [verdict.model for verdict in result.judges or []] == ["openai/a", "openai/b"]
    assert jury.run(output="ok. WRONG", context=["facts"]).score == 0.5
