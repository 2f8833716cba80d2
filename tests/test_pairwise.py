"""Pairwise judging with the built-in preference scorer: every pair in both orders, both
verdicts kept, a verdict that flips with the order counted as a tie and reported."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from helpers.preference import script_preference
from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, script_hallucination
from typer.testing import CliRunner

from engine import builtin_catalog, create_scorer, run_evals
from engine.errors import ConfigError
from engine.cli import app
from engine.runs.pairwise import pairs_from_items, run_pairwise
from engine.scoring.preview import preview
from engine.store import SQLiteStore
from engine.testing import JudgeServer, Reply

runner = CliRunner()


ITEMS = [
    {"id": "1", "input": "q1", "outputs": {"a": "a good answer", "b": "an answer"}},
    {"id": "2", "input": "q2", "outputs": {"a": "an answer", "b": "a good answer"}},
    {"id": "3", "input": "q3", "outputs": {"a": "good", "b": "good too"}},
    {"id": "4", "input": "q4", "outputs": {"a": "BIASED one", "b": "another"}},
]


def test_each_pair_is_judged_in_both_orders_and_a_flip_is_a_reported_tie(judge: JudgeServer, tmp_path: Path) -> None:
    script_preference(judge)
    scorer = create_scorer("preference", options={"criteria": "The reply that says good is better."})
    result = run_pairwise(pairs_from_items(ITEMS), scorer, store=tmp_path / "s.sqlite", run="ab")

    assert len(judge.requests_for("PreferenceVerdict")) == 8  # four pairs, two orders each
    verdicts = {pair.item_id: (pair.verdict, pair.consistent) for pair in result.pairs}
    assert verdicts == {"1": ("a", True), "2": ("b", True), "3": ("tie", True), "4": ("tie", False)}
    biased = result.pairs[3]
    assert [(order.first, order.winner) for order in biased.orders] == [("a", "a"), ("b", "b")]
    summary = result.summary
    assert (summary.pairs, summary.a_wins, summary.b_wins, summary.ties, summary.inconsistent) == (4, 1, 1, 2, 1)
    assert summary.a_win_rate.value == 0.25 and summary.tie_rate.value == 0.5
    assert summary.a_win_rate.low is not None and summary.a_win_rate.low <= 0.25 <= summary.a_win_rate.high  # type: ignore[operator]
    prompts = [request.prompt for request in judge.requests_for("PreferenceVerdict")]
    assert all("The reply that says good is better." in prompt for prompt in prompts)
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        records = {record.item_id: record for record in store.query(run="ab")}
    assert records["1"].score == 1.0 and records["2"].score == 0.0 and records["4"].score == 0.5
    stored = records["4"].metadata["pairwise"]
    assert stored["consistent"] is False and [order["winner"] for order in stored["orders"]] == ["a", "b"]
    assert set(records["1"].steps) == {"a_first.compare", "a_first.score", "a_first.generate_reason", "b_first.compare", "b_first.score", "b_first.generate_reason"}


def test_a_pair_with_an_empty_output_is_not_scorable_as_in_eval_not_an_error(judge: JudgeServer, tmp_path: Path) -> None:
    """An empty output is not scorable everywhere else (issue 20); pairwise counted it a
    failed judgement: "0 not scorable, 1 errors". It is not scorable, stored and counted so,
    and the run still does not pass (its coverage is short)."""
    script_preference(judge)
    items = [*ITEMS[:3], {"id": "empty", "input": "q", "outputs": {"a": "", "b": "a good answer"}}]
    result = run_pairwise(pairs_from_items(items), create_scorer("preference"), store=tmp_path / "s.sqlite", run="ab")

    empty = result.pairs[3]
    assert empty.error is None and empty.not_scorable is not None and "the output is empty" in empty.not_scorable
    assert (result.summary.pairs, result.summary.errors, result.summary.not_scorable) == (3, 0, 1)
    assert not result.passed and any("3 of 4 items scored" in reason for reason in result.verdict.reasons), result.verdict.reasons
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        [record] = [record for record in store.query(run="ab") if record.item_id == "empty"]
        assert record.outcome == "not_scorable" and record.error is None
        assert store.get_run("ab").status == "complete"  # type: ignore[union-attr]


def test_two_stored_runs_are_paired_by_item_id_on_the_command_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    script_preference(judge)
    store = str(tmp_path / "s.sqlite")
    scorer = create_scorer("hallucination", options={"context": ["facts"]})
    run_evals([{"id": "1", "input": "q1", "output": "ok"}, {"id": "2", "input": "q2", "output": "good ok"}, {"id": "x", "output": "ok"}], scorer, run="before", store=store)
    run_evals([{"id": "1", "input": "q1", "output": "good ok"}, {"id": "2", "input": "q2", "output": "ok"}], scorer, run="after", store=store)

    shown = runner.invoke(app, ["pairwise", "--run", "before", "--run", "after", "--scorer", "preference", "--store", store, "--as", "cmp"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "A = before, B = after, 2 pair(s) judged in both orders" in shown.output
    assert "order-inconsistent pairs (counted as ties): 0; failed: 0; saved as run cmp" in shown.output
    as_json = runner.invoke(app, ["pairwise", "--run", "before", "--run", "after", "--scorer", "preference", "--store", store, "--json"])
    summary = json.loads(as_json.stdout)["summary"]
    assert (summary["a_wins"], summary["b_wins"], summary["ties"]) == (1, 1, 0)


def test_a_single_output_scorer_and_bad_pairs_are_refused_in_one_line(judge: JudgeServer, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"input": "q", "outputs": {"a": "x", "b": "y"}}) + "\n", encoding="utf-8")
    refused = runner.invoke(app, ["pairwise", str(data), "--scorer", "hallucination"])
    assert refused.exit_code == 2 and "hallucination judges one output, not two: give a pairwise scorer" in refused.output
    data.write_text(json.dumps({"input": "q", "outputs": {"a": "x"}}) + "\n", encoding="utf-8")
    bad = runner.invoke(app, ["pairwise", str(data), "--scorer", "preference"])
    assert bad.exit_code != 0 and f"{data}:1: `outputs` must be an object with exactly the keys a and b" in bad.output
    both = runner.invoke(app, ["pairwise", str(data), "--run", "a", "--run", "b", "--scorer", "preference"])
    assert both.exit_code == 2 and "give a data file" in both.output


def test_the_command_in_scorers_md_runs(judge: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script_preference(judge)
    page = (Path(__file__).resolve().parents[1] / "docs" / "scorers.md").read_text(encoding="utf-8")
    (command,) = [line for block in re.findall(r"```bash\n(.*?)```", page, re.DOTALL) for line in block.splitlines() if "scorers pairwise" in line]
    monkeypatch.chdir(tmp_path)
    Path("pairs.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS), encoding="utf-8")
    result = runner.invoke(app, shlex.split(command)[1:], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "4 pair(s) judged in both orders" in result.output and "inconsistent 4: A first: a, B first: b" in result.output
    prompt = judge.requests_for("PreferenceVerdict")[0].prompt
    assert "The better reply is shorter and still answers the question." in prompt


def test_preview_shows_a_pairwise_scorers_prompts_given_the_second_output(tmp_path: Path) -> None:
    second = tmp_path / "second.txt"
    second.write_text("It is Paris, in France.", encoding="utf-8")
    criteria = ["--option", "criteria=The more precise reply is better."]
    shown = runner.invoke(app, ["preview", "preference", "--input", "Capital of France?", "--output", "Paris.", "--second-output", f"@{second}", *criteria])
    assert shown.exit_code == 0, shown.output
    assert "<response_1>\nParis.\n</response_1>" in shown.output and "<response_2>\nIt is Paris, in France.\n</response_2>" in shown.output
    assert "The more precise reply is better." in shown.output

    missing = runner.invoke(app, ["preview", "preference", "--input", "q", "--output", "Paris.", *criteria])
    assert missing.exit_code == 2 and "cannot render" not in missing.output
    assert missing.output.strip() == "error: preference judges two outputs: give the second with --second-output TEXT (or @file)"
    one = runner.invoke(app, ["preview", "hallucination", "--output", "x", "--context", "c", "--second-output", "y"])
    assert one.exit_code == 2 and "--second-output: hallucination judges one output" in one.output


def test_run_and_eval_of_a_pairwise_scorer_point_to_scorers_pairwise(judge: JudgeServer, tmp_path: Path) -> None:
    criteria = ["--option", "criteria=Shorter is better."]
    ran = runner.invoke(app, ["run", "preference", "--input", "q", "--output", "Paris.", "--model", "openai/scripted", *criteria])
    assert ran.exit_code == 2 and len(ran.output.strip().splitlines()) == 1
    assert "preference judges two outputs: score them with `scorers pairwise DATA --scorer preference`" in ran.output
    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps({"id": "1", "input": "q", "output": "Paris."}) + "\n", encoding="utf-8")
    evaluated = runner.invoke(app, ["eval", str(data), "--scorer", "preference", "--model", "openai/scripted", "--store", str(tmp_path / "r.sqlite"), *criteria])
    assert evaluated.exit_code == 2 and "cannot render" not in evaluated.output
    assert "preference judges two outputs: run it with run_pairwise (`scorers pairwise DATA --scorer preference`)" in evaluated.output


def test_the_library_preview_of_a_pairwise_scorer_asks_for_the_second_output() -> None:
    plan = builtin_catalog().plan("preference")
    with pytest.raises(ConfigError, match=r"preference judges two outputs: give the second as metadata=\{'second_output': \.\.\.\}"):
        preview(plan, "Paris.", input="q", options={"criteria": "Shorter is better."})
    shown = preview(plan, "Paris.", input="q", options={"criteria": "Shorter is better."}, metadata={"second_output": "It is Paris."})
    assert "<response_2>\nIt is Paris.\n</response_2>" in shown.prompts[0].prompt


def _script_priced_preference(judge: JudgeServer) -> None:
    """Every answer costs PER_CALL at gpt-4o-mini's price (see helpers.scripted); a pair is two calls, one an order."""
    priced: dict[str, Any] = {"usage": (1000, 200), "cached_tokens": 400}
    judge.on("PreferenceVerdict", Reply(answer={"comparison": "scripted", "verdict": "response_1"}, **priced))


