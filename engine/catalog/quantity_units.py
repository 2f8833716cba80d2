"""A count compared with a bound counted in another unit: `output | length` counts characters,
`words(output) | length` words and `sentences(output) | length` sentences, while an option
named or described in one unit (`max_words`, "the most words a reply may have") bounds that
unit. `output | length <= options.max_words` then holds a 60-word limit to 60 characters,
and nearly every reply is too long. Named at the comparison, and at the value that counts in
the other unit when it is written apart (either end may be the slip).

The units are a table of words; what counts in which unit is a table of filters and
functions: a new counting function adds a row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from .source import Place, position
from .templates import parse_expression

#: The words that name each unit, in a setting's name or description.
_UNIT_WORDS = {
    "characters": frozenset("char chars character characters letters".split()),
    "words": frozenset("word words".split()),
    "sentences": frozenset("sentence sentences".split()),
    "tokens": frozenset("token tokens".split()),
    "lines": frozenset("line lines".split()),
}
#: The item's fields that are one text: `| length` counts their characters.
_TEXTS = frozenset({"output", "input", "ground_truth", "expected_output"})
#: Functions whose list counts a unit: `words(output) | length` is a number of words.
_LISTS_OF = {"words": "words", "stems": "words", "sentences": "sentences"}
#: Filters that keep a text a text (`output | trim | length` still counts characters).
_TEXT_FILTERS = frozenset({"trim", "lower", "upper", "striptags", "replace", "string", "title", "capitalize"})
#: How to count each unit, for the message's suggestion.
_COUNTED = {"characters": "{text} | length", "words": "words({text}) | length", "sentences": "sentences({text}) | length"}


class _Count(NamedTuple):
    """A quantity's unit and how it is known: the expression that counts it, and where a
    named value that holds it was written (None for an option or an inline count)."""

    unit: str
    said: str
    text: str | None = None  # the text counted, to word a suggestion
    value_at: tuple[Any, ...] | None = None  # the value's keys, when the count is a named value


def _unit_named(words: set[str]) -> str | None:
    units = [unit for unit, named in _UNIT_WORDS.items() if words & named]
    return units[0] if len(units) == 1 else None


def _option_unit(name: str, declaration: Any) -> str | None:
    unit = _unit_named(set(name.lower().split("_")))
    if unit is None and isinstance(declaration, Mapping):
        unit = _unit_named(set(re.findall(r"[a-z]+", str(declaration.get("description") or "").lower())))
    return unit


class _Scorer:
    """One scorer's named values and options, to follow a quantity to where it is counted."""

    def __init__(self, raw: Any, options: Mapping[str, Any]) -> None:
        self.raw = raw
        self.options = options
        self.values: dict[tuple[str, str], tuple[tuple[Any, ...], str]] = {}
        #: Every expression that may compare counts: the named values, each score and skip condition.
        self.expressions: list[tuple[str, str, tuple[Any, ...], str]] = []
        steps = raw.get("steps") if isinstance(raw, Mapping) else None
        for index, step in enumerate(steps if isinstance(steps, list) else []):
            if not isinstance(step, Mapping):
                continue
            values = step.get("values")
            for name, value in values.items() if isinstance(values, Mapping) else ():
                if isinstance(value, str):
                    self.values[(str(step.get("id")), str(name))] = (("steps", index, "values", name), value)
                    self.expressions.append((str(step.get("id")), f"values.{name}", ("steps", index, "values", name), value))
            for key in ("score", "skip_if"):
                if isinstance(step.get(key), str):
                    self.expressions.append((str(step.get("id")), key, ("steps", index, key), step[key]))

    def count(self, node: nodes.Node, step: str, seen: frozenset[tuple[str, str]] = frozenset()) -> _Count | None:
        if isinstance(node, nodes.Filter) and node.name in ("length", "count") and node.node is not None:
            return self._counted(node.node)
        if isinstance(node, nodes.Filter) and node.name == "wordcount":
            return _Count("words", "`| wordcount` counts words")
        if isinstance(node, nodes.Filter) and node.name in ("round", "int", "abs", "float") and node.node is not None:
            return self.count(node.node, step, seen)
        if isinstance(node, (nodes.Add, nodes.Sub)):
            left, right = self.count(node.left, step, seen), self.count(node.right, step, seen)
            if left is not None and right is not None:
                return left if left.unit == right.unit else None
            return left if isinstance(node.right, nodes.Const) else right if isinstance(node.left, nodes.Const) else None
        if isinstance(node, (nodes.Mul, nodes.Div, nodes.FloorDiv)) and isinstance(node.right, nodes.Const):
            return self.count(node.left, step, seen)
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
            if node.node.name == "options":
                unit = _option_unit(node.attr, self.options.get(node.attr))
                return _Count(unit, f"options.{node.attr} is a number of {unit}") if unit else None
            return self._value(node.node.name, node.attr, seen)
        if isinstance(node, nodes.Name):
            return self._value(step, node.name, seen)
        return None

    def _value(self, step: str, name: str, seen: frozenset[tuple[str, str]]) -> _Count | None:
        written = self.values.get((step, name))
        if written is None or (step, name) in seen:
            return None
        loc, text = written
        try:
            found = self.count(parse_expression(text), step, seen | {(step, name)})
        except TemplateSyntaxError:
            return None
        return found._replace(value_at=found.value_at or loc) if found is not None else None

    def _counted(self, counted: nodes.Node) -> _Count | None:
        """The unit of `counted | length`."""
        if isinstance(counted, nodes.Call) and isinstance(counted.node, nodes.Name) and counted.node.name in _LISTS_OF and counted.args:
            listed = _LISTS_OF[counted.node.name]
            return _Count(listed, f"`{counted.node.name}(...) | length` counts {listed}", _text_of(counted.args[0]))
        if isinstance(counted, nodes.Filter) and counted.name == "split" and counted.node is not None:
            by = counted.args[0].value if counted.args and isinstance(counted.args[0], nodes.Const) else None
            split = "words" if by in (None, " ") else "lines" if by == "\n" else None
            return _Count(split, f"`| split | length` counts {split}", _text_of(counted.node)) if split else None
        text = _text_of(counted)
        return _Count("characters", f"`{text} | length` counts characters", text) if text is not None else None


