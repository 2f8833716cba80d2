"""The PostgreSQL store, against a real server, beyond the contract every store keeps
(tests/store_contract): a server's errors, many writers on one run, and one batch run split
across worker processes through claimed items."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import outputs_judged, script_hallucination
from helpers.stored_records import record
from typer.testing import CliRunner

from engine import RunInfo, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.errors import ConfigError
from engine.store.postgres import PostgresStore
from engine.store.postgres_schema import MIGRATIONS
from engine.testing import JudgeServer

runner = CliRunner()


def write_items(path: Path, count: int, fail_every: int = 0) -> Path:
    lines = []
    for n in range(count):
        # Each item its own text: the response cache (on in run_evals) would otherwise answer
        # an item from another's identical question, and these tests count the judge's work.
        output = f"ok {n}. WRONG" if n % 2 else f"ok {n}"
        if fail_every and n % fail_every == 0:
            output = f"FAIL {n}"
        lines.append(json.dumps({"id": f"i{n}", "input": f"q{n}", "output": output, "context": ["facts"]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_wrong_address_or_a_newer_schema_is_one_clear_line(postgres_url: str, postgres_cluster: object) -> None:
    with pytest.raises(ConfigError, match=r"cannot open the PostgreSQL store postgresql://postgres:\*\*\*@127\.0\.0\.1:1/x") as raised:
        PostgresStore("postgresql://postgres:secret-pw@127.0.0.1:1/x", connect_timeout=2)
    assert "secret-pw" not in str(raised.value)

    import psycopg

    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("INSERT INTO schema_version (version) VALUES (99)")
    with pytest.raises(ConfigError, match="newer version of llm-scorers"):
        PostgresStore(postgres_url)


def test_opening_twice_applies_each_migration_once(postgres_url: str) -> None:
    import psycopg

    PostgresStore(postgres_url).close()
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as connection:
        versions = [row[0] for row in connection.execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == [migration.version for migration in MIGRATIONS]  # each once


def _write_results(url: str, process: int, count: int) -> None:
    with PostgresStore(url, max_connections=2) as store:
        for n in range(count):
            store.save(record("shared", f"p{process}-{n}", score=(n % 10) / 10))
        # Every process also rewrites one common item: saved once, whoever wins.
        store.save(record("shared", "common", score=process / 10))


@pytest.mark.slow
def test_four_processes_writing_5000_results_each_store_every_one_once(postgres_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_results, args=(postgres_url, process, 5000)) for process in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=600)
    assert [process.exitcode for process in processes] == [0, 0, 0, 0]

    import psycopg

    with psycopg.connect(postgres_url) as connection:
        total, distinct = connection.execute("SELECT COUNT(*), COUNT(DISTINCT item_id) FROM results WHERE run = 'shared'").fetchone()  # type: ignore[misc]
        per_process = dict(connection.execute(  # type: ignore[arg-type]
            "SELECT split_part(item_id, '-', 1), COUNT(*) FROM results WHERE item_id <> 'common' GROUP BY 1"
        ).fetchall())
    assert (total, distinct) == (20001, 20001)
    assert per_process == {"p0": 5000, "p1": 5000, "p2": 5000, "p3": 5000}


def test_a_batch_run_into_postgresql_is_saved_and_resumed(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "items.jsonl", 12, fail_every=5)  # i0, i5, i10 fail at the judge
    scorer = create_hallucination_scorer()

    first = run_evals(data, [scorer], store=postgres_url, run="nightly", concurrency=3)
    assert (first.counts.completed, first.counts.failed) == (9, 3)
    assert first.store is not None and first.store.startswith("postgresql://")

    script_hallucination(judge)
    judge.reset()
    judge.on("Claims", {"claims": ["fixed"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "fixed", "verdict": "no", "reason": "r"}]})
    judge.on("Reason", {"reason": "scripted reason"})
    again = run_evals(data, [scorer], store=postgres_url, run="nightly", concurrency=3)

    assert len(judge.requests_for("Claims")) == 3  # only the failed items are judged again
    assert (again.counts.completed, again.counts.resumed) == (12, 9)
    with PostgresStore(postgres_url) as store:
        records = store.query(run="nightly")
        assert len(records) == 12 and all(r.error is None for r in records)
        assert store.get_run("nightly").status == "complete"  # type: ignore[union-attr]


def test_the_cli_takes_the_store_from_scorers_store(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "items.jsonl", 4)
    password_url = postgres_url.replace("postgres@", "postgres:not-a-real-pw@")  # trust auth ignores it

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--run", "env"], env={"SCORERS_STORE": password_url})
    assert result.exit_code == 0, result.output
    assert "postgres:***@" in result.stdout and "not-a-real-pw" not in result.output

    listed = runner.invoke(app, ["results", "--store", password_url, "--run", "env", "--json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)["scorers"][0]["count"] == 4


def _worker(url: str, data: Path, base_url: str, log: Path, *more: str) -> subprocess.Popen[bytes]:
    environment = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test", "SCORERS_STORE": url}
    command = [sys.executable, "-c", "from engine.cli import app; app()", "eval", str(data), "--scorer", "hallucination", "--run", "split", "--concurrency", "2", *more]
    return subprocess.Popen(command, env=environment, stdout=log.open("wb"), stderr=subprocess.STDOUT)


@pytest.mark.slow
def test_three_workers_split_one_run_and_judge_each_item_once(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.02)
    data = write_items(tmp_path / "items.jsonl", 60)

    workers = [_worker(postgres_url, data, judge.base_url, tmp_path / f"worker{n}.log") for n in range(3)]
    codes = [worker.wait(timeout=180) for worker in workers]

    logs = [(tmp_path / f"worker{n}.log").read_text() for n in range(3)]
    assert codes == [0, 0, 0], logs
    judged = outputs_judged(judge)
    assert len(judged) == 60  # every item judged once over the three workers
    with PostgresStore(postgres_url) as store:
        records = store.query(run="split")
        assert sorted(r.item_id for r in records) == sorted(f"i{n}" for n in range(60))
        assert store.unfinished("split") == 0 and store.get_run("split").status == "complete"  # type: ignore[union-attr]
        workers_seen = {row["claimed_by"].rsplit(":", 2)[1] for row in store._read("SELECT claimed_by FROM work_items")}
    assert len(workers_seen) >= 2, "the items were not shared between workers"


@pytest.mark.slow
def test_a_budget_stops_every_worker_of_a_shared_run_once_their_spend_together_reaches_it(
    judge: JudgeServer, postgres_url: str, tmp_path: Path
) -> None:
    from helpers.scripted import FIRST_CALL_HOLD, PER_CALL, script_priced

    from engine.runs.measures.stats import usage_cost

    script_priced(judge)
    judge.latency = 0.5  # an item (three calls) takes 1.5 s: three workers score about two a second
    data = write_items(tmp_path / "items.jsonl", 40)
    budget = 8 * 3 * PER_CALL + FIRST_CALL_HOLD  # eight items' worth, of the whole run, and room for a step's first call

    logs = [tmp_path / f"worker{n}.log" for n in range(3)]
    workers = [_worker(postgres_url, data, judge.base_url, log, "--concurrency", "1", "--max-cost", f"{budget:.8f}", "--reasons", "always") for log in logs]
    codes = [worker.wait(timeout=180) for worker in workers]

    outputs = [" ".join(log.read_text().split()) for log in logs]
    assert codes == [1, 1, 1], outputs  # stopped by the budget: not passed
    assert all("(--max-cost) was reached: the run has spent" in output and "by every worker" in output for output in outputs), outputs
    with PostgresStore(postgres_url) as store:
        done = len(store.query(run="split"))
        spent = sum(usage_cost(row) or 0.0 for row in store.usage("split"))
        assert store.unfinished("split") == 40 - done
    # Each worker alone would have spent the budget (24 items or more); together they stop at
    # it: every call is held against the run's spend before it leaves, and what one worker
    # cannot see yet of the others' is at most the item each has in flight.
    assert 0.5 * budget <= spent <= budget + 3 * 3 * PER_CALL and 5 <= done <= 12, (done, spent / budget)


def test_a_dead_workers_items_go_to_another_after_the_lease(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "items.jsonl", 6)
    with PostgresStore(postgres_url) as store:
        store.begin_run(RunInfo(name="lease"))
        store.queue_items("lease", [(n, f"i{n}", {"item": json.loads(line)}) for n, line in enumerate(data.read_text().splitlines())])
        dead = store.claim("lease", "dead-worker", 4, lease_s=1.5)  # claims four items, then is never heard of again
    assert len(dead) == 4

    started = time.monotonic()
    result = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="lease", lease_seconds=30)

    assert time.monotonic() - started >= 1.0  # it waited for the dead worker's lease to end
    assert result.counts.completed == 6
    assert sorted(outputs_judged(judge)) == sorted(f"ok {n}. WRONG" if n % 2 else f"ok {n}" for n in range(6))
    with PostgresStore(postgres_url) as store:
        assert store.unfinished("lease") == 0 and len(store.query(run="lease")) == 6


def test_a_worker_that_found_every_item_claimed_reports_the_whole_run_it_waited_for(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    """The first worker claims all six items at once (its window is 16); the second finds none
    free, waits, and ends with the run scored whole: it says so, rather than "nothing was
    scored" with exit 1, and its labelled results are the run's (what calibrate measures)."""
    import threading

    script_hallucination(judge, delay=0.3)
    data = write_items(tmp_path / "items.jsonl", 6)
    first: list[Any] = []
    worker = threading.Thread(target=lambda: first.append(run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="shared", concurrency=8)))
    worker.start()
    deadline = time.monotonic() + 30
    while len(judge.requests_for("Claims")) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)  # every item claimed and under way in the first worker
    second = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="shared", concurrency=8)
    worker.join(timeout=60)

    assert len(outputs_judged(judge)) == 6, "an item was judged by both workers"
    assert first[0].passed and first[0].counts.items == 6
    assert second.passed, second.verdict.reasons
    assert second.counts.items == 6 and second.counts.completed == 6 and second.counts.resumed == 6 and second.counts.scored == 0
    assert second.summary["hallucination"].count == first[0].summary["hallucination"].count == 6


