"""Issue 20, "Empty answers get the best score": an empty output, or an empty context for a
scorer that needs one, is not scorable, with the reason, on the command line, in a batch
and in live scoring; it is never given a score (it used to score 0 hallucination, the best)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.testing import JudgeServer
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import LiveScorer, SQLiteStore, create_hallucination_scorer, create_scorer, run_evals
from engine.cli import app

runner = CliRunner()
NO_ANSWER = [{"role": "user", "content": "Who wrote Hamlet?"}]


def test_scorers_run_refuses_an_empty_output_with_the_reason(judge: JudgeServer) -> None:
    result = runner.invoke(app, ["run", "hallucination", "--output", "", "--context", "x", "--model", "openai/test"])
    assert result.exit_code != 0
    assert "not scorable: hallucination: the output is empty: there is nothing to judge" in result.stderr
    assert result.stdout == ""  # no score printed
    assert judge.requests == []


def test_scorers_run_refuses_an_empty_context_with_the_reason(judge: JudgeServer) -> None:
    result = runner.invoke(app, ["run", "hallucination", "--output", "Paris is in France.", "--context", "", "--model", "openai/test"])
    assert result.exit_code != 0
    assert "not scorable: hallucination needs a context, and the context given is only blank text" in result.stderr
    assert result.stdout == ""
    assert judge.requests == []


def test_a_batch_counts_empty_outputs_as_not_scorable_and_scores_the_rest(judge: JudgeServer) -> None:
    script_hallucination(judge)
    data = [
        {"id": "fine", "output": "ok", "context": ["c"]},
        {"id": "empty", "output": "", "context": ["c"]},
        {"id": "blank", "output": " \n ", "context": ["c"]},
        {"id": "silent", "output": NO_ANSWER, "context": ["c"]},
        {"id": "no-context", "output": "ok", "context": []},
    ]

    result = run_evals(data, [create_hallucination_scorer(model="openai/test")])

    outcomes = {item.id: item.results["hallucination"] for item in result.items}
    assert outcomes["fine"].outcome == "scored" and outcomes["fine"].score == 0
    reasons = {
        "empty": "the output is empty",
        "blank": "the output is whitespace only",
        "silent": "the output is a transcript with no assistant message",
        "no-context": "needs a context, and the context given is an empty list",
    }
    for item_id, reason in reasons.items():
        assert outcomes[item_id].outcome == "not_scorable", item_id
        assert outcomes[item_id].score is None
        assert reason in (outcomes[item_id].not_scorable or ""), item_id
    assert result.counts.outcomes == {"scored": 1, "error": 0, "not_scorable": 4}
    assert result.summary["hallucination"].count == 1 and result.summary["hallucination"].not_scorable == 4
    assert len(judge.requests_for("Claims")) == 1


def test_scorers_eval_shows_the_empty_output_as_not_scorable(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "a", "output": "ok", "context": ["c"]}) + "\n" + json.dumps({"id": "b", "output": "", "context": ["c"]}) + "\n")

    store = tmp_path / "r.sqlite"
    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--model", "openai/test", "--store", str(store), "--run", "r", "--json"])

    report = json.loads(result.stdout)
    assert report["counts"]["outcomes"] == {"scored": 1, "error": 0, "not_scorable": 1}
    assert report["summary"]["hallucination"]["count"] == 1 and report["summary"]["hallucination"]["not_scorable"] == 1
    [empty] = SQLiteStore(store).item_records("r", "b")
    assert empty.score is None and "hallucination: the output is empty" in (empty.not_scorable or "")


def test_a_computed_comparison_says_it_scores_empty_outputs() -> None:
    # `equals` compares an empty output with the expected one: a low score, not a flattering one.
    assert create_scorer("equals").run(output="", ground_truth="Paris").score == 0
    assert create_scorer("includes", options={"texts": ["Paris"]}).run(output="").score == 0


def test_live_scoring_records_an_empty_reply_as_not_scorable(judge: JudgeServer) -> None:
    live = LiveScorer([create_hallucination_scorer(model="openai/test")])
    live.submit("", context=["c"])
    live.close()
    assert live.stats.not_scorable == {"hallucination": 1} and live.stats.scored["hallucination"] == 0
    assert judge.requests == []
