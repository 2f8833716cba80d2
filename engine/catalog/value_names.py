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
from .source import Place, place_in, position, span_of
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
                yield "name-against-filter", f"{label}.{'.'.join(_value_where(raw, loc))}: {flagged}", position(raw, list(loc), value=True)
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
                where = _value_where(raw, loc)
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


def _value_where(raw: Any, loc: tuple[Any, ...]) -> list[str]:
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


#: Words that name one end of what `min` or `max` keeps; those of worth (`weakest`, `best`)
#: name the low end of a higher-is-better score and the high end of a lower-is-better one.
_LOW_WORDS = frozenset("lower lowest lesser least smaller smallest minimum min".split())
_HIGH_WORDS = frozenset("higher highest greater greatest larger largest maximum max".split())
_WORSE_WORDS = frozenset("weaker weakest worse worst poorer poorest".split())
_BETTER_WORDS = frozenset("stronger strongest better best".split())
_OF_THE_TWO = re.compile(r"\b(?:the\s+)?([a-z]+)\s+of\b|\bwhichever\s+is\s+([a-z]+)", re.IGNORECASE)


def _extreme_of(word: str, direction: Any) -> str | None:
    """`min` or `max` for a word that names one end, None for another word."""
    word = word.lower()
    worth_low = direction != "lower_is_better"
    if word in _LOW_WORDS or word in (_WORSE_WORDS if worth_low else _BETTER_WORDS):
        return "min"
    if word in _HIGH_WORDS or word in (_BETTER_WORDS if worth_low else _WORSE_WORDS):
        return "max"
    return None


