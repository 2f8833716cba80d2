"""Processes that share a store share its outbox of alerts (`KeepsAlerts`): of two that see
the same change of a monitor's state, the store keeps one alert (a compare-and-set), and a
pending delivery is held by one process at a time (a claim, with a lease), so a receiver is
posted each alert by one process; a claim its process left runs out."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from helpers.stored_records import START

from engine import Store
from engine.store import AlertRecord, KeepsAlerts

from .conftest import Backend


def alert(kind: str, episode: str, monitor: str = "m", minutes: int = 0) -> AlertRecord:
    return AlertRecord(monitor=monitor, scorer_id="hallucination", kind=kind, message=f"{kind} {episode}", episode=episode,  # type: ignore[arg-type]
                       fired_at=START + timedelta(minutes=minutes))


def keeps_alerts(store: Store) -> KeepsAlerts:
    if not isinstance(store, KeepsAlerts):
        pytest.skip(f"{type(store).__name__} keeps no alerts")
    return store


def test_a_monitors_change_of_state_is_kept_once(store: Store) -> None:
    kept = keeps_alerts(store)
    assert kept.save_alert(alert("alert", "e1")) is not None
    assert kept.save_alert(alert("alert", "e2", minutes=1)) is None  # e1 is open: a second process's view of the same episode
    assert kept.save_alert(alert("recovery", "e2", minutes=1)) is None  # closes an episode that is not the open one
    assert kept.save_alert(alert("alert", "x1", monitor="other")) is not None  # another monitor has its own state
    assert kept.save_alert(alert("recovery", "e1", minutes=2)) is not None
    assert kept.save_alert(alert("recovery", "e1", minutes=2)) is None  # closed once
    assert kept.save_alert(alert("alert", "e3", minutes=3)) is not None  # a new episode
    assert [(record.kind, record.episode) for record in kept.alerts("m")] == [("alert", "e3"), ("recovery", "e1"), ("alert", "e1")]


def test_two_processes_raising_the_same_change_at_once_keep_one_alert(backend: Backend) -> None:
    """Two handles on one store (two processes' connections), each saving its own alert for
    the same change at the same moment, five changes in a row."""
    first, second = backend.open(), backend.open()
    try:
        stores = [keeps_alerts(first), keeps_alerts(second)]
        start = threading.Barrier(2)

        def raise_it(number: int, kind: str, episode: str) -> AlertRecord | None:
            start.wait()
            return stores[number].save_alert(alert(kind, episode), [("hook", "http://127.0.0.1")])

        open_episode = ""
        with ThreadPoolExecutor(2) as pool:
            for change in range(5):
                kind = "alert" if change % 2 == 0 else "recovery"
                # Each process's alert opens an episode of its own; a recovery closes the open one.
                episodes = [f"{change}-{number}" if kind == "alert" else open_episode for number in range(2)]
                kept = [saved for saved in pool.map(raise_it, range(2), [kind] * 2, episodes) if saved is not None]
                assert len(kept) == 1, f"change {change}: {len(kept)} {kind}s kept"
                open_episode = kept[0].episode or ""
        assert len(stores[0].alerts("m")) == 5 and len(stores[0].deliveries(pending_only=False)) == 5
    finally:
        first.close()
        second.close()


def test_a_pending_delivery_is_held_by_one_process_at_a_time(store: Store) -> None:
    kept = keeps_alerts(store)
    kept.save_alert(alert("alert", "e1"), [("hook", "http://127.0.0.1")])
    [pending] = kept.deliveries()

    held = kept.claim_delivery(pending.id, "host:1:a", 60)
    assert held is not None and held.claimed_by == "host:1:a" and held.claimed_until is not None
    refused = kept.claim_delivery(pending.id, "host:2:b", 60)
    assert refused is not None and refused.claimed_by == "host:1:a"  # b sees who posts it
    renewed = kept.claim_delivery(pending.id, "host:1:a", 120)
    assert renewed is not None and held.claimed_until is not None and renewed.claimed_until is not None
    assert renewed.claimed_until > held.claimed_until

    kept.release_delivery(pending.id, "host:2:b")  # not b's to release
    assert kept.deliveries()[0].claimed_by == "host:1:a"
    kept.release_delivery(pending.id, "host:1:a")  # a was stopped before its post ended: the delivery is as it was
    assert kept.deliveries()[0].claimed_by is None and kept.deliveries()[0].state == "pending"

    taken = kept.claim_delivery(pending.id, "host:2:b", 60)
    assert taken is not None and taken.claimed_by == "host:2:b"
    kept.record_delivery(taken.model_copy(update={"state": "delivered", "attempts": 1, "delivered_at": START}))
    [done] = kept.deliveries(pending_only=False)
    assert done.state == "delivered" and done.claimed_by is None  # what an attempt came to ends its claim
    after = kept.claim_delivery(pending.id, "host:1:a", 60)
    assert after is not None and after.state == "delivered" and after.claimed_by is None  # delivered: nothing to hold
    assert kept.claim_delivery(pending.id + 1000, "host:1:a", 60) is None


def test_a_claim_left_by_a_dead_process_runs_out_or_is_taken_from_it(store: Store) -> None:
    kept = keeps_alerts(store)
    kept.save_alert(alert("alert", "e1"), [("hook-a", "http://127.0.0.1"), ("hook-b", "http://127.0.0.1")])
    first, second = kept.deliveries()
    for delivery in (first, second):
        kept.claim_delivery(delivery.id, "host:1:dead", 0.5)  # then killed: never renewed, never released

    blocked = kept.claim_delivery(first.id, "host:2:b", 60)
    assert blocked is not None and blocked.claimed_by == "host:1:dead"
    time.sleep(0.6)
    lapsed = kept.claim_delivery(first.id, "host:2:b", 60)
    assert lapsed is not None and lapsed.claimed_by == "host:2:b"

    # A holder known to be dead (a process of this host whose pid is gone) is taken from at once.
    kept.claim_delivery(second.id, "host:1:dead", 60)
    assert (kept.claim_delivery(second.id, "host:2:b", 60) or second).claimed_by == "host:1:dead"
    taken = kept.claim_delivery(second.id, "host:2:b", 60, taking_from="host:1:dead")
    assert taken is not None and taken.claimed_by == "host:2:b"
    assert (kept.claim_delivery(second.id, "host:3:c", 60, taking_from="host:1:dead") or second).claimed_by == "host:2:b"
