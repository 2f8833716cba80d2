from __future__ import annotations

from collections.abc import Iterator

import pytest

from judge_server import JudgeServer


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    """A scripted OpenAI-compatible server; the environment points the `openai` provider at it
    exactly as a user would point it at vLLM or llama.cpp's server."""
    server = JudgeServer().start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-123")
    for name in ("SCORERS_MODEL", "SCORERS_MODE"):
        monkeypatch.delenv(name, raising=False)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _no_ambient_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a judge configured on the developer's machine."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SCORERS_MODEL", "SCORERS_MODE", "OLLAMA_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
