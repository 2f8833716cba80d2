"""Re-scoring what live scoring stored with another version of a scorer: only stored
replies, never half a reply, secrets never stored; then what changed, item by item."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import re
import time
from pathlib import Path

import pytest
from helpers.strictness import script_strictness, strict_variant
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, SQLiteStore, create_hallucination_scorer, load_scorers
from engine.cli import app
from engine.runs.live.sampling import sample_point
from engine.runs.stored.rescoring import rescore, score_changes
from engine.testing import JudgeServer

runner = CliRunner()


REPLIES = {"t-ok": "ok", "t-maybe": "ok. maybe so", "t-wrong": "WRONG", "t-long": "ok. " + "x" * 200}


def live_store(tmp_path: Path, sampling: float = 1.0) -> Path:
    store = tmp_path / "live.sqlite"
    live = LiveScorer(
        create_hallucination_scorer(options={"context": ["facts"]}), store=store, sampling=sampling,
        store_content={"max_chars": 100},
    )
    for run_id, reply in REPLIES.items():
        live.submit(
            reply, input=f"question {run_id}", ground_truth="facts", run_id=run_id,
            metadata={"user": "u1", "api_key": "abc123456789", "note": "token sk-proj-abcdefghijklmnop0123 leaked"},
        )
    assert live.close(timeout=30)
    return store


def test_live_replies_are_stored_for_rescoring_without_secrets_and_cut_at_the_limit(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    with SQLiteStore(live_store(tmp_path)) as store:
        records = {record.item_id: record for record in store.query(run="live")}
    ok, long = records["t-ok"], records["t-long"]
    assert (ok.input, ok.output, ok.ground_truth, ok.context) == ("question t-ok", "ok", "facts", ["facts"])
    assert ok.metadata == {"user": "u1", "api_key": "***", "note": "token *** leaked"} and ok.content_note is None
    assert long.output == ("ok. " + "x" * 200)[:100] and long.content_note == {"output": "truncated"}
    assert all("sk-proj" not in json.dumps(record.model_dump(mode="json")) for record in records.values())


def test_rescoring_with_a_new_version_makes_a_new_run_and_the_comparison_shows_what_changed(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    path = live_store(tmp_path)
    variant = load_scorers(strict_variant(tmp_path)).create("hallucination", options={"context": ["facts"]})
    with SQLiteStore(path) as store:
        outcome = rescore(store, "live", variant, new_run="strict", since="7d")
        assert outcome.items == 3 and [(item.item_id, item.reason) for item in outcome.skipped] == [
            ("t-long", "stored content not whole (output truncated)")
        ]
        assert store.get_run("strict").meta["rescored_from"]["run"] == "live"  # type: ignore[union-attr]
        new = {record.item_id: record for record in store.query(run="strict")}
        assert {item_id: record.score for item_id, record in new.items()} == {"t-ok": 0.0, "t-maybe": 0.5, "t-wrong": 1.0}
        assert new["t-maybe"].input == "question t-maybe" and new["t-maybe"].metadata["user"] == "u1"
        (changes,) = score_changes(store, "live", "strict")
    assert changes.items == 3 and [(item.item_id, item.before, item.after, item.better) for item in changes.changed] == [("t-maybe", 0.0, 0.5, False)]
    assert changes.only_before == 1  # the truncated reply: not re-scored

    shown = runner.invoke(app, ["results", "--run", "strict", "--compare", "live", "--store", str(path)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "live:hallucination -> strict:hallucination on 3 shared item(s)" in shown.output
    assert "1 item(s) scored differently" in shown.output and "t-maybe" in shown.output and "worse" in shown.output


def test_the_cli_rescores_a_window_and_never_invents_sampled_out_replies(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    path = live_store(tmp_path, sampling=0.5)
    sampled = {run_id for run_id in REPLIES if sample_point(run_id) < 0.5}
    assert 0 < len(sampled) < len(REPLIES)  # the test means something only if some were left out
    result = runner.invoke(
        app, ["rescore", "--run", "live", "--scorer", "hallucination", "--config", str(strict_variant(tmp_path)), "--since", "7d",
              "--as", "again", "--store", str(path), "--option", "context=[\"facts\"]", "--json"],
    )
    # The reply stored cut short is not re-scored, so the new run does not cover it: exit 1.
    assert result.exit_code == 1, result.output
    assert "below the coverage floor 100%: 2 of 3 items scored (67%): 1 not scorable" in result.stderr
    payload = json.loads(result.stdout)
    whole = sampled - {"t-long"}
    assert payload["items"] == len(whole) and payload["run"] == "again" and payload["passed"] is False
    with SQLiteStore(path) as store:
        assert {record.item_id for record in store.query(run="again")} == whole
    bad = runner.invoke(app, ["rescore", "--run", "live", "--scorer", "hallucination", "--since", "7 days", "--store", str(path)])
    assert bad.exit_code == 2 and "since '7 days': expected a positive number and a unit" in bad.output
    missing = runner.invoke(app, ["rescore", "--run", "nope", "--scorer", "hallucination", "--store", str(path)])
    assert missing.exit_code == 2 and "no run named 'nope'" in missing.output


def test_the_retention_period_clears_stored_content_but_keeps_scores(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    path = live_store(tmp_path)
    later = LiveScorer(
        create_hallucination_scorer(options={"context": ["facts"]}), store=path, store_content={"retention": "1s"},
    )
    time.sleep(1.1)  # the first replies are older than the retention period now
    later.submit("fresh", input="q", run_id="t-fresh")
    assert later.close(timeout=30)
    with SQLiteStore(path) as store:
        records = {record.item_id: record for record in store.query(run="live")}
        assert records["t-ok"].output is None and records["t-ok"].score == 0.0 and records["t-ok"].content_note["output"] == "expired"  # type: ignore[index]
        assert records["t-fresh"].output == "fresh"
        outcome = rescore(store, "live", create_hallucination_scorer(options={"context": ["facts"]}), new_run="after")
    assert outcome.items == 1 and {item.reason for item in outcome.skipped} == {
        "stored content not whole (context expired, ground_truth expired, input expired, metadata expired, output expired)"
    }


def test_live_scoring_can_keep_no_content(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=tmp_path / "s.sqlite", store_content=False)
    live.submit("ok", input="q", run_id="r1")
    assert live.close(timeout=30)
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        (record,) = store.query()
    assert (record.input, record.output, record.score) == (None, None, 0.0)
    assert record.content_note == {"input": "omitted", "output": "omitted", "context": "omitted"}
    bad = runner.invoke(app, ["rescore", "--run", "live", "--scorer", "hallucination", "--store", str(tmp_path / "s.sqlite")])
    # Nothing whole to score again: said in one line, and no empty run is made.
    assert bad.exit_code == 2 and "nothing to re-score: run 'live' holds no stored item to score again" in bad.output
    assert "1 stored item(s) cannot be: stored content not whole (context omitted, input omitted, output omitted)" in bad.output
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        assert [run.name for run in store.runs()] == ["live"]


def test_a_wrong_content_policy_is_one_line() -> None:
    for policy, message in (
        ({"retention": "forever"}, "store_content retention: retention 'forever': expected a positive number and a unit"),
        ({"fields": ["output", "answer"]}, "store_content fields: unknown field(s) answer; the fields are input, output"),
        ({"max_chars": -1}, "store_content max_chars: Input should be greater than or equal to 0"),
    ):
        with pytest.raises(ConfigError, match=re.escape(message)):
            LiveScorer(create_hallucination_scorer(model="openai/x", options={"context": ["f"]}, judge=JudgeSettings(base_url="http://127.0.0.1:9/v1")), store_content=policy)
