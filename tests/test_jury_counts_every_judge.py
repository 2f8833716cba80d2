"""A jury's calls, tokens and cost count every judge: the run's summary, the budget and the
stored usage that `scorers results` reads (a 3-judge jury once reported one judge's calls)."""

from __future__ import annotations

from engine.judge import JudgeSettings
from pathlib import Path

import pytest
from helpers.jury import CONTEXT, script_panel
from typer.testing import CliRunner

from engine import SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.judge import TokenUsage
from engine.judge.prices import price_table
from engine.store import Store, open_store
from engine.testing import JudgeServer

MODELS = ["openai/gpt-4o-mini", "openai/gpt-4o", "openai/gpt-4.1-mini"]
ITEMS = [{"id": str(n), "input": "q", "output": f"Claim {n} is ODD", "context": CONTEXT} for n in range(4)]


def _run(judge: JudgeServer, store: Store | str) -> float | None:
    script_panel(judge, strict_models={"openai/gpt-4o"})
    jury = create_hallucination_scorer(judge=JudgeSettings(models=MODELS))
    result = run_evals(data=ITEMS, scorers=[jury], run="jury", store=store, cache=False)
    summary = result.summary["hallucination"]
    requests = len(judge.requests)
    assert requests == 4 * 3 * 3  # items x judges x steps
    assert summary.judge_calls == requests
    assert summary.usage.total_tokens == requests * 60  # the scripted server's 50 + 10 per call
    return summary.cost_usd


def _priced_each_judge() -> float:
    table = price_table()
    total = 0.0
    for model in MODELS:
        price = table.price(model)
        assert price is not None, f"the price table should know {model}"
        total += price.cost(TokenUsage(prompt_tokens=4 * 3 * 50, completion_tokens=4 * 3 * 10, total_tokens=4 * 3 * 60))
    return total


def test_a_jury_run_counts_and_prices_every_judges_calls(judge: JudgeServer, tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "results.sqlite")
    cost = _run(judge, store)
    assert cost == pytest.approx(_priced_each_judge())
    usage = store.usage("jury")
    assert sorted((row.model, row.judge_calls, row.prompt_tokens) for row in usage) == sorted(
        (model, 12, 12 * 50) for model in MODELS
    )
    shown = CliRunner().invoke(app, ["results", "--run", "jury", "--store", str(tmp_path / "results.sqlite")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    for model in MODELS:
        assert model in shown.output


def test_the_postgresql_store_counts_every_judge_too(judge: JudgeServer, postgres_url: str) -> None:
    store = open_store(postgres_url)
    assert store is not None
    _run(judge, store)
    assert sorted((row.model, row.judge_calls) for row in store.usage("jury")) == sorted((model, 12) for model in MODELS)


def test_the_budget_counts_every_judges_spend(judge: JudgeServer, tmp_path: Path) -> None:
    """A budget of two and a half items' worth of a 3-judge jury stops after three or four items (one may be under way), not all twelve."""
    script_panel(judge, strict_models=set())
    per_item = _priced_each_judge() / 4
    jury = create_hallucination_scorer(judge=JudgeSettings(models=MODELS))
    items = [{"id": str(n), "input": "q", "output": f"Claim {n}", "context": CONTEXT} for n in range(12)]
    result = run_evals(data=items, scorers=[jury], run="budget", store=str(tmp_path / "r.sqlite"), cache=False, max_cost=per_item * 2.5, concurrency=1)
    assert result.stopped is not None
    assert result.counts.outcomes["scored"] <= 4  # counting one judge, all 12 were scored
