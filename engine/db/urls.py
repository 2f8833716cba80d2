"""Database URLs fit for messages: a `postgresql://` URL names where a store or a cache is,
and its password must never reach a message, a log or a stored result."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(location: str | Path | object) -> str | None:
    """The scheme of a `scheme://...` URL, in lower case; None for anything else (a file
    path, `C:\\` included, names no scheme)."""
    found = _SCHEME.match(location) if isinstance(location, str) else None
    return found.group(1).lower() if found else None


def url_passwords(url: str) -> list[str]:
    """What in a database URL may be (part of) a password: the user-info's password and each
    piece of it between unescaped `@` (libpq splits at the first `@`, Python at the last, so
    an error may quote a half as a host name), decoded and as written, and a `password=`
    parameter."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        password = userinfo.split(":", 1)[1] if ":" in userinfo else ""
        pieces = [password, *password.split("@")]
        found += [text for piece in pieces for text in (piece, unquote(piece))]
    found += [value for name, value in parse_qsl(parts.query) if name == "password"]
    return sorted({text for text in found if len(text) >= 4}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """A database URL fit for messages and logs: its password replaced by ***."""
    parts = urlsplit(url)
    if "://" not in url:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
    query = parts.query
    if any(name == "password" for name, _ in parse_qsl(query)):
        query = urlencode([(name, MASK if name == "password" else value) for name, value in parse_qsl(query)], safe="*")
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # nothing to mask: as written (urlunsplit would drop an empty host's //)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def without_url_password(text: str, url: str) -> str:
    """`text` (a driver's error, say) with the URL and any piece of its password masked."""
    text = text.replace(url, redact_url(url))
    for secret in url_passwords(url):
        text = text.replace(secret, MASK)
    return text
