from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing import JudgeServer


@pytest.fixture(scope="session")
def judge_server() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def judge(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    """A scripted OpenAI-compatible server, reset for this test; the environment points the
    `openai` provider at it exactly as a user would point it at vLLM or llama.cpp's server."""
    judge_server.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-123")
    for name in ("SCORERS_MODEL", "SCORERS_MODE"):
        monkeypatch.delenv(name, raising=False)
    return judge_server


@pytest.fixture(autouse=True)
def _no_ambient_judge(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never reach a judge configured on the developer's machine, nor its response
    cache or price file: each test gets a response cache of its own."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SCORERS_MODEL", "SCORERS_MODE", "OLLAMA_BASE_URL", "SCORERS_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCORERS_CACHE", str(tmp_path_factory.mktemp("cache") / "responses.sqlite"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
