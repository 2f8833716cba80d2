"""Judges beyond OpenAI: presets of OpenAI-compatible services, presets a catalog adds, Azure
OpenAI through the SDK's Azure client, and Claude through the anthropic SDK."""

from __future__ import annotations

import sys

import pytest

from engine import ConfigError, JudgeConfig, JudgeRateLimitError, JudgeServerError, create_hallucination_scorer, load_scorers
from helpers.providers import CONTEXT, FAST_RETRY, script
from engine.judge import PROVIDERS
from engine.testing import AnthropicServer, JudgeServer, Reply


@pytest.mark.parametrize(
    ("model", "variable", "host"),
    [
        ("gemini/gemini-2.5-flash", "GEMINI_API_KEY", "generativelanguage.googleapis.com"),
        ("openrouter/anthropic/claude-3.5-haiku", "OPENROUTER_API_KEY", "openrouter.ai"),
        ("groq/llama-3.3-70b-versatile", "GROQ_API_KEY", "api.groq.com"),
        ("together/meta-llama/Llama-3-70b", "TOGETHER_API_KEY", "api.together.xyz"),
        ("deepseek/deepseek-chat", "DEEPSEEK_API_KEY", "api.deepseek.com"),
        ("mistral/mistral-small-latest", "MISTRAL_API_KEY", "api.mistral.ai"),
        ("fireworks/accounts/fireworks/models/llama-v3p1-8b", "FIREWORKS_API_KEY", "api.fireworks.ai"),
    ],
)
def test_hosted_presets_name_their_key_and_endpoint(model: str, variable: str, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=f"set {variable}"):
        create_hallucination_scorer(model=model, options={"context": CONTEXT})
    monkeypatch.setenv(variable, "key-123")
    config = JudgeConfig(model=model)
    base_url, key = config.endpoint()
    assert host in (base_url or "") and key == "key-123"
    assert config.model_name == model.split("/", 1)[1]  # the rest is the service's own model name


@pytest.mark.parametrize(("prefix", "port"), [("vllm", 8000), ("lmstudio", 1234), ("llamacpp", 8080), ("ollama", 11434)])
def test_local_presets_need_no_key(prefix: str, port: int) -> None:
    base_url, key = JudgeConfig(model=f"{prefix}/some-model").endpoint()
    assert base_url == f"http://localhost:{port}/v1" and key == "not-needed"


