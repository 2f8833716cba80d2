"""A big run's store: how much a result takes on disk, and how fast a big run is read back.
The figures behind "Reading a big run" and "A smaller store" in bench/RESULTS.md (not a test).

    python bench/bench_big_runs.py [--items 100000] [--folder DIR]

1. Scores `items` generated items (text drawn from the words of examples/halueval_qa.jsonl,
   so it compresses as prose does, as long as its items are; a third labelled) with the
   built-in hallucination scorer, its judge answered by an in-process middleware that reports
   token usage, through `run_evals` into a new SQLite store: each record saved as a batch run
   saves it.
2. Writes the same records into a store at the schema before results were kept as pieces (the
   previous release's: its migrations, its columns, its JSON text and usage rows), the
   baseline of this same run, and prints the size per result of both and their ratio; then
   upgrades a copy of the baseline in place (its conversion, then the file compacted),
   prints how long that took and its size, and checks that every record reads back the same
   as from the new store.
3. Reads back: `scorers results --run`, `scorers report` and `scorers results --format csv`,
   each in a process of its own (wall and CPU seconds, peak memory); the CSV export beside its
   baseline, the same export through the records (the path every export took before, and
   still takes for a store that cannot hand over what it saved), whose file must be
   byte-for-byte the same; what a resume reads of an item (`item_records`), from the new store
   and, beside it, from the baseline as the previous release read it; and what saving a result
   costs now and as the previous release saved it. These two are CPU time, the least
   of three alternating rounds: on a busy machine wall time counts the waits for a core too.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engine.db.sqlite import SQLiteDatabase
from engine.formatting import to_json
from engine.judge import JudgeAnswer, TokenUsage
from engine.store import ResultRecord, SQLiteStore
from engine.store.sql import usage_of
from engine.store.sqlite_schema import MIGRATIONS

RUN = "big"
#: The schema measured against: the one before this release's last, which keeps text once.
#: The schema before results were kept as pieces (the migration that shrinks a file).
BASELINE_VERSION = next(migration.version for migration in MIGRATIONS if migration.shrinks) - 1
NEW, OLD = f"schema {BASELINE_VERSION + 1}", f"schema {BASELINE_VERSION}"
#: The results' columns of the baseline, as the release before this one wrote them.
OLD_COLUMNS = (
    "run", "source", "item_id", "item_index", "scorer_id", "scorer_hash", "item_hash", "model", "direction", "score", "reason",
    "error", "error_stage", "not_scorable", "input", "output", "context", "ground_truth", "metadata", "expected", "steps", "judges",
    "content_note", "disagreement", "prompt_tokens", "completion_tokens", "total_tokens", "latency_ms", "started_at", "finished_at",
)
_JSON = {"input", "output", "context", "ground_truth", "metadata", "expected", "steps", "judges", "content_note"}


class Judge:
    """Answers each step as the scripted judge of the tests would, without a server, and
    reports tokens as a provider would (about four characters a token)."""

    async def __call__(self, request: Any, call_next: Any) -> Any:
        prompt = request.messages[-1]["content"]
        if request.step == "preprocess":
            found = re.search(r"<output>\n(.*?)\n</output>", prompt, re.DOTALL)
            answer: Any = {"claims": [claim.strip() for claim in (found.group(1) if found else "").split(". ") if claim.strip()]}
        elif request.step == "analyze":
            claims = [json.loads(line.split(". ", 1)[1]) for line in re.findall(r"^\d+\. \".*\"$", prompt, re.MULTILINE)]
            supported = {"verdict": "no", "reason": "The context states it in its second sentence."}
            unsupported = {"verdict": "yes", "reason": "The context does not mention it."}
            answer = {"verdicts": [{"statement": claim, **(unsupported if len(claim) % 5 == 0 else supported)} for claim in claims]}
        else:
            answer = {"reason": "Most claims are supported by the context, but one is not mentioned there."}
        prompt_tokens = sum(len(message["content"]) for message in request.messages) // 4
        completion = len(to_json(answer)) // 4
        return JudgeAnswer(value=request.response_model.model_validate(answer), usage=TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=completion, total_tokens=prompt_tokens + completion))


def items(count: int) -> list[dict[str, Any]]:
    """Questions, answers and contexts of random words from real QA text: unique to each item."""
    text = Path(__file__).parent.parent / "examples" / "halueval_qa.jsonl"
    words = sorted({word for line in text.read_text(encoding="utf-8").splitlines() for word in re.findall(r"[A-Za-z][a-z']+", line)})
    chance = random.Random(7)

    def sentence(length: int) -> str:
        return " ".join(chance.choice(words) for _ in range(length)).capitalize()

    made = []
    for n in range(count):  # as long as the HaluEval sample's: about 100, 60 and 350 characters
        item: dict[str, Any] = {
            "id": f"item-{n}",
            "input": sentence(chance.randint(12, 20)) + "?",
            "output": ". ".join(sentence(chance.randint(4, 8)) for _ in range(chance.randint(1, 2))) + ".",
            "context": [". ".join(sentence(chance.randint(10, 16)) for _ in range(chance.randint(3, 5))) + "."],
            "metadata": {"split": "test", "source": f"batch-{n % 7}"},
        }
        if n % 3 == 0:
            item["expected"] = chance.random() < 0.4
        made.append(item)
    return made


def score(path: Path, data: list[dict[str, Any]]) -> float:
    from engine import JudgeSettings, create_hallucination_scorer, run_evals

    # The middleware answers every call: the endpoint, which needs no key, is never reached.
    scorer = create_hallucination_scorer(middleware=(Judge(),), judge=JudgeSettings(base_url="http://127.0.0.1:9/v1"))
    started = time.perf_counter()
    result = run_evals(data, [scorer], store=path, run=RUN, concurrency=64, cache=False, keep_results=False)
    assert result.counts.completed == len(data), result.errors[:3]
    return time.perf_counter() - started


def _old_column(column: str, value: Any) -> Any:
    if column in _JSON:
        return None if value is None else to_json(value)
    return value.timestamp() if column.endswith("_at") else value


def save_as_baseline(database: SQLiteDatabase, records: list[ResultRecord]) -> None:
    """`records` saved in one transaction as the release before this one saved them: each JSON
    column as its text, each record's usage rows beside it."""
    with database.transaction() as db:
        for record in records:
            values = record.model_dump()
            row = [_old_column(column, values[column]) for column in OLD_COLUMNS]
            result_id = db.execute(f"INSERT INTO results ({', '.join(OLD_COLUMNS)}) VALUES ({', '.join('?' for _ in OLD_COLUMNS)})", row).lastrowid
            db.executemany(
                "INSERT INTO result_usage (result_id, model, batch, judge_calls, cached_calls, prompt_tokens, completion_tokens, "
                "cached_prompt_tokens, reasoning_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(result_id, *usage) for usage in usage_of(record)],
            )


