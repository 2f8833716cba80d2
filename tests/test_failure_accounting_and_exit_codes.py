"""Every number a run reports is true: outcomes never mixed, coverage beside every mean,
a run with errors is incomplete and fails unless --max-errors allows it, exit codes mean
one thing each, progress shows in a CI log, and SIGTERM keeps what is done."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from helpers.stopped_runs import has_saved, stop_mid_run
from engine.testing import JudgeServer
from helpers.scripted import outputs_judged, script_hallucination
from typer.testing import CliRunner

from engine import LiveScorer, ResultRecord, SQLiteStore, create_hallucination_scorer, create_scorer, run_evals
from engine.cli import app

runner = CliRunner()


def write_items(path: Path, outputs: list[str | None], context: bool = True) -> Path:
    rows = []
    for n, output in enumerate(outputs):
        row: dict[str, object] = {"id": f"i{n}", "input": f"q{n}"}
        if output is not None:
            row["output"] = output
        if context:
            row["context"] = ["facts"]
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def evaluate(data: Path, store: Path, *more: str) -> object:
    return runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), *more])


@pytest.mark.parametrize(
    "allowance, status",
    [([], 1), (["--max-errors", "1"], 0), (["--max-errors", "25%"], 0), (["--max-errors", "20%"], 1)],
)
def test_errors_fail_the_run_unless_max_errors_allows_them(judge: JudgeServer, tmp_path: Path, allowance: list[str], status: int) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok", "WRONG", "ok. WRONG", "FAIL"])

    result = evaluate(data, tmp_path / "r.sqlite", *allowance)

    assert result.exit_code == status, result.output  # type: ignore[attr-defined]
    if status:
        assert "1 of 4 items failed (--max-errors allows" in result.stderr  # type: ignore[attr-defined]
        assert "to retry what failed: scorers eval" in result.stderr  # type: ignore[attr-defined]


def test_exit_2_for_usage_errors_and_thresholds_on_top_of_the_error_budget(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok", "WRONG", "FAIL"])
    assert evaluate(data, tmp_path / "r.sqlite", "--max-errors", "lots").exit_code == 2  # type: ignore[attr-defined]
    assert evaluate(data, tmp_path / "r.sqlite", "--threshold", "hallucination=nan").exit_code == 2  # type: ignore[attr-defined]
    gated = evaluate(data, tmp_path / "r.sqlite", "--max-errors", "1", "--threshold", "hallucination=0.2")
    assert gated.exit_code == 1 and "threshold not met by hallucination" in gated.stderr  # type: ignore[attr-defined]
    assert "Exit status: 0" in runner.invoke(app, ["eval", "--help"]).stdout


def test_the_summary_shows_coverage_and_errors_whatever_stage_failed(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    rows = [
        json.dumps({"id": "a", "output": "ok. WRONG", "context": ["c"]}),
        "not json",
        json.dumps({"id": "b", "output": "FAIL", "context": ["c"]}),
        json.dumps({"id": "c", "output": "ok"}),  # no context: not scorable
    ]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")

    result = evaluate(data, tmp_path / "r.sqlite", "--run", "r")
    table = " ".join(result.stdout.split())  # type: ignore[attr-defined]

    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert "run r (incomplete): 4 items" in table
    # mean 0.5 over 1 scored of 4, 2 errors (reading and judging), 1 not scorable
    assert "hallucination │ lower │ 0.5 │ 0.5 │ 0.5 │ 1/4 │ 2 │ 1 │ FAIL" in table
    assert "item error item 2:" in table and "scorer error item 3 (b) hallucination:" in table


def test_run_evals_returns_the_facts_a_hosts_ci_needs(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = [{"output": "ok. WRONG", "context": ["c"]}, {"output": "FAIL", "context": ["c"]}, {"output": "ok"}]

    strict = run_evals(data, [create_hallucination_scorer()])
    errors_allowed = run_evals(data, [create_hallucination_scorer()], max_errors="50%")
    lenient = run_evals(data, [create_hallucination_scorer()], max_errors="50%", min_coverage=0.5)

    assert strict.status == "incomplete" and strict.passed is False
    assert strict.counts.outcomes == {"scored": 1, "error": 1, "not_scorable": 1}
    assert [(error.line, error.stage) for error in strict.errors] == [(2, "scorer")]
    assert "HTTP 400" in strict.errors[0].error
    assert strict.summary["hallucination"].not_scorable == 1
    # The failed item is allowed, but the item that could not be judged is not covered.
    assert errors_allowed.passed is False and errors_allowed.max_errors == 1
    assert errors_allowed.verdict.reasons == ["hallucination: below the coverage floor 100%: 1 of 3 items scored (33%): 1 failed, 1 not scorable"]
    assert lenient.passed is True and lenient.verdict.min_coverage == 0.5


def test_without_a_terminal_progress_lines_reach_stderr(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.cli import eval_commands as evaluate_module

    monkeypatch.setattr(evaluate_module, "PROGRESS_EVERY_SECONDS", 0.0)
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok"] * 3)

    result = evaluate(data, tmp_path / "r.sqlite", "--run", "ci", "--concurrency", "1")

    assert result.exit_code == 0  # type: ignore[attr-defined]
    lines = [line for line in result.stderr.splitlines() if line.startswith("ci: ")]  # type: ignore[attr-defined]
    assert lines[0].startswith("ci: 1/3 items, 0 failed") and lines[-1].startswith("ci: 3/3 items, 0 failed")


def test_a_progress_line_also_while_every_call_waits_on_a_slow_judge(
    judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.cli import eval_commands as evaluate_module

    monkeypatch.setattr(evaluate_module, "WAITING_LINE_EVERY_SECONDS", 0.2)
    script_hallucination(judge, delay=1.5)  # the first answer of the only item takes 1.5 s
    data = write_items(tmp_path / "data.jsonl", ["ok"])

    result = evaluate(data, tmp_path / "r.sqlite", "--run", "slow", "--no-cache")

    assert result.exit_code == 0  # type: ignore[attr-defined]
    waiting = [line for line in result.stderr.splitlines() if line.startswith("slow: 0/1 items, 0 failed")]  # type: ignore[attr-defined]
    assert len(waiting) >= 3 and all(line.endswith(", waiting for answers") for line in waiting), waiting


@pytest.mark.slow
def test_sigterm_with_json_says_the_run_did_not_pass(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.3)
    data = write_items(tmp_path / "data.jsonl", [f"answer {n}" for n in range(20)])
    store = tmp_path / "results.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "term", "--concurrency", "1", "--no-cache", "--json"]
    stopped = stop_mid_run(arguments, tmp_path, signal.SIGTERM, when=lambda: bool(judge.requests))

    assert stopped.returncode == 130, stopped.stderr
    verdict = json.loads(stopped.stdout)
    assert verdict["passed"] is False and verdict["status"] == "interrupted" and "SIGTERM" in verdict["stopped"]


@pytest.mark.slow
def test_sigterm_keeps_finished_results_marks_the_run_and_prints_the_resume_command(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.2)
    data = write_items(tmp_path / "data.jsonl", [f"answer {n}. WRONG" for n in range(12)])
    store = tmp_path / "results.sqlite"
    arguments = ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "nightly", "--concurrency", "2", "--no-cache"]
    # Without the response cache: the resume below must judge again exactly what was not saved.
    stopped = stop_mid_run(arguments, tmp_path, signal.SIGTERM, when=has_saved(store, "nightly", at_least=3))
    stderr = stopped.stderr
    assert stopped.seconds_to_exit < 3

    assert stopped.returncode == 130, stderr
    assert "to score the rest, run: scorers eval" in stderr and "--run nightly" in stderr
    with SQLiteStore(store) as results:
        assert results.get_run("nightly").status == "interrupted"  # type: ignore[union-attr]
        done = len(results.query(run="nightly", errors=False))
    judge.requests.clear()
    script_hallucination(judge)
    assert evaluate(data, store, "--run", "nightly", "--no-cache").exit_code == 0  # type: ignore[attr-defined]
    assert len(outputs_judged(judge)) == 12 - done


def test_a_live_scorer_marks_its_run_finished_on_close(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "live.sqlite"
    live = LiveScorer([create_hallucination_scorer(options={"context": ["c"]})], store=str(store), run="live-run")

    @live
    def agent(question: str) -> str:
        return "ok. WRONG"

    agent("q")
    live.close()

    with SQLiteStore(store) as saved:
        assert saved.get_run("live-run").status == "complete"  # type: ignore[union-attr]


def test_a_result_that_could_not_be_saved_counts_as_an_error(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)

    class FullDisk(SQLiteStore):
        def save(self, record: ResultRecord) -> None:
            if record.item_id == "i1":
                raise OSError(28, "No space left on device")
            super().save(record)

        def save_many(self, records: list[ResultRecord]) -> None:
            if any(record.item_id == "i1" for record in records):
                raise OSError(28, "No space left on device")
            super().save_many(records)

    with FullDisk(tmp_path / "r.sqlite") as store:
        result = run_evals([{"id": f"i{n}", "output": "ok", "context": ["c"]} for n in range(3)], [create_hallucination_scorer()], store=store)

    assert result.summary["hallucination"].errors == 1 and result.summary["hallucination"].count == 2
    assert [(error.line, error.stage) for error in result.errors] == [(2, "store")]
    assert "could not be saved: OSError: [Errno 28] No space left on device" in result.errors[0].error
    assert result.status == "incomplete"


def test_an_item_without_output_is_not_scorable_for_scorers_that_need_one(judge: JudgeServer) -> None:
    judge.on("ContextPrecisionVerdicts", {"verdicts": [{"verdict": "yes", "reason": "r"}]})
    judge.on("Reason", {"reason": "r"})
    script_hallucination(judge)
    scorers = [create_hallucination_scorer(), create_scorer("context-precision")]
    item = {"input": "Who wrote Hamlet?", "context": ["Shakespeare wrote Hamlet."], "ground_truth": "Shakespeare"}

    result = run_evals([item], scorers)

    outcomes = result.items[0].results
    assert outcomes["hallucination"].outcome == "not_scorable" and "needs `output`" in (outcomes["hallucination"].not_scorable or "")
    assert result.counts.outcomes["error"] == 0 and result.status == "complete"


def test_a_run_that_scored_nothing_fails_and_says_why(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    empty = write_items(tmp_path / "empty.jsonl", ["", ""])
    shown = evaluate(empty, tmp_path / "r.sqlite", "--json")
    assert shown.exit_code == 1  # type: ignore[attr-defined]
    verdict = json.loads(shown.stdout)  # type: ignore[attr-defined]
    assert verdict["passed"] is False and verdict["summary"]["hallucination"]["passed"] is False
    assert "error: nothing was scored by hallucination: 2 not scorable, 0 errors" in shown.stderr  # type: ignore[attr-defined]
    table = evaluate(empty, tmp_path / "r.sqlite", "--run", "again")
    assert table.exit_code == 1 and "FAIL" in table.stdout  # type: ignore[attr-defined]

    in_python = run_evals([{"id": "1", "input": "q", "output": "", "context": ["c"]}], create_hallucination_scorer())
    assert in_python.passed is False and in_python.verdict.reasons == ["nothing was scored by hallucination: 1 not scorable, 0 errors"]
    # Some items scored, the others not scorable: not covered, so the run fails unless the
    # caller lowers the coverage floor on purpose (and the output says so).
    mixed_items = write_items(tmp_path / "mixed.jsonl", ["ok", ""])
    mixed = evaluate(mixed_items, tmp_path / "r.sqlite", "--json")
    assert mixed.exit_code == 1 and json.loads(mixed.stdout)["passed"] is False  # type: ignore[attr-defined]
    assert "hallucination: below the coverage floor 100%: 1 of 2 items scored (50%): 1 not scorable" in mixed.stderr  # type: ignore[attr-defined]
    lowered = evaluate(mixed_items, tmp_path / "r.sqlite", "--min-coverage", "0.5", "--run", "lowered")
    assert lowered.exit_code == 0, lowered.stderr  # type: ignore[attr-defined]
    shown_floor = " ".join(lowered.stdout.split())  # type: ignore[attr-defined]
    assert "Coverage floor 50% (--min-coverage): hallucination: 1 of 2 items scored (50%): 1 not scorable." in shown_floor
    assert "not scorable item 2 (i1) hallucination: hallucination: the output is empty" in shown_floor
