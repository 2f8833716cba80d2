"""A `scorers` command stopped by a signal in the middle of its run, as Ctrl-C or a CI
runner's SIGTERM stops it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.store import SQLiteStore


@dataclass(frozen=True)
class Stopped:
    returncode: int
    stdout: str
    stderr: str
    seconds_to_exit: float  # from the signal to the process's end


def stop_mid_run(arguments: list[str], cwd: Path, signal_number: int, when: Callable[[], bool]) -> Stopped:
    """Start `scorers ARGUMENTS`, send it `signal_number` once `when()` holds (within 60 s,
    while it still runs), and return how it ended."""
    command = [str(Path(sys.executable).parent / "scorers"), *arguments]
    process = subprocess.Popen(command, cwd=cwd, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not when():
            assert time.monotonic() < deadline and process.poll() is None, "the run ended, or never got there, before the signal"
            time.sleep(0.05)
        process.send_signal(signal_number)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=60)
        return Stopped(process.returncode, stdout, stderr, time.monotonic() - sent)
    finally:
        if process.poll() is None:
            process.kill()


def has_saved(store: Path, run: str, at_least: int) -> Callable[[], bool]:
    """Whether `run` has saved `at_least` scored results in the SQLite `store` yet."""

    def enough() -> bool:
        if not store.exists():
            return False
        with SQLiteStore(store) as results:
            return len(results.query(run=run, errors=False)) >= at_least

    return enough
