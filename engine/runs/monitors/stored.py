"""Monitors checked against a store on demand (`scorers monitor`, `check_monitors`): the
window is read from the stored results of every process that writes there, and whether a
monitor was alerting (and in which episode) is read from the alerts stored before, so a
watcher that restarts does not alert twice for one episode. Alerts go through the outbox
(`outbox.py`): kept in the store until a receiver takes them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from pydantic import BaseModel, Field

from ...store import AlertDelivery, KeepsAlerts, Store
from ...sync import run_sync
from ..labels.golden import labelled_judgements
from .outbox import Outbox
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
    )
    points = [Point.of(record) for record in reversed(records)]
    return in_window(monitor, points, now), span is not None and len(records) == limit


def labelled_points(store: Store, monitor: Monitor, now: datetime) -> list[Point]:
    """A `human_agreement` monitor's window: the items people labelled, oldest first, each
    1 when the judge's verdict was theirs and 0 when not."""
    judged = labelled_judgements(store, monitor.scorer, monitor.source, monitor.run)
    points = [Point(found.at, "scored", f"{found.queue}/{found.item_id}", 1.0 if found.agreed else 0.0, found.note) for found in judged]
    return in_window(monitor, points, now)


def episode_open(store: Store, monitor: Monitor) -> tuple[bool, str | None]:
    """Whether the monitor's last stored alert left it alerting, and that alert's episode."""
    if not isinstance(store, KeepsAlerts):
        return False, None
    last = store.alerts(monitor.name, limit=1)
    if last and last[0].kind == "alert":
        return True, last[0].episode
    return False, None


def check_stored(store: Store, monitor: Monitor, now: datetime | None = None) -> MonitorCheck:
    """The monitor's state over the store's results now (no alert is sent)."""
    now = now or datetime.now(timezone.utc)
    alerting, episode = episode_open(store, monitor)
    if monitor.statistic == "sampled_rate":
        result = check(monitor, [], alerting, now, episode)
        return result.model_copy(update={"note": "the sampled share is measured inside the live scorer; see its alerts"})
    if monitor.statistic == "human_agreement":
        return check(monitor, labelled_points(store, monitor, now), alerting, now, episode)
    points, cut = stored_points(store, monitor, now)
    result = check(monitor, points, alerting, now, episode)
    if cut:
        result.note = f"the window holds more than {MAX_RECORDS} results: figures are over the newest"
    return result


class MonitorRound(BaseModel):
    """One check of monitors against a store: each monitor's state, and the alerts' deliveries
    that no receiver has taken yet (this round's and earlier rounds' alike)."""

    checks: list[MonitorCheck]
    undelivered: list[AlertDelivery] = Field(default_factory=list)
    #: The deliveries this round attempted, as each came out (taken or not).
    tried: list[AlertDelivery] = Field(default_factory=list)
    #: The deliveries another process was posting, which this round waited for: as that post left them.
    posted_elsewhere: list[AlertDelivery] = Field(default_factory=list)


async def acheck_monitors(
    store: Store, monitors: Sequence[Monitor], *, send: bool = True, now: datetime | None = None, by_hand: bool = False
) -> MonitorRound:
    """Check every monitor against the store; with `send`, a monitor whose state changed since
    its last stored alert raises its alert (or recovery) through the outbox, and the alerts
    not taken yet are sent again when their next attempt is due, or at once `by_hand` (a send
    someone asked for now is not deferred)."""
    outbox = Outbox(store, monitors, wait_for_others=True)
    checks, tried = [], []
    for monitor in monitors:
        result = check_stored(store, monitor, now)
        if send and result.alert is not None:
            raised = await outbox.raise_alert(monitor, result.alert)
            if raised is None:  # its delivery, pending, is sent (or waited for) below with the others
                result = result.model_copy(update={"alert": None, "note": f"another process raised its {result.alert.kind} at the same time"})
            else:
                tried += raised
        checks.append(result)
    if send:
        tried += await outbox.retry_due(now, by_hand=by_hand, tried={delivery.id for delivery in tried})
    elsewhere = outbox.posted_elsewhere
    return MonitorRound(
        checks=checks, undelivered=outbox.undelivered(), tried=[delivery for delivery in tried if delivery.id not in elsewhere],
        posted_elsewhere=[delivery for delivery in tried if delivery.id in elsewhere],
    )


def check_monitors(
    store: Store, monitors: Sequence[Monitor], *, send: bool = True, now: datetime | None = None, by_hand: bool = False
) -> MonitorRound:
    """Sync wrapper of `acheck_monitors` (same arguments)."""
    return run_sync(acheck_monitors(store, monitors, send=send, now=now, by_hand=by_hand))