def write_baseline(path: Path, source: Path) -> None:
    """The records of `source` in a store at the baseline's schema, written as that release's save wrote them."""
    database = SQLiteDatabase(path, MIGRATIONS[:BASELINE_VERSION])
    database.connection.execute("PRAGMA synchronous=OFF")  # a benchmark's fixture, not a run
    with SQLiteStore(source) as store:
        run = store._read("SELECT * FROM runs")
        with database.transaction() as db:
            db.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)", [tuple(row) for row in run])
        ids = store.ordered_ids(RUN)
        for start in range(0, len(ids), 2000):
            save_as_baseline(database, store.records_by_id(ids[start : start + 2000]))
    database.close()


def saving(folder: Path, source: Path, count: int = 5000, rounds: int = 3) -> tuple[float, float]:
    """CPU microseconds a result to save `count` of the run's records in batches of 50, as a
    batch run saves them, into an empty store: as this release does, and as the one before did; the
    least of `rounds` alternating rounds."""
    with SQLiteStore(source) as store:
        records = store.records_by_id(store.ordered_ids(RUN)[:count])
    best = {"new": float("inf"), "baseline": float("inf")}
    for round_ in range(rounds):
        new, old = SQLiteStore(folder / f"saving-{round_}.sqlite"), SQLiteDatabase(folder / f"saving-old-{round_}.sqlite", MIGRATIONS[:BASELINE_VERSION])
        for name, save in (("new", new.save_many), ("baseline", lambda batch: save_as_baseline(old, batch))):
            started = time.process_time()
            for start in range(0, len(records), 50):
                save(records[start : start + 50])
            best[name] = min(best[name], (time.process_time() - started) / len(records) * 1e6)
        new.close()
        old.close()
    return best["new"], best["baseline"]


