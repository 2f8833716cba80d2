"""Monitors checked against a store on demand (`scorers monitor`, `check_monitors`): the
window is read from the stored results of every process that writes there, and whether a
monitor was alerting is read from the alerts stored before, so a watcher that restarts does
not alert twice for one episode."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from ...store import KeepsAlerts, Store
from ...sync import run_sync
from .deliver import deliver
from ...catalog.monitors import Monitor
from .watch import MonitorCheck, Point, check, in_window

#: Enough stored records for any time window a monitor is likely to use; a window holding
#: more is read from its newest records only (and says so).
MAX_RECORDS = 50_000


def stored_points(store: Store, monitor: Monitor, now: datetime) -> tuple[list[Point], bool]:
    """The monitor's window of stored outcomes, oldest first, and whether it was cut short."""
    span = monitor.span
    limit = MAX_RECORDS if span is not None else int(monitor.window)
    records = store.query(
        run=monitor.run, scorer=monitor.scorer, source=None if monitor.source == "any" else monitor.source,
        since=now - span if span is not None else None, limit=limit,
    )  # fmt: skip
    points = [Point.of(record) for record in reversed(records)]
    return in_window(monitor, points, now), span is not None and len(records) == limit


def was_alerting(store: Store, monitor: Monitor) -> bool:
    if not isinstance(store, KeepsAlerts):
        return False
    last = store.alerts(monitor.name, limit=1)
    return bool(last) and last[0].kind == "alert"


def check_stored(store: Store, monitor: Monitor, now: datetime | None = None) -> MonitorCheck:
    """The monitor's state over the store's results now (no alert is sent)."""
    now = now or datetime.now(timezone.utc)
    if monitor.statistic == "sampled_rate":
        result = check(monitor, [], was_alerting(store, monitor), now)
        return result.model_copy(update={"note": "the sampled share is measured inside the live scorer; see its alerts"})
    points, cut = stored_points(store, monitor, now)
    result = check(monitor, points, was_alerting(store, monitor), now)
    if cut:
        result.note = f"the window holds more than {MAX_RECORDS} results: figures are over the newest"
    return result


def check_monitors(store: Store, monitors: Sequence[Monitor], *, send: bool = True, now: datetime | None = None) -> list[MonitorCheck]:
    """Check every monitor against the store; with `send`, a monitor whose state changed
    since its last stored alert sends its alert (or recovery) and stores it."""
    results = []
    for monitor in monitors:
        result = check_stored(store, monitor, now)
        if send and result.alert is not None:
            run_sync(deliver(result.alert, monitor.alert))
            if isinstance(store, KeepsAlerts):
                store.save_alert(result.alert.record())
        results.append(result)
    return results
