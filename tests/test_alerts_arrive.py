"""Alerts arrive, once per episode: each is kept in the store's outbox until a receiver
answers 2xx, sent again with backoff across restarts, carries its episode (a header and the
body) for the receiver to de-duplicate, and a command that could not deliver one says so and
exits 1 (runs/monitors/outbox.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from helpers.receiver import Receiver
from helpers.scripted import numbered_claims
from typer.testing import CliRunner

from engine import LiveScorer, SQLiteStore, create_hallucination_scorer
from engine.cli import app
from engine.runs.monitors import Monitor, WebhookAlert
from engine.testing import JudgeServer

runner = CliRunner()


def script_judge(judge: JudgeServer, drift: threading.Event) -> None:
    judge.on("Claims", lambda request: {"claims": ["the reply is fine"]})
    judge.on(
        "HallucinationVerdicts",
        lambda request: {"verdicts": [{"statement": claim, "verdict": "yes" if drift.is_set() else "no", "reason": "s"} for claim in numbered_claims(request.prompt)]},
    )
    judge.on("Reason", {"reason": "scripted reason"})


def drifted_replies(judge: JudgeServer, store: Path, count: int = 10, run: str = "live", drifted: bool = True) -> None:
    drift = threading.Event()
    if drifted:
        drift.set()
    script_judge(judge, drift)
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, run=run)
    for number in range(count):
        live.submit(f"reply {number}", input="q", run_id=f"{run}-{number}")
    assert live.close(timeout=30)


def free_port_url() -> str:
    """An address nothing listens on: a receiver that is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


def monitors_file(path: Path, url: str, **webhook: Any) -> Path:
    monitor = {"scorer": "hallucination", "statistic": "mean", "above": 0.5, "window": 10, "min_samples": 5,
               "alert": [{"webhook": url, "retries": 1, "backoff": 0.01, **webhook}]}
    path.write_text(yaml.safe_dump({"monitors": {"rising": monitor}}), encoding="utf-8")
    return path