def size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.parent.glob(path.name + "*"))


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


#: The CSV export through the records, as every export ran before this release (and still runs
#: for a store that cannot hand over what it saved): each record read into a ResultRecord,
#: its cells written from it.
EXPORT_THROUGH_RECORDS = """
import sys
from engine.runs.stored.reading import RunExport, export_records
from engine.store import SQLiteStore
with SQLiteStore(sys.argv[1], reading=True) as store, open(sys.argv[2], "w", encoding="utf-8", newline="") as out:
    export = RunExport(store, "big")
    out.writelines(export_records(iter(export), "csv", export.step_ids()))
"""

def read_as_baseline(database: SQLiteDatabase, run: str, item_id: str) -> list[ResultRecord]:
    """What a resume reads of an item from the baseline, as the release before this one read it."""
    records = []
    for row in database.read("SELECT * FROM results WHERE run = ? AND item_id = ? ORDER BY id", (run, item_id)):
        data = {column: row[column] for column in OLD_COLUMNS}
        for column in _JSON:
            data[column] = None if data[column] is None else json.loads(data[column])
        data["metadata"] = data["metadata"] or {}
        data["steps"] = data["steps"] or {}
        data["started_at"] = datetime.fromtimestamp(data["started_at"], tz=timezone.utc)
        data["finished_at"] = datetime.fromtimestamp(data["finished_at"], tz=timezone.utc)
        records.append(ResultRecord.model_validate(data))
    return records


def resume_reads(new: Path, baseline: Path, count: int, rounds: int = 3) -> tuple[float, float]:
    """CPU microseconds an item to read what a resume reads of it (every fifth item, in the
    data's order), from the new store and from the baseline as the previous release read it:
    the least of `rounds` alternating rounds (CPU time: on a busy machine wall time counts the
    waits for a core too)."""
    keys = [f"item-{n}" for n in range(0, count, 5)]
    store, database = SQLiteStore(new), SQLiteDatabase(baseline, MIGRATIONS[:BASELINE_VERSION])
    assert [store.item_records(RUN, key) for key in keys[:200]] == [read_as_baseline(database, RUN, key) for key in keys[:200]]
    best = {"new": float("inf"), "baseline": float("inf")}
    for _ in range(rounds):
        for name, read in (("new", lambda key: store.item_records(RUN, key)), ("baseline", lambda key: read_as_baseline(database, RUN, key))):
            started = time.process_time()
            for key in keys:
                read(key)
            best[name] = min(best[name], (time.process_time() - started) / len(keys) * 1e6)
    store.close()
    database.close()
    return best["new"], best["baseline"]


