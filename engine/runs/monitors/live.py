"""The monitors of one live scorer: each reply seen and each outcome recorded goes through
their windows; an alert they raise is sent on the live scorer's own event loop, so a slow or
failing receiver never holds up the host (or the scoring)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from datetime import datetime, timezone

from ...errors import ConfigError
from ...formatting import one_line
from ...store import KeepsAlerts, ResultRecord, Store
from .deliver import deliver
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
        self.watches = [MonitorWatch(monitor) for monitor in monitors]
        self.store = store
        self._counting = [watch for watch in self.watches if watch.monitor.statistic == "sampled_rate"]
        self._outcomes = [watch for watch in self.watches if watch.monitor.statistic != "sampled_rate"]

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
        """Store the alert (so `scorers monitor` shows it) and deliver it; never raises."""
        if isinstance(self.store, KeepsAlerts):
            try:
                await asyncio.to_thread(self.store.save_alert, alert.record())
            except Exception as exc:
                logger.warning("monitor %s: could not store its %s: %s", monitor.name, alert.kind, one_line(exc))
        await deliver(alert, monitor.alert)
