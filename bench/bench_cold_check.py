"""How long a first `scorers check` of the built-in catalog takes, beside its baseline.

    python bench/bench_cold_check.py [--rounds 10] [--before FOLDER]

Each round runs, one after the other (so that the machine's load falls on all of them alike):

- `baseline`: a process that only imports what the command line is built on (Typer, Rich,
  Jinja, PyYAML, pydantic, one model built: bench_judge_calls.py's LIBRARIES_ALONE);
- `cold`: `scorers check` with an empty user cache folder, as after installing the package: the
  proof of the built-in catalog shipped with the package is read when every byte it depends on
  and the library versions are those it was made from (engine/catalog/verified.py);
- `compiled`: the same, the shipped proof out of reach, so that all 42 scorers are compiled and
  run on answers made from their schemas, as for a built-in catalog changed by one byte, another
  version of pydantic, or an author's catalog;
- `warm`: `scorers check` again with the user cache of an earlier run (the catalog remembered);
- `before` (with `--before FOLDER`, a checkout or `git archive` of another commit): its cold
  `scorers check`, run by this environment's Python with that folder first on its path.

Bytecode is cached (under a folder of its own) as an installed package has it. Printed: for each,
the median and the best of the rounds, wall and CPU seconds (user + sys of the child), and the
ratio of the medians to the baseline's; the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_judge_calls import LIBRARIES_ALONE

SCORERS = Path(sys.executable).parent / "scorers"
# `scorers check`, the package's proof of its catalog pointed at a file that does not exist.
COMPILED = (
    "import sys\n"
    "from pathlib import Path\n"
    "from engine.catalog import verified\n"
    "verified.SHIPPED_PROOF = Path('/nonexistent/builtin_proof.json')\n"
    "from engine.cli import app\n"
    "sys.argv = ['scorers', 'check']\n"
    "app()\n"
)


def timed(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--before", type=Path, help="a checkout of another commit, measured cold beside this one")
    arguments = parser.parse_args()
    rounds = arguments.rounds
    folder = Path(tempfile.mkdtemp(prefix="bench-cold-check-"))
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    warm_cache = str(folder / "warm-cache")

    def fresh_cache() -> dict[str, str]:
        return environment | {"XDG_CACHE_HOME": tempfile.mkdtemp(prefix="user-cache-", dir=folder)}

    # Each a command line and its environment, made afresh for every run.
    commands: dict[str, Callable[[], tuple[list[str], dict[str, str]]]] = {
        "baseline": lambda: ([sys.executable, "-c", LIBRARIES_ALONE], environment),
        "cold": lambda: ([str(SCORERS), "check"], fresh_cache()),
        "compiled": lambda: ([sys.executable, "-c", COMPILED], fresh_cache()),
        "warm": lambda: ([str(SCORERS), "check"], environment | {"XDG_CACHE_HOME": warm_cache}),
    }
    if arguments.before is not None:
        before = str(arguments.before.resolve())
        # -P: the folder on PYTHONPATH is the engine imported, not this checkout beside the script.
        commands["before"] = lambda: ([sys.executable, "-P", str(SCORERS), "check"], fresh_cache() | {"PYTHONPATH": before})
    for make in commands.values():  # bytecode written, the warm cache filled
        timed(*make())
    load_before = os.getloadavg()[0]
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(rounds):
        for label, make in commands.items():
            runs[label].append(timed(*make()))
    load_after = os.getloadavg()[0]
    print(f"`scorers check` of the built-in catalog, {rounds} alternating rounds, load average {load_before:.1f} before and {load_after:.1f} after, {os.cpu_count()} CPUs")
    base_wall, base_cpu = (statistics.median(values) for values in zip(*runs["baseline"]))
    for label, measured in runs.items():
        walls, cpus = zip(*measured)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        ratio = "" if label == "baseline" else f"   {wall / base_wall:.1f} / {cpu / base_cpu:.1f} times the baseline"
        print(f"  {label:<9} wall median {wall:.3f} s, best {min(walls):.3f} s   CPU median {cpu:.3f} s, best {min(cpus):.3f} s{ratio}")


if __name__ == "__main__":
    main()
