"""Expressions held to the words around them: a value's name (`weakest`, `last_call`,
`traveller_messages`), the scorer's description ("the lower of", "at least one", "weighs 70%")
and the options they read (`order_weight`). Each is a slip that computes without an error and
takes the other end, the other side or the other part; named at the expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import nodes

from .setting_checks import written_expressions, written_settings
from .setting_relations import Unit
from .source import Place, place_in, position, span_of
from .value_names import value_where


#: Words that name one end of what `min` or `max` keeps; those of worth (`weakest`, `best`)
#: name the low end of a higher-is-better score and the high end of a lower-is-better one.
_LOW_WORDS = frozenset("lower lowest lesser least smaller smallest minimum min".split())
_HIGH_WORDS = frozenset("higher highest greater greatest larger largest maximum max".split())
_WORSE_WORDS = frozenset("weaker weakest worse worst poorer poorest".split())
_BETTER_WORDS = frozenset("stronger strongest better best".split())
_OF_THE_TWO = re.compile(r"\b(?:the\s+)?([a-z]+)\s+of\b|\bwhichever\s+is\s+([a-z]+)", re.IGNORECASE)


def _every(expression: nodes.Expr) -> list[nodes.Node]:
    """An expression and every expression inside it."""
    return [expression, *expression.find_all(nodes.Expr)]


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
    for loc, _, expression in written_expressions(raw, "m"):
        every = _every(expression)
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
            f"{label}.{'.'.join(value_where(raw, loc))}: `{used}` keeps the {'greatest' if used == 'max' else 'least'}, but {whose} ({quoted}) "
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
            f"{label}.{'.'.join(value_where(raw, loc))}: `rank < {number}` keeps the first {number - 1}, since `rank` counts from 1, but "
            f"{said[0].group(0)!r} speaks of the first {number}; write `rank <= {number}`"
        ), position(raw, list(loc), value=True)


_LAST_WORDS = frozenset("last final latest newest recent closing".split())
_FIRST_WORDS = frozenset("first initial earliest oldest opening".split())


def ends_against_names(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a value named for the last item (`last_call`) that takes the
    first (`called[0]`, `| first`), or the reverse."""
    for loc, _, expression in written_expressions(raw, ""):
        words = set(str(loc[-1]).lower().split("_")) if len(loc) >= 2 and loc[-2] == "values" else set()
        wants = "last" if words & _LAST_WORDS else "first" if words & _FIRST_WORDS else None
        if wants is None:
            continue
        every = _every(expression)
        taken = {"first" if _index_of(node) == 0 else "last" for node in every if isinstance(node, nodes.Getitem) and _index_of(node) in (0, -1)}
        taken |= {node.name for node in every if isinstance(node, nodes.Filter) and node.name in ("first", "last")}
        if taken == {"first" if wants == "last" else "last"}:
            yield "end-against-name", (
                f"{label}.{'.'.join(value_where(raw, loc))}: takes the {next(iter(taken))} item, but its name says the {wants}: write "
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
                f"{label}.{'.'.join(value_where(raw, loc))}: `{found.group(0)}` holds from two on, but the scorer's description speaks of "
                f"{said.group(0)!r}: a count of one is not above 1; write `{found[1]} >= 1`"
            ), position(raw, list(loc), value=True)
            return


def _reads_scale(node: nodes.Node) -> bool:
    return any(isinstance(found, nodes.Getattr) and found.attr == "scale" and isinstance(found.node, nodes.Name) and found.node.name == "options" for found in [node, *node.find_all(nodes.Getattr)])


