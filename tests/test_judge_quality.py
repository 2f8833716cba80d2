"""bench/judge_quality.py, the judge-quality scorecard, runs against a base URL: here the
scripted stand-in judge, over every shipped labelled set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.scripted import script_word_overlap

from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent


def scorecard(judge: JudgeServer, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, str(ROOT / "bench" / "judge_quality.py"), "--model", "openai/stand-in", "--base-url", judge.base_url,
        "--sample", "10", "--repeats", "2", "--store", str(tmp_path / "quality.sqlite"), *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.slow
def test_the_scorecard_scores_every_labelled_set_with_every_scorer_it_labels(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_word_overlap(judge)
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai/stand-in: {input: 1.0, output: 2.0}\n", encoding="utf-8")
    monkeypatch.setenv("SCORERS_PRICES", str(prices))
    done = scorecard(judge, tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(row["set"], row["scorer"]) for row in rows] == [
        ("halueval_qa.jsonl", "hallucination"),
        ("halueval_qa_pairs.jsonl", "hallucination"), ("halueval_qa_pairs.jsonl", "faithfulness"),
        ("begin_faithfulness.jsonl", "faithfulness"), ("begin_faithfulness.jsonl", "hallucination"),
    ]
    for row in rows:
        assert row["items"] == 10 and row["repeats"] == 2 and row["judge"] == "openai/stand-in"
        assert row["kappa"]["low"] <= row["kappa"]["value"] <= row["kappa"]["high"]
        assert row["verdict_changed"] == 0  # the stand-in judge answers the same every time
        assert row["calls_per_100"] >= 200  # claims and verdicts for every item (the reason too, when there are claims)
        assert row["cost_per_100"] > 0
    requests = len(judge.requests)

    again = scorecard(judge, tmp_path)  # stored: resumed, not judged again; printed as Markdown rows
    assert again.returncode == 0, again.stderr
    assert len(judge.requests) == requests
    table = again.stdout.split("\n\n", 1)[1].splitlines()
    assert table[0].startswith("| set | scorer | judge | date | items | precision | recall | F1 | balanced accuracy | κ |")
    assert len(table) == 2 + 5 and table[2].startswith("| halueval_qa.jsonl | hallucination | openai/stand-in |")


def test_every_command_of_docs_quality_runs(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands of docs/quality.md, against the stand-in judge (the scorecard on a small
    sample: the same script, fewer items)."""
    import re
    import shlex
    import shutil

    from typer.testing import CliRunner

    from engine.cli import app

    script_word_overlap(judge)
    for folder in ("examples", "bench"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    commands = [line for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) for line in block.splitlines() if line.strip()]
    assert len(commands) == 5
    printed: dict[str, str] = {}
    for command in commands:
        words = shlex.split(command)
        if words[:2] == ["python", "bench/bench_confidence.py"]:
            done = subprocess.run([sys.executable, *words[1:], "--base-url", judge.base_url, "--only", "judge"], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0 and "AUROC of confidence" in done.stdout, done.stderr
            continue
        if words[0] == "python":
            done = subprocess.run([sys.executable, *words[1:], "--sample", "4", "--repeats", "2", "--base-url", judge.base_url], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0 and "| halueval_qa.jsonl | hallucination | openai/gpt-4o-mini" in done.stdout, done.stderr
            continue
        result = CliRunner().invoke(app, words[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
        printed[command] = result.stdout
    gate = next(command for command in commands if "--gate lower" in command)
    assert "the lower bound against the threshold 0.5: pass" in " ".join(printed[gate].split())


@pytest.mark.slow
def test_faithbench_is_scored_where_it_lies_when_given(judge: JudgeServer, tmp_path: Path) -> None:
    """FaithBench is not ours to ship (CC BY-NC-SA): the scorecard reads it where it is. Here a
    file of the same shape, written by the test."""
    script_word_overlap(judge)
    rows = [("The sky is blue today.", "The sky is blue.", "Consistent"), ("The sky is blue today.", "The sky is green.", "Unwanted")] * 3
    lines = ["source,summary,LLM,worst-label,best-label"] + [f'"{source}","{summary}",some/model,{label},{label}' for source, summary, label in rows]
    (tmp_path / "FaithBench.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = scorecard(judge, tmp_path, "--faithbench", str(tmp_path / "FaithBench.csv"), "--json")
    assert done.returncode == 0, done.stderr
    faithbench = [row for row in json.loads(done.stdout) if row["set"] == "FaithBench.csv"]
    assert [row["scorer"] for row in faithbench] == ["hallucination", "faithfulness"]
    assert all(row["items"] == 6 and row["balanced_accuracy"]["value"] == 1.0 for row in faithbench)
    missing = scorecard(judge, tmp_path, "--faithbench", str(tmp_path / "nowhere.csv"))
    assert missing.returncode == 2 and "--faithbench" in missing.stderr and "Traceback" not in missing.stderr
