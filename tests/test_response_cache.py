"""The response cache: a question asked before is answered from disk, and only then."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
from pathlib import Path
from typing import Any

import pytest
from engine.testing import JudgeServer, Reply
from helpers.catalogs import catalog_with_edited
from helpers.providers import CONTEXT, FAST_RETRY, script
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import JudgeConfig, SQLiteStore, builtin_catalog, create_hallucination_scorer, load_scorers, run_evals
from engine.cli import app
from engine.judge import JudgeRequest, OpenAIJudge, Sampling
from engine.judge.middleware.shared import cache_key

runner = CliRunner()


def items(outputs: list[str]) -> list[dict[str, Any]]:
    return [{"id": f"i{n}", "input": f"q{n}", "output": output, "context": ["facts"]} for n, output in enumerate(outputs)]


# One test per part of the key: it changes when, and only when, the answer could change.

BASE_CONFIG = {"model": "openai/gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-one", "mode": "json_schema"}
PLAN = builtin_catalog().plan("hallucination")
BASE_REQUEST = JudgeRequest(
    messages=[{"role": "system", "content": "You judge."}, {"role": "user", "content": "Extract the claims of: it rains."}],
    sampling=PLAN.step("preprocess").sampling,  # type: ignore[union-attr]
    step="preprocess",
    response_model=PLAN.step("preprocess").answer_model,  # type: ignore[union-attr]
)


def key(config: dict[str, Any] | None = None, **request: Any) -> str:
    judge = OpenAIJudge(JudgeConfig(**{**BASE_CONFIG, **(config or {})}))
    fields = {"messages": BASE_REQUEST.messages, "sampling": BASE_REQUEST.sampling, "step": BASE_REQUEST.step, "response_model": BASE_REQUEST.response_model}
    return cache_key(judge.identity, JudgeRequest(**{**fields, **request}))


def test_the_same_question_has_the_same_key() -> None:
    assert key() == key()


def test_the_model_is_part_of_the_key() -> None:
    assert key({"model": "openai/gpt-4o"}) != key()


def test_the_endpoint_is_part_of_the_key() -> None:
    assert key({"base_url": "http://127.0.0.1:10/v1"}) != key()


def test_the_structured_output_mode_is_part_of_the_key() -> None:
    assert key({"mode": "tools"}) != key()


def test_the_exact_messages_are_part_of_the_key() -> None:
    changed = [BASE_REQUEST.messages[0], {"role": "user", "content": "Extract the claims of: it rains!"}]
    assert key(messages=changed) != key()
    assert key(messages=[{"role": "user", "content": BASE_REQUEST.messages[1]["content"]}]) != key()  # no system message


def test_the_answer_schema_is_part_of_the_key() -> None:
    other = PLAN.step("analyze").answer_model  # type: ignore[union-attr]
    assert key(response_model=other) != key()
    assert key(response_model=None) != key()


def test_the_sampling_settings_are_part_of_the_key() -> None:
    assert key(sampling=Sampling(temperature=0.7)) != key()
    assert key(sampling=Sampling(max_tokens=100)) != key()
    assert key(sampling=Sampling(seed=7)) != key()


def test_the_sample_index_is_part_of_the_key() -> None:
    assert key(sample=1) != key()


def test_what_does_not_decide_the_answer_is_not_part_of_the_key() -> None:
    # The key, timeouts, HTTP retries, rate limits, re-asks and the step's name do not change
    # what the judge answers: the same question asked under them is the same question.
    assert key({"api_key": "sk-two", "timeout": 5, "http_retries": 0, "rpm": 10}) == key()
    assert key(sampling=BASE_REQUEST.sampling.model_copy(update={"reasks": 5}), step="other") == key()


# What a user sees.


def test_an_unchanged_evaluation_under_a_new_run_name_makes_no_judge_call(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"
    data = items(["ok. WRONG", "ok", "fine. WRONG. WRONG"])
    scorer = create_hallucination_scorer()

    first = run_evals(data, [scorer], store=store, run="monday")
    sent = len(judge.requests)
    second = run_evals(data, [scorer], store=store, run="tuesday")

    assert sent == 9 and len(judge.requests) == sent  # not one more request
    assert second.scores == first.scores
    assert second.summary["hallucination"].cached_calls == 9 and second.summary["hallucination"].judge_calls == 0
    assert second.summary["hallucination"].cost_usd == 0
    with SQLiteStore(store) as results:
        steps = results.query(run="tuesday")[0].steps
    assert all(step.cached and step.usage is None for step in steps.values() if step.kind != "score")


def test_editing_the_reason_template_resends_only_the_reason_step(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(["ok. WRONG", "fine"])
    run_evals(data, [create_hallucination_scorer()], run="before")
    judge.requests.clear()

    edited = load_scorers(catalog_with_edited(tmp_path, "hallucination/reason.j2", "Keep it short."))
    run_evals(data, [edited.create("hallucination")], run="after")

    assert [request.schema_name for request in judge.requests] == ["Reason", "Reason"]


def test_editing_the_analyze_template_resends_it_and_the_steps_that_read_its_answer(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(["ok. WRONG"])
    run_evals(data, [create_hallucination_scorer()], run="before")
    judge.requests.clear()
    judge.on("HallucinationVerdicts", lambda request: {"verdicts": [
        {"statement": "ok", "verdict": "no", "reason": "edited prompt, new reasons"},
        {"statement": "WRONG", "verdict": "yes", "reason": "edited prompt, new reasons"},
    ]})

    edited = load_scorers(catalog_with_edited(tmp_path, "hallucination/analyze.j2", "Be strict."))
    run_evals(data, [edited.create("hallucination")], run="after")

    # The claims are not asked again; the verdicts are, and so is the reason that quotes them.
    assert [request.schema_name for request in judge.requests] == ["HallucinationVerdicts", "Reason"]


def test_identical_questions_in_flight_together_are_sent_once(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.latency = 0.3
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("scorers:\n  twin-a:\n    extends: hallucination\n  twin-b:\n    extends: hallucination\n", encoding="utf-8")
    host = load_scorers(catalog)

    result = run_evals(items(["ok. WRONG"]), [host.create("twin-a"), host.create("twin-b")])

    assert result.scores == {"twin-a": 0.5, "twin-b": 0.5}
    assert len(judge.requests) == 3  # one of each step, shared by the two scorers


def test_failures_are_not_cached(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = items(["FAIL here"])
    first = run_evals(data, [create_hallucination_scorer()], run="one")
    second = run_evals(data, [create_hallucination_scorer()], run="two")

    assert first.counts.failed == 1 and second.counts.failed == 1
    assert len(judge.requests_for("Claims")) == 2  # asked again: an error is never served from the cache


def test_a_cached_answer_that_no_longer_passes_the_rules_is_asked_again(judge: JudgeServer, tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}, {"statement": "b", "verdict": "no", "reason": "r"}]})
    judge.on("Reason", {"reason": "fine"})
    scorer = create_hallucination_scorer(options={"context": ["facts"]}, cache=cache)
    scorer.run(output="a. b")
    # Poison the stored verdicts: one verdict for two claims breaks the step's rule.
    import sqlite3

    with sqlite3.connect(cache) as db:
        db.execute("UPDATE responses SET answer = ? WHERE step = 'analyze'", (json.dumps({"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}]}),))
    judge.requests.clear()

    result = scorer.run(output="a. b")

    assert [request.schema_name for request in judge.requests] == ["HallucinationVerdicts"]
    assert len(result.analyze_step_result["verdicts"]) == 2


def test_scoring_one_output_does_not_cache_unless_asked(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    plain = create_hallucination_scorer(options={"context": ["facts"]})
    plain.run(output="ok")
    plain.run(output="ok")
    assert len(judge.requests) == 6

    judge.requests.clear()
    cached = create_hallucination_scorer(options={"context": ["facts"]}, cache=tmp_path / "mine.sqlite")
    cached.run(output="ok")
    cached.run(output="ok")
    assert len(judge.requests) == 3


def test_run_evals_without_the_cache_asks_every_time(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = items(["ok"])
    run_evals(data, [create_hallucination_scorer()], cache=False)
    run_evals(data, [create_hallucination_scorer()], cache=False)
    assert len(judge.requests) == 6


def test_cache_commands_show_and_clear_what_is_kept(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(item) for item in items(["ok. WRONG", "fine"])) + "\n", encoding="utf-8")
    cache = tmp_path / "answers.sqlite"
    store = tmp_path / "results.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--cache", str(cache), "--reasons", "always"]
    assert runner.invoke(app, [*arguments, "--run", "one"]).exit_code == 0
    again = runner.invoke(app, [*arguments, "--run", "two"])
    assert again.exit_code == 0, again.output
    assert len(judge.requests) == 6

    stats = runner.invoke(app, ["cache", "stats", "--cache", str(cache), "--json"])
    assert stats.exit_code == 0, stats.output
    shown = json.loads(stats.stdout)
    assert shown["entries"] == 6 and shown["models"] == {"openai/gpt-4o-mini": 6}
    assert [session[1:] for session in shown["recent"]][:2] == [[6, 0], [0, 6]]  # newest first: all hits, then all misses

    kept = runner.invoke(app, ["cache", "clear", "--cache", str(cache), "--older-than", "30d"])
    assert kept.exit_code == 0 and "deleted 0" in kept.stdout
    other = runner.invoke(app, ["cache", "clear", "--cache", str(cache), "--model", "openai/other"])
    assert "deleted 0" in other.stdout
    cleared = runner.invoke(app, ["cache", "clear", "--cache", str(cache), "--model", "openai/gpt-4o-mini"])
    assert "deleted 6" in cleared.stdout

    assert runner.invoke(app, [*arguments, "--run", "three", "--no-cache"]).exit_code == 0
    assert len(judge.requests) == 12


def test_a_bad_age_is_one_clear_line(tmp_path: Path) -> None:
    cache = tmp_path / "answers.sqlite"
    from engine.judge import ResponseCache

    ResponseCache(cache).close()
    result = runner.invoke(app, ["cache", "clear", "--cache", str(cache), "--older-than", "a month"])
    assert result.exit_code == 2
    assert "--older-than 'a month': expected a number and a unit" in result.output


@pytest.mark.parametrize("mode", ["tools", "json", "md_json"])
def test_cached_answers_are_served_in_every_structured_mode(judge: JudgeServer, tmp_path: Path, mode: str) -> None:
    script_hallucination(judge)
    scorer = create_hallucination_scorer(options={"context": ["facts"]}, cache=tmp_path / "c.sqlite", judge=JudgeSettings(mode=mode))
    first = scorer.run(output="ok. WRONG")
    second = scorer.run(output="ok. WRONG")
    assert len(judge.requests) == 3
    assert second.score == first.score == 0.5


def test_claude_answers_are_cached_and_its_429s_reach_the_limiter(claude: Any, tmp_path: Path) -> None:
    from engine.judge import throttling

    script(claude)
    claude.on("Claims", [Reply.fail(429, "rate limited", headers=FAST_RETRY), {"claims": ["a"]}])
    model = "anthropic/claude-3-5-haiku"  # this test's own model: limiters are per model and process
    scorer = create_hallucination_scorer(model=model, options={"context": CONTEXT}, cache=tmp_path / "c.sqlite")

    first = scorer.run(output="x")
    sent = len(claude.requests)
    second = scorer.run(output="x")

    assert len(claude.requests) == sent and second.score == first.score
    assert any(stats.model == model and stats.rate_limited == 1 for stats in throttling())
