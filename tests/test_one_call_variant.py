"""The one-call variant of hallucination (examples/variants/one-call/, issue 35): claims and
their verdicts in one answer, written as data; `scorers compare` on the shipped labelled
HaluEval items shows what it changes, with intervals. Against the scripted judge the figures
say nothing about a real judge (it answers both variants by the same word overlap): what this
shows is the calls each makes and that the comparison runs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from engine import load_scorers, run_evals
from engine.cli import app
from engine.testing import JudgeServer

from helpers.scripted import script_word_overlap

ROOT = Path(__file__).resolve().parent.parent
VARIANT = ROOT / "examples" / "variants" / "one-call" / "scorers.yaml"
HALUEVAL = ROOT / "examples" / "halueval_qa.jsonl"
runner = CliRunner()


def test_the_variant_loads_clean_and_asks_one_call_an_item_and_a_reason_for_what_fails(judge: JudgeServer) -> None:
    checked = runner.invoke(app, ["check", str(VARIANT)])
    assert checked.exit_code == 0 and "warning" not in checked.stdout, checked.output
    script_word_overlap(judge)
    variant = load_scorers(VARIANT).create("hallucination")
    result = run_evals(HALUEVAL, [variant], cache=False, reasons="failing")
    assert result.counts.completed == 20
    failing = sum(1 for item in result.items if item.results["hallucination"].score and item.results["hallucination"].score > 0.5)
    assert len(judge.requests_for("ClaimVerdicts")) == 20 and judge.requests_for("Claims") == []
    assert len(judge.requests_for("Reason")) == failing


def test_compare_on_the_labelled_items_shows_what_it_changes_with_intervals(judge: JudgeServer, tmp_path: Path) -> None:
    script_word_overlap(judge)
    store = tmp_path / "r.sqlite"
    args = ["compare", str(HALUEVAL), "--scorer", "hallucination", "--config", str(VARIANT), "--store", str(store), "--run", "one-call", "--json"]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    comparison = json.loads(shown.stdout)["comparison"]
    figures = {figure["name"]: figure for figure in comparison["figures"]}
    assert {"mean_abs_error", "spearman"} <= set(figures)  # its labels are the scores a perfect scorer gives
    delta = figures["mean_abs_error"]["delta"]
    assert delta["low"] is not None and delta["high"] is not None and delta["low"] <= delta["value"] <= delta["high"]
    assert len(judge.requests_for("ClaimVerdicts")) == 20 and len(judge.requests_for("Claims")) == 20
