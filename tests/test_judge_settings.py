"""The judge settings as one value: built once (by a host application, the pytest plugin, the
command line) and passed whole, so every judge of a jury is reached the same way; a wrong
setting is refused with its name before any call; the key never shows; and the sync wrappers
keep the signatures of what they wrap."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from engine.testing import JudgeServer
from helpers.scripted import script_hallucination

from engine import ConfigError, JudgeSettings, create_scorer, run_evals
from engine.runs import arun_evals


def test_one_value_reaches_every_judge_of_a_jury_the_same_way(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    script_hallucination(judge)
    monkeypatch.delenv("OPENAI_BASE_URL")  # only the settings say where the judges are
    settings = JudgeSettings(models=("openai/judge-a", "openai/judge-b"), aggregate="strictest", base_url=judge.base_url, mode="tools", api_key="sk-from-settings")

    result = create_scorer("hallucination", judge=settings, options={"context": ["Paris is in France."]}).run(output="Paris is in France.")

    assert sorted(verdict.model for verdict in result.judges or []) == ["openai/judge-a", "openai/judge-b"]
    asked = {(request.body["model"], "tools" in request.body, request.headers.get("authorization")) for request in judge.requests}
    assert asked == {("judge-a", True, "Bearer sk-from-settings"), ("judge-b", True, "Bearer sk-from-settings")}


def test_a_keyword_sets_one_setting_over_the_value_and_a_model_replaces_its_jury(judge: JudgeServer) -> None:
    script_hallucination(judge)
    settings = JudgeSettings(models=("openai/judge-a", "openai/judge-b"), timeout=5.0)

    one = create_scorer("hallucination", "openai/judge-c", options={"context": ["c"]}, judge=settings.given(timeout=7.0))

    assert one.judge.model == "openai/judge-c" and one.judge_config.timeout == 7.0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("wrong", "named"),
    [({"aggregate": "loudest"}, "aggregate 'loudest'"), ({"timeout": float("inf")}, "judge timeout"), ({"samples": 0}, "judge samples"), ({"max_input_chars": True}, "judge max_input_chars")],
)
def test_a_wrong_setting_is_refused_by_name_before_any_call(wrong: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        JudgeSettings(**wrong)


def test_the_key_never_shows_in_the_settings() -> None:
    settings = JudgeSettings(model="openai/gpt-4o-mini", api_key="sk-secret-value")
    assert "sk-secret-value" not in repr(settings) and "sk-secret-value" not in str(settings)


def test_run_evals_keeps_the_signature_of_arun_evals(tmp_path: Path) -> None:
    wrapped, wrapper = inspect.signature(arun_evals), inspect.signature(run_evals)
    assert wrapper.parameters == wrapped.parameters and "thresholds" in wrapper.parameters
    assert run_evals.__name__ == "run_evals" and "Score every item" in (run_evals.__doc__ or "")