def test_monitor_send_with_the_receiver_down_keeps_the_alert_and_exits_1(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    drifted_replies(judge, store)
    down = monitors_file(tmp_path / "down.yaml", free_port_url())

    shown = runner.invoke(app, ["monitor", "--monitors", str(down), "--store", str(store), "--send"])

    assert shown.exit_code == 1, shown.output
    words = " ".join(shown.stdout.split())
    assert "sent:" not in words and "NOT DELIVERED to http://127.0.0.1" in words
    assert "not taken after 2 attempt(s)" in words  # the first try and its one retry, as the receiver would count them
    assert "alert delivery(ies) not taken by their receiver" in shown.stderr
    with SQLiteStore(store) as opened:
        [pending] = opened.deliveries()
        assert pending.state == "pending" and pending.attempts == 2 and pending.alert.kind == "alert"  # the first try and its one retry

    # The monitor now posts elsewhere: the kept delivery has nowhere to go; it stays
    # undelivered and is counted, and the episode raises no second alert.
    with Receiver() as receiver:
        moved = monitors_file(tmp_path / "moved.yaml", receiver.url)
        again = runner.invoke(app, ["monitor", "--monitors", str(moved), "--store", str(store), "--send"])
        assert again.exit_code == 1 and "its webhook is no longer configured" in " ".join(again.stdout.split())
        assert receiver.bodies == []


def test_an_alert_kept_while_the_receiver_was_down_arrives_once_it_is_up(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    drifted_replies(judge, store)
    with Receiver(fail_first=2, status=503) as receiver:  # down for the first check's two tries
        monitors = monitors_file(tmp_path / "m.yaml", receiver.url)
        first = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert first.exit_code == 1 and receiver.bodies == []
        with SQLiteStore(store) as opened:
            [pending] = opened.deliveries()
            opened.record_delivery(pending.model_copy(update={"next_attempt_at": pending.alert.fired_at}))  # due now
        second = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert second.exit_code == 0, second.output
        assert [body["kind"] for body in receiver.bodies] == ["alert"]
        episode = receiver.bodies[0]["episode"]
        assert episode and all(headers["X-Scorers-Episode"] == episode for headers in receiver.headers)
        assert {headers["Idempotency-Key"] for headers in receiver.headers} == {f"{episode}-alert"}
        third = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert third.exit_code == 0 and len(receiver.bodies) == 1  # delivered once: never again

        # The drift ends: the recovery closes the same episode.
        drifted_replies(judge, store, run="live", drifted=False)
        recovered = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert recovered.exit_code == 0, recovered.output
        assert [body["kind"] for body in receiver.bodies] == ["alert", "recovery"] and receiver.bodies[1]["episode"] == episode


def test_a_send_asked_for_by_hand_tries_now_and_says_what_the_try_came_to(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    drifted_replies(judge, store)
    with Receiver(fail_first=2, status=503) as receiver:  # refuses the first two tries
        monitors = monitors_file(tmp_path / "m.yaml", receiver.url, retries=0, backoff=30)  # the next attempt is a minute away
        first = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert first.exit_code == 1 and receiver.attempts == 1

        # Run again by hand inside the back-off: it tries now, and says what this try came to.
        second = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert second.exit_code == 1 and receiver.attempts == 2
        assert "tried now: not taken after 2 attempt(s)" in " ".join(second.stdout.split()) and "HTTP 503" in second.stdout

        third = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert third.exit_code == 0, third.output
        assert receiver.attempts == 3 and [body["kind"] for body in receiver.bodies] == ["alert"]
        assert "delivered to http://127.0.0.1" in third.stdout and "NOT DELIVERED" not in third.stdout


def test_a_live_alert_that_fails_every_try_is_kept_and_sent_again(judge: JudgeServer, tmp_path: Path, monkeypatch: Any) -> None:
    from engine.runs.live import scorer as live_scorer

    monkeypatch.setattr(live_scorer, "RETRY_ALERTS_EVERY", 0.0)
    store = tmp_path / "r.sqlite"
    drift = threading.Event()
    drift.set()
    script_judge(judge, drift)
    with Receiver(fail_first=5, status=500) as receiver:  # the first 5 tries fail: every try of the first send
        monitor = Monitor(
            name="rising", scorer="hallucination", statistic="mean", above=0.5, window=5, min_samples=5,
            alert=[WebhookAlert(webhook=receiver.url, retries=4, backoff=0.01)],
        )
        live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, monitors=[monitor])
        for number in range(5):
            live.submit(f"reply {number}", input="q", run_id=f"r{number}")
        assert live.flush(timeout=30)
        assert receiver.attempts == 5 and receiver.bodies == []
        with SQLiteStore(store) as opened:
            [pending] = opened.deliveries()
            opened.record_delivery(pending.model_copy(update={"next_attempt_at": pending.alert.fired_at}))
        live.submit("reply 5", input="q", run_id="r5")  # the next reply scored sends again what is due
        assert live.close(timeout=30)
        assert [body["kind"] for body in receiver.bodies] == ["alert"]
    with SQLiteStore(store) as opened:
        assert opened.deliveries() == [] and [delivery.state for delivery in opened.deliveries(pending_only=False)] == ["delivered"]


def test_a_restarted_host_does_not_alert_again_for_an_episode_already_alerted(judge: JudgeServer, tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite"
    drift = threading.Event()
    drift.set()
    script_judge(judge, drift)
    with Receiver() as receiver:
        for restart in range(2):  # the same host twice, the drift lasting through the restart
            monitor = Monitor(
                name="rising", scorer="hallucination", statistic="mean", above=0.5, window=5, min_samples=5,
                alert=[WebhookAlert(webhook=receiver.url, backoff=0.01)],
            )
            live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, monitors=[monitor])
            for number in range(6):
                live.submit(f"reply {number}", input="q", run_id=f"r{restart}-{number}")
            assert live.close(timeout=30)
        assert [body["kind"] for body in receiver.bodies] == ["alert"]


def test_a_slow_receiver_is_never_asked_twice_at_once_and_can_tell_a_repeat(judge: JudgeServer, tmp_path: Path) -> None:
    """A receiver slower than the webhook's timeout: the request is sent again after the
    timeout (it may have been taken), with the same episode and idempotency key."""
    store = tmp_path / "r.sqlite"
    drifted_replies(judge, store)
    with Receiver(delay=1.0) as receiver:
        monitors = monitors_file(tmp_path / "m.yaml", receiver.url, timeout=0.5)
        shown = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        assert shown.exit_code == 1  # never answered in time: not known to be taken, kept
        assert len({headers["Idempotency-Key"] for headers in receiver.headers}) == 1
    with Receiver() as patient:
        monitors = monitors_file(tmp_path / "m2.yaml", patient.url)  # the default timeout waits 30 s
        assert WebhookAlert(webhook=patient.url).timeout >= 30


def test_a_send_by_hand_while_another_process_posts_the_alert_waits_for_that_post(judge: JudgeServer, tmp_path: Path) -> None:
    """`monitor --send` by hand while a watcher's post of the same delivery is in flight: it
    does not post it again (the receiver is asked once), and says what that post came to."""
    store = tmp_path / "r.sqlite"
    drifted_replies(judge, store)
    with Receiver(hold_first=2.0) as receiver:  # the watcher's post is held in flight two seconds
        monitors = monitors_file(tmp_path / "m.yaml", receiver.url)
        command = [str(Path(sys.executable).with_name("scorers")), "monitor", "--monitors", str(monitors), "--store", str(store), "--send"]
        watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while receiver.attempts == 0 and time.monotonic() < deadline and watcher.poll() is None:
            time.sleep(0.05)
        assert receiver.attempts == 1, watcher.communicate()

        by_hand = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send"])
        watched, _ = watcher.communicate(timeout=30)

        assert receiver.attempts == 1, "the send by hand posted the alert the watcher was posting"
        assert watcher.returncode == 0 and "delivered to http://127.0.0.1" in watched, watched
        assert by_hand.exit_code == 0 and "by another process" in " ".join(by_hand.stdout.split()), by_hand.output
    with SQLiteStore(store) as opened:
        [delivery] = opened.deliveries(pending_only=False)
        assert delivery.state == "delivered" and delivery.attempts == 1


def test_two_hosts_on_one_store_raise_one_alert_and_either_closes_its_episode(judge: JudgeServer, tmp_path: Path) -> None:
    """Two live hosts watching the same drift: the first to keep the alert opens the episode,
    the other's alert is not kept (nor sent) and it joins that episode, so the recovery it
    sees later closes it."""
    store = tmp_path / "r.sqlite"
    drift = threading.Event()
    drift.set()
    script_judge(judge, drift)
    with Receiver() as receiver:
        monitor = Monitor(name="rising", scorer="hallucination", statistic="mean", above=0.5, window=5, min_samples=5,
                          alert=[WebhookAlert(webhook=receiver.url, backoff=0.01)])
        hosts = [LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, monitors=[monitor]) for _ in range(2)]
        for host, name in zip(hosts, ("a", "b")):
            for number in range(5):
                host.submit(f"reply {number}", input="q", run_id=f"{name}{number}")
            assert host.flush(timeout=30)
        drift.clear()
        for number in range(5):  # only the second host sees the drift end
            hosts[1].submit(f"reply {number}", input="q", run_id=f"b-after{number}")
        for host in hosts:
            assert host.close(timeout=30)
        assert [body["kind"] for body in receiver.bodies] == ["alert", "recovery"]
        assert receiver.bodies[0]["episode"] == receiver.bodies[1]["episode"]
    with SQLiteStore(store) as opened:
        assert [alert.kind for alert in opened.alerts("rising")] == ["recovery", "alert"]
