"""Setting a scorer's `threshold:` in the catalog file's text, as a person would: the line is
replaced where it is, or added as the first key of the scorer's entry; comments and the
rest of the file stay as written."""

from __future__ import annotations

import re

from ..errors import ConfigError


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def set_threshold(text: str, scorer_id: str, value: float) -> str:
    """`text` with `threshold: value` in the entry of `scorer_id` under `scorers:`."""
    lines = text.splitlines(keepends=True)
    in_scorers = False
    scorers_indent = 0
    for index, line in enumerate(lines):
        bare = line.rstrip("\n")
        if not bare.strip() or bare.lstrip().startswith("#"):
            continue
        if re.match(r"^scorers:\s*(#.*)?$", bare):
            in_scorers, scorers_indent = True, 0
            continue
        if in_scorers and _indent(bare) <= scorers_indent and not bare.startswith(" "):
            in_scorers = False
        if not in_scorers or not re.match(rf"^\s+{re.escape(scorer_id)}:\s*(#.*)?$", bare):
            continue
        entry_indent = _indent(bare)
        key_indent = None
        after = index + 1  # where a new line goes: first in the entry, after its `extends:`
        for later in range(index + 1, len(lines)):
            inner = lines[later].rstrip("\n")
            if not inner.strip() or inner.lstrip().startswith("#"):
                continue
            if _indent(inner) <= entry_indent:
                break
            if key_indent is None:
                key_indent = _indent(inner)
                after = later + 1 if re.match(r"^\s*extends:", inner) else later
            if _indent(inner) == key_indent and re.match(r"^\s*threshold:", inner):
                lines[later] = f"{' ' * key_indent}threshold: {value:g}\n"
                return "".join(lines)
        spaces = " " * (key_indent if key_indent is not None else entry_indent + 2)
        lines.insert(after, f"{spaces}threshold: {value:g}\n")
        return "".join(lines)
    raise ConfigError(f"{scorer_id} is not written in this catalog file")
