"""The stores over SQL keep each paragraph of a step's text once (engine/store/contents.py):
shared by the items, scorers and runs that hold it, and gone from the database with the last
record that holds it."""

from __future__ import annotations

import pytest

from engine import Store
from engine.formatting import to_json
from engine.store.contents import PIECE_MIN, unpack
from engine.store.sql import SQLResults

from .samples import START, judged_steps, live_record, sample_records


def over_sql(store: Store) -> SQLResults:
    if not isinstance(store, SQLResults):
        pytest.skip(f"{type(store).__name__} keeps its text its own way")
    return store


def kept_texts(store: SQLResults) -> list[str]:
    return [unpack(bytes(row["body"])) for row in store._read("SELECT body FROM contents")]


def long_paragraphs(*texts: str | None) -> set[str]:
    return {part for text in texts if text for part in text.split("\n\n") if len(part) >= PIECE_MIN}


def test_each_long_paragraph_is_kept_once_for_every_item_scorer_and_run(store: Store) -> None:
    sql = over_sql(store)
    saved = sample_records()
    store.save_many(saved)
    kept = kept_texts(sql)
    store.save_many(sample_records("rerun"))  # the same data judged again under another name

    steps = [step for record in saved for steps in [record.steps, *(judge.steps for judge in record.judges or [])] for step in steps.values()]
    answers = [to_json(step.result) for step in steps if step.result is not None]
    expected = long_paragraphs(*(text for step in steps for text in (step.prompt, step.system_prompt, step.thinking)), *answers)
    assert sorted(kept) == sorted(expected)
    assert sorted(kept_texts(sql)) == sorted(kept)
    assert store.query(run="rerun") == [record.model_copy(update={"run": "rerun"}) for record in sorted(saved, key=lambda r: r.finished_at, reverse=True)]


def test_a_deleted_or_pruned_records_text_leaves_the_database_with_it(store: Store) -> None:
    sql = over_sql(store)
    shared = sample_records()
    own = live_record("other", "mine", START, steps=judged_steps("a reply only this run holds " * 4, ["a context only this run holds " * 4]))
    store.save_many([*shared, own])
    assert any("only this run holds" in text for text in kept_texts(sql))

    store.delete_run("other")
    assert not any("only this run holds" in text for text in kept_texts(sql))
    assert len(store.query(run="nightly")) == len(shared)  # whole: their text is theirs

    store.prune_run("nightly", keep=set())
    assert kept_texts(sql) == [] and store.query(run="nightly") == []


def test_a_live_replys_expired_content_is_gone_from_its_row(store: Store) -> None:
    sql = over_sql(store)
    store.save(live_record("live", "old", START))
    store.expire_content("live", START.replace(year=2027))
    (row,) = sql._read("SELECT item FROM results")
    assert row["item"] is None
