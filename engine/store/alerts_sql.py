"""What both SQL stores share of the alerts' outbox: how a delivery is read with its alert,
and which alert changes a monitor's state (the compare-and-set `save_alert` makes)."""

from __future__ import annotations

from typing import Any

from .base import AlertRecord

#: A delivery's row and its alert's: the stores add their WHERE and ORDER BY.
DELIVERY_SELECT = (
    "SELECT d.id AS delivery_id, d.target, d.target_name, d.state, d.attempts, d.next_attempt_at, d.last_error, d.delivered_at, "
    "d.claimed_by, d.claimed_until, a.* FROM alert_deliveries AS d JOIN monitor_alerts AS a ON a.id = d.alert_id"
)
#: The monitor's last stored alert (in the order they were stored), read inside the write.
LAST_ALERT = "SELECT kind, episode FROM monitor_alerts WHERE monitor = {mark} ORDER BY id DESC LIMIT 1"
#: Take a pending delivery nobody holds, whose claim ran out, that `owner` holds, or that a
#: holder known to be dead holds. Parameters: owner, until, id, now, owner, taking_from.
CLAIM = (
    "UPDATE alert_deliveries SET claimed_by = {mark}, claimed_until = {mark} WHERE id = {mark} AND state = 'pending' "
    "AND (claimed_by IS NULL OR claimed_until < {mark} OR claimed_by = {mark} OR claimed_by = {mark})"
)
RELEASE = "UPDATE alert_deliveries SET claimed_by = NULL, claimed_until = NULL WHERE id = {mark} AND claimed_by = {mark}"


def changes_state(alert: AlertRecord, last: Any) -> bool:
    """Whether `alert` changes its monitor's state as last stored (`last`: the row of
    LAST_ALERT, or None): an alert opens an episode only when none is open; a recovery closes
    only the episode that is open. Two processes that saw the same change: one keeps it."""
    if alert.kind == "alert":
        return last is None or last["kind"] != "alert"
    return last is not None and last["kind"] == "alert" and last["episode"] == alert.episode
