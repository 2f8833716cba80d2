"""The stores over SQL keep a long paragraph of a step's text, or a long answer, that two
records hold once, shared by the items, scorers and runs that hold it (engine/store/contents.py);
a record's own text stays with it. Either goes from the database with the last record that
holds it."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers.stored_records import START, judged_steps, live_record, sample_records

from engine import Store
from engine.store import ResultRecord
from engine.store.contents import long_texts, unpack
from engine.store.sql import SQLResults


def over_sql(store: Store) -> SQLResults:
    if not isinstance(store, SQLResults):
        pytest.skip(f"{type(store).__name__} keeps its text its own way")
    return store


def kept_texts(store: SQLResults) -> list[str]:
    return [unpack(bytes(row["body"])) for row in store._read("SELECT body FROM contents WHERE body IS NOT NULL")]


def shared_texts(*runs: list[ResultRecord]) -> set[str]:
    """The long texts that two records or more hold (a record's own stay in its blob)."""
    counts = Counter(text for records in runs for record in records for text in long_texts(record.steps, record.judges, {}))
    return {text for text, count in counts.items() if count > 1}


def test_a_long_text_two_records_hold_is_kept_once_and_a_records_own_stays_with_it(store: Store) -> None:
    sql = over_sql(store)
    saved = sample_records()
    store.save_many(saved)
    first = sorted(kept_texts(sql))
    store.save_many(sample_records("rerun"))  # the same data judged again under another name
    second = sorted(kept_texts(sql))
    store.save_many(sample_records("again"))

    assert first == sorted(shared_texts(saved)) and 0 < len(first) < len(second)  # the template's paragraphs, not each item's
    assert second == sorted(shared_texts(saved, saved))  # seen again: every long text is a piece now
    assert sorted(kept_texts(sql)) == second  # and kept once for every later run
    for run in ("nightly", "rerun", "again"):
        expected = [record.model_copy(update={"run": run}) for record in sorted(saved, key=lambda r: r.finished_at, reverse=True)]
        assert store.query(run=run) == expected


def test_records_saved_one_at_a_time_share_their_template_from_the_second(store: Store) -> None:
    sql = over_sql(store)
    first, second = sample_records()[:2]
    store.save(first)
    assert kept_texts(sql) == []  # seen once: kept in the record
    store.save(second)

    assert sorted(kept_texts(sql)) == sorted(shared_texts([first, second]))
    assert store.query(run="nightly") == [second, first]


def test_a_deleted_or_pruned_records_text_leaves_the_database_with_it(store: Store) -> None:
    sql = over_sql(store)
    shared = sample_records()
    steps = judged_steps("a reply only this run holds " * 4, ["a context only this run holds " * 4])
    own = [live_record("other", item, START, steps=steps) for item in ("mine", "also mine")]
    store.save_many([*shared, *own])
    assert any("only this run holds" in text for text in kept_texts(sql))

    store.delete_run("other")
    assert not any("only this run holds" in text for text in kept_texts(sql))
    assert sql._read("SELECT COUNT(*) AS n FROM contents WHERE body IS NULL")[0]["n"] == 0  # nor its digests
    assert len(store.query(run="nightly")) == len(shared)  # whole: their text is theirs

    store.prune_run("nightly", keep=set())
    assert kept_texts(sql) == [] and store.query(run="nightly") == []


def test_a_live_replys_expired_content_is_gone_from_its_row(store: Store) -> None:
    sql = over_sql(store)
    store.save(live_record("live", "old", START))
    store.expire_content("live", START.replace(year=2027))
    (row,) = sql._read("SELECT item FROM results")
    assert row["item"] is None