def _spent_as_the_judge_saw_it(judge: JudgeServer) -> float:
    return len(judge.requests) * PER_CALL  # every answer of the script costs the same


def test_a_pairwise_budget_stops_cleanly_counts_what_is_left_and_covers_the_run_across_reruns(judge: JudgeServer, tmp_path: Path) -> None:
    """`scorers pairwise` took no --max-cost: a pairwise run over many pairs spent what it
    spent. Now one spend limit holds every call of the run (both orders of every pair), the
    run stops as eval does, keeps what was judged, says how many pairs were not, and a rerun
    of the stored run counts what it spent before, then judges only the rest."""
    _script_priced_preference(judge)
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{n}", "input": f"q{n}", "outputs": {"a": f"one {n}", "b": f"two {n}"}}) + "\n" for n in range(12)), encoding="utf-8")
    store = tmp_path / "r.sqlite"
    budget = 4 * 2 * PER_CALL + FIRST_CALL_HOLD  # about four pairs' worth, and room for the first call
    arguments = ["pairwise", str(data), "--scorer", "preference", "--store", str(store), "--as", "capped", "--concurrency", "4"]

    stopped = runner.invoke(app, [*arguments, "--max-cost", f"{budget:.8f}"])
    assert stopped.exit_code == 1, stopped.output
    assert 0.5 * budget < _spent_as_the_judge_saw_it(judge) <= budget
    with SQLiteStore(store) as opened:
        assert opened.get_run("capped").status == "interrupted"  # type: ignore[union-attr]
        kept = {record.item_id for record in opened.query(run="capped", errors=False)}
    assert len(judge.requests) == 2 * len(kept)  # every call went to a pair that was judged whole, and kept
    words = " ".join(stopped.stdout.split())
    assert f"not judged (the budget): {12 - len(kept)}" in words
    assert "stopped early: the budget of $" in words and f"{12 - len(kept)} pair(s) not judged; rerun with --as capped to judge the rest" in words
    assert "the run stopped before the end: the budget of $" in stopped.stderr and "(--max-cost) was reached" in stopped.stderr

    asked = len(judge.requests)
    again = runner.invoke(app, [*arguments, "--max-cost", f"{budget:.8f}", "--json"])  # the same budget: spent already
    assert again.exit_code == 1, again.output
    payload = json.loads(again.stdout)
    assert payload["summary"]["not_judged"] == 12 - len(kept) and payload["reused"] == len(kept) and "(--max-cost) was reached" in payload["stopped"]
    assert len(judge.requests) == asked  # nothing more was judged

    raised = runner.invoke(app, [*arguments, "--max-cost", "1", "--json"])
    assert raised.exit_code == 0, raised.output
    assert json.loads(raised.stdout)["reused"] == len(kept)
    assert len(judge.requests) - asked == 2 * (12 - len(kept))  # only the pairs left, in both orders
    with SQLiteStore(store) as opened:
        assert opened.get_run("capped").status == "complete" and len(opened.query(run="capped")) == 12  # type: ignore[union-attr]


def test_a_pairwise_budget_needs_a_price_for_its_judge(judge: JudgeServer, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps(ITEMS[0]) + "\n", encoding="utf-8")
    refused = runner.invoke(app, ["pairwise", str(data), "--scorer", "preference", "--model", "openai/local-model", "--max-cost", "1"])
    assert refused.exit_code == 2 and "max_cost needs a price for openai/local-model" in refused.stderr, refused.output
    assert judge.requests == []
