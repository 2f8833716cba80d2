"""What a queue picks from a run and what its labels come to, from records stored as any runner
stores them: each filter, the stratified sample, labels as categories and numbers from three
reviewers (Krippendorff's alpha), a queue from a file, and align's split keeping a pair together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from engine.catalog.queues import LabelSpec, QueueSpec
from engine.cli import app
from engine.runs.align.split import LabelledItem, default_group, split_items
from engine.runs.labels import give_label, golden_set, people_agreement, queue_from_run, read_queue, settle_item
from engine.store import ResultRecord, RunInfo, open_store

runner = CliRunner()


def record(run: str, item: str, score: float | None, **fields: Any) -> ResultRecord:
    return ResultRecord(run=run, source="batch", item_id=item, item_index=int(item[1:]), scorer_id="hallucination", direction="lower_is_better",
                        score=score, output=f"answer {item}", context=["facts"], **fields)


def two_runs(path: Path) -> Any:
    store = open_store(path)
    for run in ("v1", "v2"):
        store.begin_run(RunInfo(name=run, meta={"thresholds": {"hallucination": 0.5}}))  # type: ignore[union-attr]
    store.save_many([record("v1", f"i{n}", n / 10) for n in range(10)])  # type: ignore[union-attr]
    store.save_many([  # type: ignore[union-attr]
        record("v2", "i0", 0.0, disagreement=True), record("v2", "i1", 0.9), record("v2", "i2", 0.45), record("v2", "i3", None, error="judge down"),
        record("v2", "i4", None, not_scorable="no context"), record("v2", "i5", 0.55), record("v2", "i6", 0.1), record("v2", "i7", 0.8),
        record("v2", "i8", 0.9), record("v2", "i9", 1.0),
    ])
    return store


def picked(store: Any, name: str, **options: Any) -> list[str]:
    queue_from_run(store, QueueSpec(name=name, scorer="hallucination"), "v2", **options)
    return [item.item_id for item in store.review_items(name)]


def test_each_filter_picks_what_it_says(tmp_path: Path) -> None:
    store = two_runs(tmp_path / "results.sqlite")
    assert picked(store, "jury", filters=["disagreement"]) == ["i0"]
    assert picked(store, "failed", filters=["failed"]) == ["i3", "i4"]
    assert picked(store, "near", filters=["near:0.05"]) == ["i2", "i5"]
    # v1 passed i1 (0.1) and i5 (0.5, at the threshold) and flagged i6 (0.6); v2 flags i1 (0.9) and i5 (0.55), passes i6 (0.1).
    assert picked(store, "flips", filters=["flips:v1"]) == ["i1", "i5", "i6"]
    assert picked(store, "any", filters=["failed", "disagreement"]) == ["i0", "i3", "i4"]
    [failed] = [item for item in store.review_items("failed") if item.item_id == "i3"]
    assert failed.judged.outcome == "error" and failed.judged.error == "judge down"


def test_a_sample_keeps_each_of_the_judges_verdicts(tmp_path: Path) -> None:
    store = two_runs(tmp_path / "results.sqlite")
    chosen = picked(store, "sample", sample=5, seed=4)
    # v2: 4 pass (i0, i2, i6 ... at 0.5 or below), 4 flag, 2 failed: each verdict keeps its share.
    judged = {item.item_id: item.judged for item in store.review_items("sample")}
    kinds = sorted("failed" if judged[item].score is None else "flag" if judged[item].score > 0.5 else "pass" for item in chosen)
    assert len(chosen) == 5 and set(kinds) == {"failed", "flag", "pass"}
    assert chosen == sorted(chosen, key=lambda item: int(item[1:]))  # in the run's order
    assert picked(store, "sample-again", sample=5, seed=4) == chosen


def test_categories_and_numbers_from_three_reviewers(tmp_path: Path) -> None:
    store = two_runs(tmp_path / "results.sqlite")
    categories = QueueSpec(name="kinds", scorer="hallucination", labels_per_item=3,
                           label=LabelSpec(kind="category", categories=["fine", "invented", "off topic"], flag=["invented"]))
    queue_from_run(store, categories, "v2", filters=["flips:v1"])
    for reviewer, given in (("Ana", ["invented", "fine"]), ("Ben", ["invented", "fine"]), ("Chloe", ["invented", "off topic"])):
        for item, value in zip(["i1", "i6"], given):
            give_label(store, "kinds", reviewer, item, value)
    labelled = read_queue(store, "kinds")
    agreement = people_agreement(labelled)
    assert [figure.name for figure in agreement.figures] == ["Krippendorff's alpha (nominal)"]
    assert [verdict.item_id for verdict in agreement.disagreements] == ["i6"]
    settle_item(store, "kinds", "i6", "off topic", "Dan")
    golden = golden_set(read_queue(store, "kinds"))
    assert [(row["id"], row["expected"], row["metadata"]["labels"]["label"]) for row in golden.items] == [
        ("i1", {"hallucination": True}, "invented"), ("i6", {"hallucination": False}, "off topic"),
    ]

    numbers = QueueSpec(name="numbers", scorer="hallucination", labels_per_item=3, label=LabelSpec(kind="score"))
    queue_from_run(store, numbers, "v2", filters=["near:0.05"])
    for reviewer, given in (("Ana", [0.4, 0.7]), ("Ben", [0.3, 0.9]), ("Chloe", [0.2, 0.8])):
        for item, value in zip(["i2", "i5"], given):
            give_label(store, "numbers", reviewer, item, value)
    agreement = people_agreement(read_queue(store, "numbers"))
    assert [(figure.name, figure.what) for figure in agreement.figures] == [
        ("Krippendorff's alpha (interval)", "the numbers given"), ("Krippendorff's alpha (nominal)", "their pass/flag reading"),
    ]
    assert agreement.figures[1].estimate.value == 1.0  # each item read the same side of 0.5 by all
    assert [(row["id"], row["expected"]["hallucination"]) for row in golden_set(read_queue(store, "numbers")).items] == [("i2", 0.3), ("i5", 0.8)]
    settled = runner.invoke(app, ["queue", "settle", "numbers", "i2", "--label", "0.35", "--by", "Dan", "--store", str(tmp_path / "results.sqlite")])
    assert settled.exit_code == 0 and "settled as 0.35 by Dan" in settled.stdout
    refused = runner.invoke(app, ["queue", "label", "numbers", "i2", "--label", "7", "--by", "Dan", "--store", str(tmp_path / "results.sqlite")])
    assert refused.exit_code == 2 and "label: this queue asks for a number from 0 to 1, got '7'" in refused.stderr


def test_a_queue_from_a_file_is_labelled_from_scratch(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps({"id": f"a{n}", "input": "q", "output": f"answer {n}", "context": ["c"]}) + "\n" for n in range(5)), encoding="utf-8")
    store = str(tmp_path / "results.sqlite")
    made = runner.invoke(app, ["queue", "create", "fresh", "--from-file", str(data), "--scorer", "hallucination", "--store", store])
    assert made.exit_code == 0, made.stderr
    assert "Queue fresh: 5 item(s) of file answers.jsonl for hallucination" in made.stdout
    opened = open_store(store)
    assert [item.judged for item in opened.review_items("fresh")] == [None] * 5  # type: ignore[union-attr]
    refused = runner.invoke(app, ["queue", "create", "other", "--from-file", str(data), "--store", store])
    assert refused.exit_code == 2 and "queue 'other' is not declared in the catalog" in refused.stderr
    listed = runner.invoke(app, ["queue", "list", "--store", store, "--json"])
    assert json.loads(listed.stdout) == [{"name": "fresh", "scorer": "hallucination", "source": "file answers.jsonl", "items": 5, "done": 0}]
    deleted = runner.invoke(app, ["queue", "delete", "fresh", "--store", store])
    assert deleted.exit_code == 0 and "Queue fresh deleted, with its 0 label(s)" in deleted.stdout
    gone = runner.invoke(app, ["queue", "status", "fresh", "--store", store])
    assert gone.exit_code == 2 and "no queue named 'fresh' in the results store (queues: none)" in gone.stderr


def test_align_keeps_one_questions_answers_on_one_side_of_the_split() -> None:
    pairs = Path(__file__).resolve().parent.parent / "examples" / "halueval_qa_pairs.jsonl"
    rows = [json.loads(line) for line in pairs.read_text(encoding="utf-8").splitlines()]
    items = [LabelledItem(id=row["id"], raw=row, expected=row["expected"]["hallucination"]) for row in rows]
    assert default_group(items) == "pair"
    split = split_items(items, 0, "pairs", "pair")
    sides = {}
    for side, members in (("train", split.train), ("dev", split.dev), ("test", split.test)):
        for item in members:
            sides.setdefault(item.raw["metadata"]["pair"], set()).add(side)
    assert all(len(found) == 1 for found in sides.values())
    assert len(split.train) + len(split.dev) + len(split.test) == len(items)
    assert abs(len(split.dev) - 0.3 * len(items)) <= 2 and sum(item.expected for item in split.test) * 2 == len(split.test)
    # Without the group, some pair straddles two sides.
    loose = split_items(items, 0, "pairs")
    where = {item.id: side for side, members in (("train", loose.train), ("dev", loose.dev), ("test", loose.test)) for item in members}
    assert any(where[f"{pair}-faithful"] != where[f"{pair}-hallucinated"] for pair in {row["metadata"]["pair"] for row in rows})


def test_the_judges_claims_are_found_in_the_output_as_written_or_reworded() -> None:
    from engine.runs.labels.reviewing import highlights

    output = "The Eiffel Tower is in Paris. It was finished in 1889, and it is 330 metres tall."
    # As written (any case), spelt otherwise (meters), and a claim the output does not make.
    found = highlights(output, ["the eiffel tower is in Paris.", "it is 330 meters tall", "It is painted gold."])
    assert [(span["claim"], output[span["start"] : span["end"]]) for span in found] == [
        (0, "The Eiffel Tower is in Paris"), (1, "it is 330 metres tall"),
    ]


def test_a_refused_label_holds_the_item_for_nobody(tmp_path: Path) -> None:
    store = two_runs(tmp_path / "results.sqlite")
    queue_from_run(store, QueueSpec(name="numbers", scorer="hallucination", label=LabelSpec(kind="score")), "v2", filters=["near:0.05"])
    where = ["--store", str(tmp_path / "results.sqlite")]
    for wrong in ("-0.1", "1.5", "nan", "inf"):
        refused = runner.invoke(app, ["queue", "label", "numbers", "i2", f"--label={wrong}", "--by", "Xan", *where])
        assert refused.exit_code == 2 and "label: this queue asks for a number from 0 to 1" in refused.stderr, refused.stderr
        taken = runner.invoke(app, ["queue", "label", "numbers", "i2", "--label", "0.3", "--by", f"Yui-{wrong}", *where])
        assert taken.exit_code == 0, taken.stderr
    given = [(label.reviewer, label.value) for label in read_queue(store, "numbers").labels if label.item_id == "i2"]
    assert sorted(given) == [("Yui--0.1", 0.3), ("Yui-1.5", 0.3), ("Yui-inf", 0.3), ("Yui-nan", 0.3)]
