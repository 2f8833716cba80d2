"""Reasoning models as judges (refused parameters, reasoning effort, thinking, reasoning
tokens) and servers that cannot do every structured-output mode."""

from __future__ import annotations

from engine.judge import JudgeSettings
import logging

import pytest

from engine import JudgeRequestError, create_hallucination_scorer, load_scorers
from helpers.scripted import verdicts_on_claims
from engine.judge.capabilities import split_thinking
from engine.testing import JudgeServer, Reply

CONTEXT = ["Paris is the capital of France."]


def script(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["Paris is the capital of France."]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no", "stated"))
    judge.on("Reason", {"reason": "All claims are supported."})


def test_openai_reasoning_models_get_no_temperature(judge: JudgeServer) -> None:
    script(judge)
    create_hallucination_scorer(model="openai/o3-mini", options={"context": CONTEXT}).run(output="x")
    body = judge.requests[0].body
    assert "temperature" not in body and "top_p" not in body
    create_hallucination_scorer(model="openai/gpt-4o-mini", options={"context": CONTEXT}).run(output="x")
    assert judge.requests[-1].body["temperature"] == 0.0


def test_a_parameter_refused_with_a_400_is_left_out_once_and_for_all(judge: JudgeServer, caplog: pytest.LogCaptureFixture) -> None:
    script(judge)
    refusal = Reply.fail(400, "Unsupported value: 'temperature' does not support 0.0 with this model.", param="temperature")
    judge.on("Claims", [refusal, {"claims": ["a"]}, {"claims": ["b"]}])
    scorer = create_hallucination_scorer(model="openai/new-reasoner", options={"context": CONTEXT})
    with caplog.at_level(logging.WARNING, logger="engine.judge"):
        assert scorer.run(output="x").score == 0
        assert scorer.run(output="y").score == 0
    claims = judge.requests_for("Claims")
    assert "temperature" in claims[0].body
    assert all("temperature" not in request.body for request in claims[1:])
    assert all("temperature" not in request.body for request in judge.requests_for("HallucinationVerdicts"))
    assert sum("refuses `temperature`" in record.getMessage() for record in caplog.records) == 1


def test_a_refused_max_tokens_becomes_max_completion_tokens(judge: JudgeServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("scorers:\n  capped:\n    extends: hallucination\n    judge:\n      max_tokens: 900\n", encoding="utf-8")
    script(judge)
    refusal = Reply.fail(
        400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", param="max_tokens"
    )
    judge.on("Claims", [refusal, {"claims": ["a"]}])
    load_scorers(catalog).create("capped", model="openai/future-reasoner", options={"context": CONTEXT}).run(output="x")
    retried = judge.requests_for("Claims")[1].body
    assert "max_tokens" not in retried and retried["max_completion_tokens"] == 900
    assert judge.requests_for("HallucinationVerdicts")[0].body["max_completion_tokens"] == 900


def test_o_series_models_count_max_completion_tokens(judge: JudgeServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("scorers:\n  capped:\n    extends: hallucination\n    judge:\n      max_tokens: 700\n", encoding="utf-8")
    script(judge)
    load_scorers(catalog).create("capped", model="openai/o3", options={"context": CONTEXT}).run(output="x")
    body = judge.requests[0].body
    assert body["max_completion_tokens"] == 700 and "max_tokens" not in body


def test_a_400_about_something_else_is_not_retried(judge: JudgeServer) -> None:
    script(judge)
    judge.on("Claims", Reply.fail(400, "The model `nope` does not exist"))
    with pytest.raises(JudgeRequestError, match="does not exist"):
        create_hallucination_scorer(model="openai/nope", options={"context": CONTEXT}).run(output="x")
    assert len(judge.requests_for("Claims")) == 1


def test_reasoning_effort_is_sent_when_a_scorer_sets_it(judge: JudgeServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("scorers:\n  careful:\n    extends: hallucination\n    judge:\n      reasoning_effort: high\n", encoding="utf-8")
    script(judge)
    load_scorers(catalog).create("careful", model="openai/o4-mini", options={"context": CONTEXT}).run(output="x")
    assert judge.requests[0].body["reasoning_effort"] == "high"
    assert "reasoning_effort" not in create_hallucination_scorer(options={"context": CONTEXT}).plan.steps[0].sampling.model_dump(exclude_none=True)


def test_thinking_before_the_answer_is_kept_out_of_validation(judge: JudgeServer) -> None:
    script(judge)
    judge.on("Claims", Reply.raw('<think>The output names one city.</think>\n{"claims": ["Paris is a city."]}', reasoning_tokens=7))
    result = create_hallucination_scorer(model="openai/qwq-32b", options={"context": CONTEXT}, judge=JudgeSettings(mode="json")).run(output="x")
    step = result.steps["preprocess"]
    assert step.result == {"claims": ["Paris is a city."]}
    assert step.thinking == "The output names one city."
    assert step.usage is not None and step.usage.reasoning_tokens == 7
    assert result.usage.reasoning_tokens == 7
    assert result.to_dict()["usage"]["total"]["reasoning_tokens"] == 7


def test_reasoning_content_is_kept_in_the_step_record(judge: JudgeServer) -> None:
    script(judge)
    judge.on("Claims", Reply(answer={"claims": ["a"]}, reasoning="First I read the output."))
    result = create_hallucination_scorer(model="openai/deepseek-r1", options={"context": CONTEXT}).run(output="x")
    assert result.steps["preprocess"].thinking == "First I read the output."
    assert result.steps["preprocess"].result == {"claims": ["a"]}


def test_thinking_in_a_free_text_answer_is_not_the_reason(judge: JudgeServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = tmp_path / "scorers.yaml"
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "why.j2").write_text("Explain {{ score }}.", encoding="utf-8")
    catalog.write_text(
        "scorers:\n  plain_reason:\n    extends: hallucination\n    steps:\n      - id: generate_reason\n        kind: reason\n        prompt: why.j2\n        schema: null\n",
        encoding="utf-8",
    )
    script(judge)
    judge.on(None, Reply.raw("<think>hmm</think>Nothing is made up."))
    result = load_scorers(catalog).create("plain_reason", options={"context": CONTEXT}).run(output="x")
    assert result.reason == "Nothing is made up."
    assert result.steps["generate_reason"].thinking == "hmm"


@pytest.mark.parametrize(
    ("text", "answer", "thinking"),
    [
        ("<think>a</think>b", "b", "a"),
        ("a</think>b", "b", "a"),  # servers that drop the opening tag
        ("b", "b", None),
        ("<think>cut off", "", "cut off"),
    ],
)
def test_thinking_is_split_from_the_answer(text: str, answer: str, thinking: str | None) -> None:
    assert split_thinking(text) == (answer, thinking)


def test_a_refused_response_format_falls_back_once_and_is_remembered(judge: JudgeServer, caplog: pytest.LogCaptureFixture) -> None:
    script(judge)

    def no_json_schema(request):  # type: ignore[no-untyped-def]
        if request.body.get("response_format", {}).get("type") == "json_schema":
            return Reply.fail(400, "response_format of type 'json_schema' is not supported by this model", param="response_format")
        return {"claims": ["a"]}

    judge.on("Claims", no_json_schema)
    with caplog.at_level(logging.WARNING, logger="engine.judge"):
        first = create_hallucination_scorer(model="openai/old-model", options={"context": CONTEXT}).run(output="x")
        second = create_hallucination_scorer(model="openai/old-model", options={"context": CONTEXT}).run(output="y")
    assert first.score == 0 and second.score == 0
    claims = judge.requests_for("Claims")
    assert [("tools" in request.body) for request in claims] == [False, True, True]
    assert "tools" in judge.requests_for("HallucinationVerdicts")[0].body
    warnings = [record.getMessage() for record in caplog.records if "does not support the json_schema" in record.getMessage()]
    assert len(warnings) == 1 and "using tools" in warnings[0]


def test_the_fallback_goes_on_to_json_mode(judge: JudgeServer) -> None:
    script(judge)

    def json_only(request):  # type: ignore[no-untyped-def]
        if request.body.get("tools"):
            return Reply.fail(400, "tools are not supported for this model")
        if request.body.get("response_format", {}).get("type") == "json_schema":
            return Reply.fail(400, "Invalid response_format: json_schema")
        return {"claims": ["a"]}

    judge.on("Claims", json_only)
    assert create_hallucination_scorer(model="openai/tiny", options={"context": CONTEXT}).run(output="x").score == 0
    last = judge.requests_for("Claims")[-1].body
    assert "tools" not in last and last.get("response_format", {}).get("type") != "json_schema"
