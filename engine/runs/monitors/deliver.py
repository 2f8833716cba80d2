"""Sending one alert to one target: a webhook (JSON, or Slack's incoming-webhook shape), a log
line, a Python callback. A webhook is asked a few times with exponential backoff (tenacity);
what it answered in the end is returned, for the outbox (`outbox.py`) to keep: an alert to a
webhook counts as sent only once a receiver answers 2xx.

Every webhook request carries the alert's episode, as the `X-Scorers-Episode` header and in
the body, and an `Idempotency-Key` (episode and kind): a request the receiver took but did
not answer in time is sent again, and the receiver can tell it has it already."""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from ...catalog.monitors import CallbackAlert, LogAlert, WebhookAlert
from ...formatting import one_line
from ...scrub import scrubbed
from .watch import Alert

logger = logging.getLogger("engine.monitors")


class _Refused(Exception):
    """The receiver answered with an error status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def _retriable(exc: BaseException) -> bool:
    # A 4xx other than 429 will not change by asking again (a wrong URL, a revoked hook).
    # A cancellation (Ctrl-C, SIGTERM) is no failure of the receiver's: it stops the post,
    # where tenacity, which catches it too, would have posted again and ignored the signal.
    if not isinstance(exc, Exception):
        return False
    return not isinstance(exc, _Refused) or exc.status == 429 or exc.status >= 500


@dataclass(frozen=True)
class Posted:
    """What a webhook made of an alert: taken (2xx), or why not, and whether asking again
    later may help."""

    taken: bool
    #: How many requests reached for the receiver (the first and its retries), each an attempt it may have logged.
    requests: int = 1
    error: str | None = None
    retriable: bool = True


def slack_payload(alert: Alert) -> dict[str, Any]:
    """Slack's incoming-webhook message: the one-line summary, and the figures as fields."""
    icon = ":rotating_light:" if alert.kind == "alert" else ":white_check_mark:"
    figures = alert.figures
    details = [f"*{name}*: {value:.3g}" for name, value in figures.model_dump().items() if isinstance(value, float)]
    if alert.episode:
        details.append(f"episode {alert.episode}")
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{icon} {alert.message()}"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(details) or "no figures"}]},
    ]
    return {"text": f"{icon} {alert.message()}", "blocks": blocks}


def headers_of(alert: Alert) -> dict[str, str]:
    episode = alert.episode or ""
    return {"X-Scorers-Episode": episode, "X-Scorers-Alert": alert.kind, "Idempotency-Key": f"{episode}-{alert.kind}"}


async def post(target: WebhookAlert, alert: Alert) -> Posted:
    """POST the alert, retrying `target.retries` times with backoff; never raises."""
    import httpx2  # the HTTP client the judge's SDK brings; loaded only when an alert is sent

    # What leaves the process is scrubbed like everything else it writes.
    payload = scrubbed(slack_payload(alert) if target.format == "slack" else alert.model_dump(mode="json"))
    requests = 0
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
                    requests += 1
                    response = await client.post(url, json=payload, headers=headers_of(alert))
                    if response.status_code >= 400:
                        raise _Refused(response.status_code)
        return Posted(taken=True, requests=requests)
    except Exception as exc:
        reason = one_line(exc) if not isinstance(exc, _Refused) else str(exc)
        logger.warning("monitor %s: the webhook %s did not take the %s: %s", alert.monitor, target.where(), alert.kind, reason)
        return Posted(taken=False, requests=requests, error=reason, retriable=_retriable(exc))


async def tell(target: LogAlert | CallbackAlert, alert: Alert) -> None:
    """A log line or a host's callback, at once; a callback's failure is logged, never raised."""
    try:
        if isinstance(target, LogAlert):
            logger.log(logging.getLevelName(target.log.upper()), "%s", alert.message())
        else:
            returned = target.callback(alert)
            if inspect.isawaitable(returned):
                await returned
    except Exception as exc:
        logger.warning("monitor %s: an alert target failed: %s", alert.monitor, one_line(exc))
