"""A monitor that holds a judge to people in production: the share of newly labelled live
items on which the judge's verdict was people's, alerting through the outbox when it falls
below a bound (and recovering once it is back)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from helpers.receiver import Receiver
from typer.testing import CliRunner

from engine.catalog.queues import QueueSpec
from engine.cli import app
from engine.runs.labels import give_label, queue_from_run
from engine.store import ResultRecord, RunInfo, open_store

runner = CliRunner()


def live_run(store: object, count: int) -> None:
    start = datetime.now(timezone.utc) - timedelta(minutes=5)
    store.begin_run(RunInfo(name="live-replies", source="live", meta={"kind": "live"}))  # type: ignore[attr-defined]
    store.save_many([  # type: ignore[attr-defined]
        ResultRecord(run="live-replies", source="live", item_id=f"reply-{n}", scorer_id="hallucination", direction="lower_is_better",
                     score=1.0 if n % 2 else 0.0, reason="scripted", output=f"answer {n}", context=["facts"], finished_at=start + timedelta(seconds=n))
        for n in range(count)
    ])


def test_the_judge_drifting_from_people_on_live_items_alerts_once_through_the_outbox(tmp_path: Path) -> None:
    location = tmp_path / "results.sqlite"
    store = open_store(location)
    assert store is not None
    live_run(store, 12)
    queue_from_run(store, QueueSpec(name="live-review", scorer="hallucination"), "live-replies")
    monitors = tmp_path / "monitors.yaml"
    with Receiver() as receiver:
        monitors.write_text(
            "monitors:\n"
            "  judge-drifts-from-people:\n"
            "    scorer: hallucination\n"
            "    statistic: human_agreement\n"
            "    window: 10\n"
            "    min_samples: 6\n"
            "    below: 0.8\n"
            f"    alert: [{{webhook: '{receiver.url}'}}]\n",
            encoding="utf-8",
        )
        # People agree with the judge on the first six items: no alert.
        for n in range(6):
            give_label(store, "live-review", "Ana", f"reply-{n}", "flag" if n % 2 else "pass")
        quiet = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(location), "--send", "--json"])
        assert quiet.exit_code == 0, quiet.stderr
        [check] = json.loads(quiet.stdout)["monitors"]
        assert (check["state"], check["value"], check["window"]["samples"]) == ("ok", 1.0, 6)

        # Then they disagree on four of the next six: 6 of the last 10 agree.
        for n in range(6, 12):
            judge_flags = n % 2 == 1
            people_flag = judge_flags if n >= 10 else not judge_flags
            give_label(store, "live-review", "Ana", f"reply-{n}", "flag" if people_flag else "pass")
        alerting = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(location), "--send", "--json"])
        assert alerting.exit_code == 0, alerting.stderr
        [check] = json.loads(alerting.stdout)["monitors"]
        assert check["state"] == "alerting" and check["value"] == 0.6 and check["figures"]["human_agreement"] == 0.6
        assert [body["kind"] for body in receiver.bodies] == ["alert"]
        alert = receiver.bodies[0]
        assert alert["statistic"] == "human_agreement" and alert["condition"] == "human_agreement below 0.8"
        assert [worst["item_id"] for worst in alert["worst"]][:1] == ["live-review/reply-6"]
        assert "judge 0 (pass), people flag" in alert["worst"][0]["reason"]

        again = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(location), "--send"])
        assert again.exit_code == 0 and [body["kind"] for body in receiver.bodies] == ["alert"]  # once per episode
        assert "judge-drifts-from-people" in again.stdout
    store.close()


def test_a_human_agreement_bound_no_share_can_cross_is_refused_at_its_line(tmp_path: Path) -> None:
    monitors = tmp_path / "monitors.yaml"
    monitors.write_text("monitors:\n  never:\n    scorer: hallucination\n    statistic: human_agreement\n    below: 0\n", encoding="utf-8")
    refused = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(tmp_path / "r.sqlite")])
    assert refused.exit_code == 2
    assert f"{monitors}:5" in refused.stderr and "human_agreement is never below 0 (it runs 0 to 1): the monitor would never alert" in refused.stderr
