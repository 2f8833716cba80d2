"""Monitors over live scores: windows of a scorer's results, a condition, and alerts sent
once when it starts holding and once when it ends (see docs/monitoring.md)."""

from __future__ import annotations

from .deliver import slack_payload
from .live import MonitorHub
from ...catalog.monitors import (
    STATISTICS,
    AlertTarget,
    CallbackAlert,
    LogAlert,
    Monitor,
    WebhookAlert,
    as_monitors,
    load_monitors,
    parse_duration,
    slack_webhook,
)
from .outbox import Outbox
from .stored import MonitorRound, acheck_monitors, check_monitors, check_stored
from .watch import Alert, MonitorCheck, MonitorWatch, Point, WindowFigures, WorstItem

__all__ = [
    "STATISTICS",
    "Alert",
    "AlertTarget",
    "CallbackAlert",
    "LogAlert",
    "Monitor",
    "MonitorCheck",
    "MonitorHub",
    "MonitorRound",
    "Outbox",
    "MonitorWatch",
    "Point",
    "WebhookAlert",
    "WindowFigures",
    "WorstItem",
    "acheck_monitors",
    "as_monitors",
    "check_monitors",
    "check_stored",
    "load_monitors",
    "parse_duration",
    "slack_payload",
    "slack_webhook",
]
