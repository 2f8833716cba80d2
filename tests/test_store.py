"""The SQLite store beyond the contract every store keeps (tests/store_contract): several
processes writing one file, in WAL mode."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from helpers.stored_records import record

from engine import SQLiteStore


def _write_from_process(path: str, process: int) -> None:
    with SQLiteStore(path) as store:
        for n in range(40):
            store.save(record(f"p{process}", f"item-{n}"))


def test_several_processes_write_one_store(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_from_process, args=(path, process)) for process in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0, 0, 0]
    with SQLiteStore(path) as store:
        assert len(store.query()) == 120
        journal = store.database.connection.execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"
