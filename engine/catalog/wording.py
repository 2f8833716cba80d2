"""Small readings of what an author wrote, shared by the checks that word their messages."""

from __future__ import annotations


def lone_equals(source: str) -> int | None:
    """The 0-based column of an `=` written where `==` was meant (outside quotes, not part of
    `==`, `!=`, `<=`, `>=`, nor a keyword argument's `name=value` inside brackets)."""
    depth, quote = 0, ""
    for index, char in enumerate(source):
        if quote:
            quote = "" if char == quote and source[index - 1] != "\\" else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "=" and depth == 0 and source[index - 1 : index] not in ("=", "!", "<", ">") and source[index + 1 : index + 2] != "=":
            return index
    return None
