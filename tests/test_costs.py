"""What a run costs: tokens per step, summed per scorer and run, priced from the table, shown
by `eval` and `results`, estimated before a run, and capped by a budget."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from engine.testing import JudgeServer, Reply, Request
from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, between, claims_of, numbered_claims, script_priced
from typer.testing import CliRunner

from engine import SQLiteStore, TokenUsage, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.judge.prices import cost_of, price_table

runner = CliRunner()



def write_items(path: Path, outputs: list[str]) -> Path:
    lines = [json.dumps({"id": f"i{n}", "input": f"q{n}", "output": output, "context": ["facts"]}) for n, output in enumerate(outputs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_costs_add_up_from_the_stored_token_counts(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    store = tmp_path / "results.sqlite"
    result = run_evals([{"id": f"i{n}", "output": f"ok {n}. WRONG", "context": ["facts"]} for n in range(4)], [create_hallucination_scorer()], store=store, run="priced")

    summary = result.summary["hallucination"]
    assert summary.judge_calls == 12
    assert summary.usage.prompt_tokens == 12_000 and summary.usage.cached_prompt_tokens == 4_800
    assert summary.cost_usd == pytest.approx(12 * PER_CALL)
    assert result.cost_usd == pytest.approx(12 * PER_CALL)

    with SQLiteStore(store) as results:
        [stored] = results.usage("priced")
    assert (stored.judge_calls, stored.prompt_tokens, stored.completion_tokens, stored.cached_prompt_tokens) == (12, 12_000, 2_400, 4_800)
    usage = TokenUsage(prompt_tokens=stored.prompt_tokens, completion_tokens=stored.completion_tokens, cached_prompt_tokens=stored.cached_prompt_tokens)
    assert cost_of("openai/gpt-4o-mini", usage) == pytest.approx(12 * PER_CALL)

    shown = runner.invoke(app, ["results", "--run", "priced", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    assert f"${12 * PER_CALL:.4f}" in shown.stdout and "40%" in shown.stdout  # cost, and the provider-cached share
    as_json = json.loads(runner.invoke(app, ["results", "--run", "priced", "--store", str(store), "--json"]).stdout)
    assert as_json["usage"][0]["cost_usd"] == pytest.approx(12 * PER_CALL)


def test_eval_shows_tokens_and_cost_per_scorer(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine"])
    shown = runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--run", "one"])
    assert shown.exit_code == 0, shown.output
    assert "6,000" in shown.stdout and f"${6 * PER_CALL:.4f}" in shown.stdout


def test_a_model_without_a_price_shows_tokens_only(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok"])
    shown = runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--model", "openai/local-model", "--store", str(tmp_path / "r.sqlite")])
    assert shown.exit_code == 0, shown.output
    assert "3,000" in shown.stdout and "no price" in shown.stdout and "$" not in shown.stdout


def test_a_users_price_file_extends_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai/local-model: {input: 1.0, output: 2.0}\n  openai/gpt-4o-mini: {input: 9, output: 9}\n", encoding="utf-8")
    monkeypatch.setenv("SCORERS_PRICES", str(prices))
    usage = TokenUsage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_prompt_tokens=500_000)
    assert cost_of("openai/local-model", usage) == pytest.approx(3.0)  # no cached price: cached tokens cost input
    assert cost_of("openai/gpt-4o-mini", usage) == pytest.approx(18.0)  # the user's price wins
    assert cost_of("openai/gpt-4o-2024-08-06", usage) == price_table().price("openai/gpt-4o").cost(usage)  # type: ignore[union-attr]


def test_a_broken_price_file_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine import ConfigError

    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai/x: {input: cheap, output: 1}\n", encoding="utf-8")
    monkeypatch.setenv("SCORERS_PRICES", str(prices))
    with pytest.raises(ConfigError, match=r"prices.yaml.*models.openai/x.input"):
        price_table()


def test_estimate_renders_first_prompts_and_calls_no_judge(judge: JudgeServer, tmp_path: Path) -> None:
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine", "x" * 4000])
    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--estimate", "--json"])
    assert shown.exit_code == 0, shown.output
    assert judge.requests == []
    estimate = json.loads(shown.stdout)
    [scorer] = estimate["scorers"]
    assert estimate["items"] == 3 and scorer["calls"] == 9
    assert scorer["usage"]["prompt_tokens"] > 3 * 1000  # the long output's prompt alone is ~1,000 tokens, sent to three steps
    assert estimate["cost_usd"] == pytest.approx(scorer["cost_usd"]) and scorer["cost_usd"] > 0

    human = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--estimate"])
    assert "About 9 judge calls" in human.stdout and "no judge was called" in human.stdout


def test_estimate_counts_every_cached_answer_as_free(judge: JudgeServer, tmp_path: Path) -> None:
    """Every step the cache answers is free, not only the first: an item scored before costs
    nothing (the estimate used to predict its later steps as paid)."""
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine"])
    cache = tmp_path / "c.sqlite"
    assert runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--cache", str(cache), "--store", str(tmp_path / "r.sqlite")]).exit_code == 0
    again = json.loads(runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--cache", str(cache), "--estimate", "--json"]).stdout)
    assert again["scorers"][0]["cached_calls"] == 6 and again["scorers"][0]["calls"] == 0 and again["cost_usd"] == 0
    more = write_items(tmp_path / "more.jsonl", ["ok. WRONG", "fine", "new one"])
    estimate = json.loads(runner.invoke(app, ["eval", str(more), "--scorer", "hallucination", "--cache", str(cache), "--estimate", "--json"]).stdout)
    assert estimate["scorers"][0]["cached_calls"] == 6 and estimate["scorers"][0]["calls"] == 3


def test_estimate_learns_answer_lengths_from_the_cache_and_comes_close_to_the_real_cost(judge: JudgeServer, tmp_path: Path) -> None:
    """With nothing known, answers are assumed at a documented default per step, with a wide
    range; after answers of the same steps are cached, their recorded lengths are used, and
    the estimate comes within a few percent of what the run then really costs."""

    def sized(answer: Any, request: Request) -> Reply:
        # As a provider counts: prompt tokens from the prompt's size, answers of 200 tokens.
        prompt = sum(len(str(message.get("content", ""))) for message in request.messages)
        return Reply(answer=answer, usage=(prompt // 4, 200))

    judge.on("Claims", lambda request: sized({"claims": claims_of(between(request.prompt, "output"))}, request))
    judge.on("HallucinationVerdicts", lambda request: sized(
        {"verdicts": [{"statement": claim, "verdict": "yes", "reason": "r"} for claim in numbered_claims(request.prompt)]}, request
    ))
    judge.on("Reason", lambda request: sized({"reason": "scripted"}, request))
    cache = tmp_path / "c.sqlite"
    first = write_items(tmp_path / "first.jsonl", [f"claim {n}. WRONG" for n in range(3)])
    cold = json.loads(runner.invoke(app, ["eval", str(first), "--scorer", "hallucination", "--cache", str(cache), "--estimate", "--json"]).stdout)
    assert [(length["step"], length["typical"], length["seen"]) for length in cold["scorers"][0]["answers"]] == [
        ("preprocess", 250, 0), ("analyze", 250, 0), ("generate_reason", 150, 0)
    ]
    assert cold["cost_low_usd"] < cold["cost_usd"] < cold["cost_high_usd"]
    assert runner.invoke(app, ["eval", "--reasons", "always", str(first), "--scorer", "hallucination", "--cache", str(cache), "--store", str(tmp_path / "r.sqlite")]).exit_code == 0

    later = write_items(tmp_path / "later.jsonl", [f"other {n}. WRONG" for n in range(4)])
    warm = json.loads(runner.invoke(app, ["eval", str(later), "--scorer", "hallucination", "--cache", str(cache), "--estimate", "--json"]).stdout)
    [scorer] = warm["scorers"]
    assert [(length["step"], length["typical"], length["seen"]) for length in scorer["answers"]] == [
        ("preprocess", 200, 3), ("analyze", 200, 3), ("generate_reason", 200, 3)
    ]
    paid = run_evals(str(later), [create_hallucination_scorer()], store=tmp_path / "r2.sqlite", run="paid", cache=cache)
    assert paid.cost_usd is not None
    assert warm["cost_usd"] == pytest.approx(paid.cost_usd, rel=0.05)  # prompts are counted at 4 characters a token
    assert cold["cost_low_usd"] < paid.cost_usd < cold["cost_high_usd"]  # knowing nothing, the range is wide
    shown = runner.invoke(app, ["eval", str(later), "--scorer", "hallucination", "--cache", str(cache), "--estimate"])
    words = " ".join(shown.stdout.split())
    assert "median of 7 cached answers" in words and " to $" in words  # the 3 of before, and the 4 just paid


def test_estimate_needs_no_key(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine"])
    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--model", "openai/gpt-4o", "--estimate", "--no-cache"])
    assert shown.exit_code == 0, shown.output
    assert "About 6 judge calls" in shown.stdout


def test_max_cost_stops_cleanly_and_the_run_resumes(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", [f"claim {n}" for n in range(30)])
    store = tmp_path / "r.sqlite"
    budget = 3 * 3 * PER_CALL + FIRST_CALL_HOLD  # about three items' worth, and room for a step's first call
    stopped = runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped",
                                  "--concurrency", "1", "--max-cost", str(budget)])
    assert stopped.exit_code == 1, stopped.output  # a run that did not score everything has not passed
    assert "stopped early" in stopped.stdout and "--max-cost" in stopped.stdout
    assert "the run stopped before the end" in stopped.stderr and "to score the rest" in stopped.stderr
    with SQLiteStore(store) as results:
        assert results.get_run("capped").status == "interrupted"  # type: ignore[union-attr]
        done = len(results.query(run="capped"))
    assert 3 <= done <= 5  # the budget is held before each call leaves

    resumed = runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped"])
    assert resumed.exit_code == 0, resumed.output
    with SQLiteStore(store) as results:
        assert len(results.query(run="capped")) == 30
        assert results.get_run("capped").status == "complete"  # type: ignore[union-attr]


def test_the_command_printed_to_resume_a_stopped_run_repeats_every_setting_that_decides_its_scores(judge: JudgeServer, tmp_path: Path) -> None:
    """A jury's aggregation, the judges' endpoint, mode, limits, the gate and the budget: a
    resume without any of them would score the rest differently, or spend past the budget."""
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", [f"claim {n}" for n in range(12)])
    store, cache = tmp_path / "r.sqlite", tmp_path / "answers.sqlite"
    settings = [
        "--model", "openai/gpt-4o-mini", "--model", "openai/gpt-4o", "--aggregate", "median", "--base-url", judge.base_url, "--mode", "tools",
        "--timeout", "20.0", "--retries", "1", "--rpm", "6000.0", "--tpm", "9000000.0", "--threshold", "hallucination=0.5", "--gate", "lower",
        "--min-coverage", "0.9", "--max-errors", "2", "--reasons", "always", "--concurrency", "1", "--cache", str(cache),
        "--max-cost", str(2 * 2 * 3 * PER_CALL + 2 * FIRST_CALL_HOLD),
    ]
    stopped = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "capped", *settings])
    assert stopped.exit_code == 1, stopped.output
    resume = shlex.split(stopped.stderr.split("to score the rest: ", 1)[1].strip())

    def pairs(arguments: list[str]) -> list[tuple[str, str]]:
        return [(flag, value) for flag, value in zip(arguments, arguments[1:]) if flag.startswith("--") and not value.startswith("--")]

    assert set(pairs(settings)) <= set(pairs(resume)), sorted(set(pairs(settings)) - set(pairs(resume)))
    assert resume[:3] == ["scorers", "eval", str(data)] and ("--run", "capped") in pairs(resume)
    assert runner.invoke(app, [*resume[1:-2], "--run", "capped"]).exit_code == 1  # the same budget, spent already: nothing more is judged


def test_a_run_stopped_by_its_budget_never_passes_even_with_every_threshold_met(judge: JudgeServer, tmp_path: Path) -> None:
    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", [f"claim {n}" for n in range(20)])

    result = run_evals(data, [create_hallucination_scorer()], concurrency=1, thresholds={"hallucination": 1.0}, max_cost=2 * 3 * PER_CALL + FIRST_CALL_HOLD, cache=False)

    assert result.summary["hallucination"].passed is True  # every mean so far is within its threshold ...
    assert result.counts.items < 20 and result.status == "interrupted"
    assert result.passed is False and "--max-cost" in (result.stopped or "")  # ... and still the run has not passed

    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--concurrency", "1", "--no-cache", "--json",
                                "--threshold", "hallucination=1", "--max-cost", str(2 * 3 * PER_CALL + FIRST_CALL_HOLD)])
    assert shown.exit_code == 1, shown.output
    verdict = json.loads(shown.stdout)
    assert verdict["passed"] is False and verdict["status"] == "interrupted"
    assert "(--max-cost) was reached" in verdict["stopped"]


def test_max_cost_needs_a_price(judge: JudgeServer, tmp_path: Path) -> None:
    data = write_items(tmp_path / "data.jsonl", ["ok"])
    refused = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--model", "openai/local-model", "--max-cost", "1"])
    assert refused.exit_code == 2
    assert "max_cost needs a price for openai/local-model" in refused.output
    assert judge.requests == []


def test_a_scorer_without_a_judge_costs_nothing_and_needs_no_price(judge: JudgeServer) -> None:
    from engine import create_scorer

    result = run_evals([{"input": "the cat sat down", "output": "the cat sat"}], [create_scorer("completeness")], max_cost=0.01)

    assert result.counts.completed == 1 and result.stopped is None
    assert result.summary["completeness"].judge_calls == 0 and judge.requests == []


def test_the_report_of_a_run_shows_its_calls_cost_and_cached_prompt_share(judge: JudgeServer, tmp_path: Path) -> None:
    import re

    script_priced(judge)
    data = write_items(tmp_path / "data.jsonl", ["one. WRONG", "two"])
    store = tmp_path / "r.sqlite"
    assert runner.invoke(app, ["eval", "--reasons", "always", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "r"]).exit_code == 0

    written = runner.invoke(app, ["report", "r", "--store", str(store), "-o", str(tmp_path / "r.html")])

    assert written.exit_code == 0, written.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    row = re.search(r'<tr data-usage="r:hallucination">(.*?)</tr>', html, re.S)
    assert row is not None
    cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
    # six calls of 1,000 prompt tokens (400 from the provider's prefix cache) and 200 answer tokens
    assert cells == ["r", "hallucination", "openai/gpt-4o-mini", "6", "0", "6,000", "40%", "1,200", f"${6 * PER_CALL:.4f}"]


def test_a_run_whose_every_call_fails_counts_every_call_that_left_on_every_surface(judge: JudgeServer, tmp_path: Path, monkeypatch: Any) -> None:
    """A failed call has no usage, so only answered calls were counted: eval, results, --json
    and the report said nothing of the calls a judge answering 500 had received. The calls
    that left (each retry too) are counted where they leave and stored with the run."""
    monkeypatch.setenv("SCORERS_RETRIES", "1")  # each call is sent twice: both reach the judge
    judge.fallback = Reply.fail(500, "the judge is down", headers={"retry-after-ms": "10"})  # retried at once
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine", "also fine"])
    store = str(tmp_path / "r.sqlite")

    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", store, "--run", "down", "--json"])
    sent = len(judge.requests)
    assert sent >= 6, (sent, shown.output)
    assert json.loads(shown.stdout)["judge_calls_sent"] == sent, shown.stdout
    line = f"{sent} judge call(s) sent (retries included), 0 answered"
    as_json = json.loads(runner.invoke(app, ["results", "--run", "down", "--store", store, "--json"]).stdout)
    assert as_json["judge_calls_sent"] == sent and sum(row["judge_calls"] for row in as_json["usage"]) == 0
    assert line in runner.invoke(app, ["results", "--run", "down", "--store", store]).stdout
    written = runner.invoke(app, ["report", "down", "--store", store, "-o", str(tmp_path / "down.html")])
    assert written.exit_code == 0, written.output
    assert f"down: {line}" in (tmp_path / "down.html").read_text(encoding="utf-8")

    # A rerun adds the calls it sent to the run's (eval's line and results read the same figure).
    again = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", store, "--run", "down"])
    assert len(judge.requests) > sent
    line = f"{len(judge.requests)} judge call(s) sent (retries included), 0 answered"
    assert line in " ".join(again.stdout.split()), again.stdout
    assert line in runner.invoke(app, ["results", "--run", "down", "--store", store]).stdout


def _spent(requests: list[Request]) -> float:
    """What the judge's answers cost: every answer of script_priced uses the same tokens, at its model's price."""
    usage = TokenUsage(prompt_tokens=1000, completion_tokens=200, total_tokens=1200, cached_prompt_tokens=400)
    return sum(cost_of(f"openai/{request.body['model']}", usage) or 0.0 for request in requests)


def test_scorers_run_takes_a_budget_its_every_judge_shares(judge: JudgeServer) -> None:
    """`scorers run` took no --max-cost, and one output judged by a jury (or a cascade) makes
    many calls. Under a budget every judge's calls go through one spend limit: the command
    stops with the budget's line, exit 1, having spent no more than it."""
    script_priced(judge)
    judge.on("Reason", Reply(answer={"reason": "scripted"}, usage=(1000, 200), cached_tokens=400))
    jury = ["--model", "openai/gpt-4o-mini", "--model", "openai/gpt-4.1-nano", "--model", "openai/gpt-5-nano"]
    arguments = ["run", "hallucination", "--output", "claim 1", "--context", "facts", *jury]
    unbounded = runner.invoke(app, arguments)
    assert unbounded.exit_code == 0 and len(judge.requests) == 9, unbounded.output  # three judges, three steps each
    judge.requests.clear()

    budget = 2 * PER_CALL + FIRST_CALL_HOLD  # the ninth call fits in no order (see ONE_OUTPUT_BUDGET in test_fault_matrix.py)
    stopped = runner.invoke(app, [*arguments, "--max-cost", f"{budget:.8f}"])
    assert stopped.exit_code == 1, stopped.output
    assert f"error: the budget of ${budget:g} (--max-cost) was reached: the next judge call would have passed it" in stopped.stderr
    assert "Traceback" not in stopped.output and 0 < _spent(judge.requests) <= budget and len(judge.requests) < 9


def test_a_budget_refuses_a_judge_without_a_price_on_every_surface_that_takes_one(judge: JudgeServer) -> None:
    """Live scoring's `max_cost` let the calls of a judge with no price through unbounded (its
    spend could not be counted); `scorers run` refuses it as eval does, before any call."""
    from engine import ConfigError, LiveScorer, create_scorer

    with pytest.raises(ConfigError, match="max_cost needs a price for openai/local-model"):
        LiveScorer(create_scorer("hallucination", model="openai/local-model", options={"context": ["facts"]}), max_cost=1)
    refused = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "facts", "--model", "openai/local-model", "--max-cost", "1"])
    assert refused.exit_code == 2 and "max_cost needs a price for openai/local-model; add it to your prices file" in refused.stderr, refused.output
    assert judge.requests == []
