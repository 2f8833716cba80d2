"""One scrubber of secrets, used by every sink: log records (of this package and of the
libraries it calls), error messages, stored results (batch and live), exports, the report,
the workbench's answers and monitors' webhooks all pass their text through `scrub`, and
values through `scrubbed`.

It masks two kinds of secrets:
- the values of the secrets this process was configured with (every judge's API key, a
  database URL's password), remembered with `remember_secret` when they are read;
- anything shaped like a credential, wherever it appears: provider and cloud keys (OpenAI,
  Anthropic, Google, AWS, Slack, GitHub, Stripe-like `sk_`/`pk_`/`rk_`), JSON Web Tokens,
  private keys, the user-info of a URL (`scheme://user:password@host`), token-like query
  parameters (`?token=`, `access_token`, `api_key`, `key`, `sig`, `password`, ...), HTTP
  `Basic`/`Bearer` credentials, and the values of fields named like secrets (`"password":
  ...`, `api_key=...`, `secret: ...`) inside any text.

A log filter (`install_log_filter`) puts it on the loggers of this package and of
Instructor, openai, anthropic, httpx and psycopg. A filter on a logger only sees records
created on that very logger, not those of its children passing through, so it is put on
every logger under those names that exists when it is installed (the SDKs create theirs on
import, and the judge's client installs it again once they have).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

MASK = "***"
WATCHED_LOGGERS = ("engine", "instructor", "openai", "anthropic", "httpx", "httpcore", "psycopg", "psycopg_pool", "uvicorn", "starlette")

#: Field names whose values are secrets whatever they look like: a name that ends with one of
#: these words (`api_key`, `db_password`, `access_token`; not `max_tokens`).
SECRET_FIELD = r"(?:api[_-]?key|apikey|secret|token|password|passwd|pwd|authorization|cookie|credentials?|private[_-]?key)"
_SECRET_KEY_NAME = re.compile(rf"(?i)^[\w.-]*{SECRET_FIELD}$")

_SHAPES = re.compile(
    "|".join(
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            r"\b(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_])*[A-Za-z0-9]{16,}",  # OpenAI, Anthropic (sk-ant-...), Stripe-like keys
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack tokens
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",  # GitHub tokens
            r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}",  # JSON Web Tokens
            r"(?<=hooks\.slack\.com/services/)[A-Za-z0-9/]+",  # Slack webhooks: the path is the secret
            r"(?<=/api/webhooks/)[0-9]+/[A-Za-z0-9_\-]+",  # Discord webhooks
        )
    )
)
#: `scheme://user:password@`: the password goes, the user name stays (it names the account).
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@?#\"']*):[^\s/@?#\"']+@")
#: `user:password@host/...` written without its scheme (a URL pasted short): the same user-info,
#: told from prose (`note:someone@example.com`) by the path, port or query after the host.
_BARE_URL_PASSWORD = re.compile(r"(?i)(?<![\w.+\-/:@%])([\w.~%!$&'()*+,;=\-]+):[^\s/@?#\"':]+@(?=[\w.\-]+(?::\d+)?[/?#]|\[)")
#: Query parameters that carry credentials: `?token=...&sig=...`.
_QUERY_SECRET = re.compile(r"(?i)([?&;](?:[\w.-]*(?:token|secret|password|passwd|api[_-]?key|apikey|signature|credential)[\w.-]*|key|sig|code|auth)=)[^&\s#\"'<>]+")
#: HTTP credentials: `Authorization: Basic dXNlcjpwYXNz`, `Bearer eyJ...`.
_HTTP_CREDENTIAL = re.compile(r"(?i)\b(Basic|Bearer|Token)\s+[A-Za-z0-9._~+/\-]{8,}=*")
#: A field named like a secret inside text: `"password": "hunter2"`, `api_key=abc`, `secret: xyz`.
#: Found by its last word (a scan from every position for a whole name was most of the time
#: scrubbing took); `_masked_field` then checks where the name starts.
_FIELD_IN_TEXT = re.compile(
    rf"(?i){SECRET_FIELD}"
    # Quotes may be escaped: a value quoted inside JSON text that is itself a JSON string.
    r"((?:\\?[\"'])?\s*[:=]\s*)"
    r"(\\?\"(?:[^\"\\]|\\[^\"])*\\?\"|\\?'(?:[^'\\]|\\[^'])*\\?'|[^\s,;}&\"'<>\\]+)"
)
#: What must appear in a text for each kind of credential to be looked for at all: most text
#: holds none, and a substring test is far cheaper than a regular expression's scan.
_SHAPE_MARKS = (
    "sk-", "sk_", "pk-", "pk_", "rk-", "rk_", "AIza", "AKIA", "ASIA", "xox", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "eyJ", "PRIVATE KEY", "hooks.slack.com", "/api/webhooks/",
)
_FIELD_MARKS = ("key", "secret", "token", "passw", "pwd", "authorization", "cookie", "credential")
_HTTP_MARKS = ("basic ", "bearer ", "token ")

_secrets: set[str] = set()
_secrets_in_order: tuple[str, ...] = ()  # longest first, so a secret holding another is masked whole
_lock = threading.Lock()


def remember_secret(secret: str | None) -> None:
    """Mask `secret` in every log record, message and stored text from now on (short values,
    such as a placeholder for servers that need no key, are not secrets and would mangle text)."""
    global _secrets_in_order
    if secret and len(secret) >= 8 and secret not in _secrets:
        with _lock:
            _secrets.add(secret)
            _secrets_in_order = tuple(sorted(_secrets, key=len, reverse=True))


def _masked_field(found: re.Match[str]) -> str:
    """The field's value masked, when the word found ends a field name that starts a word
    (`/etc/passwd: ...` names a file, not a password)."""
    text, start = found.string, found.start()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if start > 0 and text[start - 1] in "/\\":
        return found.group(0)
    value = found.group(2)
    quote = value[:2] if value[:1] == "\\" else value[:1]
    head = found.group(0)[: found.end(1) - found.start()]
    if quote.endswith(("'", '"')):
        return f"{head}{quote}{MASK}{quote}"
    return head + MASK


def scrub(text: str) -> str:
    """`text` with every remembered secret and every credential-shaped string masked."""
    if not text:
        return text
    for secret in _secrets_in_order:
        if secret in text:
            text = text.replace(secret, MASK)
    if any(mark in text for mark in _SHAPE_MARKS):
        text = _SHAPES.sub(MASK, text)
    if "@" in text:
        if "://" in text:
            text = _URL_PASSWORD.sub(rf"\1:{MASK}@", text)
        text = _BARE_URL_PASSWORD.sub(rf"\1:{MASK}@", text)
    if "=" in text:
        text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
    lowered = text.lower()
    if any(mark in lowered for mark in _HTTP_MARKS):
        text = _HTTP_CREDENTIAL.sub(rf"\1 {MASK}", text)
    if (":" in text or "=" in text) and any(mark in lowered for mark in _FIELD_MARKS):
        text = _FIELD_IN_TEXT.sub(_masked_field, text)
    return text


def scrubbed(value: Any) -> Any:
    """`value` with every secret masked: its text scrubbed, and the values of mapping keys
    named like secrets (api_key, token, password, authorization, ...) replaced whole."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {
            key: MASK if isinstance(key, str) and _SECRET_KEY_NAME.match(key) and item not in (None, "", [], {}) else scrubbed(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [scrubbed(item) for item in value]
    return value


class ScrubSecrets(logging.Filter):
    """Masks secrets in a record's message, arguments and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
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


__all__ = ["MASK", "ScrubSecrets", "install_log_filter", "remember_secret", "scrub", "scrubbed"]
