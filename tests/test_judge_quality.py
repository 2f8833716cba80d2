"""bench/judge_quality.py, the judge-quality scorecard, runs against a base URL: here the
scripted stand-in judge, over every shipped labelled set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scripted import script_word_overlap

from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent


def scorecard(judge: JudgeServer, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, str(ROOT / "bench" / "judge_quality.py"), "--model", "openai/stand-in", "--base-url", judge.base_url,
        "--sample", "10", "--repeats", "2", "--store", str(tmp_path / "quality.sqlite"), *extra,
    ]  # fmt: skip
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
    ]  # fmt: skip
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
