"""Reasons as a choice a run makes (issue 35): always, only for items that do not pass,
never, or on demand when a stored item is opened. The score never depends on it, and a
reason not asked costs no judge call."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import ConfigError, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.scoring.pass_line import passes
from engine.store import open_store
from engine.testing import JudgeServer

from helpers.scripted import script_hallucination

runner = CliRunner()


def items(tmp_path: Path) -> Path:
    """Four items: two hallucinate one claim of one (score 1), two of two (score 0.5), and
    four make none (score 0)."""
    outputs = ["ok", "WRONG", "ok. WRONG", "fine", "WRONG again", "ok. fine", "ok. WRONG too", "good"]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{n}", "output": output, "context": ["facts"]}) + "\n" for n, output in enumerate(outputs)), encoding="utf-8")
    return path


def test_a_score_at_the_threshold_passes() -> None:
    assert passes(0.5, 0.5, "lower_is_better") and passes(0.5, 0.5, "higher_is_better")
    assert not passes(0.51, 0.5, "lower_is_better") and not passes(0.49, 0.5, "higher_is_better")


@pytest.mark.parametrize(("policy", "asked"), [("always", 8), ("failing", 2), ("never", 0), ("on-demand", 0)])
def test_each_policy_asks_for_the_reasons_it_names_and_scores_the_same(judge: JudgeServer, tmp_path: Path, policy: str, asked: int) -> None:
    script_hallucination(judge)
    result = run_evals(items(tmp_path), [create_hallucination_scorer()], cache=False, reasons=policy)  # type: ignore[arg-type]
    assert [item.results["hallucination"].score for item in result.items] == [0, 1, 0.5, 0, 1, 0, 0.5, 0]
    assert len(judge.requests_for("Reason")) == asked
    for item in result.items:
        outcome = item.results["hallucination"]
        assert outcome.result is not None
        record = outcome.result.steps["generate_reason"]
        wanted = policy == "always" or (policy == "failing" and outcome.score == 1)
        assert (outcome.result.reason is not None) == wanted
        assert record.not_asked == (None if wanted else ("passing" if policy == "failing" else policy))


def test_failing_reads_the_runs_threshold(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    run_evals(items(tmp_path), [create_hallucination_scorer()], cache=False, reasons="failing", thresholds={"hallucination": 0.2})
    assert len(judge.requests_for("Reason")) == 4  # 1, 0.5, 1, 0.5 are past 0.2


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ConfigError, match="reasons 'sometimes': choose one of always, failing, unsure, never, on-demand"):
        create_hallucination_scorer(judge=JudgeSettings(api_key="sk-x")).with_reasons("sometimes")  # type: ignore[arg-type]


def test_an_unknown_policy_on_the_command_line_names_its_flag_once(judge: JudgeServer, tmp_path: Path) -> None:
    refused = runner.invoke(app, ["eval", str(items(tmp_path)), "--scorer", "hallucination", "--reasons", "sometimes", "--store", str(tmp_path / "r.sqlite")])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == "error: reasons 'sometimes': choose one of always, failing, unsure, never, on-demand (--reasons)"
    escalate = runner.invoke(app, ["eval", str(items(tmp_path)), "--scorer", "hallucination", "--escalate-margin", "0.1", "--store", str(tmp_path / "r.sqlite")])
    assert escalate.exit_code == 2 and "--escalate-margin goes with --escalate-to" in escalate.stderr and "(--" + "--" not in escalate.stderr


def test_eval_asks_only_for_the_reasons_of_failing_items_by_default(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    default = runner.invoke(app, ["eval", str(items(tmp_path)), "--scorer", "hallucination", "--store", str(store), "--run", "ci", "--no-cache"])
    assert default.exit_code == 0, default.output
    assert len(judge.requests_for("Reason")) == 2
    judge.requests.clear()
    every = runner.invoke(app, ["eval", str(items(tmp_path)), "--scorer", "hallucination", "--store", str(store), "--run", "all", "--no-cache", "--reasons", "always"])
    assert every.exit_code == 0 and len(judge.requests_for("Reason")) == 8
    worst = runner.invoke(app, ["results", "--run", "ci", "--store", str(store), "--worst", "8"])
    assert "(not asked: passing;" in worst.stdout
    shown = json.loads(runner.invoke(app, ["results", "--run", "ci", "--store", str(store), "--worst", "8", "--json"]).stdout)
    left_out = {record["item_id"]: record["steps"]["generate_reason"]["not_asked"] for record in shown["worst"]["hallucination"]}
    assert left_out == {"i1": None, "i4": None, **{item: "passing" for item in ("i0", "i2", "i3", "i5", "i6", "i7")}}


def test_an_on_demand_reason_is_asked_once_when_its_item_is_opened(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    ran = runner.invoke(app, ["eval", str(items(tmp_path)), "--scorer", "hallucination", "--store", str(store), "--run", "later", "--no-cache", "--reasons", "on-demand"])
    assert ran.exit_code == 0, ran.output
    assert judge.requests_for("Reason") == []

    opened = runner.invoke(app, ["results", "--run", "later", "--store", str(store), "--item", "i1"])
    assert opened.exit_code == 0, opened.output
    assert "hallucination (openai/gpt-4o-mini): 1" in opened.stdout and "scripted reason" in opened.stdout
    assert len(judge.requests_for("Reason")) == 1
    assert '"WRONG": the' not in judge.requests_for("Reason")[0].prompt and "The score is 1 " in judge.requests_for("Reason")[0].prompt
    again = runner.invoke(app, ["results", "--run", "later", "--store", str(store), "--item", "i1"])
    assert "scripted reason" in again.stdout and len(judge.requests_for("Reason")) == 1  # saved: asked once
    saved = open_store(str(store))
    assert saved is not None
    (record,) = saved.item_records("later", "i1")
    assert record.reason == "scripted reason" and record.steps["generate_reason"].not_asked is None and record.score == 1
    saved.close()

    other = runner.invoke(app, ["results", "--run", "later", "--store", str(store), "--item", "i2", "--model", "openai/gpt-4o"])
    assert other.exit_code == 2
    assert "hallucination as set up now is not the scorer that scored item 'i2' of run 'later'" in " ".join(other.stderr.split())


def test_run_says_when_it_asked_for_no_reason(judge: JudgeServer) -> None:
    script_hallucination(judge)
    shown = runner.invoke(app, ["run", "hallucination", "--output", "ok. WRONG", "--context", "facts", "--reasons", "never"])
    assert shown.exit_code == 0, shown.output
    assert "hallucination: 0.5" in shown.stdout and "(no reason asked of the judge: --reasons never; --reasons always asks for it)" in shown.stdout
    assert judge.requests_for("Reason") == []
