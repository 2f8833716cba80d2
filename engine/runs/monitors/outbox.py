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

Processes sharing a store share its outbox. Of two that see the same change of state, the
store keeps one alert (a compare-and-set of the monitor's last alert). A delivery is posted
by the one process that claims it: a lease, renewed while the post lasts; one a dead process
left runs out (at once, when that process was on this host). A command that finds another
process posting waits for what that post comes to, and reports it.

Without a store that keeps alerts (a live scorer with no store), the outbox lives in memory
and is retried while the process lives.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import threading
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta, timezone
from typing import Protocol

from ...catalog.monitors import CallbackAlert, LogAlert, Monitor, WebhookAlert
from ...formatting import one_line
from ...store import AlertDelivery, AlertRecord, KeepsAlerts, Store
from ...store.alerts_sql import changes_state
from ..owners import left_by_the_dead, new_owner
from .deliver import Posted, post, tell
from .watch import Alert

logger = logging.getLogger("engine.monitors")

#: The longest wait between two attempts at one delivery.
MAX_BACKOFF = timedelta(hours=1)
#: How long a claim of a delivery holds unless renewed (every third of it while the post
#: lasts): the longest a process that died on another host keeps others from posting.
CLAIM_SECONDS = 15.0
#: How often a process that found another posting a delivery looks again.
CLAIM_POLL_SECONDS = 0.2


def target_key(target: WebhookAlert) -> str:
    """Which webhook a delivery is for: a digest of where it posts, never the address."""
    address = target.webhook if target.webhook is not None else f"env:{target.webhook_env}"
    return hashlib.sha256(f"{address}|{target.format}".encode()).hexdigest()[:20]


class AlertsKept(Protocol):
    """What the outbox needs of where alerts are kept: a store that keeps alerts, or memory."""

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord | None: ...

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]: ...

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]: ...

    def record_delivery(self, delivery: AlertDelivery) -> None: ...

    def claim_delivery(self, delivery_id: int, owner: str, seconds: float, *, taking_from: str | None = None) -> AlertDelivery | None: ...

    def release_delivery(self, delivery_id: int, owner: str) -> None: ...


class MemoryAlerts:
    """The outbox of a monitor without a store: the same records, kept in this process."""

    def __init__(self) -> None:
        self._alerts: list[AlertRecord] = []
        self._deliveries: dict[int, AlertDelivery] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # called from the event loop's worker threads

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord | None:
        with self._lock:
            last = next((kept for kept in reversed(self._alerts) if kept.monitor == alert.monitor), None)
            if not changes_state(alert, None if last is None else {"kind": last.kind, "episode": last.episode}):
                return None
            stored = alert.model_copy(update={"id": next(self._ids)})
            self._alerts.append(stored)
            for target, name in deliveries:
                number = next(self._ids)
                self._deliveries[number] = AlertDelivery(id=number, alert=stored, target=target, where=name, next_attempt_at=stored.fired_at)
            return stored

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        found = [alert for alert in reversed(self._alerts) if monitor is None or alert.monitor == monitor]
        return found[:limit]

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]:
        return [
            delivery
            for delivery in list(self._deliveries.values())
            if (not pending_only or delivery.state == "pending")
            and (due_by is None or delivery.next_attempt_at <= due_by)
            and (monitor is None or delivery.alert.monitor == monitor)
        ]

    def record_delivery(self, delivery: AlertDelivery) -> None:
        with self._lock:
            self._deliveries[delivery.id] = delivery.model_copy(update={"claimed_by": None, "claimed_until": None})

    def claim_delivery(self, delivery_id: int, owner: str, seconds: float, *, taking_from: str | None = None) -> AlertDelivery | None:
        now = datetime.now(timezone.utc)
        with self._lock:
            found = self._deliveries.get(delivery_id)
            if found is None or found.state != "pending":
                return found
            lapsed = found.claimed_until is not None and found.claimed_until < now
            if found.claimed_by is None or lapsed or found.claimed_by in (owner, taking_from):
                found = found.model_copy(update={"claimed_by": owner, "claimed_until": now + timedelta(seconds=seconds)})
                self._deliveries[delivery_id] = found
            return found

    def release_delivery(self, delivery_id: int, owner: str) -> None:
        with self._lock:
            found = self._deliveries.get(delivery_id)
            if found is not None and found.claimed_by == owner:
                self._deliveries[delivery_id] = found.model_copy(update={"claimed_by": None, "claimed_until": None})


