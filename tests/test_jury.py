"""A jury of judges: several models score each output, their scores are combined, every
judge's own score and reason is kept, disagreements are flagged, and `eval` reports how
far the judges agree with each other and with the human labels."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
from pathlib import Path

import pytest
from helpers.jury import CONTEXT, script_panel
from typer.testing import CliRunner

from engine import ConfigError, JudgeServerError, Jury, SQLiteStore, create_hallucination_scorer, load_scorers, run_evals
from engine.cli import app
from engine.testing import JudgeServer

runner = CliRunner()


def test_a_jury_keeps_every_judges_score_and_flags_disagreement(judge: JudgeServer) -> None:
    script_panel(judge, strict_models={"strict"})
    jury = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/strict", "openai/lenient"]))
    assert isinstance(jury, Jury)
    result = jury.run(output="An ODD claim")
    assert result.score == 0.5  # the mean of 1 and 0
    assert [(verdict.model, verdict.score, verdict.reason) for verdict in result.judges or []] == [
        ("openai/strict", 1.0, "reason of strict"),
        ("openai/lenient", 0.0, "reason of lenient"),
    ]
    assert result.disagreement is True
    assert result.model == "openai/strict+openai/lenient"
    assert result.usage.total_tokens == 2 * 3 * 60  # both judges' three calls
    calm = jury.run(output="A plain claim")
    assert calm.score == 0 and calm.disagreement is False


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [("mean", 0.6667), ("median", 1.0), ("strictest", 1.0), ("majority", 1.0)],
)
def test_aggregations(judge: JudgeServer, aggregate: str, expected: float) -> None:
    script_panel(judge, strict_models={"a", "b"})
    jury = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/a", "openai/b", "openai/c"], aggregate=aggregate, threshold=0.5))
    result = jury.run(output="ODD")
    assert result.score == expected
    assert [verdict.passed for verdict in result.judges or []] == [False, False, True]


def test_majority_needs_a_threshold(judge: JudgeServer) -> None:
    with pytest.raises(ConfigError, match="majority vote needs a threshold"):
        create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/a", "openai/b"], aggregate="majority"))


def test_a_failing_judge_fails_the_jurys_result_by_name(judge: JudgeServer) -> None:
    script_panel(judge, strict_models=set(), failing={"down"})
    jury = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/up", "openai/down"]))
    with pytest.raises(JudgeServerError, match="judge openai/down: .*HTTP 500"):
        jury.run(output="x")


def test_judges_in_yaml(judge: JudgeServer, tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text(
        "scorers:\n  panel:\n    extends: hallucination\n    judges:\n      models: [openai/strict, openai/lenient]\n"
        "      aggregate: strictest\n",
        encoding="utf-8",
    )
    script_panel(judge, strict_models={"strict"})
    scorers = load_scorers(catalog)
    result = scorers.create("panel", options={"context": CONTEXT}).run(output="ODD")
    assert result.score == 1.0 and len(result.judges or []) == 2
    single = scorers.create("panel", model="openai/lenient", options={"context": CONTEXT}).run(output="ODD")
    assert single.score == 0.0 and single.judges is None  # an explicit model replaces the jury


def test_a_jury_in_yaml_is_checked_at_load(tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("scorers:\n  panel:\n    extends: hallucination\n    judges: [openai/only-one]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"scorers.yaml:4.*judges"):
        load_scorers(catalog)


def test_eval_reports_agreement_between_judges_and_with_humans(judge: JudgeServer, tmp_path: Path) -> None:
    script_panel(judge, strict_models={"strict"})
    # Humans call the ODD items hallucinated: the strict judge agrees with them, the lenient one does not.
    items = [{"id": f"i{n}", "input": "q", "output": output, "context": CONTEXT, "expected": {"hallucination": 1.0 if "ODD" in output else 0.0}}
             for n, output in enumerate(["ODD one", "plain", "ODD two", "plain too"])]
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(item) for item in items) + "\n", encoding="utf-8")
    store = tmp_path / "results.sqlite"
    args = ["eval", str(data), "--scorer", "hallucination", "--model", "openai/strict", "--model", "openai/lenient",
            "--threshold", "hallucination=0.5", "--store", str(store), "--run", "panel"]
    shown = runner.invoke(app, args)
    assert "jury of 2" in shown.stdout and "2 of 4 item(s) flagged" in shown.stdout
    # Labels 1.0 and 0.0 on a 0..1 scorer are flag and pass too: F1 first, then the numeric figures.
    line = " ".join(shown.stdout.split())
    assert "openai/strict against the human labels: 4 labelled: F1 1 (" in line and "Spearman rho 1 (" in line
    as_json = runner.invoke(app, [*args[:-2], "--run", "panel-json", "--json"])
    jury = json.loads(as_json.stdout)["summary"]["hallucination"]["jury"]
    assert jury["kappa"] == 0.0  # the lenient judge always passes: no agreement beyond chance
    assert jury["with_humans"]["openai/strict"]["numeric"]["mean_abs_error"]["value"] == 0
    assert jury["with_humans"]["openai/lenient"]["numeric"]["mean_abs_error"]["value"] == 0.5
    with SQLiteStore(store) as results:
        saved = results.query(run="panel", scorer="hallucination")
    assert all(record.judges is not None and len(record.judges) == 2 for record in saved)
    assert sum(bool(record.disagreement) for record in saved) == 2


def test_kappa_of_judges_that_agree_beyond_chance(judge: JudgeServer) -> None:
    script_panel(judge, strict_models={"a", "b"})
    jury = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/a", "openai/b"], threshold=0.5))
    result = run_evals([{"output": "ODD"}, {"output": "plain"}, {"output": "ODD x"}], jury)
    summary = result.summary["hallucination"].jury
    assert summary is not None and summary.kappa == 1.0 and summary.disagreements == 0


def test_a_jury_from_the_command_line_shows_each_judge(judge: JudgeServer) -> None:
    script_panel(judge, strict_models={"strict"})
    shown = runner.invoke(
        app, ["run", "hallucination", "--output", "ODD", "--context", "facts", "--model", "openai/strict", "--model", "openai/lenient", "--aggregate", "strictest"]
    )
    assert shown.exit_code == 0, shown.output
    assert "hallucination: 1" in shown.stdout
    assert "openai/lenient: 0 - reason of lenient" in shown.stdout
    assert "The judges disagree" in shown.stdout
    lonely = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c", "--aggregate", "mean"])
    assert lonely.exit_code == 2 and "give --model two or more times" in lonely.output


def test_a_store_from_before_juries_gains_their_columns(tmp_path: Path) -> None:
    import sqlite3

    from engine.store import sqlite_schema as store_module
    from engine.store.base import ResultRecord

    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    ddl = "\n".join(line for line in store_module._RESULTS_DDL.splitlines() if not line.strip().startswith(("judges", "disagreement")))
    old.executescript(ddl + "\nPRAGMA user_version=1;")
    old.close()
    with SQLiteStore(path) as results:
        results.save(ResultRecord(run="r", source="batch", item_id="i", scorer_id="s", score=0.5, disagreement=True))
        assert results.query(run="r")[0].disagreement is True
