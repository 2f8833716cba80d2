"""The requests that left for a judge, answered or not: every HTTP request a provider's SDK
sends (each retry too) is counted where it leaves, in the SDK's HTTP client (see
`client.observing_http_client`). A runner that must say what it asked whatever came back (a
run that failed or was stopped keeps no record of the calls in flight or refused) counts
inside `counting()`: the requests of that context, and of every task it starts, are counted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class SentRequests:
    """How many requests left for a judge while it was counting."""

    requests: int = 0


_counting: ContextVar[SentRequests | None] = ContextVar("judge_requests_sent", default=None)


@contextmanager
def counting() -> Iterator[SentRequests]:
    """Count the judge requests sent in this context (and the tasks started in it)."""
    count = SentRequests()
    token = _counting.set(count)
    try:
        yield count
    finally:
        _counting.reset(token)


def request_sent(requests: int = 1) -> None:
    """Requests left for a judge: one as the HTTP client sends it, or each request of a
    Batch API job as the job is created."""
    count = _counting.get()
    if count is not None:
        count.requests += requests  # requests are sent from the event loop's thread: no lock needed


__all__ = ["SentRequests", "counting", "request_sent"]
