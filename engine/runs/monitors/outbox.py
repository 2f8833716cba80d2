"""An alert is kept until a receiver accepts it: the one place every monitor (a live
scorer's, `scorers monitor`, `check_monitors`) raises and sends its alerts.

Raising an alert stores it, with one pending delivery per webhook of its monitor, in the same
transaction, before anything is sent (a log line and a callback are told at once). Then each
delivery is attempted; one a receiver answers 2xx is delivered, one it refuses for good (a
4xx other than 429) is refused, and any other stays pending with its next attempt set by
exponential backoff, to be retried by whichever process checks the outbox next, after a
restart too. A delivery names its webhook by a digest of the address, never the address,
which may hold a secret; a webhook no longer configured leaves its deliveries pending and
says so.

Without a store that keeps alerts (a live scorer with no store), the outbox lives in memory
and is retried while the process lives.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta, timezone
from typing import Protocol

from ...catalog.monitors import CallbackAlert, LogAlert, Monitor, WebhookAlert
from ...store import AlertDelivery, AlertRecord, KeepsAlerts, Store
from .deliver import Posted, post, tell
from .watch import Alert

#: The longest wait between two attempts at one delivery.
MAX_BACKOFF = timedelta(hours=1)


def target_key(target: WebhookAlert) -> str:
    """Which webhook a delivery is for: a digest of where it posts, never the address."""
    address = target.webhook if target.webhook is not None else f"env:{target.webhook_env}"
    return hashlib.sha256(f"{address}|{target.format}".encode()).hexdigest()[:20]


class AlertsKept(Protocol):
    """What the outbox needs of where alerts are kept: a store that keeps alerts, or memory."""

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord: ...

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]: ...

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]: ...

    def record_delivery(self, delivery: AlertDelivery) -> None: ...


class MemoryAlerts:
    """The outbox of a monitor without a store: the same records, kept in this process."""

    def __init__(self) -> None:
        self._alerts: list[AlertRecord] = []
        self._deliveries: list[AlertDelivery] = []
        self._ids = itertools.count(1)

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord:
        stored = alert.model_copy(update={"id": next(self._ids)})
        self._alerts.append(stored)
        for target, name in deliveries:
            self._deliveries.append(AlertDelivery(id=next(self._ids), alert=stored, target=target, where=name, next_attempt_at=stored.fired_at))
        return stored

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        found = [alert for alert in reversed(self._alerts) if monitor is None or alert.monitor == monitor]
        return found[:limit]

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]:
        return [
            delivery
            for delivery in self._deliveries
            if (not pending_only or delivery.state == "pending")
            and (due_by is None or delivery.next_attempt_at <= due_by)
            and (monitor is None or delivery.alert.monitor == monitor)
        ]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        self._deliveries = [delivery if known.id == delivery.id else known for known in self._deliveries]


class Outbox:
    """Alerts raised by `monitors`, kept in `store` (or in memory) until delivered."""

    def __init__(self, store: Store | None, monitors: Sequence[Monitor]) -> None:
        self.alerts: AlertsKept = store if isinstance(store, KeepsAlerts) else MemoryAlerts()
        self.monitors = {monitor.name: monitor for monitor in monitors}
        self._in_flight: set[int] = set()

    def last_alert(self, monitor: str) -> AlertRecord | None:
        found = self.alerts.alerts(monitor, limit=1)
        return found[0] if found else None

    async def raise_alert(self, monitor: Monitor, alert: Alert) -> list[AlertDelivery]:
        """Keep the alert and its deliveries, tell the log and callback targets, then try each
        webhook; the alert's deliveries as they stand after that."""
        webhooks = [target for target in monitor.alert if isinstance(target, WebhookAlert)]
        record = alert.record()
        stored = await asyncio.to_thread(self.alerts.save_alert, record, [(target_key(target), target.where()) for target in webhooks])
        for target in monitor.alert:
            if isinstance(target, (LogAlert, CallbackAlert)):
                await tell(target, alert)
        pending = await asyncio.to_thread(self.alerts.deliveries, pending_only=True, monitor=monitor.name)
        mine = [delivery for delivery in pending if delivery.alert.id == stored.id]
        return [await self._attempt(delivery) for delivery in mine]

    async def retry_due(self, now: datetime | None = None, *, by_hand: bool = False, tried: Collection[int] = ()) -> list[AlertDelivery]:
        """Attempt every pending delivery whose next attempt is due (`by_hand`: every pending
        one, now: a send someone asked for is not put off by the back-off), but those `tried`
        already; what the attempts came to (a delivery whose webhook is gone is not attempted)."""
        due_by = None if by_hand else now or datetime.now(timezone.utc)
        due = await asyncio.to_thread(self.alerts.deliveries, pending_only=True, due_by=due_by)
        return [await self._attempt(delivery) for delivery in due if self._target(delivery) is not None and delivery.id not in tried]

    def undelivered(self) -> list[AlertDelivery]:
        """Deliveries of these monitors' alerts not taken by a receiver (pending or refused);
        one whose webhook is no longer configured says so as its last error."""
        found = []
        for delivery in self.alerts.deliveries(pending_only=False):
            if delivery.state == "delivered" or delivery.alert.monitor not in self.monitors:
                continue
            if self._target(delivery) is None:
                delivery = delivery.model_copy(update={"last_error": "its webhook is no longer configured"})
            found.append(delivery)
        return found

    async def _attempt(self, delivery: AlertDelivery) -> AlertDelivery:
        target = self._target(delivery)
        if target is None or delivery.id in self._in_flight:
            # Its webhook is no longer configured (it stays pending, and is counted), or it is
            # being sent now: a slow receiver is not asked twice at once.
            return delivery
        self._in_flight.add(delivery.id)
        try:
            posted = await post(target, Alert.model_validate(delivery.alert.payload))
        finally:
            self._in_flight.discard(delivery.id)
        updated = _after(delivery, posted, target)
        await asyncio.to_thread(self.alerts.record_delivery, updated)
        return updated

    def _target(self, delivery: AlertDelivery) -> WebhookAlert | None:
        monitor = self.monitors.get(delivery.alert.monitor)
        if monitor is None:
            return None
        return next((target for target in monitor.alert if isinstance(target, WebhookAlert) and target_key(target) == delivery.target), None)


def _after(delivery: AlertDelivery, posted: Posted, target: WebhookAlert) -> AlertDelivery:
    now = datetime.now(timezone.utc)
    attempts = delivery.attempts + posted.requests
    if posted.taken:
        return delivery.model_copy(update={"state": "delivered", "attempts": attempts, "delivered_at": now, "last_error": None})
    if not posted.retriable:
        return delivery.model_copy(update={"state": "refused", "attempts": attempts, "last_error": posted.error})
    wait = min(timedelta(seconds=max(target.backoff, 1.0) * 2 ** min(attempts, 20)), MAX_BACKOFF)
    return delivery.model_copy(update={"attempts": attempts, "last_error": posted.error, "next_attempt_at": now + wait})
