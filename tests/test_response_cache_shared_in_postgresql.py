"""The response cache in a PostgreSQL database, against a real server: every behaviour of the
SQLite cache, shared by separate processes, and never a password in what a user reads."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.catalogs import catalog_with_edited
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import create_hallucination_scorer, load_scorers, run_evals
from engine.cli import app
from engine.errors import ConfigError
from engine.judge import ResponseCache
from engine.testing import JudgeServer
from engine.testing.postgres import PostgresCluster

runner = CliRunner()


def items(outputs: list[str]) -> list[dict[str, Any]]:
    return [{"id": f"i{n}", "input": f"q{n}", "output": output, "context": ["facts"]} for n, output in enumerate(outputs)]


def write_items(path: Path, outputs: list[str]) -> Path:
    path.write_text("\n".join(json.dumps(item) for item in items(outputs)) + "\n", encoding="utf-8")
    return path


def stored_answers(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT COUNT(*) FROM scorers_responses").fetchone()
    return int(row[0]) if row else 0


def test_an_unchanged_rerun_under_a_new_name_asks_the_judge_nothing(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(["ok. WRONG", "ok", "fine. WRONG. WRONG"])
    store = tmp_path / "results.sqlite"

    first = run_evals(data, [create_hallucination_scorer()], store=store, run="monday", cache=postgres_url)
    sent = len(judge.requests)
    second = run_evals(data, [create_hallucination_scorer()], store=store, run="tuesday", cache=postgres_url)

    assert sent == 9 and len(judge.requests) == sent
    assert second.scores == first.scores
    assert second.summary["hallucination"].cached_calls == 9 and second.summary["hallucination"].judge_calls == 0
    assert stored_answers(postgres_url) == 9


def test_postgres_scheme_and_scorers_cache_pick_the_database(judge: JudgeServer, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script_hallucination(judge)
    monkeypatch.setenv("SCORERS_CACHE", postgres_url.replace("postgresql://", "postgres://", 1))
    data = items(["ok. WRONG"])

    run_evals(data, [create_hallucination_scorer()], run="one")  # the default cache: SCORERS_CACHE
    run_evals(data, [create_hallucination_scorer()], run="two", cache=True)

    assert len(judge.requests) == 3 and stored_answers(postgres_url) == 3


def test_failures_are_not_cached_and_a_stale_answer_is_asked_again(judge: JudgeServer, postgres_url: str) -> None:
    import psycopg

    script_hallucination(judge)
    run_evals(items(["FAIL here"]), [create_hallucination_scorer()], run="one", cache=postgres_url)
    run_evals(items(["FAIL here"]), [create_hallucination_scorer()], run="two", cache=postgres_url)
    assert len(judge.requests_for("Claims")) == 2 and stored_answers(postgres_url) == 0

    judge.reset()
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": s, "verdict": "no", "reason": "r"} for s in ("a", "b")]})
    judge.on("Reason", {"reason": "fine"})
    scorer = create_hallucination_scorer(options={"context": ["facts"]}, cache=postgres_url)
    scorer.run(output="a. b")
    with psycopg.connect(postgres_url) as connection:  # one verdict for two claims breaks the step's rule
        connection.execute("UPDATE scorers_responses SET answer = %s WHERE step = 'analyze'", (json.dumps({"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}]}),))
    judge.requests.clear()

    result = scorer.run(output="a. b")

    assert [request.schema_name for request in judge.requests] == ["HallucinationVerdicts"]
    assert len(result.analyze_step_result["verdicts"]) == 2


def test_identical_questions_in_flight_together_are_sent_once(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    judge.latency = 0.3
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("scorers:\n  twin-a:\n    extends: hallucination\n  twin-b:\n    extends: hallucination\n", encoding="utf-8")
    host = load_scorers(catalog)

    result = run_evals(items(["ok. WRONG"]), [host.create("twin-a"), host.create("twin-b")], cache=postgres_url)

    assert result.scores == {"twin-a": 0.5, "twin-b": 0.5}
    assert len(judge.requests) == 3


def _eval_process(data: Path, run: str, cache: str, base_url: str, store: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test", "SCORERS_CACHE": cache}
    command = [sys.executable, "-c", "from engine.cli import app; app()", "eval", str(data), "--scorer", "hallucination", "--reasons", "always", "--run", run, "--store", str(store)]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=180)


@pytest.mark.slow
def test_a_second_process_is_served_what_the_first_was_told(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "items.jsonl", ["ok. WRONG", "fine", "a. b. c"])

    # Separate result files, as on two machines: only the cache is shared.
    first = _eval_process(data, "machine-a", postgres_url, judge.base_url, tmp_path / "a.sqlite")
    assert first.returncode == 0, first.stdout + first.stderr
    sent = len(judge.requests)
    second = _eval_process(data, "machine-b", postgres_url, judge.base_url, tmp_path / "b.sqlite")
    assert second.returncode == 0, second.stdout + second.stderr

    assert sent == 9 and len(judge.requests) == sent  # the second process asked nothing
    assert "warning" not in (first.stderr + second.stderr).lower()


@pytest.mark.slow
def test_processes_writing_the_same_answers_at_once_store_each_once(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge, delay=0.05)
    data = write_items(tmp_path / "items.jsonl", [f"ok {n}. WRONG" for n in range(12)])
    environment = {**os.environ, "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "sk-test", "SCORERS_CACHE": postgres_url}

    def worker(n: int) -> subprocess.Popen[str]:
        command = [sys.executable, "-c", "from engine.cli import app; app()", "eval", str(data), "--scorer", "hallucination", "--reasons", "always",
                   "--run", f"w{n}", "--store", str(tmp_path / f"w{n}.sqlite")]
        return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    workers = [worker(n) for n in range(3)]
    outputs = [process.communicate(timeout=180)[0] for process in workers]

    assert [process.returncode for process in workers] == [0, 0, 0], outputs
    assert not any("response cache" in output for output in outputs), outputs  # no write failed
    assert stored_answers(postgres_url) == 36  # three questions per item, each kept once
    judge.requests.clear()
    assert _eval_process(data, "after", postgres_url, judge.base_url, tmp_path / "after.sqlite").returncode == 0
    assert judge.requests == []


def test_cache_stats_and_clear_work_on_the_database(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok. WRONG", "fine"])
    arguments = ["eval", str(data), "--scorer", "hallucination", "--reasons", "always", "--store", str(tmp_path / "results.sqlite"), "--cache", postgres_url]
    assert runner.invoke(app, [*arguments, "--run", "one"]).exit_code == 0
    again = runner.invoke(app, [*arguments, "--run", "two"])
    assert again.exit_code == 0, again.output
    assert len(judge.requests) == 6

    stats = runner.invoke(app, ["cache", "stats", "--cache", postgres_url, "--json"])
    assert stats.exit_code == 0, stats.output
    shown = json.loads(stats.stdout)
    assert shown["backend"] == "postgresql" and shown["location"] == postgres_url
    assert shown["entries"] == 6 and shown["models"] == {"openai/gpt-4o-mini": 6} and shown["size_bytes"] > 0
    assert [session[1:] for session in shown["recent"]][:2] == [[6, 0], [0, 6]]
    assert abs(shown["recent"][0][0] - time.time()) < 120  # the server's clock, as seconds since 1970
    plain = runner.invoke(app, ["cache", "stats"], env={"SCORERS_CACHE": postgres_url})
    assert plain.exit_code == 0 and "6 answers" in plain.stdout

    kept = runner.invoke(app, ["cache", "clear", "--cache", postgres_url, "--older-than", "30d"])
    assert kept.exit_code == 0 and "deleted 0" in kept.stdout
    assert "deleted 0" in runner.invoke(app, ["cache", "clear", "--cache", postgres_url, "--model", "openai/other"]).stdout
    time.sleep(1.1)
    aged = runner.invoke(app, ["cache", "clear", "--cache", postgres_url, "--older-than", "1s", "--model", "openai/gpt-4o-mini"])
    assert "deleted 6" in aged.stdout, aged.output
    assert stored_answers(postgres_url) == 0

    assert runner.invoke(app, [*arguments, "--run", "three"]).exit_code == 0
    assert len(judge.requests) == 12  # cleared: asked again
    everything = runner.invoke(app, ["cache", "clear", "--cache", postgres_url])
    assert "deleted 6" in everything.stdout
    assert json.loads(runner.invoke(app, ["cache", "stats", "--cache", postgres_url, "--json"]).stdout)["recent"] == []


def test_a_wrong_password_is_one_clear_line_that_never_shows_it(
    judge: JudgeServer, postgres_cluster: PostgresCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    right = postgres_cluster.password_user("fleet_cache", "Right-Pass-4821")
    wrong = right.replace("Right-Pass-4821", "Wrong-Pass-7730")
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ConfigError) as raised:
        ResponseCache(wrong)
    message = str(raised.value)
    assert "password authentication failed" in message and "postgresql://fleet_cache:***@127.0.0.1" in message
    assert "\n" not in message and "Wrong-Pass-7730" not in message

    script_hallucination(judge)
    data = write_items(tmp_path / "data.jsonl", ["ok"])
    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--reasons", "always", "--cache", wrong])
    assert result.exit_code != 0 and "password authentication failed" in result.output
    assert "Wrong-Pass-7730" not in result.output and "Traceback" not in result.output
    assert judge.requests == []  # refused before any call
    assert "Wrong-Pass-7730" not in caplog.text

    # The right password opens it, and the cache still names itself without the password.
    with ResponseCache(right) as cache:
        assert "Right-Pass-4821" not in repr(cache) and "fleet_cache:***@" in cache.location


def test_a_password_libpq_splits_at_an_at_sign_is_not_quoted_in_the_error() -> None:
    pytest.importorskip("psycopg")
    # libpq ends the user-info at the first `@`, so it reads the rest as a host name and says so.
    with pytest.raises(ConfigError) as raised:
        ResponseCache("postgresql://fleet:Wr@ng-Pass-9917@127.0.0.1:1/x")
    assert "ng-Pass-9917" not in str(raised.value) and "Wr@ng" not in str(raised.value)


def test_an_unreachable_database_is_one_clear_line(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(ConfigError, match=r"^cannot open the response cache postgresql://u:\*\*\*@127\.0\.0\.1:1/x: connection failed") as raised:
        ResponseCache("postgresql://u:secret-pass@127.0.0.1:1/x")
    assert "secret-pass" not in str(raised.value) and "\n" not in str(raised.value)

    result = runner.invoke(app, ["cache", "stats", "--cache", "mysql://u:secret-pass@h/x"])
    assert result.exit_code != 0 and "expected a file path or a postgresql:// URL" in result.output
    assert "secret-pass" not in result.output


def test_a_database_lost_mid_run_is_a_warning_and_the_run_goes_on(
    judge: JudgeServer, postgres_cluster: PostgresCluster, caplog: pytest.LogCaptureFixture
) -> None:
    import psycopg

    url = postgres_cluster.new_database()
    script_hallucination(judge)
    with ResponseCache(url) as cache:
        run_evals(items(["ok. WRONG"]), [create_hallucination_scorer()], run="before", cache=cache)
        with psycopg.connect(postgres_cluster.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {url.rsplit('/', 1)[1]} WITH (FORCE)")  # every connection of the cache cut
        judge.requests.clear()
        started = time.perf_counter()

        result = run_evals(items(["ok. WRONG", "fine", "a. b"]), [create_hallucination_scorer()], run="after", cache=cache, concurrency=1)

        assert result.counts.failed == 0 and result.scores["hallucination"] is not None
        assert len(judge.requests) == 9  # nothing served: the cache is gone
        assert time.perf_counter() - started < 20
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING and record.name == "engine.cache"]
    assert len(warnings) == 1 and "judging without it" in warnings[0], warnings


async def test_a_slow_cache_database_does_not_hold_up_the_event_loop(judge: JudgeServer, postgres_url: str) -> None:
    import psycopg

    script_hallucination(judge)
    scorer = create_hallucination_scorer(options={"context": ["facts"]}, cache=postgres_url)
    await scorer.arun(output="warm")  # tables and pool ready
    gaps: list[float] = []

    async def tick() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    with psycopg.connect(postgres_url) as holder:
        # Another session holds the table for a second: every read of the cache waits for it.
        holder.execute("LOCK TABLE scorers_responses IN ACCESS EXCLUSIVE MODE")
        release = threading.Timer(1.0, holder.commit)
        release.start()
        ticker = asyncio.create_task(tick())
        started = time.perf_counter()
        result = await asyncio.wait_for(scorer.arun(output="ok. WRONG"), 10)
        waited = time.perf_counter() - started
        release.join()
    ticker.cancel()

    assert result.score == 0.5 and waited > 0.9  # the scorer waited for the database...
    assert max(gaps) < 0.25, max(gaps)  # ...while the event loop went on


def test_without_the_postgres_extra_the_error_names_it(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    data = write_items(tmp_path / "data.jsonl", ["ok"])

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--reasons", "always", "--cache", "postgresql://u:secret-pass@db.internal/x"])

    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.output.strip() == "error: a postgresql:// response cache needs the postgres extra: pip install 'llm-scorers[postgres]'"
    assert judge.requests == []


def test_identical_questions_of_many_items_are_asked_once_while_answers_are_being_stored(judge: JudgeServer, postgres_url: str) -> None:
    # Every item has its own claims question, but the same verdicts and reason questions:
    # a question arriving while the first asker is still storing its answer must not be sent.
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": s, "verdict": "no", "reason": "r"} for s in ("a", "b")]})
    judge.on("Reason", {"reason": "fine"})

    result = run_evals(items([f"output {n}" for n in range(60)]), [create_hallucination_scorer()], cache=postgres_url, concurrency=16)

    assert result.counts.failed == 0
    assert len(judge.requests_for("Claims")) == 60
    assert len(judge.requests_for("HallucinationVerdicts")) == 1 and len(judge.requests_for("Reason")) == 1


def test_editing_one_template_resends_only_that_step(judge: JudgeServer, postgres_url: str, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(["ok. WRONG", "fine"])
    run_evals(data, [create_hallucination_scorer()], run="before", cache=postgres_url)
    judge.requests.clear()

    edited = load_scorers(catalog_with_edited(tmp_path, "hallucination/reason.j2", "Keep it short."))
    run_evals(data, [edited.create("hallucination")], run="after", cache=postgres_url)

    assert [request.schema_name for request in judge.requests] == ["Reason", "Reason"]