def extremes_against_words(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each value or score that keeps one end with `min` or `max`
    while its name (`weakest`), or the scorer's own description ("the lower of alignment and
    coverage"), names the other: the score then takes the better of two ratings where the
    weaker was to decide."""
    direction = raw.get("direction") if isinstance(raw, Mapping) else None
    described = str(own.get("description") or "") if isinstance(own, Mapping) else ""
    said = {_extreme_of(found[1] or found[2], direction) for found in _OF_THE_TWO.finditer(described)} - {None}
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if not isinstance(value, str) or not re.search(r"\b(?:min|max)\b", value):
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue
        every = [expression, *expression.find_all(nodes.Expr)]
        kept = {node.name for node in every if isinstance(node, nodes.Filter) and node.name in ("min", "max")}
        kept |= {node.node.name for node in every if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in ("min", "max")}
        if len(kept) != 1:
            continue
        used = next(iter(kept))
        named = {_extreme_of(word, direction) for word in str(loc[-1]).split("_")} - {None} if len(loc) >= 2 and loc[-2] == "values" else set()
        whose, meant = ("its name", named) if named else ("the scorer's description", said if loc[-1] == "score" or (len(loc) >= 2 and loc[-2] == "values") else set())
        if len(meant) != 1 or used in meant:
            continue
        quoted = repr(str(loc[-1])) if named else repr(next(found.group(0) for found in _OF_THE_TWO.finditer(described) if _extreme_of(found[1] or found[2], direction)))
        yield "extreme-against-words", (
            f"{label}.{'.'.join(_value_where(raw, loc))}: `{used}` keeps the {'greatest' if used == 'max' else 'least'}, but {whose} ({quoted}) "
            f"names the other end: the {'better' if (used == 'max') == (direction != 'lower_is_better') else 'worse'} of the values decides where the other "
            f"was meant; write `{'min' if used == 'max' else 'max'}`"
        ), position(raw, list(loc), value=True)


_SPELLED = {word: index for index, word in enumerate("zero one two three four five six seven eight nine ten".split())}
#: "the first three", "top 5", "top-3": how many ranked items a text speaks of.
_FIRST_N = re.compile(r"\b(?:first|top)[\s_-]*(\d+|" + "|".join(_SPELLED) + r")\b", re.IGNORECASE)


def ranks_counted_from_zero(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a `where:` that keeps `rank < N` where the value's name or the
    scorer's description speaks of the first N: `rank` counts from 1, so it keeps N - 1."""
    described = str(own.get("description") or "") if isinstance(own, Mapping) else ""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if loc[-1] != "where" or not isinstance(value, str) or "rank" not in value:
            continue
        kept = re.search(r"\brank\s*<\s*(\d+)\b(?!\s*=)", value)
        said = [found for text in (" ".join(map(str, loc)), described) for found in _FIRST_N.finditer(text)]
        counts = {int(found[1]) if found[1].isdigit() else _SPELLED[found[1].lower()] for found in said}
        if kept is None or counts != {int(kept[1])}:
            continue
        number = int(kept[1])
        yield "rank-from-one", (
            f"{label}.{'.'.join(_value_where(raw, loc))}: `rank < {number}` keeps the first {number - 1}, since `rank` counts from 1, but "
            f"{said[0].group(0)!r} speaks of the first {number}; write `rank <= {number}`"
        ), position(raw, list(loc), value=True)


_LAST_WORDS = frozenset("last final latest newest recent closing".split())
_FIRST_WORDS = frozenset("first initial earliest oldest opening".split())


def ends_against_names(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a value named for the last item (`last_call`) that takes the
    first (`called[0]`, `| first`), or the reverse."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if len(loc) < 2 or loc[-2] != "values" or not isinstance(value, str):
            continue
        words = set(str(loc[-1]).lower().split("_"))
        wants = "last" if words & _LAST_WORDS else "first" if words & _FIRST_WORDS else None
        if wants is None:
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue
        every = [expression, *expression.find_all(nodes.Expr)]
        taken = {"first" if _index_of(node) == 0 else "last" for node in every if isinstance(node, nodes.Getitem) and _index_of(node) in (0, -1)}
        taken |= {node.name for node in every if isinstance(node, nodes.Filter) and node.name in ("first", "last")}
        if taken == {"first" if wants == "last" else "last"}:
            yield "end-against-name", (
                f"{label}.{'.'.join(_value_where(raw, loc))}: takes the {next(iter(taken))} item, but its name says the {wants}: write "
                f"{'`[-1]` (or `| last`)' if wants == 'last' else '`[0]` (or `| first`)'}"
            ), position(raw, list(loc), value=True)


def _index_of(node: nodes.Getitem) -> int | None:
    """The whole number a subscript takes (`[0]`, `[-1]`), or None."""
    argument = node.arg
    if isinstance(argument, nodes.Const) and isinstance(argument.value, int):
        return argument.value
    if isinstance(argument, nodes.Neg) and isinstance(argument.node, nodes.Const) and isinstance(argument.node.value, int):
        return -argument.node.value
    return None


_AT_LEAST_ONE = re.compile(r"\b(?:at least one|a single|any one|even one|one or more|as soon as one)\b", re.IGNORECASE)


def more_than_one_for_at_least_one(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a count compared `> 1` where the scorer's description speaks of
    at least one ("a single insult is enough"): a count of one is not above 1."""
    described = str(own.get("description") or "") if isinstance(own, Mapping) else ""
    said = _AT_LEAST_ONE.search(described)
    if said is None:
        return
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        found = re.search(r"\b(\w+)\s*>\s*1\b(?!\s*[.\d])", value) if isinstance(value, str) else None
        if found is not None:
            yield "more-than-one-for-one", (
                f"{label}.{'.'.join(_value_where(raw, loc))}: `{found.group(0)}` holds from two on, but the scorer's description speaks of "
                f"{said.group(0)!r}: a count of one is not above 1; write `{found[1]} >= 1`"
            ), position(raw, list(loc), value=True)
            return


def _reads_scale(node: nodes.Node) -> bool:
    return any(isinstance(found, nodes.Getattr) and found.attr == "scale" and isinstance(found.node, nodes.Name) and found.node.name == "options" for found in [node, *node.find_all(nodes.Getattr)])


def branch_off_the_scale(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a score on the `scale` option whose one branch is scaled and
    the other a bare number (`x * options.scale if judged else 1`): the bare branch is 1 on a
    scale to 10, where 10 was meant; brackets around the condition put both on the scale."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if loc[-1] != "score" or not isinstance(value, str) or "options.scale" not in value:
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue
        if not isinstance(expression, nodes.CondExpr) or expression.expr2 is None:
            continue
        for scaled, bare in ((expression.expr1, expression.expr2), (expression.expr2, expression.expr1)):
            if _reads_scale(scaled) and isinstance(bare, nodes.Const) and isinstance(bare.value, (int, float)) and bare.value != 0:
                yield "branch-off-the-scale", (
                    f"{label}.{'.'.join(_value_where(raw, loc))}: one branch is multiplied by `options.scale` and the other is {bare.value:g}, "
                    f"not on the scale (on a scale to 10 it is 1 of 10): bracket the condition, `(... if ... else {bare.value:g}) * options.scale`"
                ), position(raw, list(loc), value=True)
                break


def _alike(one: str, other: str) -> bool:
    """Whether two words name one thing (`necessity`, `necessary`; `order`, `ordered`)."""
    shared = len(next((prefix for prefix in (one[:index] for index in range(min(len(one), len(other)), 0, -1)) if other.startswith(prefix)), ""))
    return shared >= min(5, len(one), len(other))


def weights_crossed(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a weight option named for one value that multiplies another
    named for a second weight (`options.order_weight * necessary` beside
    `options.necessity_weight * ordered`): each part of the score counts at the other's weight."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if not isinstance(value, str) or "_weight" not in value:
            continue
        try:
            expression = parse_expression(value)
        except TemplateSyntaxError:
            continue
        products = [(node.left, node.right) for node in [expression, *expression.find_all(nodes.Mul)] if isinstance(node, nodes.Mul)]
        pairs: list[tuple[str, str]] = []
        for left, right in products:
            for factor, other in ((left, right), (right, left)):
                if isinstance(factor, nodes.Getattr) and factor.attr.endswith("_weight") and isinstance(other, (nodes.Name, nodes.Getattr)):
                    pairs.append((factor.attr.removesuffix("_weight"), other.name if isinstance(other, nodes.Name) else other.attr))
        weights = [name for name, _ in pairs]
        for weight, weighed in pairs:
            meant = [other for other in weights if other != weight and _alike(other, weighed)]
            if not _alike(weight, weighed) and len(meant) == 1:
                span = span_of(raw, list(loc))
                yield "weights-crossed", (
                    f"{label}.{'.'.join(_value_where(raw, loc))}: `options.{weight}_weight` weighs `{weighed}`, which "
                    f"`{meant[0]}_weight` is named for: each part counts at the other's weight; swap them"
                ), place_in(span, pattern=rf"options\.{weight}_weight") if span else position(raw, list(loc), value=True)
                break


def _weights_written(expression: nodes.Node) -> dict[str, float]:
    """The number each named value is multiplied by in a sum (`0.3 * alignment + 0.7 * coverage`)."""
    found: dict[str, float] = {}
    for node in [expression, *expression.find_all(nodes.Mul)]:
        if not isinstance(node, nodes.Mul):
            continue
        for weight, weighed in ((node.left, node.right), (node.right, node.left)):
            if isinstance(weight, nodes.Const) and isinstance(weight.value, (int, float)) and isinstance(weighed, nodes.Name):
                found[weighed.name] = float(weight.value)
    return found


def weights_against_description(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a score weighing two values by numbers the scorer's own
    description gives the other way round ("alignment weighs 70%" beside `0.3 * alignment`)."""
    described = " ".join(str(own.get("description") or "").split()) if isinstance(own, Mapping) else ""
    if "%" not in described:
        return
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if loc[-1] != "score" or not isinstance(value, str):
            continue
        try:
            written = _weights_written(parse_expression(value))
        except TemplateSyntaxError:
            continue
        said = {}
        for name in written:
            # The first share the description gives after naming the value, before the next one is named.
            found = re.search(rf"\b{re.escape(name)}\b(?:(?!\b(?:{'|'.join(map(re.escape, written))})\b)[^%])*?(\d+(?:\.\d+)?)\s*%", described, re.IGNORECASE)
            if found is not None:
                said[name] = float(found[1]) / 100
        wrong = [name for name in said if abs(said[name] - written[name]) > 1e-6]
        if len(said) >= 2 and wrong and sorted(said.values()) == sorted(written[name] for name in said):
            yield "weights-against-description", (
                f"{label}.{'.'.join(_value_where(raw, loc))}: weighs {', '.join(f'{name} {written[name]:g}' for name in said)}, but the "
                f"scorer's description gives {', '.join(f'{name} {said[name]:.0%}' for name in said)}: the weights are crossed; swap them"
            ), position(raw, list(loc), value=True)


#: Words of a value's name that say whose turns it holds, by the role that writes them.
_ROLE_NAMED = {
    "user": frozenset("user users customer customers traveller travellers traveler travelers client clients guest guests patient patients caller callers human".split()),
    "assistant": frozenset("assistant assistants agent agents bot bots model reply replies".split()),
}


def roles_against_names(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a value named for one side of a conversation that keeps the
    turns of the other (`traveller_messages: "turns | selectattr('role', 'equalto', 'assistant')"`)."""
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if len(loc) < 2 or loc[-2] != "values" or not isinstance(value, str) or "role" not in value:
            continue
        words = set(str(loc[-1]).lower().split("_"))
        named = [role for role, names in _ROLE_NAMED.items() if words & names]
        kept = re.search(r"(selectattr|rejectattr)\(\s*['\"]role['\"]\s*,\s*['\"](?:equalto|eq|==)['\"]\s*,\s*['\"](\w+)['\"]", value)
        if len(named) != 1 or kept is None or kept[2] not in _ROLE_NAMED:
            continue
        keeps = kept[2] if kept[1] == "selectattr" else next(role for role in _ROLE_NAMED if role != kept[2])
        if keeps != named[0]:
            yield "role-against-name", (
                f"{label}.{'.'.join(_value_where(raw, loc))}: keeps the {keeps}'s turns, but its name speaks of the {named[0]}'s: write "
                f"`{kept[1]}('role', 'equalto', '{named[0] if kept[1] == 'selectattr' else keeps}')`"
            ), position(raw, list(loc), value=True)


_INCLUSIVE = {"<": re.compile(r"\b(?:at most|no more than|up to|or fewer|or less|the most)\b", re.IGNORECASE),
              ">": re.compile(r"\b(?:at least|no fewer than|no less than|or more|the least)\b", re.IGNORECASE)}


def strict_where_inclusive(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for `x < options.y` where the scorer's description or the
    option's says "at most `y`" (and `>` for "at least"): the bound itself is refused, so an
    item exactly at the limit fails."""
    described = str(own.get("description") or "") if isinstance(own, Mapping) else ""
    options = raw.get("options") if isinstance(raw, Mapping) else None
    for loc, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
        if loc[0] != "steps":
            continue  # an option rule compares options with each other, not an item with a bound
        for found in re.finditer(r"(?<![<>=!])(?P<op>[<>])(?!=)\s*options\.(?P<name>\w+)", value if isinstance(value, str) else ""):
            declared = options.get(found["name"]) if isinstance(options, Mapping) else None
            said = f"{described} {declared.get('description') or '' if isinstance(declared, Mapping) else ''}"
            inclusive = _INCLUSIVE[found["op"]].search(said)
            if inclusive is None or found["name"] not in said and not isinstance(declared, Mapping):
                continue
            yield "strict-where-inclusive", (
                f"{label}.{'.'.join(_value_where(raw, loc))}: `{found['op']} options.{found['name']}` refuses the bound itself, but "
                f"{inclusive.group(0)!r} takes it in: an item exactly at the limit fails; write `{found['op']}=`"
            ), position(raw, list(loc), value=True)
            break
