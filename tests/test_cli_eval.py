"""`scorers eval` and `scorers results`, as a user runs them."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from helpers.stopped_runs import has_saved, stop_mid_run
from helpers.scripted import outputs_judged, script_hallucination
from typer.testing import CliRunner

from engine import SQLiteStore
from engine.cli import app
from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "halueval_qa.jsonl"
runner = CliRunner()


def write_items(path: Path, outputs: list[str]) -> Path:
    lines = [json.dumps({"id": f"i{n}", "input": f"q{n}", "output": output, "context": ["facts"]}) for n, output in enumerate(outputs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_readme_command_scores_the_example_data(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"

    result = runner.invoke(app, ["eval", str(EXAMPLE), "--scorer", "hallucination", "--store", str(store), "--run", "example"])

    assert result.exit_code == 0, result.output
    assert "hallucination" in result.stdout and "lower" in result.stdout
    assert "Saved as run example" in result.stdout
    assert len(outputs_judged(judge)) == 20
    with SQLiteStore(store) as saved:
        records = saved.query(run="example")
    assert len(records) == 20 and all(record.error is None for record in records)
    assert {record.metadata["label"] for record in records} == {"faithful", "hallucinated"}


def test_without_a_judge_it_says_how_to_set_one_in_one_line_and_starts_nothing(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"

    result = runner.invoke(app, ["eval", str(EXAMPLE), "--scorer", "hallucination", "--store", str(store)])

    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "no judge configured" in lines[0] and "OPENAI_API_KEY" in lines[0] and "OPENAI_BASE_URL" in lines[0]
    assert not store.exists()


def test_summary_json_and_threshold_verdict(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "ok", "FAIL"])
    store = tmp_path / "results.sqlite"

    passing = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--threshold", "hallucination=0.3", "--max-errors", "1", "--json"])
    failing = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--threshold", "hallucination=0.2"])

    assert passing.exit_code == 0, passing.output
    summary = json.loads(passing.stdout)
    assert summary["scores"] == {"hallucination": 0.25} and summary["passed"] is True
    assert summary["summary"]["hallucination"]["errors"] == 1
    assert summary["errors"][0]["stage"] == "scorer" and "HTTP 400" in summary["errors"][0]["error"]
    assert failing.exit_code == 1
    assert "FAIL" in failing.stdout  # the verdict column
    assert "HTTP 400" in failing.stdout  # the failed item, with its cause


def test_nothing_scored_is_a_failure(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["FAIL", "FAIL"])

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite")])

    assert result.exit_code == 1
    assert "nothing was scored by hallucination" in result.stderr


def test_results_lists_runs_and_shows_one_in_detail(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok", "WRONG", "ok. WRONG"])
    store = tmp_path / "results.sqlite"
    assert runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "first"]).exit_code == 0

    listed = runner.invoke(app, ["results", "--store", str(store), "--json"])
    detail = runner.invoke(app, ["results", "--store", str(store), "--run", "first", "--json"])
    table = runner.invoke(app, ["results", "--store", str(store)])

    assert listed.exit_code == 0, listed.output
    (run,) = json.loads(listed.stdout)
    assert run["name"] == "first" and run["status"] == "complete" and run["items"] == 3
    assert run["scorers"][0]["mean"] == pytest.approx(0.5)
    payload = json.loads(detail.stdout)
    assert [record["item_id"] for record in payload["worst"]["hallucination"]] == ["i1", "i2", "i0"]
    assert "first" in table.stdout
    unknown = runner.invoke(app, ["results", "--store", str(store), "--run", "nope"])
    assert unknown.exit_code == 2 and "no run named 'nope'" in unknown.stderr


def test_results_without_a_store_says_so(tmp_path: Path) -> None:
    result = runner.invoke(app, ["results", "--store", str(tmp_path / "missing.sqlite")])
    assert result.exit_code == 2 and "no results store" in result.stderr
    assert not (tmp_path / "missing.sqlite").exists()


def test_ctrl_c_keeps_completed_items_and_the_same_run_resumes(judge: JudgeServer, tmp_path: Path) -> None:
    # Long enough (about 8 s at concurrency 2) that Ctrl-C always lands mid-run.
    script_hallucination(judge, delay=0.4)
    data = write_items(tmp_path / "data.jsonl", [f"answer {n}. WRONG" for n in range(40)])
    store = tmp_path / "results.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "nightly", "--concurrency", "2"]
    stopped = stop_mid_run(arguments, tmp_path, signal.SIGINT, when=has_saved(store, "nightly", at_least=3))
    stderr = stopped.stderr

    assert stopped.returncode == 130, stderr
    assert "interrupted" in stderr and "--run nightly" in stderr
    with SQLiteStore(store) as results:
        assert results.get_run("nightly").status == "interrupted"  # type: ignore[union-attr]
        done = {record.item_id for record in results.query(run="nightly", errors=False)}
    assert 3 <= len(done) < 40
    judge.requests.clear()
    script_hallucination(judge)

    resumed = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "nightly", "--json"])

    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert summary["counts"]["resumed"] == len(done) and summary["counts"]["completed"] == 40
    # Only the items not saved are judged again, each once; those whose first questions were
    # answered before Ctrl-C get these answers from the response cache instead.
    not_done = {f"answer {n}. WRONG" for n in range(40) if f"i{n}" not in done}
    asked = outputs_judged(judge)
    assert set(asked) <= not_done and len(asked) == len(set(asked))
    assert summary["summary"]["hallucination"]["cached_calls"] >= len(not_done) - len(asked)
    assert summary["scores"] == {"hallucination": 0.5}


def test_the_summary_shows_agreement_with_human_scores(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "labelled.jsonl"
    rows = [{"id": str(n), "output": output, "context": ["c"], "expected": {"hallucination": human}} for n, (output, human) in enumerate([("ok", 0), ("WRONG", 1), ("ok. WRONG", 1)])]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())
    assert "hallucination against 3 human label(s)" in shown
    assert "Spearman rho │ 0.866 │" in shown and "mean absolute error │ 0.167 │" in shown
    assert "hallucination: worst disagreements (1 in all)" in shown
    as_json = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--run", "again", "--json"])
    agreement = json.loads(as_json.stdout)["summary"]["hallucination"]["agreement"]
    assert agreement["labelled"] == 3
    assert agreement["numeric"]["spearman"]["value"] == 0.866 and agreement["numeric"]["mean_abs_error"]["value"] == 0.1667
    assert [item["item_id"] for item in agreement["disagreements"]] == ["2"]
