"""Reaching the judge: endpoints, keys, structured-output modes, HTTP failures."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json

import pytest

from engine import ConfigError, JudgeConfig, JudgeError, create_hallucination_scorer
from helpers.scripted import verdicts_on_claims
from engine.testing import JudgeServer, Reply

CONTEXT = ["Paris is the capital of France."]


def script_all(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["Paris is the capital of France."]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no", "stated"))
    judge.on("Reason", {"reason": "All claims are supported."})


@pytest.mark.parametrize("mode", ["json_schema", "tools", "json", "md_json"])
def test_every_structured_output_mode_gets_a_validated_answer(judge: JudgeServer, mode: str) -> None:
    script_all(judge)
    result = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(mode=mode)).run(output="Paris is France's capital.")
    assert result.score == 0
    assert result.reason == "All claims are supported."
    body = judge.requests[0].body
    if mode == "json_schema":
        assert body["response_format"]["type"] == "json_schema"
    elif mode == "tools":
        assert body["tools"][0]["function"]["name"] == "Claims"
    else:
        assert "tools" not in body and body.get("response_format", {}).get("type") != "json_schema"


def test_mode_can_be_chosen_by_environment(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORERS_MODE", "tools")
    script_all(judge)
    create_hallucination_scorer(options={"context": CONTEXT}).run(output="x")
    assert "tools" in judge.requests[0].body


def test_explicit_base_url_wins_over_the_environment(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.delenv("OPENAI_API_KEY")
    script_all(judge)
    scorer = create_hallucination_scorer(model="openai/qwen2.5", options={"context": CONTEXT}, judge=JudgeSettings(base_url=judge.base_url))
    assert scorer.run(output="x").score == 0
    assert judge.requests[0].headers["authorization"] == "Bearer not-needed"


def test_ollama_provider_needs_no_key(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", judge.base_url)
    monkeypatch.delenv("OPENAI_API_KEY")
    script_all(judge)
    result = create_hallucination_scorer(model="ollama/llama3.1", options={"context": CONTEXT}).run(output="x")
    assert result.model == "ollama/llama3.1"
    assert judge.requests[0].body["model"] == "llama3.1"


def test_a_missing_api_key_says_how_to_set_it() -> None:
    with pytest.raises(ConfigError, match="no judge configured for 'openai/gpt-4o-mini': set OPENAI_API_KEY"):
        create_hallucination_scorer(options={"context": CONTEXT})


@pytest.mark.parametrize("model", ["gpt-4o", "nosuch/gpt-4o", "openai/"])
def test_model_strings_are_checked(model: str) -> None:
    with pytest.raises(ConfigError, match="provider"):
        create_hallucination_scorer(model=model, options={"context": CONTEXT}, judge=JudgeSettings(api_key="sk-x"))


def test_rate_limits_and_server_errors_are_retried(judge: JudgeServer) -> None:
    judge.on("Claims", [Reply.fail(429, "slow down", headers={"retry-after": "0"}), Reply.fail(503, "busy", headers={"retry-after": "0"}), {"claims": ["a"]}])
    judge.on("HallucinationVerdicts", verdicts_on_claims("yes"))
    judge.on("Reason", {"reason": "r"})
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="x")
    assert result.score == 1
    assert len(judge.requests_for("Claims")) == 3


def test_a_server_that_keeps_failing_gives_one_line_without_the_key(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.fail(500, "model crashed\nwith details", headers={"retry-after": "0"}))
    scorer = create_hallucination_scorer(model=JudgeConfig(model="openai/m", http_retries=1), options={"context": CONTEXT})
    with pytest.raises(JudgeError) as caught:
        scorer.run(output="x")
    assert str(caught.value) == f"step 'preprocess': the judge at {judge.base_url} answered HTTP 500: model crashed"
    assert len(judge.requests) == 2


def test_a_rejected_key_never_appears_in_the_error(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.fail(401, "Incorrect API key provided: sk-test-secret-key-123"))
    with pytest.raises(JudgeError) as caught:
        create_hallucination_scorer(options={"context": CONTEXT}).run(output="x")
    assert "refused the API key (HTTP 401)" in str(caught.value)
    assert "sk-test-secret-key-123" not in str(caught.value)


def test_an_unreachable_judge_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = create_hallucination_scorer(
        model=JudgeConfig(model="openai/m", base_url="http://127.0.0.1:9/v1", http_retries=0, timeout=2), options={"context": CONTEXT}
    )
    with pytest.raises(JudgeError, match=r"cannot reach the judge at http://127.0.0.1:9/v1"):
        scorer.run(output="x")


def test_a_slow_judge_times_out(judge: JudgeServer) -> None:
    judge.on("Claims", Reply(answer={"claims": []}, delay=1.5))
    scorer = create_hallucination_scorer(model=JudgeConfig(model="openai/m", timeout=0.5, http_retries=0), options={"context": CONTEXT})
    with pytest.raises(JudgeError, match="did not answer within 0.5s"):
        scorer.run(output="x")


def test_the_api_key_is_not_in_the_result(judge: JudgeServer) -> None:
    script_all(judge)
    result = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(api_key="sk-very-secret-999")).run(output="x")
    assert judge.requests[0].headers["authorization"] == "Bearer sk-very-secret-999"
    assert "sk-very-secret-999" not in json.dumps(result.to_dict())
    assert "sk-very-secret-999" not in repr(result)


@pytest.mark.parametrize("mode", ["json_schema", "tools", "json", "md_json"])
def test_the_request_body_is_what_the_sdk_itself_would_send(judge: JudgeServer, mode: str) -> None:
    """The messages, response format and tools go to the SDK as the JSON they are, not through
    its conversion of typed parameters (a quarter of a call's CPU): that conversion must change
    nothing in them, or the judge would be sent something else than the SDK means to send."""
    import asyncio

    from openai._utils import async_maybe_transform
    from openai.types.chat import completion_create_params

    script_all(judge)
    create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(mode=mode)).run(output="Paris is France's capital. It is big.")
    assert len(judge.requests) == 3
    for request in judge.requests:
        converted = asyncio.run(async_maybe_transform(request.body, completion_create_params.CompletionCreateParamsStreaming))
        assert converted == request.body
        assert request.body["messages"] and request.body["messages"][-1]["role"] == "user"
