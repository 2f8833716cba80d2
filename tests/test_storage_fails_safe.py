"""Storage that fails safe: a store that cannot save stops the run after a few failed saves
(one line with the cause, counts that add up, the judge's answers kept in the response cache
so a rerun costs nothing), a failing response cache never ends a run, and a valid store on a
read-only disk is read as it is."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from engine.testing import JudgeServer
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import SQLiteStore, StoreError, create_hallucination_scorer, run_evals
from engine.cli import app

runner = CliRunner()
ITEMS = 120


def write_items(path: Path, count: int = ITEMS) -> Path:
    # Each item its own text, so each costs its own judge calls (no cache hit between items).
    rows = [json.dumps({"id": f"i{n}", "input": f"q{n}", "output": f"ok {n}. WRONG {n}", "context": ["facts"]}) for n in range(count)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def fill(disk: Path, leave: int) -> None:
    """Take every byte of `disk` but about `leave`."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 16384)
    except OSError:
        pass
    finally:
        os.close(descriptor)
    os.truncate(filler, max(filler.stat().st_size - leave, 0))


def test_a_store_that_cannot_save_stops_the_run_and_a_rerun_costs_nothing_more(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.02)
    data = write_items(tmp_path / "data.jsonl")
    store = SQLiteStore(tmp_path / "r.sqlite")
    # The database may not grow: every batch of results fails to save, as on a full disk.
    pages = store.database.connection.execute("PRAGMA page_count").fetchone()[0]
    store.database.connection.execute(f"PRAGMA max_page_count={pages + 1}")

    result = run_evals(data, [create_hallucination_scorer()], store=store, run="full", concurrency=2)

    assert result.status == "failed" and result.passed is False
    assert result.stopped_by is not None and result.stopped_by.startswith(f"results could not be saved in {tmp_path / 'r.sqlite'}: ")
    assert "full" in result.stopped_by and result.stopped_by_kind == "StoreError"
    assert result.counts.items < ITEMS / 2, "new items kept being started (and paid for) after the saves failed"
    assert result.counts.failed <= result.counts.items  # an item counts once, however many results it lost
    assert result.counts.failed + result.counts.completed == result.counts.items
    assert result.summary["hallucination"].count + result.summary["hallucination"].errors == result.counts.items
    paid = len(judge.requests)

    # Room again: the rerun judges only what was never asked; every answer given is reused.
    store.database.connection.execute("PRAGMA max_page_count=1073741823")
    again = run_evals(data, [create_hallucination_scorer()], store=store, run="full", concurrency=2)
    store.close()

    assert again.status == "complete" and again.counts.completed == ITEMS
    clean = judge_calls_of_a_clean_run(judge, tmp_path)
    assert paid + len(again_requests(judge, paid)) == clean