def test_live_hosts_and_a_batch_write_into_one_database(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    from engine import LiveScorer

    script_hallucination(judge)
    hosts = [LiveScorer([create_hallucination_scorer(options={"context": ["facts"]})], store=postgres_url, run="live") for _ in range(2)]
    agents = [host.wrap(lambda question, n=n: f"host {n} answers {question}") for n, host in enumerate(hosts)]
    for n in range(3):
        for agent in agents:
            agent(f"q{n}")
    run_evals(write_items(tmp_path / "items.jsonl", 4), [create_hallucination_scorer()], store=postgres_url, run="nightly")
    for host in hosts:
        assert host.flush(timeout=20)
        host.close()

    with PostgresStore(postgres_url) as store:
        assert len(store.query(run="live", source="live")) == 6 and len(store.query(run="nightly", source="batch")) == 4


def test_a_live_worker_keeps_its_items_past_the_lease_by_renewing_it(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    import threading

    script_hallucination(judge, delay=1.2)  # each item takes longer than the lease
    data = write_items(tmp_path / "items.jsonl", 4)
    stolen: list[int] = []
    done = threading.Event()

    def thief() -> None:
        while not judge.requests_for("Claims"):
            time.sleep(0.02)
        with PostgresStore(postgres_url) as store:
            while not done.is_set():
                stolen.extend(item.index for item in store.claim("renewed", "thief", 10, lease_s=30))
                time.sleep(0.1)

    watcher = threading.Thread(target=thief)
    watcher.start()
    try:
        result = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="renewed", lease_seconds=0.6)
    finally:
        done.set()
        watcher.join()

    assert result.counts.completed == 4 and stolen == []
    assert len(outputs_judged(judge)) == 4


def test_a_shared_run_whose_saves_fail_stops_claiming_and_paying(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    script_hallucination(judge, delay=0.02)
    data = write_items(tmp_path / "items.jsonl", 60)
    PostgresStore(postgres_url).close()  # the schema, then a server that refuses every result
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$ LANGUAGE plpgsql"
        )
        connection.execute("CREATE TRIGGER full_disk BEFORE INSERT ON results FOR EACH ROW EXECUTE FUNCTION refuse()")

    result = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="full", concurrency=2)

    assert result.status == "failed" and result.passed is False
    assert result.stopped_by is not None and "No space left on device" in result.stopped_by
    assert result.counts.items < 30, "the worker kept claiming (and paying for) items after its saves failed"
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("DROP TRIGGER full_disk ON results")
    again = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="full", concurrency=2)
    assert again.status == "complete" and again.counts.completed == 60  # nothing saved was lost, nothing is missing


