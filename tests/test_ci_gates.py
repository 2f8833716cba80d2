"""CI gates: `eval --gate lower` fails a pipeline only when the whole 95% interval of the
mean is past the threshold; `eval --repeat N` reports how consistent the verdicts are."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine.cli import app
from engine.runs.results import FigureEstimate
from engine.runs.measures.stats import mean_estimate
from engine.runs.verdict import Gate, gate_passes
from engine.scoring.pass_line import Direction
from engine.testing import JudgeServer

runner = CliRunner()


def data(tmp_path: Path, outputs: list[str], name: str = "items") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{n}", "output": output, "context": ["c"]}) + "\n" for n, output in enumerate(outputs)), encoding="utf-8")
    return path


def evaluate(tmp_path: Path, path: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["eval", str(path), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--threshold", "hallucination=0.3", *extra])
    return result.exit_code, " ".join(result.stdout.split()), " ".join(result.stderr.split())


def test_gate_lower_fails_only_when_the_whole_interval_is_past_the_threshold(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    unsure = data(tmp_path, ["WRONG"] * 4 + ["ok"] * 6)  # mean 0.4: over 0.3, but 10 items cannot be sure

    code, _, stderr = evaluate(tmp_path, unsure, "--run", "on-mean")
    assert code == 1 and "threshold not met by hallucination" in stderr

    code, stdout, _ = evaluate(tmp_path, unsure, "--run", "on-bound", "--gate", "lower")
    assert code == 0, stdout
    assert "hallucination: mean 0.4, 95% interval [0.1, 0.7]; the lower bound against the threshold 0.3: pass" in stdout

    sure = data(tmp_path, ["WRONG"] * 10, "sure")
    code, stdout, stderr = evaluate(tmp_path, sure, "--run", "sure", "--gate", "lower")
    assert code == 1 and "interval [1, 1]; the lower bound against the threshold 0.3: FAIL" in stdout

    code, stdout, _ = evaluate(tmp_path, unsure, "--run", "json", "--gate", "lower", "--json")
    summary = json.loads(stdout)["summary"]["hallucination"]
    assert (summary["gate"], summary["passed"], summary["mean_interval"]["low"]) == ("lower", True, 0.1)


def test_one_item_gives_the_gate_no_interval_to_lean_on(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    one = data(tmp_path, ["WRONG"], "one")  # score 1: over 0.3, but one item cannot show the whole interval is
    code, stdout, _ = evaluate(tmp_path, one, "--run", "lenient", "--gate", "lower")
    assert code == 0, stdout
    assert "hallucination: mean 1, no 95% interval from one score (its bounds are -inf and inf); the lower bound against the threshold 0.3: pass" in stdout
    code, stdout, stderr = evaluate(tmp_path, data(tmp_path, ["ok"], "fine"), "--run", "strict", "--gate", "upper")
    assert code == 1 and "the upper bound against the threshold 0.3: FAIL" in stdout  # a score of 0 is not enough alone
    assert "upper bound of the mean's 95% interval inf (one score gives no interval)" in stderr
    shown = runner.invoke(app, ["results", "--run", "strict", "--store", str(tmp_path / "r.sqlite"), "--json"])
    verdict = json.loads(shown.stdout)["verdict"]
    assert verdict["passed"] is False and verdict["scorers"]["hallucination"]["compared"] is None


def test_a_gate_that_is_not_known_is_refused_in_one_line(judge: JudgeServer, tmp_path: Path) -> None:
    code, _, stderr = evaluate(tmp_path, data(tmp_path, ["ok"]), "--gate", "median")
    assert code == 2 and "gate must be one of mean, lower, upper, got 'median' (--gate)" in stderr
    code, _, stderr = evaluate(tmp_path, data(tmp_path, ["ok"]), "--gate", "lower", "--repeat", "2")
    assert code == 2 and "--gate takes a plain eval run" in stderr
    assert not judge.requests


def test_the_bound_decides_on_the_scorer_s_side() -> None:
    interval = FigureEstimate(value=0.5, low=0.4, high=0.6)
    def gate_passed(mean: FigureEstimate, threshold: float, direction: Direction, gate: Gate) -> bool:
        return gate_passes(mean.value, (mean.low, mean.high), threshold, direction, gate)

    assert gate_passed(interval, 0.45, "lower_is_better", "lower") and not gate_passed(interval, 0.45, "lower_is_better", "mean")
    assert gate_passed(interval, 0.55, "higher_is_better", "upper") and not gate_passed(interval, 0.55, "higher_is_better", "lower")
    assert not gate_passed(mean_estimate([]), 0.5, "lower_is_better", "lower")  # nothing scored never passes
    # One item gives no interval: its bounds are unbounded, whatever its score.
    assert gate_passed(mean_estimate([0.9]), 0.3, "lower_is_better", "lower") and not gate_passed(mean_estimate([0.2]), 0.3, "lower_is_better", "upper")
    assert not gate_passed(mean_estimate([0.9]), 0.3, "higher_is_better", "lower") and gate_passed(mean_estimate([0.2]), 0.3, "higher_is_better", "upper")


def test_repeat_reports_consistency_in_eval_s_table(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    code, stdout, _ = evaluate(tmp_path, data(tmp_path, ["ok", "WRONG", "ok. WRONG"]), "--repeat", "2", "--run", "rep")
    assert code == 1  # the mean 0.5 is over the threshold
    assert "consistency over repeated judgements" in stdout
    assert "hallucination │ 2 │ 3 │ 100% │ 0 │ 0% │ 0 │ 0.3" in stdout