def test_a_store_that_cannot_read_a_resumed_items_results_stops_the_run_with_its_summary(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", 5)
    store = SQLiteStore(tmp_path / "r.sqlite")
    first = run_evals(data, [create_hallucination_scorer()], store=store, run="grown")
    assert first.status == "complete"
    write_items(data, 12)  # the data grew: the rerun reads back the first five, judges the rest

    def reads_fail(action: int, table: str | None, column: str | None, *_: object) -> int:
        # The store's own SQLite refusing what resuming reads (a saved result's fingerprint);
        # saving still works, so what the run did before the failure is kept.
        return sqlite3.SQLITE_DENY if (action, table, column) == (sqlite3.SQLITE_READ, "results", "item_hash") else sqlite3.SQLITE_OK

    def after_the_first_new_item(result: object) -> None:
        if getattr(result, "id", None) == "i5":
            store.database.connection.set_authorizer(reads_fail)

    result = run_evals(data, [create_hallucination_scorer()], store=store, run="grown", concurrency=1, on_item_complete=after_the_first_new_item)

    assert result.status == "failed" and result.passed is False and result.stopped_by_kind == "StoreError"
    assert result.stopped_by is not None and result.stopped_by.startswith(f"saved results could not be read from {tmp_path / 'r.sqlite'}: ")
    assert "item_hash" in result.stopped_by and "\n" not in result.stopped_by
    assert 6 <= result.counts.items < 12 and result.counts.reused == 5
    assert result.counts.completed + result.counts.failed == result.counts.items
    store.database.connection.set_authorizer(None)
    kept = {record.item_id for record in store.query(run="grown") if record.ok}
    assert {f"i{n}" for n in range(6)} <= kept  # every saved result stays, the new one too
    assert store.get_run("grown").status == "failed"  # type: ignore[union-attr]

    again = run_evals(data, [create_hallucination_scorer()], store=store, run="grown")
    store.close()
    assert again.status == "complete" and again.counts.items == 12 and again.counts.reused >= 6


def again_requests(judge: JudgeServer, before: int) -> list[object]:
    return list(judge.requests[before:])


def judge_calls_of_a_clean_run(judge: JudgeServer, tmp_path: Path) -> int:
    """The calls the same data costs in one clean run, with nothing cached."""
    judge.requests.clear()
    run_evals(write_items(tmp_path / "clean.jsonl"), [create_hallucination_scorer()], store=tmp_path / "clean.sqlite", cache=False)
    return len(judge.requests)


@pytest.mark.slow
@pytest.mark.parametrize("room", [16 * 1024, 256 * 1024], ids=["full-at-start", "full-mid-run"])
def test_a_full_disk_under_the_store_and_the_cache_is_one_line_not_a_crash(judge: JudgeServer, tmp_path: Path, small_disk: Path, room: int) -> None:
    script_hallucination(judge, delay=0.02)
    data = write_items(tmp_path / "data.jsonl")
    store, cache = small_disk / "r.sqlite", small_disk / "cache.sqlite"
    where = ["--store", str(store), "--cache", str(cache)]
    warm = runner.invoke(app, ["eval", str(write_items(tmp_path / "one.jsonl", 1)), "--scorer", "hallucination", *where, "--run", "warm"])
    assert warm.exit_code == 0, warm.output
    fill(small_disk, leave=room)
    judge.requests.clear()

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", *where, "--run", "full", "--concurrency", "2"])

    output = result.output
    assert result.exit_code == 1, output
    assert "unexpected error" not in output and "Traceback" not in output
    assert "Saved as run" not in output
    assert len(judge.requests) < ITEMS * 3 / 2, f"{len(judge.requests)} judge calls: the run went on paying after the saves failed"
    if room < 64 * 1024:  # no room even to start the run: nothing is asked
        (line,) = output.strip().splitlines()
        assert line.startswith("error: ") and str(store) in line and "is full" in line and judge.requests == []
        return
    (stopped,) = [line for line in output.splitlines() if line.startswith("error: the run stopped: ")]
    assert stopped.startswith(f"error: the run stopped: results could not be saved in {store}: ") and "is full" in stopped
    for line in output.splitlines():  # never more failed items than items
        if " items failed" in line:
            failed, _, total = line.split("error: ", 1)[-1].split(" items failed")[0].partition(" of ")
            assert int(failed) <= int(total), line


@pytest.mark.slow
def test_a_valid_store_on_a_read_only_disk_is_read_as_it_is(judge: JudgeServer, tmp_path: Path, small_disk: Path) -> None:
    script_hallucination(judge)
    store = small_disk / "r.sqlite"
    made = runner.invoke(app, ["eval", str(write_items(tmp_path / "data.jsonl", 3)), "--scorer", "hallucination", "--store", str(store), "--run", "kept"])
    assert made.exit_code == 0, made.output
    remounted = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
    if remounted.returncode != 0:
        pytest.skip(f"cannot make the filesystem read-only here: {remounted.stderr.strip()}")

    listed = runner.invoke(app, ["results", "--store", str(store)])
    shown = runner.invoke(app, ["results", "--run", "kept", "--store", str(store)])
    report = runner.invoke(app, ["report", "kept", "--store", str(store), "-o", str(tmp_path / "report.html")])

    assert listed.exit_code == 0 and "kept" in listed.output, listed.output
    assert shown.exit_code == 0 and "hallucination" in shown.output, shown.output
    assert report.exit_code == 0 and (tmp_path / "report.html").stat().st_size > 0, report.output
    # Writing to it is still refused, in one line.
    refused = runner.invoke(app, ["eval", str(tmp_path / "data.jsonl"), "--scorer", "hallucination", "--store", str(store), "--run", "more"])
    assert refused.exit_code != 0 and "Traceback" not in refused.output and "not a results database" not in refused.output


def test_a_failing_response_cache_never_stops_a_run(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script_hallucination(judge)
    cache_file = tmp_path / "cache.sqlite"
    from engine.judge import ResponseCache

    with ResponseCache(cache_file) as cache:
        database = cache.storage.database
        assert hasattr(database, "connection")
        pages = database.connection.execute("PRAGMA page_count").fetchone()[0]
        database.connection.execute(f"PRAGMA max_page_count={pages}")  # as full as a full disk

        result = run_evals(write_items(tmp_path / "data.jsonl", 20), [create_hallucination_scorer()], cache=cache, concurrency=2)

    assert result.status == "complete" and result.counts.completed == 20
    warnings = [record.getMessage() for record in caplog.records if record.name == "engine.cache"]
    assert len(warnings) == 1 and "full" in warnings[0] and "judging without it" in warnings[0], warnings


def test_a_failed_write_is_a_store_error_naming_the_file_and_the_cause(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite")
    store.database.connection.execute("PRAGMA max_page_count=1")
    from engine import RunInfo

    with pytest.raises(StoreError) as raised:
        for n in range(50):
            store.begin_run(RunInfo(name=f"run-{n}", meta={"padding": "x" * 2000}))
    store.close()
    assert str(raised.value) == f"{tmp_path / 'r.sqlite'}: the disk (or the database's size limit) is full"
    assert isinstance(raised.value.__cause__, sqlite3.Error)
