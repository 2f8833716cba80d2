"""Big runs stay small: peak memory and time of a run over a large data file, with and without
human labels (not a test).

    python bench/bench_big_evals.py [--items 100000]

Each run is its own process (its peak RSS is its own) scoring a JSONL file with a scorer that
needs no judge, as `scorers eval` runs it (results saved to a SQLite store, per-item results not
kept). The labelled file carries an `expected` verdict for every item, so the run also measures
agreement with the labels (figures with bootstrap intervals, the worst disagreements). Printed
per run: wall time, the time from the last item scored to the run's end (the silence after the
last progress line), and peak RSS. Aim: under 200 MB for both, and the labelled run about as
fast as the unlabelled one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import json, sys, time
    from engine import JudgeSettings, load_scorers, run_evals
    catalog = load_scorers(sys.argv[1])
    scorer = catalog.create("length-check", model="openai/none", judge=JudgeSettings(base_url="http://127.0.0.1:9/v1", api_key="unused"))
    last = [0.0]
    def done(item):
        last[0] = time.perf_counter()
    started = time.perf_counter()
    result = run_evals(sys.argv[2], [scorer], on_item_complete=done, concurrency=64, store=sys.argv[3], run="big",
                       keep_results=False, cache=False)
    ended = time.perf_counter()
    assert result.counts.completed == int(sys.argv[4]), result.counts
    agreement = result.summary["length-check"].agreement
    with open("/proc/self/status") as status:
        peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(json.dumps({
        "seconds": ended - started, "tail": ended - last[0], "peak_rss_mb": peak_kb / 1024,
        "labelled": agreement.labelled if agreement else 0,
        "accuracy": agreement.binary.accuracy.model_dump() if agreement and agreement.binary else None,
        "disagreements": len(agreement.disagreements) if agreement else 0,
    }))
    """
)

CATALOG = """\
scorers:
  length-check:
    name: Length check
    description: how long the output is, as a share of 100 characters
    direction: higher_is_better
    steps:
      - id: score
        kind: score
        score: "[(output | length) / 100, 1] | min"
"""


def write_data(path: Path, items: int, labelled: bool) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for n in range(items):
            item: dict[str, object] = {"id": f"item-{n}", "input": f"question {n}", "output": f"answer number {n} " * (1 + n % 5)}
            if labelled:
                item["expected"] = {"length-check": n % 7 != 0}
            handle.write(json.dumps(item) + "\n")


def measure(folder: Path, items: int, labelled: bool) -> dict[str, object]:
    kind = "labelled" if labelled else "unlabelled"
    data = folder / f"{kind}.jsonl"
    write_data(data, items, labelled)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(folder / "scorers.yaml"), str(data), str(folder / f"{kind}.sqlite"), str(items)],
        check=True, capture_output=True, text=True,
    )
    return dict(json.loads(probe.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-big-runs-"))
    (folder / "scorers.yaml").write_text(CATALOG, encoding="utf-8")
    print(f"machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{arguments.items:,} items, a scorer without a judge, results saved to SQLite, per-item results not kept")
    for labelled in (False, True):
        found = measure(folder, arguments.items, labelled)
        print(
            f"  {'labelled' if labelled else 'unlabelled':<10}  {found['seconds']:7.1f} s  (after the last item: {found['tail']:.2f} s)"
            f"  peak RSS {found['peak_rss_mb']:5.0f} MB"
            + (f"  agreement over {found['labelled']:,} labels, accuracy {found['accuracy']}, {found['disagreements']} disagreements listed" if labelled else "")
        )
    print(f"(files in {folder})")


if __name__ == "__main__":
    main()