def branch_off_the_scale(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a score on the `scale` option whose one branch is scaled and
    the other a bare number (`x * options.scale if judged else 1`): the bare branch is 1 on a
    scale to 10, where 10 was meant; brackets around the condition put both on the scale."""
    for loc, _, expression in written_expressions(raw, "options.scale"):
        if loc[-1] != "score" or not isinstance(expression, nodes.CondExpr) or expression.expr2 is None:
            continue
        for scaled, bare in ((expression.expr1, expression.expr2), (expression.expr2, expression.expr1)):
            if _reads_scale(scaled) and isinstance(bare, nodes.Const) and isinstance(bare.value, (int, float)) and bare.value != 0:
                yield "branch-off-the-scale", (
                    f"{label}.{'.'.join(value_where(raw, loc))}: one branch is multiplied by `options.scale` and the other is {bare.value:g}, "
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
    for loc, _, expression in written_expressions(raw, "_weight"):
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
                    f"{label}.{'.'.join(value_where(raw, loc))}: `options.{weight}_weight` weighs `{weighed}`, which "
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
    for loc, _, expression in written_expressions(raw, ""):
        if loc[-1] != "score":
            continue
        written = _weights_written(expression)
        said = {}
        for name in written:
            # The first share the description gives after naming the value, before the next one is named.
            found = re.search(rf"\b{re.escape(name)}\b(?:(?!\b(?:{'|'.join(map(re.escape, written))})\b)[^%])*?(\d+(?:\.\d+)?)\s*%", described, re.IGNORECASE)
            if found is not None:
                said[name] = float(found[1]) / 100
        wrong = [name for name in said if abs(said[name] - written[name]) > 1e-6]
        if len(said) >= 2 and wrong and sorted(said.values()) == sorted(written[name] for name in said):
            yield "weights-against-description", (
                f"{label}.{'.'.join(value_where(raw, loc))}: weighs {', '.join(f'{name} {written[name]:g}' for name in said)}, but the "
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
                f"{label}.{'.'.join(value_where(raw, loc))}: keeps the {keeps}'s turns, but its name speaks of the {named[0]}'s: write "
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
                f"{label}.{'.'.join(value_where(raw, loc))}: `{found['op']} options.{found['name']}` refuses the bound itself, but "
                f"{inclusive.group(0)!r} takes it in: an item exactly at the limit fails; write `{found['op']}=`"
            ), position(raw, list(loc), value=True)
            break


#: `| abs` right after a bare operand of `-` or `+`: `a - b | abs` is `a - (b | abs)`.
_ABS_OF_THE_LAST = re.compile(r"[-+]\s*([\w.\[\]'\"]+)\s*\|\s*abs\b")


def abs_of_the_last_operand(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a difference whose `| abs` takes only its last operand
    (`a - b | abs <= tolerance`): a filter binds to what is directly on its left, so the
    difference stays signed, and one side of it always passes a bound."""
    for loc, value, expression in written_expressions(raw, "abs"):
        sums = [node for node in expression.find_all((nodes.Sub, nodes.Add)) if isinstance(node.right, nodes.Filter) and node.right.name == "abs"]
        found = _ABS_OF_THE_LAST.search(value) if sums else None
        if found is None:
            continue
        whole = value[: found.start()].strip()
        yield "abs-of-one-operand", (
            f"{label}.{'.'.join(value_where(raw, loc))}: `| abs` takes only `{found[1]}`, what is directly on its left, so the difference stays "
            f"signed and every value on one side of it passes a bound on its size; write `({whole.split()[-1] if whole else '…'} {found.group(0)[0]} {found[1]}) | abs`"
        ), position(raw, list(loc), value=True)


#: What an item of a ratio is picked by rather than judged by: its place in the list, or its role.
_PICKED_BY = frozenset({"rank", "index", "position"})
_PICKED_BY_FIELD = frozenset({"role", "speaker", "author", "kind", "type"})


def _conjuncts(node: nodes.Node) -> list[nodes.Node]:
    return [*_conjuncts(node.left), *_conjuncts(node.right)] if isinstance(node, nodes.And) else [node]


def _picks(node: nodes.Node) -> str | None:
    """What a comparison picks items by (`rank <= options.k`: rank; `item.role == 'assistant'`: role)."""
    if not isinstance(node, nodes.Compare):
        return None
    side = node.expr
    if isinstance(side, nodes.Name) and side.name in _PICKED_BY:
        return side.name
    if isinstance(side, nodes.Getattr) and isinstance(side.node, nodes.Name) and side.node.name == "item" and side.attr in _PICKED_BY_FIELD:
        return side.attr
    return None


def picked_in_a_ratio_where(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a `reduce: ratio` whose `where:` both picks the items that
    count (`rank <= options.k`, `item.role == 'assistant'`) and judges them: the share is
    still taken over every item, so the items not picked count as failing (precision@k over
    the whole ranking, a tutor's questions over every turn). Named at `items:`, where the
    pick belongs."""
    for loc, _, expression in written_expressions(raw, "item"):
        if loc[-1] != "where" or len(loc) < 3 or loc[-3] != "values":
            continue
        value = raw
        for key in loc[:-1]:
            value = value[key] if isinstance(value, (Mapping, list)) else None
        if not isinstance(value, Mapping) or value.get("reduce") != "ratio" or not re.fullmatch(r"\s*[\w.]+\s*", str(value.get("items", ""))):
            continue  # a list already cut or filtered in `items:` is picked there
        parts = _conjuncts(expression)
        picked = [(part, by) for part in parts if (by := _picks(part)) is not None]
        if not picked or len(picked) == len(parts):
            continue
        by = picked[0][1]
        into = f"{value.get('items')}[:options.k]" if by in _PICKED_BY else f"{value.get('items')} | selectattr('{by}', 'equalto', …) | list"
        yield "picked-in-a-ratio-where", (
            f"{label}.{'.'.join(value_where(raw, loc[:-1]))}.items: the ratio is taken over every item of `{value.get('items')}`, while its `where:` "
            f"picks the items that count by {by}: the items not picked count as failing, and the share shrinks with the list; "
            f"pick them in `items:` (`{into}`) and leave `where:` to judge them"
        ), position(raw, [*loc[:-1], "items"], value=True)


def extreme_said_none_kept(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a score that combines its parts by `*` or `+` while the
    scorer's own description takes one end of them ("the lowest of alignment, coverage and
    brevity") and nothing keeps an end: two parts at 0.75 multiply to 0.56, under a line
    both pass."""
    direction = raw.get("direction") if isinstance(raw, Mapping) else None
    described = str(own.get("description") or "") if isinstance(own, Mapping) else ""
    said = [(found.group(0), end) for found in _OF_THE_TWO.finditer(described) if (end := _extreme_of(found[1] or found[2], direction)) is not None]
    if len({end for _, end in said}) != 1:
        return
    steps = own.get("steps") if isinstance(own, Mapping) else None
    own_scores = {step.get("score") for step in steps if isinstance(step, Mapping)} if isinstance(steps, list) else set()
    for loc, text, expression in written_expressions(raw, ""):
        if loc[-1] != "score" or text not in own_scores:
            continue  # only the score the author's file writes
        every = _every(expression)
        if any(isinstance(node, nodes.Filter) and node.name in ("min", "max") or isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in ("min", "max") for node in every):
            return
        attributes = [(node, node.node) for node in every if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name)]
        parts = {f"{owner.name}.{node.attr}" for node, owner in attributes if owner.name != "options"}
        parts |= {node.name for node in every if isinstance(node, nodes.Name) and node.name != "options" and not any(node is owner for _, owner in attributes)}
        combined = [node for node in every if isinstance(node, (nodes.Mul, nodes.Add))]
        if len(parts) < 2 or not combined:
            continue
        end = said[0][1]
        yield "extreme-against-words", (
            f"{label}.{'.'.join(value_where(raw, loc))}: combines {', '.join(sorted(parts))} by {'`*`' if isinstance(combined[0], nodes.Mul) else '`+`'}, but the scorer's "
            f"description takes {said[0][0]!r} them: the parts are {'multiplied' if isinstance(combined[0], nodes.Mul) else 'added'} where one was to decide; "
            f"write `[{', '.join(sorted(parts))}] | {end}` (times the scale)"
        ), position(raw, list(loc), value=True)


def whole_division_of_counts(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for `a // b` where `b` is not a number written out (a count, a
    value): the quotient of two counts rounded down is 0 until the first reaches the second,
    so a share taken so is 0 or 1. Named at the expression; `a / b` keeps the share."""
    for loc, value, expression in written_expressions(raw, "//"):
        divided = [node for node in _every(expression) if isinstance(node, nodes.FloorDiv) and not isinstance(node.right, nodes.Const)]
        if divided:
            yield "whole-division-of-counts", (
                f"{label}.{'.'.join(value_where(raw, loc))}: `//` rounds the quotient down to a whole number: a part over its whole is 0 until "
                f"the part is all of it, so the share is 0 or 1; write `/`"
            ), position(raw, list(loc), value=True)
