"""The setting a mistake starts from. A finding shows where its effect is seen (the score's
expression, a comparison), but the line to change is often a setting elsewhere: a reducer
(`count` where a share was meant), an option's declared type (`type: string` for a number)
or its default (40 where a fraction of 1 was meant). Each setting the author wrote of these
kinds is tried otherwise, alone, on a copy of the scorer: when exactly one setting changed
makes the finding go away, that setting is where it starts, and the finding is said there.

Only tried when something was found, so a clean catalog is checked as fast as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from ..scoring.steps.base import StepFailed
from .definitions import definition_of
from .source import CatalogSource, Place, position
from .spec import ScorerDefinition

#: Compiles a scorer's definition and mapping into its plan (compile.py's ScorerCompiler for
#: the catalog's source), raising ConfigError for a problem.
Compile = Callable[[ScorerDefinition, Any], ScorerPlan]

#: What a reducer may have been meant as: the one of the other kind of the same count (a
#: count for a share of the list, a sum for a mean of it), and back.
_REDUCER_MEANT = {"count": "ratio", "ratio": "count", "sum": "mean", "mean": "sum"}


@dataclass(frozen=True)
class SettingChange:
    """One setting the author wrote, and a change of it to try."""

    #: Where the setting is written (the line to change), and how it reads there.
    place: Place
    label: str
    written: str
    #: How it reads changed, and the change made on a plain copy of the scorer's mapping.
    instead: str
    apply: Callable[[dict[str, Any]], None]


def root_setting(source: CatalogSource, scorer_id: str, compile: Compile, fixed: Callable[[ScorerPlan], bool]) -> SettingChange | None:
    """The one setting of the author's scorer `scorer_id` that, changed alone, gives a plan
    for which `fixed` holds (None when none does, or settings at more than one line do)."""
    try:
        _, merged = definition_of(source, scorer_id)
    except ConfigError:
        return None
    fixing = [change for change in setting_changes(source, scorer_id) if _fixes(scorer_id, merged, change, compile, fixed)]
    if len({(change.place.file, change.place.line) for change in fixing}) != 1:
        return None
    return fixing[0]


def _fixes(scorer_id: str, merged: Any, change: SettingChange, compile: Compile, fixed: Callable[[ScorerPlan], bool]) -> bool:
    raw = _plain(merged)
    try:
        change.apply(raw)
        definition = ScorerDefinition.model_validate({**raw, "id": scorer_id})
        plan = compile(definition, raw)
    except (ConfigError, ValidationError, StepFailed, LookupError, TypeError):
        return False
    return fixed(plan)


def setting_changes(source: CatalogSource, scorer_id: str) -> Iterator[SettingChange]:
    """Each change tried: every reducer the author wrote as the other kind of count, every
    option default of theirs as another number (a percentage as a fraction, 0, 1, its bounds),
    and an option declared as text whose default is a number, declared a number."""
    own = source.scorers.get(scorer_id)
    if not isinstance(own, Mapping):
        return
    options = own.get("options")
    for name, declared in (options.items() if isinstance(options, Mapping) else ()):
        if isinstance(declared, Mapping) and "default" in declared:
            yield from _option_changes(str(name), declared, f"{scorer_id}.options.{name}")
    for step in own.get("steps") or []:
        values = step.get("values") if isinstance(step, Mapping) else None
        for value_name, value in (values.items() if isinstance(values, Mapping) else ()):
            reducer = value.get("reduce") if isinstance(value, Mapping) else None
            meant = _REDUCER_MEANT.get(str(reducer))
            place = position(value, ["reduce"], value=True) if meant else None
            if meant is not None and place is not None:
                yield SettingChange(
                    place, f"{scorer_id}.{step.get('id')}.values.{value_name}.reduce", f"`reduce: {reducer}`", f"`reduce: {meant}`",
                    _setter(["steps", step.get("id"), "values", value_name, "reduce"], meant),
                )


def _option_changes(name: str, declared: Mapping[str, Any], label: str) -> Iterator[SettingChange]:
    default = declared["default"]
    kind = declared.get("type")
    if kind == "string" and isinstance(default, str) and default.strip().lower() in ("true", "false"):
        place = position(declared, ["type"], value=True)
        if place is not None:
            truth = default.strip().lower() == "true"
            yield SettingChange(
                place, label, "`type: string`", f"`type: boolean` (default {str(truth).lower()})",
                _both(_setter(["options", name, "type"], "boolean"), _setter(["options", name, "default"], truth)),
            )
        return
    if kind == "string" and isinstance(default, str) and (number := _number(default)) is not None:
        place = position(declared, ["type"], value=True)
        if place is not None:
            numeric = "integer" if isinstance(number, int) else "number"
            yield SettingChange(
                place, label, "`type: string`", f"`type: {numeric}` (default {number:g})",
                _both(_setter(["options", name, "type"], numeric), _setter(["options", name, "default"], number)),
            )
        return
    if not isinstance(default, (int, float)) or isinstance(default, bool):
        return
    place = position(declared, ["default"], value=True)
    if place is None:
        return
    others: list[float] = [default / 100] if abs(default) > 1 else []
    others += [0, 1, *(bound for bound in (declared.get("minimum"), declared.get("maximum")) if isinstance(bound, (int, float)))]
    for other in dict.fromkeys(others):
        if other == default or (kind == "integer" and other != int(other)):
            continue
        yield SettingChange(place, label, f"`default: {default:g}`", f"`default: {other:g}`", _setter(["options", name, "default"], other))


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _setter(loc: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    """Sets `value` at `loc` of a scorer's mapping, a step named by its id."""

    def apply(raw: dict[str, Any]) -> None:
        node: Any = raw
        for part in loc[:-1]:
            if isinstance(node, list):
                node = next(step for step in node if isinstance(step, dict) and step.get("id") == part)
            else:
                node = node[part]
        node[loc[-1]] = value

    return apply


def _both(first: Callable[[dict[str, Any]], None], second: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(raw: dict[str, Any]) -> None:
        first(raw)
        second(raw)

    return apply


def _plain(node: Any) -> Any:
    """A copy of a mapping as read (its places dropped), to change freely."""
    if isinstance(node, Mapping):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(value) for value in node]
    return node


def said_at_root(change: SettingChange, finding: str, seen: Place | None) -> str:
    """The finding said at the setting it starts from: what the setting caused where it shows."""
    what = finding.split(": ", 1)[1] if finding.startswith(change.label.split(".", 1)[0]) and ": " in finding else finding
    where = f"at line {seen.line}, " if seen is not None and seen.line and seen.file == change.place.file else ""
    return f"{change.label}: {change.written} is where this starts: {where}{what}; with {change.instead} it does not"


def at_root(source: CatalogSource, scorer_id: str, problems: list[ConfigError], compile: Compile) -> list[ConfigError]:
    """A scorer's one problem said at the setting of the author's it starts from, when one
    setting changed alone lets the scorer compile (its problems as they are otherwise)."""
    if len(problems) != 1 or scorer_id not in source.scorers or problems[0].path is None:
        return problems
    problem = problems[0]
    root = root_setting(source, scorer_id, compile, lambda plan: True)
    if root is None or (str(problem.path), problem.line) == (str(root.place.file), root.place.line):
        return problems
    seen = Place(str(problem.path), problem.line or 0, problem.column or 0)
    return [ConfigError(said_at_root(root, problem.message, seen), root.place.file, root.place.line, root.place.column)]