def upgrade(baseline: Path, upgraded: Path, new: Path) -> tuple[float, int]:
    """Seconds to upgrade a copy of the baseline in place (its rows converted, then the file
    compacted), and its size then; every record checked against the new store's."""
    shutil.copy(baseline, upgraded)
    started = time.perf_counter()
    SQLiteStore(upgraded).close()
    seconds = time.perf_counter() - started
    with SQLiteStore(upgraded) as store, SQLiteStore(new) as fresh:
        ids, fresh_ids = store.ordered_ids(RUN), fresh.ordered_ids(RUN)
        for start in range(0, len(ids), 2000):
            assert store.records_by_id(ids[start : start + 2000]) == fresh.records_by_id(fresh_ids[start : start + 2000])
    return seconds, size(upgraded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=None, help="Keep the stores here (default: a temporary folder)")
    arguments = parser.parse_args()
    folder = arguments.folder or Path(tempfile.mkdtemp(prefix="bench-big-runs-"))
    folder.mkdir(parents=True, exist_ok=True)
    new, baseline, upgraded = folder / "big.sqlite", folder / f"schema-{BASELINE_VERSION}.sqlite", folder / "upgraded.sqlite"
    count = arguments.items
    print(f"{count:,} items, hallucination scorer; stores in {folder}")

    if not new.exists():
        seconds = score(new, items(count))
        print(f"scored and saved       {seconds:7.1f} s ({count / seconds:,.0f} items/s)")
    if not baseline.exists():
        started = time.perf_counter()
        write_baseline(baseline, new)
        print(f"baseline written       {time.perf_counter() - started:7.1f} s")
    with SQLiteStore(new) as store:
        results = store.item_count(RUN)
    old_bytes, new_bytes = size(baseline), size(new)
    print(f"size, {OLD:16} {old_bytes / 1e6:7.1f} MB  {old_bytes / results:6,.0f} bytes a result")
    print(f"size, {NEW:16} {new_bytes / 1e6:7.1f} MB  {new_bytes / results:6,.0f} bytes a result  ({new_bytes / old_bytes:.2f}x the baseline)")
    seconds, upgraded_bytes = upgrade(baseline, upgraded, new)
    print(
        f"{OLD} upgraded      {seconds:7.1f} s, its rows converted and the file compacted: {upgraded_bytes / 1e6:.1f} MB "
        f"({upgraded_bytes / old_bytes:.2f}x); every record the same as the new store's"
    )

    scorers = [str(Path(sys.executable).parent / "scorers")]
    report = folder / "report.html"
    exported, through_records = folder / "all.csv", folder / "all-through-records.csv"
    for name, command in (
        ("results --run", [*scorers, "results", "--run", RUN, "--store", str(new)]),
        ("report", [*scorers, "report", RUN, "--store", str(new), "-o", str(report)]),
        ("results --format csv", [*scorers, "results", "--run", RUN, "--store", str(new), "--format", "csv", "-o", str(exported)]),
        ("csv through records", [sys.executable, "-c", EXPORT_THROUGH_RECORDS, str(new), str(through_records)]),
    ):
        wall, cpu, peak = measure(command)
        extra = f", page {report.stat().st_size / 1e6:.2f} MB" if name == "report" else ""
        print(f"{name:22} {wall:7.1f} s wall  {cpu:6.1f} s CPU  peak {peak:6.0f} MB{extra}")
    same = exported.read_bytes() == through_records.read_bytes()
    print(f"the two CSV files are {'byte for byte the same' if same else 'DIFFERENT'} ({exported.stat().st_size / 1e6:.1f} MB)")

    new_save, old_save = saving(folder, new, min(5000, results))
    print(f"saving, {NEW:14} {new_save:7.0f} us CPU a result (batches of 50)")
    print(f"saving, {OLD:14} {old_save:7.0f} us CPU a result ({NEW}: {new_save / old_save:.2f}x)")
    new_read, old_read = resume_reads(new, baseline, results)
    print(f"resume reads, {NEW:9} {new_read:7.0f} us CPU an item")
    print(f"resume reads, {OLD:9} {old_read:7.0f} us CPU an item ({NEW}: {new_read / old_read:.2f}x)")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
