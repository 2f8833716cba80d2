"""Syntax errors of templates and expressions at the place to fix: what was left open (a
quote, a bracket, a `{% block %}`, a `{{`) where it was opened, not where Jinja gave up."""

from __future__ import annotations

import re

from jinja2 import TemplateSyntaxError

from .findings import Finding
from .wording import lone_equals


def syntax_finding(source: str, exc: TemplateSyntaxError, template: bool) -> Finding:
    """A syntax error at the place to fix: an unclosed quote, bracket or block where it was
    opened (Jinja reports where it gave up)."""
    message = exc.message or str(exc)
    tag_left_open = _unclosed_tag(source) if template else None
    if tag_left_open is not None and tag_left_open[1] <= exc.lineno:
        opener, line, column = tag_left_open
        closer = "}}" if opener == "{{" else "%}" if opener == "{%" else "#}"
        return Finding(f"`{opener}` opened here is never closed (no `{closer}` before the next tag or the end; Jinja gave up at line {exc.lineno})", line, rf"^.{{{column}}}(.)")
    opened = _unclosed_block(source) if template and "end of template" in message.lower() else None
    if opened is not None:
        tag, line = opened
        return Finding(f"`{{% {tag} %}}` is never closed (no `{{% end{tag} %}}` after it)", line, rf"\{{%-?\s*({tag})\b")
    lines = source.splitlines() or [""]
    line = exc.lineno if 1 <= exc.lineno <= len(lines) else len(lines)
    text = lines[line - 1]
    unclosed = _unclosed_bracket(text)
    if unclosed is not None:
        char, column = unclosed
        what = "quote" if char in "'\"" else "bracket"
        detail = f" ({message})" if template else ""
        prefix = "" if template else "invalid expression: "
        return Finding(f"{prefix}{what} {char} is never closed{detail}", line, rf"^.{{{column}}}(.)")
    assignment = None if template else lone_equals(source)
    if assignment is not None:
        return Finding("invalid expression: `=` sets a value; to compare, write `==`", 1, rf"^.{{{assignment}}}(=)")
    at = re.search(r" at (\d+)$", message)
    if at is not None and not template:
        return Finding(f"invalid expression: {message}", 1, rf"^.{{{int(at.group(1)) - 3}}}(.)")
    token = re.search(r"unexpected '(.+?)'", message)
    pattern = rf"({re.escape(token.group(1))})" if token and token.group(1) != "end of template" else None
    return Finding(message if template else f"invalid expression: {message}", line, pattern)


def _unclosed_bracket(text: str) -> tuple[str, int] | None:
    """The innermost bracket or quote of `text` left open, and its 0-based column."""
    stack: list[tuple[str, int]] = []
    quote: tuple[str, int] | None = None
    pairs = {")": "(", "]": "[", "}": "{"}
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote[0] and text[index - 1] != "\\":
                quote = None
        elif char in "'\"":
            quote = (char, index)
        elif char in "([{":
            stack.append((char, index))
        elif char in pairs and stack and stack[-1][0] == pairs[char]:
            stack.pop()
        elif char in pairs and text[index - 1 : index + 1] not in ("}}", "%}") and text[index : index + 2] not in ("}}",):
            stack.clear()  # a stray closer: not an unclosed bracket
    if quote is not None:
        return quote
    # `{{` and `{%` open template tags, not brackets
    real = [(char, index) for char, index in stack if not (char == "{" and text[index + 1 : index + 2] in ("{", "%") or text[index - 1 : index] == "{")]
    return real[-1] if real else None


_BLOCK_TAGS = {"if", "for", "macro", "call", "filter", "block", "with", "autoescape", "raw", "trans"}


def _unclosed_block(source: str) -> tuple[str, int] | None:
    """The innermost `{% tag %}` block left open, and its line."""
    stack: list[tuple[str, int]] = []
    for match in re.finditer(r"\{%-?\s*(\w+)([^%]*)", source):
        tag, rest = match.group(1), match.group(2)
        line = source.count("\n", 0, match.start()) + 1
        if tag in _BLOCK_TAGS or (tag == "set" and "=" not in rest):
            stack.append((tag, line))
        elif tag.startswith("end") and stack and stack[-1][0] == tag[3:]:
            stack.pop()
    return stack[-1] if stack else None


_OPENERS = ("{{", "{%", "{#")


def _unclosed_tag(source: str) -> tuple[str, int, int] | None:
    """The first `{{`, `{%` or `{#` not closed before the next tag opens (or the text ends):
    the opener, its line and its 0-based column. Quotes inside a tag are skipped, and a
    `{% raw %}` block is text."""
    index, size = 0, len(source)
    while index < size:
        raw = re.match(r"\{%-?\s*raw\s*-?%\}", source[index:])
        if raw is not None:
            end = re.compile(r"\{%-?\s*endraw\s*-?%\}").search(source, index + raw.end())
            if end is None:
                return None  # Jinja names an unclosed raw block itself
            index = end.end()
            continue
        opener = source[index : index + 2]
        if opener not in _OPENERS:
            index += 1
            continue
        closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener]
        position, quote = index + 2, None
        while position < size:
            char = source[position]
            if opener == "{#":
                if source.startswith(closer, position):
                    break
            elif quote is not None:
                quote = None if char == quote and source[position - 1] != "\\" else quote
            elif char in "'\"":
                quote = char
            elif source.startswith(closer, position):
                break
            elif source[position : position + 2] in _OPENERS:
                position = size  # another tag opens first
                break
            position += 1
        if position >= size:
            line = source.count("\n", 0, index) + 1
            return opener, line, index - (source.rfind("\n", 0, index) + 1)
        index = position + 2
    return None
