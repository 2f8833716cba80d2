"""Monitors over live scores: a drift in the judge's answers fires exactly one alert and,
once it passes, one recovery, at a real HTTP receiver; failing receivers never reach the host."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.monitoring import drifted_fleet, replies, rising_monitor_file, script_drifting_judge
from helpers.receiver import Receiver
from helpers.scripted import numbered_claims
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, SQLiteStore, create_hallucination_scorer, load_scorers
from engine.cli import app
from engine.runs.monitors import Alert, CallbackAlert, LogAlert, Monitor, WebhookAlert, load_monitors, slack_webhook
from engine.testing import JudgeServer

runner = CliRunner()


def rising(url: str, **settings: Any) -> Monitor:
    return Monitor(
        name="hallucination_rising", scorer="hallucination", statistic="mean", above=0.5, window=10, min_samples=10,
        alert=[WebhookAlert(webhook=url, backoff=0.01, **settings)],
    )


def test_a_drift_in_the_judge_fires_one_alert_then_one_recovery(judge: JudgeServer, tmp_path: Path) -> None:
    drift = threading.Event()
    script_drifting_judge(judge, drift)
    with Receiver() as receiver:
        live = LiveScorer(
            create_hallucination_scorer(options={"context": ["facts"]}), store=tmp_path / "live.sqlite", monitors=rising(receiver.url), concurrency=2
        )
        replies(live, 12, 0)  # scores 0: nothing to say
        drift.set()
        replies(live, 15, 12)  # scores 1: the window's mean rises past 0.5 once
        drift.clear()
        replies(live, 15, 27)  # back to 0: it falls under 0.5 once
        assert live.close(timeout=30)

        assert [body["kind"] for body in receiver.bodies] == ["alert", "recovery"]
        alert, recovery = receiver.bodies
        assert alert["monitor"] == "hallucination_rising" and alert["value"] > 0.5 and alert["condition"] == "mean above 0.5"
        assert alert["window"]["size"] == "last 10 outcomes" and alert["window"]["samples"] == 10
        assert alert["figures"]["outcomes"] == 10 and alert["figures"]["p95"] == 1.0
        assert [item["score"] for item in alert["worst"]] == [1.0, 1.0, 1.0]
        assert all(item["item_id"] in {f"trace-{n}" for n in range(12, 27)} for item in alert["worst"])
        assert recovery["value"] <= 0.5
    with SQLiteStore(tmp_path / "live.sqlite") as store:
        assert [alert.kind for alert in store.alerts("hallucination_rising")] == ["recovery", "alert"]


def test_a_failing_webhook_is_retried_with_backoff_and_a_dead_one_never_reaches_the_host(
    judge: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    drift = threading.Event()
    drift.set()
    script_drifting_judge(judge, drift)
    with Receiver(fail_first=2) as flaky, Receiver(fail_first=100, status=404) as gone:
        monitor = Monitor(
            name="bad", scorer="hallucination", statistic="mean", above=0.5, window=3, min_samples=3,
            alert=[WebhookAlert(webhook=flaky.url, backoff=0.01), WebhookAlert(webhook=gone.url, backoff=0.01), WebhookAlert(webhook="http://127.0.0.1:9/x", retries=1, backoff=0.01)],
        )
        live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=monitor)
        with caplog.at_level(logging.WARNING, logger="engine.monitors"):
            started = time.perf_counter()
            replies(live, 3, 0)
            assert live.close(timeout=30)
        assert time.perf_counter() - started < 20
    assert flaky.attempts == 3 and [body["kind"] for body in flaky.bodies] == ["alert"]
    assert gone.attempts == 1  # a 404 is not asked again
    warnings = [record.getMessage() for record in caplog.records if record.name == "engine.monitors"]
    assert any("http://127.0.0.1:" in line and "HTTP 404" in line for line in warnings)
    assert not any("secret-path" in line for line in warnings)  # a webhook's path is its secret


def test_a_slow_receiver_does_not_hold_up_the_agent(judge: JudgeServer) -> None:
    drift = threading.Event()
    drift.set()
    script_drifting_judge(judge, drift)
    with Receiver(delay=2.0) as slow:
        monitor = Monitor(name="m", scorer="hallucination", statistic="mean", above=0.5, window=2, min_samples=2, alert=[WebhookAlert(webhook=slow.url)])
        live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=monitor)

        @live
        def agent(question: str) -> str:
            return f"answer to {question}"

        replies(live, 2, 0)  # the alert is on its way to the slow receiver now
        started = time.perf_counter()
        assert agent("one more") == "answer to one more"
        assert time.perf_counter() - started < 0.5
        assert live.close(timeout=30)
        assert len(slow.bodies) == 1


def test_slack_preset_log_line_and_callback(judge: JudgeServer, caplog: pytest.LogCaptureFixture) -> None:
    drift = threading.Event()
    drift.set()
    script_drifting_judge(judge, drift)
    seen: list[Alert] = []
    with Receiver() as slack:
        monitor = Monitor(
            name="errors_or_worse", scorer="hallucination", statistic="pass_rate", threshold=0.5, below=0.9, window="1h", min_samples=2,
            alert=[slack_webhook(slack.url), LogAlert(log="error"), CallbackAlert(callback=seen.append)],
        )
        live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=[monitor])
        with caplog.at_level(logging.WARNING, logger="engine.monitors"):
            replies(live, 2, 0)
            assert live.close(timeout=30)
        (message,) = slack.bodies
    assert set(message) == {"text", "blocks"} and message["text"].startswith(":rotating_light: ALERT errors_or_worse")
    assert "pass_rate is 0" in message["text"] and "pass_rate below 0.9" in message["text"]
    (alert,) = seen
    assert alert.kind == "alert" and alert.value == 0.0 and alert.window.size == "last 1h"
    assert any(record.levelname == "ERROR" and "ALERT errors_or_worse" in record.getMessage() for record in caplog.records)


def test_too_few_samples_never_alert(judge: JudgeServer) -> None:
    drift = threading.Event()
    drift.set()
    script_drifting_judge(judge, drift)
    seen: list[Alert] = []
    monitor = Monitor(name="m", scorer="hallucination", statistic="mean", above=0.5, window=50, min_samples=20, alert=[CallbackAlert(callback=seen.append)])
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=monitor)
    replies(live, 5, 0)
    live.close()
    assert seen == [] and live.monitors.watches[0].last is not None and live.monitors.watches[0].last.state == "too few"


def test_the_sampled_share_falls_when_the_queue_drops_replies(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    judge.on("Claims", lambda request: (gate.wait(10), {"claims": ["fine"]})[1])
    judge.on("HallucinationVerdicts", lambda request: {"verdicts": [{"statement": c, "verdict": "no", "reason": "s"} for c in numbered_claims(request.prompt)]})
    judge.on("Reason", {"reason": "r"})
    seen: list[Alert] = []
    monitor = Monitor(name="coverage", scorer="hallucination", statistic="sampled_rate", below=0.5, window=10, min_samples=10, alert=[CallbackAlert(callback=seen.append)])
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=monitor, queue_size=2)
    for n in range(10):  # two are queued (and held by the judge), eight are dropped
        live.submit(f"reply {n}", run_id=f"t{n}")
    gate.set()
    assert live.close(timeout=30)
    (alert,) = seen
    assert alert.figures.sampled_rate == 0.2 and live.stats.dropped == 8


def test_monitors_in_yaml_are_checked_at_load_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "monitors.yaml"
    path.write_text(
        "monitors:\n  rising:\n    scorer: hallucination\n    statistic: mean\n    above: 0.3\n    window: 2x\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"monitors\.rising\.window: .*expected a positive number and a unit") as caught:
        load_monitors(path)
    assert f"{path}:6" in str(caught.value)
    path.write_text("monitors:\n  rising:\n    scorer: hallucination\n    statistic: median\n    above: 0.3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"monitors\.rising\.statistic: Input should be 'mean', 'p50'") as caught:
        load_monitors(path)
    assert f"{path}:4" in str(caught.value)
    path.write_text("monitors:\n  rising:\n    scorer: hallucination\n    statistic: mean\n    above: 0.3\n    alert:\n      - email: a@b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"an alert target is \{webhook: URL\}") as caught:
        load_monitors(path)
    assert f"{path}:7" in str(caught.value)
    path.write_text("monitors:\n  rising:\n    scorer: hallucination\n    statistic: mean\n    window: 10\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="give exactly one of `above` and `below`"):
        load_monitors(path)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("alice:S3cretPass@host/hook?token=abc", "expected an http:// or https:// URL"),
        ("https://alice:S3cretPass@host:99999/hook", "Port out of range"),
        ("https://alice:S3cretPass@[::1/hook", "Invalid IPv6 URL"),
        ("https://alice:S3cretPass@/hook", "names no host"),
    ],
)
def test_a_webhook_url_that_cannot_be_sent_to_is_refused_at_its_line_without_its_password(tmp_path: Path, url: str, said: str) -> None:
    store = tmp_path / "results.sqlite"
    SQLiteStore(store).close()
    monitors = rising_monitor_file(tmp_path / "monitors.yaml", url)
    result = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
    assert result.exit_code == 2, result.output
    assert f"{monitors}:" in result.output and "webhook" in result.output and said in result.output
    assert "S3cretPass" not in result.output and "internal error" not in result.output


def test_a_catalogs_monitors_name_its_own_scorers(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "scorers:\n  my_check:\n    extends: hallucination\n    name: mine\n"
        "monitors:\n  drift:\n    scorer: my_chek\n    statistic: error_rate\n    above: 0.1\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"monitors\.drift\.scorer: unknown scorer 'my_chek'.*did you mean 'my_check'") as caught:
        load_scorers(catalog)
    assert f"{catalog}:7" in str(caught.value)
    result = runner.invoke(app, ["check", str(catalog)])
    assert result.exit_code != 0 and "my_chek" in result.output
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("my_chek", "my_check"), encoding="utf-8")
    (monitor,) = load_scorers(catalog).monitors
    assert (monitor.name, monitor.scorer, monitor.window, monitor.alert) == ("drift", "my_check", 100, [LogAlert(log="warning")])


def test_a_monitor_must_watch_an_attached_scorer(judge: JudgeServer) -> None:
    monitor = Monitor(scorer="faithfulness", statistic="mean", below=0.5)
    with pytest.raises(ConfigError, match="monitor faithfulness watches faithfulness, which is not among the attached scorers"):
        LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), monitors=monitor)


def test_scorers_monitor_shows_state_figures_and_alerts_and_watch_sends_once(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "fleet.sqlite"
    drifted_fleet(judge, store, hosts=2, replies_each=6)  # two hosts write to one store
    with Receiver() as receiver:
        path = rising_monitor_file(tmp_path / "monitors.yaml", receiver.url, window="1h", min_samples=10, backoff=0.01)
        shown = runner.invoke(app, ["monitor", "--monitors", str(path), "--store", str(store), "--json"])
        assert shown.exit_code == 0, shown.output
        (state,) = json.loads(shown.output)["monitors"]
        assert state["state"] == "alerting" and state["value"] == 1.0 and state["window"]["samples"] == 12
        assert receiver.bodies == []  # showing sends nothing
        for _ in range(2):  # the second check finds the alert stored: not sent again
            sent = runner.invoke(app, ["monitor", "--monitors", str(path), "--store", str(store), "--send"], env={"COLUMNS": "200"})
            assert sent.exit_code == 0, sent.output
        assert [body["kind"] for body in receiver.bodies] == ["alert"]
        assert "ALERTING" in sent.output and "last alerts:" in sent.output and "ALERT rising: hallucination mean is 1" in sent.output


@pytest.mark.slow
def test_scorers_monitor_watch_alerts_on_a_drift_and_on_its_end(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "fleet.sqlite"
    drift = drifted_fleet(judge, store, hosts=1, replies_each=10)
    with Receiver() as receiver:
        path = rising_monitor_file(tmp_path / "monitors.yaml", receiver.url)
        scorers = str(Path(sys.executable).parent / "scorers")
        watcher = subprocess.Popen([scorers, "monitor", "--monitors", str(path), "--store", str(store), "--watch", "--interval", "1"], stdout=subprocess.DEVNULL)
        try:
            wait_for(lambda: len(receiver.bodies) == 1)
            drift.clear()
            live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store)
            replies(live, 10, 10)
            live.close()
            wait_for(lambda: len(receiver.bodies) == 2)
            time.sleep(2.5)  # two more rounds: nothing new to say
        finally:
            watcher.terminate()
            watcher.wait(timeout=10)
        assert [body["kind"] for body in receiver.bodies] == ["alert", "recovery"]


def wait_for(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
