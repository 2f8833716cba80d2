"""A value whose name says the other half of what its filter keeps: `missing: "expected |
select('in', used) | list"` keeps the expected words that ARE used, `found: "... | reject('in',
seen)"` those that are not. Whatever reads the value then counts the wrong half. Named at
the value's expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from .setting_checks import written_settings
from .setting_relations import Unit
from .source import Place, position
from .templates import parse_expression

#: Words of a value's name that say it holds what is absent from a list, and what is present in one.
_ABSENT = frozenset("missing missed absent unused uncovered unmatched lacking omitted unseen unmet not_found".split())
_PRESENT = frozenset("found present covered matched used seen shared common met included".split())


def names_against_filters(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each named value whose outermost `select('in', ...)` or
    `reject('in', ...)` keeps the half of the list its name says it does not."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if len(loc) < 2 or loc[-2] != "values" or not isinstance(value, str) or "'in'" not in value and '"in"' not in value:
            continue
        words = set(str(loc[-1]).lower().split("_"))
        says = "absent" if words & _ABSENT or "not_found" in str(loc[-1]) else "present" if words & _PRESENT else None
        if says is None:
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue  # said where the expression is compiled
        for node in (expression, *expression.find_all(nodes.Filter)):
            if not isinstance(node, nodes.Filter) or node.name not in ("select", "reject") or not node.args:
                continue
            test = node.args[0]
            if not (isinstance(test, nodes.Const) and test.value == "in"):
                continue
            keeps = "present" if node.name == "select" else "absent"
            if keeps != says:
                other = "reject" if node.name == "select" else "select"
                steps = raw.get("steps") if isinstance(raw, dict) else None
                step = steps[loc[1]] if loc[0] == "steps" and isinstance(steps, list) and isinstance(loc[1], int) and loc[1] < len(steps) else None
                where = [str(step.get("id")) if isinstance(step, dict) and step.get("id") else str(loc[1]), *map(str, loc[2:])] if step is not None else list(map(str, loc))
                yield "name-against-filter", (
                    f"{label}.{'.'.join(where)}: `{loc[-1]}` names what is {says}, but `{node.name}('in', ...)` keeps the items that are "
                    f"{'in' if keeps == 'present' else 'not in'} the list, the {keeps} ones: whatever reads it counts the other half; "
                    f"did you mean `{other}('in', ...)`?"
                ), position(raw, list(loc), value=True)
            break


#: Words of a description that name one end of a set of values, whatever they measure.
_ENDS = {"min": frozenset("lowest minimum smallest".split()), "max": frozenset("highest maximum largest greatest".split())}


def reducers_against_description(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for the one `reduce: min` or `reduce: max` of a scorer whose
    description names only the other end (`the lowest rating` beside `reduce: max`)."""
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    reducers = [
        (index, step.get("id"), name, value) for index, step in enumerate(steps if isinstance(steps, list) else [])
        if isinstance(step, Mapping) and isinstance(step.get("values"), Mapping)
        for name, value in step["values"].items() if isinstance(value, Mapping) and value.get("reduce") in _ENDS
    ]
    description = str(raw.get("description") or "")
    words = set(re.findall(r"[a-z]+", description.lower()))
    if len(reducers) != 1:
        return
    index, step_id, name, value = reducers[0]
    kept, other = value["reduce"], "min" if value["reduce"] == "max" else "max"
    if words & _ENDS[kept] or not words & _ENDS[other]:
        return
    named = next(word for word in re.findall(r"[a-z]+", description.lower()) if word in _ENDS[other])
    yield "reducer-against-description", (
        f"{label}.{step_id}.values.{name}.reduce: `reduce: {kept}` keeps the {'highest' if kept == 'max' else 'lowest'} {value.get('value') or 'item'}, "
        f"but the scorer's description speaks of the {named} and never of the {'highest' if kept == 'max' else 'lowest'}: did you mean `reduce: {other}`?"
    ), position(raw, ["steps", index, "values", name, "reduce"], value=True)