class Outbox:
    """Alerts raised by `monitors`, kept in `store` (or in memory) until delivered. With
    `wait_for_others`, a delivery another process is posting is waited for (a command
    reports what became of it); without, it is left to that process (a live scorer)."""

    def __init__(self, store: Store | None, monitors: Sequence[Monitor], *, wait_for_others: bool = False) -> None:
        self.alerts: AlertsKept = store if isinstance(store, KeepsAlerts) else MemoryAlerts()
        self.monitors = {monitor.name: monitor for monitor in monitors}
        self.owner = new_owner()
        self.wait_for_others = wait_for_others
        #: The deliveries found being posted by another process (waited for, or left to it).
        self.posted_elsewhere: set[int] = set()
        self._in_flight: set[int] = set()

    def last_alert(self, monitor: str) -> AlertRecord | None:
        found = self.alerts.alerts(monitor, limit=1)
        return found[0] if found else None

    async def raise_alert(self, monitor: Monitor, alert: Alert) -> list[AlertDelivery] | None:
        """Keep the alert and its deliveries, tell the log and callback targets, then try each
        webhook; the alert's deliveries as they stand after that. None when another process
        kept this change of state first (and so tells and sends it)."""
        webhooks = [target for target in monitor.alert if isinstance(target, WebhookAlert)]
        record = alert.record()
        stored = await asyncio.to_thread(self.alerts.save_alert, record, [(target_key(target), target.where()) for target in webhooks])
        if stored is None:
            return None
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
            held = await self._claim(delivery)
            if held is None or held.state != "pending" or held.claimed_by != self.owner:
                return held or delivery  # another process posted it, or posts it now
            posted = await self._post_holding(target, held)
        finally:
            self._in_flight.discard(delivery.id)
        updated = _after(held, posted, target)
        await asyncio.to_thread(self.alerts.record_delivery, updated)
        return updated

    async def _claim(self, delivery: AlertDelivery) -> AlertDelivery | None:
        """The delivery held by this outbox to post, or as another process leaves it: one
        whose holder is alive is waited for (`wait_for_others`) until its post ends, and what
        that post came to stands; a holder that died is taken from."""
        taking_from: str | None = None
        attempts_when_found: int | None = None  # attempts counted when another was found posting
        while True:
            found = await asyncio.to_thread(self.alerts.claim_delivery, delivery.id, self.owner, CLAIM_SECONDS, taking_from=taking_from)
            if found is None or found.state != "pending":
                return found
            if found.claimed_by == self.owner:
                if attempts_when_found is not None and found.attempts != attempts_when_found:
                    # The other process's post ended, not taken: its outcome is this round's too.
                    await asyncio.to_thread(self.alerts.release_delivery, delivery.id, self.owner)
                    return found.model_copy(update={"claimed_by": None, "claimed_until": None})
                return found
            if left_by_the_dead(found.claimed_by):
                taking_from = found.claimed_by
                continue
            self.posted_elsewhere.add(delivery.id)
            if not self.wait_for_others:
                return found
            if attempts_when_found is None:
                attempts_when_found = found.attempts
            await asyncio.sleep(CLAIM_POLL_SECONDS)

    async def _post_holding(self, target: WebhookAlert, delivery: AlertDelivery) -> Posted:
        """Post, renewing the claim meanwhile. Interrupted (Ctrl-C, SIGTERM, a cancelled
        task), the delivery is not known to be taken: it stays pending, and its claim ends
        now so that the next send takes it at once."""
        renewing = asyncio.create_task(self._renew(delivery.id))
        try:
            return await post(target, Alert.model_validate(delivery.alert.payload))
        except BaseException:
            try:
                self.alerts.release_delivery(delivery.id, self.owner)
            except Exception as exc:  # the claim runs out by itself then
                logger.warning("monitor %s: could not release its delivery: %s", delivery.alert.monitor, one_line(exc))
            raise
        finally:
            renewing.cancel()

    async def _renew(self, delivery_id: int) -> None:
        while True:
            await asyncio.sleep(CLAIM_SECONDS / 3)
            try:
                await asyncio.to_thread(self.alerts.claim_delivery, delivery_id, self.owner, CLAIM_SECONDS)
            except Exception as exc:  # the post goes on; the claim may run out at worst
                logger.warning("could not renew the claim of an alert delivery: %s", one_line(exc))

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
