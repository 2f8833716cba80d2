"""Labels from people, without a browser: review queues made from a stored run, reviewers'
labels kept with who and when, people's agreement (Cohen's kappa, Krippendorff's alpha) beside
the judge's, settling, the golden set every command reading labels takes, and the queues'
declarations checked at their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine.cli import app
from engine.runs.labels import cohen_kappa, krippendorff_alpha
from engine.store import open_store
from engine.testing import JudgeServer

runner = CliRunner()


def test_krippendorffs_alpha_gives_the_published_figures() -> None:
    # Krippendorff's worked example: 4 observers, 12 units, some values missing.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[row[unit] for row in observers if row[unit] is not None] for unit in range(12)]
    assert round(krippendorff_alpha(units, "nominal") or 0, 3) == 0.743
    assert round(krippendorff_alpha(units, "interval") or 0, 3) == 0.849
    assert krippendorff_alpha([["a", "a"], ["a", "a"]]) is None  # every label the same: nothing to measure


def test_cohens_kappa_of_two_reviewers() -> None:
    # 20 items: both flag 5, both pass 10, they differ on 5 (3 one way, 2 the other).
    pairs = [("flag", "flag")] * 5 + [("pass", "pass")] * 10 + [("flag", "pass")] * 3 + [("pass", "flag")] * 2
    # observed 0.75; chance 0.4*0.35 + 0.6*0.65 = 0.53; kappa = 0.22/0.47
    assert round(cohen_kappa(pairs) or 0, 4) == round(0.22 / 0.47, 4)


def write_items(path: Path) -> Path:
    rows = []
    for n in range(24):
        output = f"Fact {n} holds" if n % 3 == 0 else f"Fact {n} is WRONG" if n % 3 == 1 else f"Fact {n} holds. It is WRONG too"
        rows.append({"id": f"item-{n}", "input": f"Question {n}?", "output": output, "context": [f"Fact {n} holds."], "metadata": {"pair": f"q{n // 2}"}})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def invoke(*arguments: str) -> str:
    result = runner.invoke(app, list(arguments))
    assert result.exit_code == 0, (arguments, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def stored_run(judge: JudgeServer, tmp_path: Path) -> Path:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"
    data = write_items(tmp_path / "production.jsonl")
    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--run", "production", "--store", str(store), "--model", "openai/judge"])
    assert result.exit_code == 0, result.stderr
    return store


def test_from_a_stored_run_to_a_settled_golden_set_and_a_calibrated_threshold(stored_run: Path, tmp_path: Path) -> None:
    store = str(stored_run)
    made = invoke("queue", "create", "review", "--from-run", "production", "--sample", "12", "--seed", "3", "--labels-per-item", "2", "--store", store)
    assert "Queue review: 12 item(s) of run production for hallucination, picked by sample 12 (seed 3)" in made
    items = [item.item_id for item in open_store(store).review_items("review")]  # type: ignore[union-attr]
    for position, item in enumerate(items):
        flagged = int(item.split("-")[1]) % 3 != 0
        invoke("queue", "label", "review", item, "--label", "flag" if flagged else "pass", "--by", "Ana", "--store", store)
        # Ben disagrees with Ana on the first item only.
        ben = (not flagged) if position == 0 else flagged
        invoke("queue", "label", "review", item, "--label", "flag" if ben else "pass", "--by", "Ben", "--note", "key sk-live-abcdefghijklmnop1234 seen", "--store", store)

    status = json.loads(invoke("queue", "status", "review", "--store", store, "--json"))
    people = status["people"]
    assert people["reviewers"] == ["Ana", "Ben"] and people["labels"] == 24
    assert [found["name"] for found in people["figures"]] == ["Cohen's kappa"]
    assert people["figures"][0]["estimate"]["value"] < 1 and people["figures"][0]["estimate"]["low"] is not None
    assert [verdict["item_id"] for verdict in people["disagreements"]] == [items[0]]
    assert status["judge"]["labelled"] == 11  # the item they disagree on is not a label yet
    assert "cannot be expected to agree with people better than people agree with each other" in status["ceiling_note"]
    shown = invoke("queue", "status", "review", "--store", store)
    assert "Cohen's kappa" in shown and "items people disagree on" in shown and items[0] in shown

    settled = invoke("queue", "settle", "review", items[0], "--label", "flag" if int(items[0].split("-")[1]) % 3 else "pass", "--by", "Chloe", "--store", store)
    assert "settled as" in settled and "by Chloe" in settled
    golden = tmp_path / "golden.jsonl"
    assert "Wrote 12 labelled item(s)" in invoke("queue", "export", "review", "-o", str(golden), "--store", store)
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines()]
    first = next(row for row in rows if row["id"] == items[0])
    assert first["metadata"]["labels"]["settled_by"] == "Chloe"
    assert [given["by"] for given in first["metadata"]["labels"]["labels"]] == ["Ana", "Ben"]
    assert "sk-live" not in golden.read_text(encoding="utf-8")  # notes pass through the scrubber
    assert all(isinstance(row["expected"]["hallucination"], bool) for row in rows)

    # Every command reading labels takes the file, and the queue itself.
    from_file = json.loads(invoke("calibrate", str(golden), "--scorer", "hallucination", "--model", "openai/judge", "--store", store, "--json"))
    from_queue = json.loads(invoke("calibrate", "queue:review", "--scorer", "hallucination", "--model", "openai/judge", "--store", store, "--json"))
    assert from_file["labelled"] == from_queue["labelled"] == 12
    assert from_file["best"]["threshold"] == from_queue["best"]["threshold"]
    evaluated = invoke("eval", "queue:review", "--scorer", "hallucination", "--model", "openai/judge", "--store", store, "--json")
    assert json.loads(evaluated)["summary"]["hallucination"]["agreement"]["labelled"] == 12


def test_filters_pick_what_a_reviewer_wants(stored_run: Path) -> None:
    store = str(stored_run)
    invoke("queue", "create", "near", "--from-run", "production", "--filter", "near:0.1", "--store", store)
    near = open_store(store).review_items("near")  # type: ignore[union-attr]
    assert {item.judged.score for item in near if item.judged} == {0.5}
    refused = runner.invoke(app, ["queue", "create", "x", "--from-run", "production", "--filter", "closest", "--store", store])
    assert refused.exit_code == 2 and "unknown filter; the filters are disagreement, near[:MARGIN], flips:RUN, failed and unsure[:BOUND]" in refused.stderr
    again = runner.invoke(app, ["queue", "create", "near", "--from-run", "production", "--store", store])
    assert again.exit_code == 2 and "a queue named 'near' exists already" in again.stderr


def test_a_queue_declaration_is_checked_at_its_line(tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text(
        "scorers:\n"
        "  strict:\n"
        "    extends: hallucination\n"
        "queues:\n"
        "  review:\n"
        "    scorer: strict\n"
        "    label:\n"
        "      kind: category\n"
        "      categories: [fine, invented]\n"
        "      flag: [made up]\n",
        encoding="utf-8",
    )
    checked = runner.invoke(app, ["check", str(catalog)])
    assert checked.exit_code == 1
    assert f"{catalog}:10" in checked.stderr + checked.stdout and "'made up' is not one of the categories (fine, invented)" in checked.stderr + checked.stdout
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("flag: [made up]", "flag: [invented]\n    steps:\n      answers: judge.verdicts\n      choices: ['yes', 'no']"), encoding="utf-8")
    checked = runner.invoke(app, ["check", str(catalog)])
    assert checked.exit_code == 1
    assert f"{catalog}:12" in checked.stderr + checked.stdout and "strict has no step 'judge'" in checked.stderr + checked.stdout


def test_check_tells_every_queue_problem_in_one_run(tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text(
        "scorers:\n"
        "  strict:\n"
        "    extends: hallucination\n"
        "queues:\n"
        "  one:\n"
        "    scorer: strict\n"
        "    lease: 10\n"
        "  two:\n"
        "    scorer: strikt\n"
        "  three:\n"
        "    scorer: strict\n"
        "    steps:\n"
        "      answers: analyze.verdictz\n"
        "      choices: ['yes', 'no']\n"
        "  four:\n"
        "    scorer: strict\n"
        "    labels_per_item: 0\n"
        "    blnd: true\n",
        encoding="utf-8",
    )
    checked = runner.invoke(app, ["check", str(catalog)])
    assert checked.exit_code == 1
    said = checked.stderr + checked.stdout
    assert f"{catalog}:7:12: queues.one.lease: lease 10: expected a duration with its unit, such as 90s, 15m or 2h" in said
    assert f"{catalog}:9: queues.two.scorer: unknown scorer 'strikt'; did you mean 'strict'?" in said
    assert f"{catalog}:13: queues.three.steps.answers: step 'analyze' answers no field 'verdictz'; did you mean 'verdicts'?" in said
    assert f"{catalog}:17:22: queues.four.labels_per_item:" in said and f"{catalog}:18:5: queues.four.blnd: unknown key 'blnd'" in said
    assert "5 problems in 1 catalog" in said


def test_the_scorecard_scores_a_queues_golden_set(stored_run: Path, judge: JudgeServer, tmp_path: Path) -> None:
    import subprocess
    import sys

    from engine.runs.labels import give_label

    store = str(stored_run)
    invoke("queue", "create", "scorecard", "--from-run", "production", "--sample", "9", "--store", store)
    opened = open_store(store)
    for item in opened.review_items("scorecard"):  # type: ignore[union-attr]
        give_label(opened, "scorecard", "Ana", item.item_id, "pass" if int(item.item_id.split("-")[1]) % 3 == 0 else "flag")
    opened.close()  # type: ignore[union-attr]
    bench = Path(__file__).resolve().parent.parent / "bench" / "judge_quality.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--model", "openai/judge", "--base-url", judge.base_url, "--queue", "scorecard", "--labels-store", store,
         "--repeats", "1", "--store", str(tmp_path / "quality.sqlite"), "--json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert (row["set"], row["scorer"], row["items"]) == ("queue:scorecard", "hallucination", 9)
    assert row["kappa"]["value"] is not None


def test_status_names_the_claims_the_judge_got_wrong(stored_run: Path, tmp_path: Path) -> None:
    from engine.runs.labels import give_label

    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "scorers: {}\nqueues:\n  claims:\n    scorer: hallucination\n    steps:\n      answers: analyze.verdicts\n      judged: verdict\n"
        "      choices: ['yes', 'no']\n",
        encoding="utf-8",
    )
    store = str(stored_run)
    invoke("queue", "create", "claims", "--from-run", "production", "--config", str(catalog), "--store", store)
    opened = open_store(store)
    # item-2: "Fact 2 holds. It is WRONG too": the judge says no, then yes; the reviewer says yes to both.
    give_label(opened, "claims", "Ana", "item-2", "flag", answers=["yes", "yes"])
    give_label(opened, "claims", "Ana", "item-5", "flag", answers=["no", "yes"])
    opened.close()  # type: ignore[union-attr]
    shown = invoke("queue", "status", "claims", "--store", store)
    assert "Each answer of analyze.verdicts: the judge answered as people did on 3 of 4 (0.75" in shown
    assert "item-2" in shown.split("answers the judge got wrong", 1)[1] and "Fact 2 holds" in shown
