"""Keys never reach a log: every API key a judge is created with is remembered here, and a
logging filter on this package's loggers and on those of the libraries it calls (Instructor,
openai, anthropic, httpx) replaces it in each record, its arguments and its traceback text.

A filter on a logger only sees records created on that very logger, not those of its
children passing through, so it is put on every logger under those names that exists when
a judge is created or its client is built (the SDKs create theirs on import).
"""

from __future__ import annotations

import logging
import threading

from ..db.urls import MASK

WATCHED_LOGGERS = ("engine", "instructor", "openai", "anthropic", "httpx", "httpcore", "psycopg")

_secrets: set[str] = set()
_lock = threading.Lock()


def remember_secret(secret: str | None) -> None:
    """Scrub `secret` from every log record and message from now on (short values, such as
    a placeholder for servers that need no key, are not secrets and would mangle text)."""
    if secret and len(secret) >= 8:
        with _lock:
            _secrets.add(secret)


def scrub(text: str) -> str:
    """`text` with every remembered secret masked."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class ScrubSecrets(logging.Filter):
    """Masks remembered secrets in a record's message, arguments and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: leave it to logging
            message = str(record.msg)
        record.msg = scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


_FILTER = ScrubSecrets()


def install_log_filter() -> None:
    """Put the filter on every watched logger and each of its existing children (idempotent)."""
    names = [name for name in list(logging.root.manager.loggerDict) if any(name == root or name.startswith(f"{root}.") for root in WATCHED_LOGGERS)]
    for name in {*WATCHED_LOGGERS, *names}:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