def _text_of(node: nodes.Node) -> str | None:
    """The item's text `node` is (as written, for a message), else None."""
    while isinstance(node, nodes.Filter) and node.name in _TEXT_FILTERS and node.node is not None:
        node = node.node
    return node.name if isinstance(node, nodes.Name) and node.name in _TEXTS else None


def counts_in_other_units(raw: Any, options: Mapping[str, Any], label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each comparison of two quantities counted in different
    units, at the comparison and at the named value that counts the other unit."""
    scorer = _Scorer(raw, options)
    for step, name, loc, text in scorer.expressions:
        if "<" not in text and ">" not in text and "==" not in text:
            continue
        try:
            expression = parse_expression(text)
        except TemplateSyntaxError:
            continue
        for compare in (expression, *expression.find_all(nodes.Compare)):
            if not isinstance(compare, nodes.Compare) or len(compare.ops) != 1:
                continue
            left, right = scorer.count(compare.expr, step), scorer.count(compare.ops[0].expr, step)
            if left is None or right is None or left.unit == right.unit:
                continue
            counted, bound = (left, right) if left.value_at is not None or right.value_at is None else (right, left)
            meant = _COUNTED.get(bound.unit)
            suggestion = f"; count {bound.unit}: `{meant.format(text=counted.text)}`" if meant and counted.text else ""
            yield "count-in-another-unit", (
                f"{label}.{step}.{name}: compares {counted.unit} with {bound.unit}: {counted.said}, and {bound.said}: "
                f"one of them is in the wrong unit, and the comparison holds a number of {counted.unit} to a bound meant in {bound.unit}{suggestion}"
            ), position(raw, list(loc), value=True)
            if counted.value_at is not None and counted.value_at != loc:
                yield "count-in-another-unit", (
                    f"{label}.{step}.values.{counted.value_at[-1]}: {counted.said}, but `{name.removeprefix('values.')}` compares it with a number of {bound.unit} "
                    f"({bound.said}){suggestion}"
                ), position(raw, list(counted.value_at), value=True)
            break


#: A rate option's name: `chars_per_token` is so many of its first unit to one of its second.
_PER = re.compile(r"^(?P<of>[a-z]+?)s?_per_(?P<each>[a-z]+?)s?$")


def _unit_word(word: str) -> str | None:
    return _unit_named({word, f"{word}s", word.rstrip("s")})


def rates_turned_round(raw: Any, options: Mapping[str, Any], label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a count multiplied by a rate of its own unit per another
    (`(output | length) * options.chars_per_token`: characters times characters per token),
    which is no count of the other unit: the count was to be divided by it."""
    scorer = _Scorer(raw, options)
    for step, name, loc, text in scorer.expressions:
        if "_per_" not in text:
            continue
        try:
            expression = parse_expression(text)
        except TemplateSyntaxError:
            continue
        for product in (expression, *expression.find_all(nodes.Mul)):
            if not isinstance(product, nodes.Mul):
                continue
            for counted, rate in ((product.left, product.right), (product.right, product.left)):
                option = rate.attr if isinstance(rate, nodes.Getattr) and isinstance(rate.node, nodes.Name) and rate.node.name == "options" else ""
                per = _PER.match(option)
                count = scorer.count(counted, step) if per is not None else None
                if per is None or count is None or _unit_word(per["of"]) != count.unit or _unit_word(per["each"]) in (None, count.unit):
                    continue
                each = _unit_word(per["each"])
                yield "rate-turned-round", (
                    f"{label}.{step}.{name}: multiplies {count.unit} ({count.said}) by `options.{option}`, {count.unit} per one of {each}: "
                    f"that is no number of {each}; divide: `... / options.{option}`"
                ), position(raw, list(loc), value=True)
                return
