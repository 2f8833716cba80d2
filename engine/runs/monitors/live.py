"""The monitors of one live scorer: each reply seen and each outcome recorded goes through
their windows; an alert they raise goes to the outbox (`outbox.py`) on the live scorer's own
event loop, so a slow or failing receiver never holds up the host (or the scoring), and an
alert not taken yet is sent again later. Each monitor starts as its last stored alert left
it: a restarted host does not alert again for an episode already alerted."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from datetime import datetime, timezone

from ...errors import ConfigError
from ...formatting import one_line
from ...store import ResultRecord, Store
from .outbox import Outbox
from ...catalog.monitors import Monitor
from .watch import Alert, MonitorWatch, Point

logger = logging.getLogger("engine.monitors")


class MonitorHub:
    def __init__(self, monitors: Sequence[Monitor], store: Store | None, scorer_ids: Collection[str], run: str) -> None:
        for monitor in monitors:
            if monitor.scorer not in scorer_ids:
                raise ConfigError(
                    f"monitor {monitor.name} watches {monitor.scorer}, which is not among the attached scorers ({', '.join(sorted(scorer_ids))})"
                )
            if monitor.run is not None and monitor.run != run:
                raise ConfigError(f"monitor {monitor.name} watches run {monitor.run!r}, but this live scorer writes run {run!r}")
        self.outbox = Outbox(store, monitors)
        self.watches = [self._restored(monitor) for monitor in monitors]
        self.store = store
        self._counting = [watch for watch in self.watches if watch.monitor.statistic == "sampled_rate"]
        # People's labels reach a store, not a live scorer: `scorers monitor` checks human_agreement.
        self._outcomes = [watch for watch in self.watches if watch.monitor.statistic not in ("sampled_rate", "human_agreement")]

    def _restored(self, monitor: Monitor) -> MonitorWatch:
        try:
            last = self.outbox.last_alert(monitor.name)
        except Exception as exc:  # a store that cannot be read now: the monitor starts afresh
            logger.warning("monitor %s: could not read its last alert: %s", monitor.name, one_line(exc))
            last = None
        if last is not None and last.kind == "alert":
            return MonitorWatch(monitor, alerting=True, episode=last.episode)
        return MonitorWatch(monitor)

    def __bool__(self) -> bool:
        return bool(self.watches)

    def seen(self, sampled: Collection[str]) -> list[tuple[Monitor, Alert]]:
        """One reply seen; `sampled` are the scorers it was queued for."""
        if not self._counting:
            return []
        now = datetime.now(timezone.utc)
        alerts = []
        for watch in self._counting:
            alert = watch.add(Point(now, "sampled" if watch.monitor.scorer in sampled else "unsampled"))
            if alert is not None:
                alerts.append((watch.monitor, alert))
        return alerts

    def observe(self, record: ResultRecord) -> list[tuple[Monitor, Alert]]:
        """One outcome recorded."""
        alerts = []
        for watch in self._outcomes:
            if watch.wants(record):
                alert = watch.add(Point.of(record))
                if alert is not None:
                    alerts.append((watch.monitor, alert))
        return alerts

    async def send(self, monitor: Monitor, alert: Alert) -> None:
        """Keep the alert in the outbox and deliver it; never raises."""
        try:
            raised = await self.outbox.raise_alert(monitor, alert)
            if raised is None and alert.kind == "alert":
                # Another host opened the episode first: its recovery is the one to close.
                last = await asyncio.to_thread(self.outbox.last_alert, monitor.name)
                for watch in self.watches:
                    if watch.monitor.name == monitor.name and last is not None and last.kind == "alert":
                        watch.join(last.episode)
        except Exception as exc:
            logger.warning("monitor %s: could not keep or send its %s: %s", monitor.name, alert.kind, one_line(exc))

    async def retry(self) -> None:
        """Send again the alerts not taken yet whose next attempt is due; never raises."""
        try:
            await self.outbox.retry_due()
        except Exception as exc:
            logger.warning("monitors: could not send the alerts not taken yet: %s", one_line(exc))
