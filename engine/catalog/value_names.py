"""A value whose name says the other half of what its filter keeps: `missing: "expected |
select('in', used) | list"` keeps the expected words that ARE used, `found: "... | reject('in',
seen)"` those that are not, `long: "lengths | select('lt', options.max_words)"` the short
ones (Jinja's `lt` test reads item < bound). Whatever reads the value then counts the wrong
half. Named at the value's expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from .setting_checks import comment_at, written_settings
from .setting_relations import Unit
from .source import Place, position
from .templates import parse_expression

#: Words of a value's name that say which half of a list it holds, by the kind of test that
#: splits it: absent from / present in a list (`in`), above / below a number (`lt`, `gt` ...).
_HALVES = {
    "absent": frozenset("missing missed absent unused uncovered unmatched lacking omitted unseen unmet not_found".split()),
    "present": frozenset("found present covered matched used seen shared common met included".split()),
    "above": frozenset("long longer longest over above more many big bigger large larger high higher exceeding excess too_long".split()),
    "below": frozenset("short shorter shortest under below less fewer few small smaller low lower brief too_short".split()),
    "failing": frozenset("failed failing failure failures fail fails error errors errored erroring broken bad invalid wrong".split()),
    "succeeding": frozenset("ok okay passed passing pass passes success successes successful succeeded succeeding good valid correct working".split()),
}
#: Words of a flag's name that say one of the halves a `selectattr` or `rejectattr` by it
#: splits a list into (`is_error`, `failed`, `ok`, `success`); the name's other words (`is`,
#: `has`) say nothing of it.
_FLAG_HALVES = ("failing", "succeeding")
#: Words that turn the rest of a name around (`not_found` aside): `not_long`, `error_free`.
_NEGATIONS = frozenset("not non no free without".split())
#: What `select(test, ...)` keeps, by test; `reject` keeps the other half, and the mirror is
#: the test that keeps that other half under the same filter.
_KEEPS = {
    "in": ("present", "absent"), "lt": ("below", "above"), "lessthan": ("below", "above"), "<": ("below", "above"),
    "le": ("below", "above"), "<=": ("below", "above"), "gt": ("above", "below"), "greaterthan": ("above", "below"),
    ">": ("above", "below"), "ge": ("above", "below"), ">=": ("above", "below"),
}
_MIRROR = {"lt": "gt", "lessthan": "greaterthan", "<": ">", "le": "ge", "<=": ">=", "gt": "lt", "greaterthan": "lessthan", ">": "<", "ge": "le", ">=": "<="}
_SYMBOL = {"lt": "<", "lessthan": "<", "<": "<", "le": "<=", "<=": "<=", "gt": ">", "greaterthan": ">", ">": ">", "ge": ">=", ">=": ">="}


def names_against_filters(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each named value whose outermost `select` or `reject` by
    `in` or by a comparison (`lt`, `ge` ...) keeps the half of the list its name says it
    does not: `missing` kept by `select('in', ...)`, `long` by `select('lt', ...)`."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if len(loc) < 2 or loc[-2] != "values" or not isinstance(value, str) or not re.search(r"\b(select|reject)(attr)?\(", value):
            continue
        says = _half_named(str(loc[-1]))
        if says is None:
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue  # said where the expression is compiled
        for node in (expression, *expression.find_all(nodes.Filter)):
            if not isinstance(node, nodes.Filter) or not node.args:
                continue
            if node.name in ("selectattr", "rejectattr"):
                flagged = _flag_against_name(node, says, str(loc[-1]))
                if flagged is None:
                    continue
                yield "name-against-filter", f"{label}.{'.'.join(value_where(raw, loc))}: {flagged}", position(raw, list(loc), value=True)
                break
            if node.name not in ("select", "reject"):
                continue
            test = node.args[0]
            halves = _KEEPS.get(test.value) if isinstance(test, nodes.Const) and isinstance(test.value, str) else None
            if halves is None or says not in halves:
                continue
            keeps = halves[0] if node.name == "select" else halves[1]
            if keeps != says:
                assert isinstance(test, nodes.Const)
                meant = f"{'reject' if node.name == 'select' else 'select'}('in', ...)" if test.value == "in" else f"{node.name}('{_MIRROR[test.value]}', ...)"
                where = value_where(raw, loc)
                if test.value == "in":
                    kept = f"keeps the items that are {'in' if keeps == 'present' else 'not in'} the list, the {keeps} ones"
                else:
                    kept = f"keeps the items {keeps} the bound, those where item {_SYMBOL[test.value]} bound is {'true' if node.name == 'select' else 'false'}"
                yield "name-against-filter", (
                    f"{label}.{'.'.join(where)}: `{loc[-1]}` names what is {says}{' the bound' if test.value != 'in' else ''}, but `{node.name}('{test.value}', ...)` "
                    f"{kept}: whatever reads it counts the other half; did you mean `{meant}`?"
                ), position(raw, list(loc), value=True)
            break


def _half_named(name: str) -> str | None:
    """The one half of a list a value's name says it holds (`missing`: absent, `failed`:
    failing), or None when it says none, more than one, or turns itself around (`not_long`)."""
    lowered = name.lower()
    words = {*lowered.split("_"), *(pair for pair in ("not_found", "too_long", "too_short") if pair in lowered)}
    if words & _NEGATIONS and "not_found" not in lowered:
        return None  # a negated name (`not_long`, `error_free`) says the other half itself
    said = [half for half, named in _HALVES.items() if words & named]
    return said[0] if len(said) == 1 else None


def value_where(raw: Any, loc: tuple[Any, ...]) -> list[str]:
    """The dotted place of a value under its step's id (`check.values.covered`)."""
    steps = raw.get("steps") if isinstance(raw, dict) else None
    step = steps[loc[1]] if loc[0] == "steps" and isinstance(steps, list) and isinstance(loc[1], int) and loc[1] < len(steps) else None
    if step is None:
        return list(map(str, loc))
    return [str(step.get("id")) if isinstance(step, dict) and step.get("id") else str(loc[1]), *map(str, loc[2:])]


