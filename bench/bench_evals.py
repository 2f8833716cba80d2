"""Throughput of run_evals at concurrency 1 and 8 against the loopback judge (not a test).

    python bench/bench_evals.py [--items 24] [--delay 0.05]

Every judge call waits `delay` seconds, like a remote model would; the hallucination scorer
makes three calls per item. With the calls overlapping under the concurrency bound, the
throughput should grow close to the bound (the judge's latency dominates).
"""

from __future__ import annotations

import argparse
import os
import time

from engine.testing import JudgeServer, Reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--delay", type=float, default=0.05, help="Seconds per judge call")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    arguments = parser.parse_args()

    server = JudgeServer().start()
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_KEY"] = "bench"
    verdicts = {"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}, {"statement": "b", "verdict": "yes", "reason": "r"}]}
    server.on("Claims", Reply(answer={"claims": ["a", "b"]}, delay=arguments.delay))
    server.on("HallucinationVerdicts", Reply(answer=verdicts, delay=arguments.delay))
    server.on("Reason", Reply(answer={"reason": "r"}, delay=arguments.delay))

    from engine import create_hallucination_scorer, run_evals

    scorer = create_hallucination_scorer()
    data = [{"input": f"q{n}", "output": f"answer {n}", "context": ["facts"]} for n in range(arguments.items)]
    run_evals(data[:2], [scorer], concurrency=2, cache=False)  # warm up: imports, connections

    throughput: dict[int, float] = {}
    for concurrency in arguments.concurrency:
        started = time.perf_counter()
        result = run_evals(data, [scorer], concurrency=concurrency, keep_results=False, cache=False)  # every pass asks the judge: concurrency is measured, not the cache
        elapsed = time.perf_counter() - started
        assert result.counts.completed == arguments.items, result.errors
        throughput[concurrency] = arguments.items / elapsed
        print(f"concurrency {concurrency:>3}: {arguments.items} items in {elapsed:6.2f}s = {throughput[concurrency]:6.1f} items/s")
    low, high = min(throughput), max(throughput)
    print(f"ratio (concurrency {high} / {low}): {throughput[high] / throughput[low]:.1f}x")
    server.stop()


if __name__ == "__main__":
    main()
