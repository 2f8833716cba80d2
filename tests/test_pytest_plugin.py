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


SCORED_TESTS = """
import pytest
from engine.testing import assert_score

@pytest.mark.parametrize("number", range(6))
def test_reply(number):
    assert_score(f"claim {number}", scorer="hallucination", context=["facts"], below=0.5)
"""


def _under_a_budget(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, budget: float, *flags: str) -> tuple[pytest.RunResult, JudgeServer]:
    """Six scored tests run under `--scorers-max-cost budget`, against a judge outside the
    suite (as a host project's real one is), whose every answer costs PER_CALL."""
    from helpers.scripted import script_priced

    from engine.testing import Reply

    judge = JudgeServer().start()
    try:
        script_priced(judge)
        judge.on("Reason", Reply(answer={"reason": "scripted"}, usage=(1000, 200), cached_tokens=400))
        pytester.makepyfile(test_budget=SCORED_TESTS)
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-host")
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--scorers-no-cache", f"--scorers-max-cost={budget:.8f}", "-rf", *flags), judge
    finally:
        judge.stop()


def test_a_session_budget_fails_every_test_past_it_and_none_passes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin took no budget: a suite of scored tests spent what it spent. Under
    `--scorers-max-cost` every judge call of the session goes through one spend limit; a test
    whose call would pass it fails saying so, every test after it too, and the summary says
    what the session spent."""
    from helpers.scripted import FIRST_CALL_HOLD, PER_CALL

    budget = 2 * 3 * PER_CALL + FIRST_CALL_HOLD  # about two tests' worth of the six
    outcome, judge = _under_a_budget(pytester, monkeypatch, budget)
    passed, failed = outcome.parseoutcomes().get("passed", 0), outcome.parseoutcomes().get("failed", 0)
    assert passed >= 1 and failed >= 1 and passed + failed == 6, outcome.stdout.str()
    output = outcome.stdout.str()
    assert output.count(f"BudgetReached: the budget of ${budget:g} (--scorers-max-cost) was reached") == failed
    assert re.search(r"test_budget\.py \.+F+ ", output), "a test passed after the budget was reached"
    spent = len(judge.requests) * PER_CALL  # every answer costs the same
    assert 0 < spent <= budget
    assert f"llm-scorers: ${spent:.4f} spent of the ${budget:g} budget (--scorers-max-cost); {failed} judge call(s) refused: the budget was reached" in output


def test_a_session_budget_must_be_positive(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    outcome = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--scorers-max-cost=0")
    assert outcome.ret == pytest.ExitCode.USAGE_ERROR
    assert "--scorers-max-cost must be a positive number of US dollars, got 0" in outcome.stderr.str()


def test_a_session_budget_holds_across_pytest_xdist_workers(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pytest-xdist worker is a process with a spend limit of its own: each holds an equal
    share, so the session in all never passes the budget."""
    from helpers.scripted import FIRST_CALL_HOLD, PER_CALL

    budget = 2 * (3 * PER_CALL + FIRST_CALL_HOLD)  # a share each that holds a test and not all three of a worker's
    outcome, judge = _under_a_budget(pytester, monkeypatch, budget, "-n", "2")
    counts = outcome.parseoutcomes()
    assert counts.get("passed", 0) >= 1 and counts.get("failed", 0) >= 1, outcome.stdout.str()
    assert f"(--scorers-max-cost ${budget:g} shared by 2 pytest-xdist workers) was reached" in outcome.stdout.str()
    assert 0 < len(judge.requests) * PER_CALL <= budget
