"""Warnings an author has looked at and means: silenced at their line by a comment,

    skip_if: "item.rating > 7"      # scorers: ignore[constant-condition]

in YAML, or `{# scorers: ignore[set-in-loop] #}` in a template: on the warning's own line,
or alone on the line just above it. The codes are those `scorers check` prints after each
warning; several are separated by commas, and `# scorers: ignore` without codes silences
every warning of the line. Errors are never silenced: a certain mistake is to be fixed.
"""

from __future__ import annotations

import functools
import os
import re

from ..errors import ConfigError

_MARK = re.compile(r"(?:#|\{#)\s*scorers:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")


@functools.lru_cache(maxsize=256)
def _lines(path: str, stamp: tuple[int, int]) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8") as handle:
            return tuple(handle.read().splitlines())
    except (OSError, UnicodeDecodeError):
        return ()


def silenced(warning: ConfigError) -> bool:
    """Whether a comment at the warning's line silences it (see the module)."""
    code = getattr(warning, "code", None)
    if warning.path is None or warning.line is None or code is None:
        return False
    return marked(str(warning.path), warning.line, code)


def marked(path: str, line: int, code: str, named: bool = False) -> bool:
    """Whether a comment at `line` of the file at `path` silences warnings of `code`
    (`named`: one that names the code, not a bare `# scorers: ignore`)."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    lines = _lines(path, (status.st_mtime_ns, status.st_size))
    index = line - 1
    if not 0 <= index < len(lines):
        return False
    candidates = [lines[index]]
    if index and lines[index - 1].lstrip().startswith(("#", "{#")):
        candidates.append(lines[index - 1])
    for text in candidates:
        for found in _MARK.finditer(text):
            codes = found.group("codes")
            if (codes is None and not named) or (codes is not None and code in {part.strip() for part in codes.split(",")}):
                return True
    return False
