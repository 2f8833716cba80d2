"""The pytest plugin as a host project meets it: installed through its entry point, the
runnable example of docs/pytest.md passes, and a failing assertion says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.testing import JudgeServer

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each test runs pytest in a subprocess

DOCS = Path(__file__).resolve().parent.parent / "docs" / "pytest.md"


def runnable_example() -> str:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## A runnable example, offline", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "docs/pytest.md lost its runnable example"
    return found.group(1)


def test_the_documented_example_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_docs_example=runnable_example())
    outcome = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=4)


def test_a_failing_score_shows_reason_claims_and_verdicts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_failing="""
from engine.testing import assert_score

def test_reply(scorers_judge):
    scorers_judge.on("Claims", {"claims": ["The window is 60 days."]})
    scorers_judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "The window is 60 days.", "verdict": "yes", "reason": "the policy says 30"}]})
    scorers_judge.on("Reason", {"reason": "It gives 60 days; the policy says 30."})
    assert_score("You have 60 days.", scorer="hallucination", context=["30 days"], below=0.2)
"""
    )
    outcome = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    outcome.assert_outcomes(failed=1)
    output = outcome.stdout.str()
    assert "hallucination scored 1, expected below 0.2 (lower is better)" in output
    assert "reason: It gives 60 days; the policy says 30." in output
    assert "- The window is 60 days." in output
    assert "verdict: yes; reason: the policy says 30" in output


def test_scorers_model_option_chooses_the_judge(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_model="""
def test_model(scorers):
    assert scorers.judge.model == "ollama/llama3.1"
    assert scorers.create("hallucination", options={"context": ["c"]}).judge.model == "ollama/llama3.1"
"""
    )
    outcome = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--scorers-model", "ollama/llama3.1")
    outcome.assert_outcomes(passed=1)
    assert "llm-scorers judge: ollama/llama3.1" in outcome.stdout.str()


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    shown = pytester.runpytest_subprocess("--help").stdout.str()
    assert "--scorers-model=PROVIDER/MODEL" in shown and "--scorers-no-cache" in shown


def test_a_host_catalog_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nscorers_catalog = catalog/scorers.yaml\n")
    catalog = pytester.mkdir("catalog")
    (catalog / "scorers.yaml").write_text("scorers:\n  strict_hallucination:\n    extends: hallucination\n    name: Strict\n", encoding="utf-8")
    pytester.makepyfile(
        test_catalog="""
def test_catalog(scorers):
    assert "strict_hallucination" in scorers.catalog
"""
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_unchanged_suite_run_again_asks_the_judge_nothing(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A judge outside the suite, as a host project's real one is (the scripted `scorers_judge`
    # fixture answers per test and so is never cached).
    judge = JudgeServer().start()
    try:
        judge.on("Claims", {"claims": ["The window is 30 days."]})
        judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "The window is 30 days.", "verdict": "no", "reason": "stated"}]})
        judge.on("Reason", {"reason": "Supported."})
        pytester.makepyfile(
            test_cached="""
from engine.testing import assert_score

def test_reply():
    assert_score("You have 30 days.", scorer="hallucination", context=["30 days"], below=0.2)
"""
        )
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-host")
        monkeypatch.setenv("SCORERS_CACHE", str(tmp_path / "suite-cache.sqlite"))
        asked = []
        for flags in ([], [], ["--scorers-no-cache"]):
            before = len(judge.requests)
            pytester.runpytest_subprocess("-p", "no:cacheprovider", *flags).assert_outcomes(passed=1)
            asked.append(len(judge.requests) - before)
    finally:
        judge.stop()
    assert asked == [3, 0, 3]