@pytest.mark.slow
def test_a_worker_killed_mid_run_leaves_no_item_finished_without_its_result(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    import psycopg

    script_hallucination(judge, delay=0.02)
    data = write_items(tmp_path / "items.jsonl", 20)
    environment = {**os.environ, "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "sk-test"}
    script = (
        "import sys; from engine import create_hallucination_scorer, run_evals; "
        "run_evals(sys.argv[1], [create_hallucination_scorer()], store=sys.argv[2], run='killed', concurrency=2, lease_seconds=2)"
    )
    worker = subprocess.Popen([sys.executable, "-c", script, str(data), postgres_url], env=environment)
    PostgresStore(postgres_url).close()  # the schema, if the worker has not made it yet

    def finished() -> set[str]:
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            rows = connection.execute("SELECT item_id FROM work_items WHERE run = 'killed' AND finished_at IS NOT NULL").fetchall()
        return {row[0] for row in rows}

    deadline = time.monotonic() + 60
    while len(finished()) < 2 and worker.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    worker.kill()  # as the machine would: no flush, no goodbye
    worker.wait(timeout=30)

    with PostgresStore(postgres_url) as store:
        saved = {record.item_id for record in store.query(run="killed")}
    finished_by_the_dead = finished()
    assert finished_by_the_dead and finished_by_the_dead <= saved, f"finished without a result: {sorted(finished_by_the_dead - saved)}"
    # Another worker takes the rest once the dead one's lease runs out: every item has its result.
    again = run_evals(data, [create_hallucination_scorer()], store=postgres_url, run="killed", concurrency=2, lease_seconds=2)
    # Its result is the whole run's: the dead worker's items loaded, the rest judged now.
    assert again.status == "complete" and again.counts.completed == 20 and again.counts.resumed >= len(finished_by_the_dead)
    with PostgresStore(postgres_url) as store:
        assert sorted(record.item_id for record in store.query(run="killed")) == sorted(f"i{n}" for n in range(20))