def _flag_against_name(node: nodes.Filter, says: str, name: str) -> str | None:
    """What is wrong with `selectattr('is_error')` or `rejectattr('ok')` making a value whose
    name says the other half: `selectattr(flag)` keeps the items whose flag is true,
    `rejectattr(flag)` those whose flag is false; None when they agree or the flag says no half
    (or is tested by anything but its truth)."""
    flag = node.args[0]
    if says not in _FLAG_HALVES or len(node.args) != 1 or not isinstance(flag, nodes.Const) or not isinstance(flag.value, str):
        return None
    flag_half = _half_named(flag.value.rsplit(".", 1)[-1])
    if flag_half not in _FLAG_HALVES:
        return None
    keeps = flag_half if node.name == "selectattr" else next(half for half in _FLAG_HALVES if half != flag_half)
    if keeps == says:
        return None
    meant = "rejectattr" if node.name == "selectattr" else "selectattr"
    return (
        f"`{name}` names the {says} items, but `{node.name}('{flag.value}')` keeps the items whose `{flag.value}` is "
        f"{'true' if node.name == 'selectattr' else 'false'}, the {keeps} ones: whatever reads it counts the other half; "
        f"did you mean `{meant}('{flag.value}')`?"
    )


#: Words of a description that name one end of a set of values, whatever they measure.
_ENDS = {"min": frozenset("lowest minimum smallest".split()), "max": frozenset("highest maximum largest greatest".split())}


#: Words of a description that say the score is made of all the items, and words that say
#: one item decides it.
_SHARES = frozenset("share proportion fraction percentage average mean".split())
_ONE_ITEM = frozenset("any best worst weakest strongest single".split())


