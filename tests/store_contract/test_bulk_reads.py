"""A big run read without its records (`ReadsInBulk`): its scores, its labels, its items in
the data's order, and its records as saved for an export, which agree with the records."""

from __future__ import annotations

import pytest
from helpers.stored_records import record, sample_records

from engine import RunInfo, Store
from engine.formatting import to_json
from engine.store import CONTENT_FIELDS, LabelledScore, ReadsInBulk


def bulk(store: Store) -> ReadsInBulk:
    if not isinstance(store, ReadsInBulk):
        pytest.skip(f"{type(store).__name__} is read record by record")
    return store


def test_scores_and_labels_are_read_without_the_records(store: Store) -> None:
    reads = bulk(store)
    store.save_many(sample_records())

    assert reads.score_values("nightly", "hallucination") == [0.0, 0.5]
    assert reads.score_values("nightly", "faithfulness") == [0.25, 1.0]
    assert reads.labelled_scores("nightly", "hallucination") == [LabelledScore("q1", 1, 0.5, True, None), LabelledScore("q2", 2, 0.0, False, None)]
    assert reads.labelled_scores("nightly", "faithfulness") == [LabelledScore("q1", 1, 0.25, 0.75, None)]


def test_items_are_listed_in_the_datas_order(store: Store) -> None:
    reads = bulk(store)
    store.save_many(sample_records())

    assert reads.item_count("nightly") == 5 and reads.item_count("none") == 0
    assert reads.item_ids("nightly", limit=10) == ["q1", "q2", "q3", "q4", "q5"]
    assert reads.item_ids("nightly", limit=2, every=2) == ["q1", "q3"]
    ids = reads.ordered_ids("nightly")
    listed = [(r.item_id, r.scorer_id) for r in reads.records_by_id(ids)]
    assert listed == [("q1", "faithfulness"), ("q1", "hallucination"), ("q2", "hallucination"), ("q3", "hallucination"), ("q4", "hallucination"), ("q5", "faithfulness")]
    assert reads.step_ids(ids) == ["preprocess", "analyze", "score", "generate_reason", "listed", "falsy", "empty", "long"]
    assert reads.records_by_id([ids[2], -1, ids[0]]) == [r for r in store.item_records("nightly", "q2")] + store.item_records("nightly", "q1")[1:]

    # Items without a place in the data (live replies) come last, by id as Python orders text.
    store.save_many([record("nightly", item, item_index=None) for item in ("é-item", "z-item", "a-item")])
    listed = [(r.item_id, r.scorer_id) for r in reads.records_by_id(reads.ordered_ids("nightly"))]
    assert listed[-3:] == [("a-item", "hallucination"), ("z-item", "hallucination"), ("é-item", "hallucination")]


def test_records_read_as_saved_hold_the_json_text_of_what_the_records_hold(store: Store) -> None:
    reads = bulk(store)
    saved = sample_records()
    store.save_many(saved)

    ids = reads.ordered_ids("nightly")
    for record, stored in zip(reads.records_by_id(ids), reads.stored_records(ids), strict=True):
        for field in CONTENT_FIELDS:
            value = getattr(record, field)
            assert stored.texts[field] == (None if value is None else to_json(value)), field
        assert stored.texts["expected"] == (None if record.expected is None else to_json(record.expected))
        assert stored.answers == {step_id: None if step.result is None else to_json(step.result) for step_id, step in record.steps.items()}
        assert stored.fields["item_id"] == record.item_id and stored.fields["score"] == record.score
        assert stored.fields["finished_at"] == record.finished_at and stored.fields["scorer_hash"] == record.scorer_hash


def test_an_export_of_what_was_saved_is_the_export_of_the_records(store: Store) -> None:
    from engine.runs.stored.reading import RunExport, export_records

    bulk(store)
    store.begin_run(RunInfo(name="nightly"))
    store.save_many(sample_records())
    as_saved, through_records = RunExport(store, "nightly"), RunExport(store, "nightly")
    steps = as_saved.step_ids()

    written = "".join(export_records(as_saved, "csv", steps))

    assert written == "".join(export_records(iter(through_records), "csv", steps))  # a plain iterator: every record read whole
    assert as_saved.as_saved and as_saved.count == through_records.count == 6
