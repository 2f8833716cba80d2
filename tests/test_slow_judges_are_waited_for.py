"""A judge that is generating is not a judge that hangs (issue 35): answers are streamed, so a
slow judge still writing is waited for once, however long its whole answer takes, while one
that falls silent midway is dropped after --timeout seconds of silence and asked again; and
what a user reads when a judge fails is one line of the engine's words, never a library's raw
message."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import JudgeTimeoutError, create_hallucination_scorer, create_scorer
from engine.cli import app
from engine.testing import AnthropicServer, JudgeServer, Reply

from helpers.scripted import verdicts_on_claims

runner = CliRunner()
CONTEXT = ["Paris is the capital of France."]
CLAIMS = {"claims": ["Paris is the capital of France."]}


def script(judge: JudgeServer) -> None:
    judge.on("Claims", CLAIMS)
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("Reason", {"reason": "Nothing is made up."})


def test_answers_are_streamed_as_openai_streams_them_with_their_usage(judge: JudgeServer) -> None:
    script(judge)
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="Paris is France's capital.")
    assert result.score == 0 and result.reason == "Nothing is made up."
    for request in judge.requests:
        assert request.body["stream"] is True and request.body["stream_options"] == {"include_usage": True}
    assert result.steps["preprocess"].usage is not None and result.steps["preprocess"].usage.total_tokens == 60


def test_a_slow_judge_that_keeps_writing_is_waited_for_once(judge: JudgeServer) -> None:
    script(judge)
    # About 14 pieces a fifth of a second apart: nearly 3 s in all, three times the timeout.
    judge.on("Claims", Reply.slowly(CLAIMS, every=0.2))
    started = time.monotonic()
    result = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(timeout=1, retries=2)).run(output="Paris is France's capital.")
    assert result.score == 0
    assert time.monotonic() - started > 2
    assert len(judge.requests_for("Claims")) == 1  # waited for, not asked again


def test_a_judge_that_stops_midway_is_asked_again_then_named_stuck(judge: JudgeServer) -> None:
    script(judge)
    judge.on("Claims", [Reply.stalls(CLAIMS, after=3), CLAIMS])
    result = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(timeout=0.5, retries=1)).run(output="Paris is France's capital.")
    assert result.score == 0 and len(judge.requests_for("Claims")) == 2

    judge.reset()
    script(judge)
    judge.on("Claims", Reply.stalls(CLAIMS, after=3))
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError) as caught:
        create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(timeout=0.5, retries=1)).run(output="Paris is France's capital.")
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert message.startswith("step 'preprocess': the judge at http://127.0.0.1:")
    assert "stopped sending its answer for 0.5s, each of 2 times it was asked (the last time after 4 pieces of it): it is stuck, not slow" in message
    assert len(judge.requests_for("Claims")) == 2


def test_a_judge_that_never_starts_answering_still_times_out_per_attempt(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.hang())
    with pytest.raises(JudgeTimeoutError, match=r"did not answer within 0.5s per attempt \(1 attempt"):
        create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(timeout=0.5, retries=0)).run(output="x")


def test_claude_streams_too_slow_is_waited_for_and_silent_is_asked_again(claude: AnthropicServer) -> None:
    claude.on("Claims", Reply.slowly(CLAIMS, every=0.08))
    verdicts = {"verdicts": [{"statement": "Paris is the capital of France.", "verdict": "no", "reason": "stated"}]}
    claude.on("HallucinationVerdicts", [Reply.stalls(verdicts, after=2), verdicts])
    claude.on("Reason", {"reason": "Nothing is made up."})
    scorer = create_scorer("hallucination", model="anthropic/claude-test", options={"context": CONTEXT}, judge=JudgeSettings(timeout=1, retries=1))
    result = scorer.run(output="Paris is France's capital.")
    assert result.score == 0 and result.reason == "Nothing is made up."
    assert [len(claude.requests_for(name)) for name in ("Claims", "HallucinationVerdicts")] == [1, 2]
    assert all(request.body["stream"] is True for request in claude.requests)
    assert result.steps["preprocess"].usage is not None and result.steps["preprocess"].usage.completion_tokens == 10


def test_a_judge_that_never_complies_is_told_in_one_line_of_the_engines_words(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", {"verdicts": []})
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "one", "output": "It is a. It is b.", "context": CONTEXT}) + "\n", encoding="utf-8")

    ran = runner.invoke(app, ["run", "hallucination", "--output", "It is a. It is b.", "--context", CONTEXT[0]])
    evaluated = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--no-cache"])

    for printed in (ran.stdout + ran.stderr, evaluated.stdout + evaluated.stderr):
        shown = " ".join(printed.split())  # as read, whatever the terminal's width
        assert "the judge's answer failed validation after 3 attempt(s): There are 2 claims but 0 verdicts" in shown
        for raw in ("Max retries", "errors.pydantic.dev", "Instructor", "validation error for", "Traceback"):
            assert raw not in shown, (raw, shown)
    asked = judge.requests_for("HallucinationVerdicts")
    assert "errors.pydantic.dev" not in json.dumps(asked[1].messages)  # nor in what the judge is told


def test_a_thinking_judge_cut_off_at_its_answers_bound_is_asked_again_with_the_steps_limit(judge: JudgeServer) -> None:
    script(judge)
    judge.on("Claims", [Reply.cut_off('{"claims": ["Par', reasoning="Let me think about the claims of this text at length."), CLAIMS])
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="Paris is France's capital.")
    assert result.score == 0
    first, second = (request.body["max_tokens"] for request in judge.requests_for("Claims"))
    assert first < 2048 and second == 2048  # its thinking counts against the limit: the step's whole one
    assert judge.requests_for("HallucinationVerdicts")[0].body["max_tokens"] == 2048  # learned for the rest of the run


LIBRARY_USER = """
import os
from engine import create_hallucination_scorer
from engine.testing import JudgeServer

judge = JudgeServer().start()
os.environ.update(OPENAI_BASE_URL=judge.base_url, OPENAI_API_KEY="test")
judge.on("Claims", {"claims": ["a", "b"]})
judge.on("HallucinationVerdicts", {"verdicts": []})
try:
    create_hallucination_scorer(options={"context": ["c"]}).run(output="It is a. It is b.")
except Exception as error:
    print(error)
judge.stop()
"""


def test_a_program_using_the_library_sees_no_raw_library_message_either() -> None:
    # Instructor's retry loop logged "Max retries exceeded ... errors.pydantic.dev", which a
    # program that sets up no logging printed on stderr.
    ran = subprocess.run([sys.executable, "-c", LIBRARY_USER], capture_output=True, text=True, timeout=120)
    assert "failed validation after 3 attempt(s): There are 2 claims but 0 verdicts" in ran.stdout, ran.stdout + ran.stderr
    for raw in ("Max retries", "errors.pydantic.dev", "validation error for"):
        assert raw not in ran.stdout + ran.stderr
