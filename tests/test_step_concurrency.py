"""Steps of one scorer that do not read each other's results run at the same time; a step
that reads another waits for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine.testing import JudgeServer, Reply
from helpers.summaries import SOURCE, script_summary

import engine
from engine import load_scorers


def test_independent_steps_are_asked_together(judge: JudgeServer) -> None:
    script_summary(judge, ["yes", "yes"], ["yes", "no"])
    judge.latency = 0.4

    result = engine.create_scorer("summarization", "openai/gpt-4o-mini").run("The council approved a bridge.", input=SOURCE)

    assert result.score == 0.5
    sent = {request.schema_name: request.received_at for request in judge.requests}
    # Checking the claims and writing the key questions both need only the claims: asked at once.
    assert abs(sent["SummaryClaimVerdicts"] - sent["SummaryKeyQuestions"]) < 0.2
    # The coverage check reads the questions, the claims check reads the claims: each waits.
    assert sent["SummaryKeyQuestions"] - sent["Claims"] >= 0.35
    assert sent["SummaryCoverageVerdicts"] - sent["SummaryKeyQuestions"] >= 0.35
    # The result keeps the plan's order of steps, whatever order they finished in.
    assert list(result.steps) == ["extract_claims", "check_claims", "generate_questions", "check_coverage", "score", "generate_reason"]


def test_a_failing_step_cancels_the_one_running_beside_it(judge: JudgeServer) -> None:
    script_summary(judge, ["yes"], ["yes"])
    judge.on("SummaryClaimVerdicts", Reply.fail(400, "bad request"))
    judge.on("SummaryKeyQuestions", Reply(answer={"questions": [{"question": "q?", "answer": "a"}]}, delay=1.5))

    with pytest.raises(engine.JudgeError, match="HTTP 400"):
        engine.create_scorer("summarization", "openai/gpt-4o-mini").run("A summary.", input=SOURCE)
    assert not judge.requests_for("SummaryCoverageVerdicts")


def test_what_a_step_reads_is_known_at_load_time(tmp_path: Path) -> None:
    plan = engine.builtin_catalog().plan("summarization")
    assert plan.depends_on(plan.step("check_claims")) == ("extract_claims",)
    assert plan.depends_on(plan.step("generate_questions")) == ("extract_claims",)
    assert plan.depends_on(plan.step("check_coverage")) == ("generate_questions",)
    assert set(plan.depends_on(plan.step("generate_reason"))) >= {"score"}
    hallucination = engine.builtin_catalog().plan("hallucination")
    # The analyze step's rule compares its verdicts with the claims: a dependency even if its
    # template did not print them.
    assert "preprocess" in hallucination.step("analyze").reads


def test_a_template_that_includes_another_reads_what_the_included_one_reads(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "part.j2").write_text("Claims: {{ first.claims }}", encoding="utf-8")
    (tmp_path / "prompts" / "second.j2").write_text("{% include 'part.j2' %}\n<output>{{ output }}</output>", encoding="utf-8")
    (tmp_path / "scorers.yaml").write_text(
        "scorers:\n  two:\n    name: Two\n    description: two steps\n    direction: higher_is_better\n    steps:\n"
        "      - {id: first, kind: llm, prompt: claims/extract.j2, schema: claims.yaml}\n"
        "      - {id: unrelated, kind: llm, prompt: claims/extract.j2, schema: claims.yaml}\n"
        "      - {id: second, kind: llm, prompt: second.j2, schema: claims.yaml}\n"
        "      - {id: score, kind: score, score: '0'}\n",
        encoding="utf-8",
    )
    plan = load_scorers(tmp_path / "scorers.yaml").plan("two")
    assert plan.depends_on(plan.step("second")) == ("first",)
