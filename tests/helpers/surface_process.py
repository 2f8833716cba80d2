"""The fault matrix's Python surfaces as a process of their own, so a signal or a second
process can reach them as it reaches a `scorers` command:

    python surface_process.py run_evals|live DATA STORE RUN [MAX_COST]

Exit status: 0 the run passed (live: every reply was scored and saved), 1 it did not, 2 the
library refused the call (a ConfigError, printed on stderr)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from engine import ConfigError, LiveScorer, create_hallucination_scorer, run_evals


def main(arguments: list[str]) -> int:
    surface, data, store, run = arguments[:4]
    max_cost = float(arguments[4]) if len(arguments) > 4 else None
    try:
        if surface == "run_evals":
            result = run_evals(data, create_hallucination_scorer(), run=run, store=store, concurrency=2, max_cost=max_cost)
            print(json.dumps({"passed": result.passed, "counts": dict(result.counts.outcomes)}))
            return 0 if result.passed else 1
        live = LiveScorer(create_hallucination_scorer(), store=store, run=run)  # live scoring has no budget
        for line in Path(data).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            live.submit(row["output"], input=row["input"], context=row.get("context"), run_id=f"{os.getpid()}-{row['id']}")  # a host's own replies
        closed = live.close(timeout=60)
        stats = live.stats
        scored = stats.scored.get("hallucination", 0)
        print(json.dumps({"scored": scored, "error": stats.errors.get("hallucination", 0)}))
        return 0 if closed and scored == stats.calls else 1
    except ConfigError as refused:
        print(refused, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