def reducers_against_description(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for the one `reduce: min` or `reduce: max` of a scorer whose
    description names only the other end (`the lowest rating` beside `reduce: max`), or
    speaks of a share or an average of the items and of no one item (`share of the
    sentences` beside `reduce: max`)."""
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
    shared = [word for word in re.findall(r"[a-z]+", description.lower()) if word in _SHARES]
    if shared and not words & (_ENDS["min"] | _ENDS["max"] | _ONE_ITEM):
        yield "reducer-against-description", (
            f"{label}.{step_id}.values.{name}.reduce: `reduce: {kept}` keeps the {'highest' if kept == 'max' else 'lowest'} value of one item "
            f"(`{value.get('value') or 'item'}`), but the scorer's description speaks of {'an' if shared[0][0] in 'aeiou' else 'a'} {shared[0]} over the items and never of one item's: one item then decides "
            f"the score whatever the others are; did you mean `reduce: mean`?"
        ), position(raw, ["steps", index, "values", name, "reduce"], value=True)
        return
    if words & _ENDS[kept] or not words & _ENDS[other]:
        return
    named = next(word for word in re.findall(r"[a-z]+", description.lower()) if word in _ENDS[other])
    yield "reducer-against-description", (
        f"{label}.{step_id}.values.{name}.reduce: `reduce: {kept}` keeps the {'highest' if kept == 'max' else 'lowest'} {value.get('value') or 'item'}, "
        f"but the scorer's description speaks of the {named} and never of the {'highest' if kept == 'max' else 'lowest'}: did you mean `reduce: {other}`?"
    ), position(raw, ["steps", index, "values", name, "reduce"], value=True)


#: A sentence of a description that says which way the score is better: "Higher is better",
#: "lower scores are worse", "higher is easier to read, and better".
_SAYS_BETTER = re.compile(r"\b(higher|lower|greater|smaller|larger|bigger)\b[^.;]*?\b(better|worse)\b", re.IGNORECASE)
_UP = frozenset({"higher", "greater", "larger", "bigger"})


_MORE = r"(?:more than|above|over|exceed\w*|or more|at least|beyond)"
_LESS = r"(?:less than|fewer than|below|under|or less|at most)"
_FAILS = r"(?:flag\w*|fail\w*|reject\w*|block\w*)"
#: A pass line's comment saying which side of it fails or passes ("more than 2% jargon flags
#: the reply": lower is better), each with the end it makes better.
_SIDES_SAID = (
    (re.compile(rf"\b{_MORE}\b[^.;]*?\b{_FAILS}\b|\b{_FAILS}\b[^.;]*?\b{_MORE}\b", re.IGNORECASE), "lower"),
    (re.compile(rf"\b{_LESS}\b[^.;]*?\b{_FAILS}\b|\b{_FAILS}\b[^.;]*?\b{_LESS}\b", re.IGNORECASE), "higher"),
    (re.compile(rf"\b{_MORE}\b[^.;]*?\bpass\w*|\bpass\w*\b[^.;]*?\b{_MORE}\b", re.IGNORECASE), "higher"),
    (re.compile(rf"\b{_LESS}\b[^.;]*?\bpass\w*|\bpass\w*\b[^.;]*?\b{_LESS}\b", re.IGNORECASE), "lower"),
)


def _better_by_pass_line(own: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Which end the comment of the scorer's own pass line makes better, with the comment;
    nothing where the comment speaks of the complement (`0.7  # fail when more than 30% are
    wrong` counts what is wrong, as meant)."""
    written = own.get("threshold")
    if not isinstance(written, (int, float)) or isinstance(written, bool):
        return set()
    threshold, said = float(written), comment_at(own, "threshold")
    shares = [float(number) / 100 for number in re.findall(r"(\d+(?:\.\d+)?)\s*%", said)]
    if not said or any(abs(share - (1 - threshold)) < 1e-6 and abs(share - threshold) > 1e-6 for share in shares):
        return set()
    return {(way, said) for pattern, way in _SIDES_SAID if pattern.search(said)}


def direction_against_description(own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) at the `direction:` of a scorer whose own description says, in
    one way only, that the other end of the score is better ("Higher is better" beside
    `direction: lower_is_better`), or, where the description says neither, whose own pass
    line's comment does ("more than 2% jargon flags the reply"): reports, pass lines and
    monitors follow the direction."""
    if not isinstance(own, Mapping) or own.get("direction") not in ("higher_is_better", "lower_is_better"):
        return
    said = {("higher" if (found[1].lower() in _UP) == (found[2].lower() == "better") else "lower", found[0]) for found in _SAYS_BETTER.finditer(str(own.get("description") or ""))}
    whose = "the scorer's description says {} is better"
    if not said:
        said, whose = _better_by_pass_line(own), "the comment of its pass line has the {} scores pass"
    ways = {way for way, _ in said}
    if len(ways) != 1 or f"{next(iter(ways))}_is_better" == own["direction"]:
        return
    way, quoted = sorted(said)[0]
    yield "direction-against-description", (
        f"{label}.direction: {own['direction']}, but {whose.format(way)} ({quoted!r}): reports, pass lines and monitors "
        f"take the direction, so the best answers are ranked worst; write `direction: {way}_is_better`, or correct the description"
    ), position(own, ["direction"], value=True)
