"""The prompt tuner's loop from the command line: compare two variants on labelled items,
calibrate the threshold, judge items repeatedly, compare and export stored runs."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from helpers.scripted import numbered_claims
from helpers.strictness import labelled_data, script_strictness, strict_variant
from typer.testing import CliRunner

from engine.cli import app
from engine.testing import JudgeServer, Reply, Request

runner = CliRunner()


def test_compare_names_the_fixed_and_broken_items(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    store = tmp_path / "r.sqlite"
    args = ["compare", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--config", str(strict_variant(tmp_path)), "--store", str(store), "--run", "cmp"]

    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "A = hallucination@builtin, B = hallucination@strict, on 5 shared labelled item(s)" in text
    assert "│ accuracy │ 0.8 │ 0.8 │ 0 │" in text and "│ recall │ 0.5 │ 1 │ +0.5 │" in text
    assert "fixed 1 (now agree with the humans), broken 1 (no longer agree); scores changed on 2" in text
    assert "fixed i2: 0 -> 1 (expected flag)" in text and "broken i3: 0 -> 1 (expected pass)" in text

    as_json = json.loads(runner.invoke(app, [*args, "--json"]).stdout)  # the same run again: loaded, not judged
    comparison = as_json["comparison"]
    assert [item["item_id"] for item in comparison["fixed"]] == ["i2"]
    assert [item["item_id"] for item in comparison["broken"]] == ["i3"]
    accuracy = next(figure for figure in comparison["figures"] if figure["name"] == "accuracy")
    assert (accuracy["baseline"], accuracy["variant"], accuracy["delta"]["value"]) == (0.8, 0.8, 0.0)
    # Only the analyze prompt differs: the claims of each item are asked once for both
    # variants (the response cache answers the second), each variant's analyze step is sent.
    assert len(judge.requests_for("Claims")) == 5
    analyze = judge.requests_for("HallucinationVerdicts")
    assert (sum("STRICT" in request.prompt for request in analyze), sum("STRICT" not in request.prompt for request in analyze)) == (5, 5)


def test_eval_compare_takes_the_variant_catalog(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    result = runner.invoke(
        app,
        # The variant's folder, as the issue writes it: `--compare variants/strict/`.
        ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--compare", f"{strict_variant(tmp_path).parent}/", "--store", str(tmp_path / "r.sqlite"), "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload["summary"]) == {"hallucination@builtin", "hallucination@strict"}
    assert payload["comparison"]["items"] == 5


def test_results_compare_two_stored_runs(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    store, data = tmp_path / "r.sqlite", labelled_data(tmp_path)
    assert runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "before"]).exit_code == 0
    variant = ["--config", str(strict_variant(tmp_path))]
    assert runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", *variant, "--store", str(store), "--run", "after"]).exit_code == 0

    shown = runner.invoke(app, ["results", "--run", "before", "--compare", "after", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "A = before:hallucination, B = after:hallucination, on 5 shared labelled item(s)" in text
    assert "fixed 1" in text and "broken 1" in text

    detail = " ".join(runner.invoke(app, ["results", "--run", "after", "--store", str(store)]).stdout.split())
    assert "hallucination against 5 human label(s)" in detail  # labels are kept with the scores


def test_calibrate_picks_the_threshold_that_maximises_f1(judge: JudgeServer, tmp_path: Path) -> None:
    """Scores 0, 1, 0 (maybe so), 0 (maybe later), 0 and 0.5 (ok. WRONG, flagged by humans). A
    score on the threshold passes, so each threshold flags the scores above it."""
    script_strictness(judge)
    path = labelled_data(tmp_path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "i5", "output": "ok. WRONG", "context": ["facts"], "expected": True}) + "\n")
    result = runner.invoke(app, ["calibrate", str(path), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    points = {point["threshold"]: point for point in payload["points"]}
    assert sorted(points) == [0.0, 0.5, 1.0]
    # At 0 the 1 and the 0.5 are flagged, both right (2 of the 3 the humans flag); at 0.5 only the 1; at 1 nothing.
    assert points[0.0]["f1"] == 0.8 and points[0.0]["precision"] == 1.0
    assert points[0.5]["f1"] == 0.5 and points[0.5]["flagged"] == 1
    assert points[1.0]["flagged"] == 0
    assert payload["best"]["threshold"] == 0.0
    assert payload["agreement"]["binary"]["threshold"] == 0.0

    text = " ".join(runner.invoke(app, ["calibrate", str(path), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite"), "--metric", "kappa"]).stdout.split())
    assert "Best threshold by kappa: 0 (use --threshold hallucination=0)" in text


def test_calibrate_offers_the_line_below_the_lowest_score(judge: JudgeServer, tmp_path: Path) -> None:
    """Every item scores 0.67 (two of its three claims WRONG, as stored) and people flag 9 of 12: only a
    line below 0.67 flags any item, and flagging all gives F1 2 * 0.75 / 1.75 = 0.857."""
    script_strictness(judge)
    path = tmp_path / "same.jsonl"
    rows = [{"id": f"i{n}", "output": f"A{n} WRONG. B{n} WRONG. C{n} ok", "context": ["facts"], "expected": n < 9} for n in range(12)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    store = ["--store", str(tmp_path / "r.sqlite")]
    payload = json.loads(runner.invoke(app, ["calibrate", str(path), "--scorer", "hallucination", *store, "--json"]).stdout)
    points = {round(point["threshold"], 3): point for point in payload["points"]}
    assert sorted(points) == [0.335, 0.67]
    assert (points[0.335]["flagged"], points[0.335]["f1"]) == (12, 0.8571) and points[0.67]["flagged"] == 0
    assert payload["best"]["threshold"] == 0.335
    shown = runner.invoke(app, ["calibrate", str(path), "--scorer", "hallucination", *store])
    text = " ".join(shown.stdout.split()) + " ".join(shown.stderr.split())
    assert "Best threshold by f1: 0.335" in text and "Not a threshold to use" in text and "it flags all 12 items" in text


def test_repeat_sends_distinct_samples_and_reports_flips(judge: JudgeServer, tmp_path: Path) -> None:
    """A judge that changes its mind on the second sample of one item: the item is unstable."""
    answers: dict[str, int] = {}

    def verdicts(request: Request) -> dict[str, Any]:
        claims = numbered_claims(request.prompt)
        seen = answers[claims[0]] = answers.get(claims[0], 0) + 1
        flip = claims[0] == "maybe so" and seen == 2
        return {"verdicts": [{"statement": claim, "verdict": "yes" if "WRONG" in claim or flip else "no", "reason": "r"} for claim in claims]}

    script_strictness(judge)
    judge.on("HallucinationVerdicts", verdicts)
    store = tmp_path / "r.sqlite"
    result = runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--repeat", "3", "--store", str(store), "--run", "rep", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["runs"] == ["rep", "rep~2", "rep~3"]
    stability = payload["stability"]["hallucination"]
    assert (stability["repeats"], stability["items"], stability["unstable"], stability["consistency"]) == (3, 5, 1, 0.8)
    worst = stability["per_item"][0]
    assert (worst["item_id"], worst["scores"], worst["flips"]) == ("i2", [0.0, 1.0, 0.0], 1)
    assert [agreement["binary"]["accuracy"]["value"] for agreement in stability["agreement"]] == [0.8, 1.0, 0.8]
    assert len(judge.requests_for("Claims")) == 3 * 5  # every repeat judged again


def test_results_export_every_item_as_csv_jsonl_and_json(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    store = tmp_path / "r.sqlite"
    assert runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--store", str(store), "--run", "x"]).exit_code == 0

    as_csv = runner.invoke(app, ["results", "--run", "x", "--format", "csv", "--store", str(store)])
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [row["item_id"] for row in rows] == ["i0", "i1", "i2", "i3", "i4"]
    assert rows[1]["score"] == "1.0" and rows[1]["expected"] == "true" and rows[1]["reason"] == "scripted reason"
    assert json.loads(rows[1]["step:preprocess"]) == {"claims": ["WRONG"]}

    lines = runner.invoke(app, ["results", "--run", "x", "--format", "jsonl", "--store", str(store)]).stdout.splitlines()
    assert [json.loads(line)["steps"]["analyze"]["result"]["verdicts"][0]["verdict"] for line in lines[1:3]] == ["yes", "no"]

    target = tmp_path / "x.json"
    runner.invoke(app, ["results", "--run", "x", "--format", "json", "-o", str(target), "--store", str(store)])
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert len(exported) == 5 and exported[0]["steps"]["analyze"]["prompt"].startswith("{") is False

    bad = runner.invoke(app, ["results", "--run", "x", "--format", "xlsx", "--store", str(store)])
    assert bad.exit_code == 2 and "--format must be one of csv, jsonl, json" in bad.stderr


def test_eval_limit_and_reproducible_sample(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    data, store = labelled_data(tmp_path), tmp_path / "r.sqlite"

    def judged(*extra: str) -> list[str]:
        run = f"r{len(list(tmp_path.glob('*')))}-{'-'.join(extra)}"
        result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", run, *extra])
        assert result.exit_code == 0, result.output
        lines = runner.invoke(app, ["results", "--run", run, "--format", "jsonl", "--store", str(store)]).stdout.splitlines()
        return [json.loads(line)["item_id"] for line in lines]

    assert judged("--limit", "2") == ["i0", "i1"]
    first = judged("--sample", "3", "--seed", "7")
    assert len(first) == 3 and judged("--sample", "3", "--seed", "7") == first
    assert judged("--sample", "3", "--seed", "8") != first or judged("--sample", "3", "--seed", "9") != first


def test_mistakes_in_the_tuning_commands_are_one_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    data, store = labelled_data(tmp_path), ["--store", str(tmp_path / "r.sqlite")]
    unlabelled = tmp_path / "plain.jsonl"
    unlabelled.write_text(json.dumps({"id": "a", "output": "ok", "context": ["c"]}) + "\n", encoding="utf-8")
    cases = [
        (["compare", str(data), "--scorer", "hallucination", *store], "compare needs two variants"),
        (["compare", str(data), "--scorer", "hallucination", "--scorer", "faithfulness", *store], "score in opposite directions"),
        (["calibrate", str(data), "--scorer", "hallucination", "--metric", "auc", *store], "--metric must be f1 or kappa"),
        (["calibrate", str(unlabelled), "--scorer", "hallucination", *store], "has an `expected` label for hallucination"),
        (["eval", str(data), "--scorer", "hallucination", "--compare", str(tmp_path / "nowhere.yaml"), *store], "nowhere.yaml"),
        (["results", "--format", "csv", *store], "--compare, --format and --item need --run NAME"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code != 0, args
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_eval_takes_options_and_scale_and_flags_at_half_of_it(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    result = runner.invoke(
        app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--scale", "10", "--option", "language=en", "--store", str(tmp_path / "r.sqlite"), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]["hallucination"]
    assert summary["max"] == 10.0
    assert summary["agreement"]["binary"]["threshold"] == 5.0  # half the scale
    assert summary["agreement"]["binary"]["accuracy"]["value"] == 0.8
    bad = runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--option", "nope=1", "--store", str(tmp_path / "r.sqlite")])
    assert bad.exit_code == 2 and "unknown option" in bad.stderr


def test_compare_exits_non_zero_when_a_variant_scores_nothing(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    judge.on("HallucinationVerdicts", lambda request: Reply.fail(400, "scripted failure") if "STRICT" in request.prompt else {
        "verdicts": [{"statement": claim, "verdict": "no", "reason": "r"} for claim in numbered_claims(request.prompt)]
    })
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps({"id": "a", "output": "ok", "context": ["c"], "expected": False}) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["compare", str(data), "--scorer", "hallucination", "--config", str(strict_variant(tmp_path)), "--store", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 1
    assert "error: nothing was scored by hallucination@strict" in result.stderr
    assert "1 error(s)" in result.stdout