def test_a_local_preset_follows_its_variable_to_a_server(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_BASE_URL", judge.base_url)
    script(judge)
    result = create_hallucination_scorer(model="vllm/Qwen/Qwen2.5-7B-Instruct", options={"context": CONTEXT}).run(output="x")
    assert result.score == 0 and judge.requests[0].body["model"] == "Qwen/Qwen2.5-7B-Instruct"


def test_a_catalog_adds_its_own_preset(judge: JudgeServer, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CORP_GATEWAY_KEY", "corp-key-789")
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text(
        "providers:\n"
        "  corp:\n"
        f"    base_url: {judge.base_url}\n"
        "    api_key_env: CORP_GATEWAY_KEY\n"
        "    mode: tools\n"
        "scorers: {}\n",
        encoding="utf-8",
    )
    script(judge)
    result = load_scorers(catalog).create("hallucination", model="corp/llama-70b", options={"context": CONTEXT}).run(output="x")
    assert result.score == 0
    request = judge.requests[0]
    assert request.headers["authorization"] == "Bearer corp-key-789"
    assert "tools" in request.body  # the preset's mode


def test_a_misspelled_preset_field_is_a_placed_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("providers:\n  corp:\n    base_ur: http://x\nscorers: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"scorers.yaml:3.*base_ur"):
        load_scorers(catalog)


def test_azure_goes_through_the_azure_client(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = judge.base_url.removesuffix("/v1")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", endpoint)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-321")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    script(judge)
    result = create_hallucination_scorer(model="azure/my-gpt4o-deployment", options={"context": CONTEXT}).run(output="x")
    assert result.score == 0
    request = judge.requests[0]
    assert request.path.startswith("/openai/deployments/my-gpt4o-deployment/chat/completions?api-version=2024-10-21")
    assert request.headers["api-key"] == "azure-key-321"


def test_azure_without_endpoint_or_version_says_which_variable(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    with pytest.raises(ConfigError, match="AZURE_OPENAI_ENDPOINT"):
        create_hallucination_scorer(model="azure/dep", options={"context": CONTEXT})
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", judge.base_url.removesuffix("/v1"))
    with pytest.raises(ConfigError, match="OPENAI_API_VERSION"):
        create_hallucination_scorer(model="azure/dep", options={"context": CONTEXT}).run(output="x")


# Claude ------------------------------------------------------------------------------------


def test_claude_answers_through_tool_use(claude: AnthropicServer) -> None:
    script(claude)
    result = create_hallucination_scorer(model="anthropic/claude-sonnet-4-5", options={"context": CONTEXT}).run(output="Paris is France's capital.")
    assert result.score == 0 and result.reason == "All claims are supported."
    first = claude.requests[0]
    assert first.path == "/v1/messages" and first.body["model"] == "claude-sonnet-4-5"
    assert first.body["tools"][0]["name"] == "Claims"
    # The key travels as the installed SDK sends it (x-api-key, or a bearer token in newer SDKs).
    assert "sk-ant-test-secret-456" in (first.headers.get("x-api-key", ""), first.headers.get("authorization", "").removeprefix("Bearer "))
    assert first.body["max_tokens"] > 0  # the Messages API requires one
    assert result.usage.prompt_tokens == 150 and result.usage.completion_tokens == 30


def test_claude_gets_only_parameters_its_sdk_accepts(claude: AnthropicServer) -> None:
    from engine.judge.anthropic import accepted_parameters

    script(claude)
    create_hallucination_scorer(model="anthropic/claude-sonnet-4-5", options={"context": CONTEXT}).run(output="x")
    sent = set(claude.requests[0].body)
    assert "seed" not in sent and "reasoning_effort" not in sent
    assert ("temperature" in sent) == ("temperature" in accepted_parameters())


def test_a_malformed_claude_answer_is_asked_again(claude: AnthropicServer) -> None:
    script(claude)
    claude.on("Claims", [Reply(answer={"claim": "wrong field"}), {"claims": ["a"]}])
    result = create_hallucination_scorer(model="anthropic/claude-haiku-4-5", options={"context": CONTEXT}).run(output="x")
    assert result.score == 0
    claims = claude.requests_for("Claims")
    assert len(claims) == 2 and claims[1].is_reask
    assert result.steps["preprocess"].usage is not None and result.steps["preprocess"].usage.prompt_tokens == 100  # both attempts
    # The re-ask answers the tool call with the validation error, as the Messages API expects.
    assert any(block.get("type") == "tool_result" for message in claims[1].messages for block in message.get("content", []) if isinstance(block, dict))


def test_claude_rate_limits_and_overload_are_retried_then_typed(claude: AnthropicServer) -> None:
    script(claude)
    claude.on("Claims", [Reply.fail(429, "rate limited", headers=FAST_RETRY), Reply.fail(529, "Overloaded", headers=FAST_RETRY), {"claims": ["a"]}])
    assert create_hallucination_scorer(model="anthropic/claude-haiku-4-5", options={"context": CONTEXT}).run(output="x").score == 0

    claude.on("Claims", Reply.fail(529, "Overloaded", headers=FAST_RETRY))
    with pytest.raises(JudgeServerError, match="HTTP 529: Overloaded") as failure:
        create_hallucination_scorer(model="anthropic/claude-haiku-4-5", options={"context": CONTEXT}).run(output="y")
    assert "sk-ant-test-secret-456" not in str(failure.value)

    claude.on("Claims", Reply.fail(429, "rate limited", headers=FAST_RETRY))
    with pytest.raises(JudgeRateLimitError, match="429"):
        create_hallucination_scorer(model="anthropic/claude-haiku-4-5", options={"context": CONTEXT}).run(output="z")


def test_claude_free_text_steps_and_thinking(claude: AnthropicServer) -> None:
    script(claude)
    claude.on("Claims", Reply(answer={"claims": ["a"]}, reasoning="Let me list the claims."))
    result = create_hallucination_scorer(model="anthropic/claude-sonnet-4-5", options={"context": CONTEXT}).run(output="x")
    assert result.steps["preprocess"].thinking == "Let me list the claims."


def test_a_missing_anthropic_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the extra were not installed
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    scorer = create_hallucination_scorer(model="anthropic/claude-sonnet-4-5", options={"context": CONTEXT})
    with pytest.raises(ConfigError, match=r'pip install "llm-scorers\[anthropic\]"'):
        scorer.run(output="x")


def test_every_preset_is_data() -> None:
    for name, provider in PROVIDERS.items():
        assert provider.adapter in ("openai", "azure", "anthropic"), name
        assert provider.api_key_env or not provider.key_needed, name
