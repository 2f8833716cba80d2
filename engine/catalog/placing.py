"""Where the compiler puts what it finds: each problem and warning at FILE:LINE:COLUMN in the
author's own file. A finding in an expression written as a YAML value is placed inside the
value; one in a template file, at its line. A finding of an author's scorer that shows in a
built-in file (the built-in definition it extends, a built-in template or schema it uses) is
placed at the author's own line that brought it in, naming where it shows: an author edits
their own files, never the installed package."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .findings import Finding
from .setting_checks import Held
from .warning import CatalogWarning
from .source import CatalogSource, Place, place_in, position, span_of


class Placing:
    """The problems and warnings of a compilation (a mixin of the compiler)."""

    source: CatalogSource
    problems: list[ConfigError]
    warnings: list[ConfigError]

    def problem(self, message: str, place: Place | None, fallback: str | Path | None = None) -> None:
        if place is None:
            self.problems.append(ConfigError(message, fallback or self.source.path))
        else:
            self.problems.append(ConfigError(message, place.file or fallback or self.source.path, place.line, place.column))

    def warning(self, code: str, message: str, place: Place | None) -> None:
        file, line, column = place if place is not None else (str(self.source.path), None, None)
        self.warnings.append(CatalogWarning(message, file or str(self.source.path), line, column, code=code))

    def settings_held(self, found: Sequence[Held], data: Any) -> None:
        """Settings that fail their rows of setting_rules.py, each at its own line in `data`."""
        for each in found:
            place = position(data, list(each.loc), value=True)
            if each.code is None:
                self.problem(each.message, place)
            else:
                self.warning(each.code, each.message, place)

    def findings_in_yaml(self, findings: Sequence[Finding], data: Any, loc: Sequence[Any], label: str) -> None:
        """Findings of an expression or short template written as a YAML value, placed in it."""
        span = span_of(data, loc)
        for finding in findings:
            place: Place | None = position(data, loc, value=True)
            if span is not None:
                place = place_in(span, pattern=finding.pattern) if finding.pattern else span.start
            if finding.severity == "warning" and finding.code is not None:
                self.warning(finding.code, f"{label}: {finding.message}", place)
            else:
                self.problem(f"{label}: {finding.message}", place)

    def findings_in_file(self, findings: Sequence[Finding], path: Path, source: str, label: str) -> None:
        lines = source.splitlines()
        for finding in findings:
            column = None
            if finding.pattern and 1 <= finding.line <= len(lines):
                found = re.search(finding.pattern, lines[finding.line - 1])
                if found:
                    column = (found.start(1) if found.re.groups else found.start()) + 1
            if finding.severity == "warning" and finding.code is not None:
                self.warnings.append(CatalogWarning(f"{label}: {finding.message}", str(path), finding.line, column, code=finding.code))
            else:
                self.problems.append(ConfigError(f"{label}: {finding.message}", path, finding.line, column))

    def in_own_file(self, found: ConfigError, scorer_id: str) -> ConfigError:
        """`found` (of a scorer this catalog defines), placed in this catalog's file when it
        shows in a built-in one: at the scorer's `extends:` (what brought the built-in
        definition in), or at its id; the message names where it shows."""
        fallback = self.source.fallback
        if fallback is None or found.path is None:
            return found
        path = Path(found.path).resolve()
        own_folders = (self.source.path.resolve(), *(folder.resolve() for folder in (*self.source.templates_path[:1], *self.source.schemas_path[:1])))
        builtin_files = (fallback.path, *fallback.templates_path[:1], *fallback.schemas_path[:1])
        if not any(path.is_relative_to(place.resolve()) for place in builtin_files) or any(path.is_relative_to(place) for place in own_folders):
            return found
        builtin = fallback.path.parent
        own = self.source.scorers.get(scorer_id)
        place = _written_by_author(own, found.message)
        place = place or (position(own, ["extends"], value=True) if isinstance(own, dict) and "extends" in own else None)
        place = place or position(self.source.scorers, [scorer_id]) or Place(str(self.source.path), 0, 0)
        shown = path.relative_to(builtin.resolve()).as_posix()
        where = f"{shown}:{found.line}" + (f":{found.column}" if found.column else "") if found.line else shown
        via = f", which `extends: {own['extends']}` brings in" if isinstance(own, dict) and "extends" in own else ", which this scorer uses"
        message = f"{found.message}; it shows in the built-in {where}{via}"
        code = getattr(found, "code", None)
        placed = CatalogWarning(message, place.file, place.line or None, place.column, code=code) if code else ConfigError(message, place.file, place.line or None, place.column)
        setattr(placed, "shows_at", where)  # two findings placed at one line stay two
        return placed


def _written_by_author(own: Any, message: str) -> Place | None:
    """Where the author's own scorer wrote the part a finding is about: the step (or key) its
    label names (`strict.analyze: ...`), down to a key of it the message names in backticks
    (`uses_context`); None when the author wrote none of it."""
    label = message.split(": ", 1)[0].split(".")
    node: Any = own
    loc: list[Any] = []
    for part in label[2:] if label[:1] == ["scorers"] else label[1:]:
        if not loc and isinstance(node, Mapping) and part not in node:
            node, loc = node.get("steps"), ["steps"]  # a step's id comes right after the scorer's (`strict.analyze`)
        index = next((at for at, step in enumerate(node) if isinstance(step, Mapping) and step.get("id") == part), None) if isinstance(node, list) else None
        if isinstance(node, Mapping) and part in node:
            loc.append(part)
            node = node[part]
        elif index is not None:
            loc.append(index)
            node = node[index]
        else:
            break
    if loc in ([], ["steps"]):
        return None
    named = next((key for key in node if f"`{key}" in message), None) if isinstance(node, Mapping) else None
    return position(own, [*loc, named], value=True) if named is not None else position(own, loc)
