"""Big runs stay small when read back: the figures behind "Reading a big run" in
docs/performance.md (not a test).

    python bench/bench_big_runs.py [--rows 100000] [--store PATH]

Fills an SQLite store with one run of `rows` labelled results of one scorer, as a batch run
would leave them (input, output, context, label, two steps with their prompts and answers,
tokens and usage rows), by direct inserts in big transactions; then times `scorers results
--run`, `scorers report` and `scorers results --run --format csv`, each in a process of its
own, and prints its wall time, its peak resident memory and, for the report, the size of the
page.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from engine.store import SQLiteStore
from engine.store.sqlite import _COLUMNS

RUN = "big"


def fill(path: Path, rows: int) -> None:
    store = SQLiteStore(path)
    store.database.connection.execute("PRAGMA synchronous=OFF")  # a benchmark's fixture, not a run
    now = datetime.now(timezone.utc).timestamp()
    meta = {"scorers": {"hallucination": {"hash": "h", "model": "openai/gpt-4o-mini", "flag_threshold": 0.5}}, "thresholds": {}}
    with store.database.transaction() as db:
        db.execute(
            "INSERT INTO runs (name, source, status, created_at, updated_at, meta) VALUES (?, 'batch', 'complete', ?, ?, ?)",
            (RUN, now, now, json.dumps(meta)),
        )
    chance = random.Random(7)
    prompt = "Extract every factual claim of the output below.\n<output>\n{output}\n</output>\n" + "Rules: one claim per sentence. " * 20
    placeholders = ", ".join("?" for _ in _COLUMNS)
    batch: list[list[object]] = []
    for n in range(rows):
        output = f"The answer to question {n} is {chance.randint(1, 999)}. It was reported in {1900 + n % 120}."
        not_scorable = n % 97 == 0
        score = None if not_scorable else round(chance.random(), 3)
        steps = {
            "claims": {"id": "claims", "kind": "llm", "prompt": prompt.format(output=output), "result": {"claims": output.split(". ")},
                       "usage": {"prompt_tokens": 310, "completion_tokens": 40, "total_tokens": 350}, "duration_ms": 800.0},
            "verdicts": {"id": "verdicts", "kind": "llm", "prompt": prompt.format(output=output),
                         "result": {"verdicts": [{"verdict": "no", "reason": "supported by the context"}]},
                         "usage": {"prompt_tokens": 420, "completion_tokens": 60, "total_tokens": 480}, "duration_ms": 900.0},
        }  # fmt: skip
        values = {
            "run": RUN, "source": "batch", "item_id": f"item-{n}", "item_index": n + 1, "scorer_id": "hallucination", "scorer_hash": "h",
            "item_hash": f"{n:x}", "model": "openai/gpt-4o-mini", "direction": "lower_is_better", "score": score,
            "reason": None if not_scorable else "The output's claims are supported by the context, but for one detail.",
            "error": None, "error_stage": None, "not_scorable": "the output is empty" if not_scorable else None,
            "input": json.dumps(f"What is the answer to question {n}?"), "output": json.dumps(output),
            "context": json.dumps([f"Question {n} was answered in a report.", "The report lists every answer."]),
            "ground_truth": None, "metadata": json.dumps({"split": "test"}), "expected": json.dumps(chance.random() < 0.3),
            "steps": None if not_scorable else json.dumps(steps), "judges": None, "disagreement": None, "content_note": None,
            "prompt_tokens": 730, "completion_tokens": 100, "total_tokens": 830, "latency_ms": 1700.0, "started_at": now, "finished_at": now,
        }  # fmt: skip
        batch.append([values[column] for column in _COLUMNS])
        if len(batch) == 5000:
            with store.database.transaction() as db:
                db.executemany(f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({placeholders})", batch)
            batch = []
    with store.database.transaction() as db:
        if batch:
            db.executemany(f"INSERT INTO results ({', '.join(_COLUMNS)}) VALUES ({placeholders})", batch)
        # Each judged record's calls and tokens, as saving it writes them: its two steps' sums.
        db.execute(
            "INSERT INTO result_usage (result_id, model, batch, judge_calls, cached_calls, prompt_tokens, completion_tokens, "
            "cached_prompt_tokens, reasoning_tokens) SELECT id, model, 0, 2, 0, 730, 100, 0, 0 FROM results WHERE run = ? AND steps IS NOT NULL",
            (RUN,),
        )
    store.close()


def measure(command: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MB of `command`, run in a process of its
    own (through a small wrapper, so the figures are that command's alone). CPU time is the
    figure to compare on a busy machine: wall time there includes waiting for a core."""
    wrapper = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN); print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", wrapper, *command], check=True, capture_output=True, text=True)
    cpu, peak = done.stdout.strip().splitlines()[-1].split()
    return time.perf_counter() - started, float(cpu), int(peak) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--store", type=Path, default=None, help="Keep the store here (default: a temporary folder)")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-big-runs-"))
    store = arguments.store or folder / "big.sqlite"
    if not store.exists():
        started = time.perf_counter()
        fill(store, arguments.rows)
        print(f"filled {arguments.rows} rows in {time.perf_counter() - started:.1f} s ({store.stat().st_size / 1e6:.0f} MB)")
    scorers = [str(Path(sys.executable).parent / "scorers")]
    report = folder / "report.html"
    for name, command in (
        ("results --run", [*scorers, "results", "--run", RUN, "--store", str(store)]),
        ("report", [*scorers, "report", RUN, "--store", str(store), "-o", str(report)]),
        ("results --format csv", [*scorers, "results", "--run", RUN, "--store", str(store), "--format", "csv", "-o", str(folder / "all.csv")]),
    ):
        seconds, cpu, peak = measure(command)
        extra = f", page {report.stat().st_size / 1e6:.2f} MB" if name == "report" else ""
        print(f"{name:24} {seconds:6.1f} s wall  {cpu:6.1f} s CPU  peak {peak:6.0f} MB{extra}")


if __name__ == "__main__":
    main()
