"""docs/authoring.md's worked example: the files it shows are the files that run."""

from __future__ import annotations

from engine.judge import JudgeSettings
import re
from pathlib import Path

import pytest

from engine import load_scorers
from engine.errors import NotScorable
from engine.testing import JudgeServer

DOCS = Path(__file__).resolve().parent.parent / "docs"
CATALOG = DOCS / "examples" / "tone" / "catalog.yaml"


def test_the_page_shows_the_example_files_as_they_are() -> None:
    page = (DOCS / "authoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", page, flags=re.DOTALL)
    assert len(blocks) == 6
    for name, text in blocks:
        assert (DOCS / name).read_text(encoding="utf-8") == text, f"docs/authoring.md is out of date for {name}"


SENTENCES = ["Your card is blocked lol.", "We will fix it today.", "Sorry."]


def judgements(*tones: str) -> dict[str, list[dict[str, str]]]:
    return {"judgements": [{"sentence": sentence, "tone": tone, "reason": "r"} for sentence, tone in zip(SENTENCES, tones)]}


def test_the_example_scores_as_the_page_says(judge: JudgeServer) -> None:
    judge.on("ToneSentences", {"sentences": SENTENCES})
    judge.on("ToneJudgements", [judgements("borderline", "professional"), judgements(" Borderline", "PROFESSIONAL", "unprofessional")])
    judge.on("Reason", {"reason": "The first sentence is too casual."})
    scorer = load_scorers(CATALOG).create("professional-tone", options={"audience": "hotel guests", "scale": 10})
    result = scorer.run(output="Your card is blocked lol. We will fix it today. Sorry.")
    assert result.score == 5  # (0.5 + 1 + 0) / 3 * 10
    assert result.reason == "The first sentence is too casual."
    asked = judge.requests_for("ToneJudgements")
    assert "written for hotel guests" in asked[0].prompt
    assert asked[1].is_reask and "Judge each of the 3 sentences exactly once; you judged 2." in str(asked[1].messages)
    assert "gave a reply 5 out of 10" in result.explain_prompt


def test_the_example_does_not_score_an_empty_reply_and_makes_no_request(judge: JudgeServer) -> None:
    # Issue 20: an empty reply used to get the best score, 1.
    with pytest.raises(NotScorable, match="professional-tone: the output is empty: there is nothing to judge"):
        load_scorers(CATALOG).create("professional-tone").run(output="")
    assert judge.requests == []


def test_the_example_scores_a_reply_without_sentences_after_one_request(judge: JudgeServer) -> None:
    judge.on("ToneSentences", {"sentences": []})
    result = load_scorers(CATALOG).create("professional-tone").run(output="...")
    assert result.score == 1
    assert result.reason == "The output has no sentences to judge, so the score is 1."
    assert [request.schema_name for request in judge.requests] == ["ToneSentences"]


def test_the_example_options_are_checked() -> None:
    from engine import ConfigError

    with pytest.raises(ConfigError, match="option scale"):
        load_scorers(CATALOG).create("professional-tone", options={"scale": -2}, judge=JudgeSettings(api_key="sk-x"))
