"""Sending an alert where its monitor says: a webhook (JSON, or Slack's incoming-webhook
shape), a log line, a Python callback. Delivery never raises: a webhook that fails is
retried with exponential backoff (tenacity), then logged; the host goes on either way."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from ...formatting import one_line
from ...catalog.monitors import AlertTarget, CallbackAlert, LogAlert, WebhookAlert
from .watch import Alert

logger = logging.getLogger("engine.monitors")


class _Refused(Exception):
    """The receiver answered with an error status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def _retriable(exc: BaseException) -> bool:
    # A 4xx other than 429 will not change by asking again (a wrong URL, a revoked hook).
    return not isinstance(exc, _Refused) or exc.status == 429 or exc.status >= 500


def slack_payload(alert: Alert) -> dict[str, Any]:
    """Slack's incoming-webhook message: the one-line summary, and the figures as fields."""
    icon = ":rotating_light:" if alert.kind == "alert" else ":white_check_mark:"
    figures = alert.figures
    details = [f"*{name}*: {value:.3g}" for name, value in figures.model_dump().items() if isinstance(value, float)]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{icon} {alert.message()}"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(details) or "no figures"}]},
    ]
    return {"text": f"{icon} {alert.message()}", "blocks": blocks}


async def post(target: WebhookAlert, alert: Alert) -> bool:
    """POST the alert, retrying; True when the receiver took it."""
    import httpx2  # the HTTP client the judge's SDK brings; loaded only when an alert is sent

    payload = slack_payload(alert) if target.format == "slack" else alert.model_dump(mode="json")
    try:
        url = target.url()
        retrying = AsyncRetrying(
            stop=stop_after_attempt(target.retries + 1),
            wait=wait_exponential(multiplier=target.backoff, max=60),
            retry=retry_if_exception(_retriable),
            reraise=True,
        )
        async with httpx2.AsyncClient(timeout=target.timeout) as client:
            async for attempt in retrying:
                with attempt:
                    response = await client.post(url, json=payload)
                    if response.status_code >= 400:
                        raise _Refused(response.status_code)
        return True
    except Exception as exc:
        logger.warning("monitor %s: the webhook %s did not take the %s: %s", alert.monitor, target.where(), alert.kind, one_line(exc))
        return False


async def deliver(alert: Alert, targets: Sequence[AlertTarget]) -> None:
    """Send the alert to every target; each failure is logged, none is raised."""
    for target in targets:
        try:
            if isinstance(target, WebhookAlert):
                await post(target, alert)
            elif isinstance(target, LogAlert):
                logger.log(logging.getLevelName(target.log.upper()), "%s", alert.message())
            elif isinstance(target, CallbackAlert):
                returned = target.callback(alert)
                if inspect.isawaitable(returned):
                    await returned
        except Exception as exc:  # a host's callback: its failure is logged, never raised
            logger.warning("monitor %s: an alert target failed: %s", alert.monitor, one_line(exc))
