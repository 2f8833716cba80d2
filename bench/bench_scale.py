"""Beyond one process: the figures behind docs/scale.md (not a test).

    python bench/bench_scale.py [--records 2000] [--items 40] [--delay 0.3]

1. Store writes: `records` results saved one transaction each, into SQLite and into
   PostgreSQL, by one process and by four (each a quarter); records/s and ratios.
2. Shared workers: one `scorers eval` run over `items` items into PostgreSQL by one worker
   process, then by two that split it; every judge call waits `delay` seconds.
3. The Batch API: HTTP requests and jobs for the same items, against live calls.
4. Ray: the same items through engine.ray.score_dataset with one and two actors, against
   run_evals in this process at the same concurrency per actor (skipped without ray).
5. The response cache in PostgreSQL against the SQLite file: `cache-items` items scored once,
   then again unchanged under a new run name (in this process, and in a second process for
   PostgreSQL): wall time, judge requests (must be 0) and the longest the event loop was held
   up (a coroutine ticking every millisecond measures it).

Needs Debian's postgresql binaries and the postgres extra. Everything runs on 127.0.0.1 and
stays small: the machine this was measured on has two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.judge.middleware.cache import close_open_caches
from engine.store import ResultRecord, open_store
from engine.testing import JudgeServer, Reply
from engine.testing.postgres import PostgresCluster, postgres_binaries


def _save_records(location: str, prefix: str, count: int) -> None:
    store = open_store(location)
    assert store is not None
    for n in range(count):
        store.save(ResultRecord(run="bench", source="batch", item_id=f"{prefix}-{n}", scorer_id="hallucination", score=0.5, steps={}))
    store.close()


def _writes(location: str, records: int, processes: int) -> float:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_save_records, args=(location, f"p{n}", records // processes)) for n in range(processes)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(worker.exitcode == 0 for worker in workers)
    return records / (time.perf_counter() - started)


def _script(server: JudgeServer, delay: float) -> None:
    verdicts = {"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}, {"statement": "b", "verdict": "yes", "reason": "r"}]}
    server.on("Claims", Reply(answer={"claims": ["a", "b"]}, delay=delay))
    server.on("HallucinationVerdicts", Reply(answer=verdicts, delay=delay))
    server.on("Reason", Reply(answer={"reason": "r"}, delay=delay))


def _workers(url: str, data: Path, base_url: str, count: int, run: str) -> float:
    environment = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "bench", "SCORERS_STORE": url}
    command = [sys.executable, "-c", "from engine.cli import app; app()", "eval", str(data), "--scorer", "hallucination", "--run", run, "--concurrency", "4"]
    started = time.perf_counter()
    processes = [subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(count)]
    assert all(process.wait() == 0 for process in processes)
    return time.perf_counter() - started


def _cached_run(items: list[dict[str, object]], cache: str, run: str) -> tuple[float, float]:
    """Wall time of run_evals with `cache`, and the longest gap between ticks of a coroutine
    sharing its event loop."""
    from engine import arun_evals, create_hallucination_scorer

    async def measured() -> tuple[float, float]:
        gaps = [0.0]

        async def tick() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last - 0.001)
                last = now

        ticker = asyncio.create_task(tick())
        started = time.perf_counter()
        await arun_evals(items, [create_hallucination_scorer()], concurrency=16, cache=cache, run=run, keep_results=False)
        wall = time.perf_counter() - started
        ticker.cancel()
        return wall, max(gaps)

    return asyncio.run(measured())


def _response_cache(server: JudgeServer, cluster: PostgresCluster, workdir: Path, count: int) -> None:
    print(f"5. the response cache ({count} items, 3 judge calls each at 0.05s, concurrency 16)")
    _script(server, 0.05)
    items = [{"id": f"c{n}", "input": f"q{n}", "output": f"cached answer {n}", "context": ["facts"]} for n in range(count)]
    data = workdir / "cache-items.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    rerun = {}
    for name, cache in (("SQLite", str(workdir / "responses.sqlite")), ("PostgreSQL", cluster.new_database())):
        server.requests.clear()
        cold, cold_stall = _cached_run(items, cache, "first")
        asked = len(server.requests)
        server.requests.clear()
        rerun[name], stall = _cached_run(items, cache, "again")
        print(
            f"   {name:<10} first run {cold:5.2f}s ({asked} requests, loop held up {cold_stall * 1000:4.1f} ms at most); "
            f"unchanged re-run {rerun[name]:5.2f}s ({len(server.requests)} requests, loop held up {stall * 1000:4.1f} ms at most)"
        )
    print(f"   PostgreSQL / SQLite re-run time: {rerun['PostgreSQL'] / rerun['SQLite']:.2f}x")
    server.requests.clear()
    environment = {**os.environ, "SCORERS_CACHE": cache}
    command = [sys.executable, "-c", "from engine.cli import app; app()", "eval", str(data), "--scorer", "hallucination", "--run", "other-process",
               "--concurrency", "16", "--store", str(workdir / "other-process.sqlite")]
    started = time.perf_counter()
    subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    print(f"   another process, same PostgreSQL cache: {time.perf_counter() - started:5.2f}s with start-up, {len(server.requests)} requests")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--cache-items", type=int, default=200)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.3, help="Seconds per judge call (a busy self-hosted model)")
    arguments = parser.parse_args()
    binaries = postgres_binaries()
    if binaries is None:
        sys.exit("needs Debian's postgresql package (apt-get install postgresql)")
    cluster = PostgresCluster(binaries).start()
    server = JudgeServer().start()
    os.environ["OPENAI_BASE_URL"] = server.base_url
    os.environ["OPENAI_API_KEY"] = "bench"
    _script(server, arguments.delay)
    workdir = Path(tempfile.mkdtemp(prefix="scorers-bench-"))

    def cold_cache() -> None:
        # Sections 2 to 4 measure judging: an empty response cache for each measured run
        # (the user's own, or the previous run's, would answer every question for free).
        os.environ["SCORERS_CACHE"] = str(workdir / f"cold-{time.monotonic_ns()}.sqlite")
    try:
        print(f"1. store writes ({arguments.records} records, one transaction each)")
        rates = {}
        for name, location in (("SQLite", lambda: str(workdir / f"w{time.monotonic_ns()}.sqlite")), ("PostgreSQL", cluster.new_database)):
            for processes in (1, 4):
                rates[name, processes] = _writes(location(), arguments.records, processes)
                print(f"   {name:<10} {processes} process(es): {rates[name, processes]:8.0f} records/s")
        print(f"   PostgreSQL / SQLite with 4 processes: {rates['PostgreSQL', 4] / rates['SQLite', 4]:.2f}x")

        data = workdir / "items.jsonl"
        items = [{"id": f"i{n}", "input": f"q{n}", "output": f"answer {n}", "context": ["facts"]} for n in range(arguments.items)]
        data.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
        print(f"2. shared workers ({arguments.items} items, 3 judge calls each at {arguments.delay}s, concurrency 4 per worker)")
        url = cluster.new_database()
        walls, scoring = {}, {}
        for count, run in ((1, "one"), (2, "two")):
            cold_cache()
            walls[count] = _workers(url, data, server.base_url, count, run)
            store = open_store(url)
            assert store is not None
            records = store.query(run=run)
            store.close()
            assert len(records) == arguments.items
            # From the first item started to the last finished: the workers' start-up excluded.
            scoring[count] = (max(r.finished_at for r in records) - min(r.started_at for r in records)).total_seconds()
            print(f"   {count} worker(s): {walls[count]:6.2f}s wall, {scoring[count]:6.2f}s scoring")
        print(f"   speed-up of 2 workers: {walls[1] / walls[2]:.2f}x wall, {scoring[1] / scoring[2]:.2f}x scoring")

        from engine import create_hallucination_scorer, run_batch_api, run_evals

        print("3. the Batch API")
        server.requests.clear()
        cold_cache()
        started = time.perf_counter()
        run_evals(items, [create_hallucination_scorer()], concurrency=4, keep_results=False)
        live = (len(server.requests), time.perf_counter() - started)
        server.requests.clear()
        server.batches.clear()
        cold_cache()
        run_batch_api(items, [create_hallucination_scorer()], run="bench", store=workdir / "batch.sqlite", poll_interval=0.01, settle=0.05)
        print(f"   live: {live[0]} chat requests; Batch API: {len(server.batches)} jobs holding {sum(len(b['_lines']) for b in server.batches.values())} lines")

        if importlib.util.find_spec("ray") is None:
            print("4. Ray: skipped (pip install '.[ray]')")
        else:
            _ray(items, server, arguments.items, cold_cache)
        _response_cache(server, cluster, workdir, arguments.cache_items)
    finally:
        close_open_caches()  # while their database still runs
        server.stop()
        cluster.stop()


def _ray(items: list[dict[str, object]], server: JudgeServer, count: int, cold_cache: Callable[[], None]) -> None:
    import ray

    from engine import JudgeSettings, create_hallucination_scorer, run_evals
    from engine.ray import score_dataset

    print(f"4. Ray ({count} items, concurrency 4 per actor, local Ray on this machine)")
    started = time.perf_counter()
    run_evals(items, [create_hallucination_scorer()], concurrency=4, keep_results=False, cache=False)
    baseline = time.perf_counter() - started
    cold_cache()  # the actors' processes take the environment ray.init leaves them
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    for actors in (1, 2):
        # Items of the same size but not the same text: the first pass's answers are cached.
        fresh = [{**item, "output": f"{item['output']} ({actors})"} for item in items]
        started = time.perf_counter()
        rows = score_dataset(ray.data.from_items(fresh), ["hallucination"], actors=actors, concurrency=4, batch_size=10, judge=JudgeSettings(base_url=server.base_url)).take_all()
        elapsed = time.perf_counter() - started
        assert len(rows) == count
        print(f"   {actors} actor(s): {elapsed:6.2f}s (run_evals in-process: {baseline:.2f}s, ratio {baseline / elapsed:.2f}x)")
    ray.shutdown()


if __name__ == "__main__":
    main()
