"""What each filter and each function of expressions takes and gives, a row each: the checks
of expressions (operations.py) read these tables, so a new filter or function is a row.

A row says what the filter takes (anything, a number, or a list or text), which is what it is
refused for (`| abs` of text, `| length` of a number: it fails for every item); whether it
goes through what it is given item by item (given text, it takes each character for an item,
which is never meant); and the shape of what it gives, from the shapes of what it is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..scoring import ranges
from ..scoring.shapes import ANY, NUMBER, TEXT, Boolean, ListOf, Number, Record, Shape, Text
from .functions import RESULTS


@dataclass(frozen=True)
class Takes:
    """What a filter takes: the shapes it refuses, and how its message says what it takes."""

    refuses: tuple[type[Shape], ...]
    words: str


ANYTHING = Takes((), "anything")
A_NUMBER = Takes((Text, ListOf, Record), "a number")
A_SEQUENCE = Takes((Number, Boolean), "a list or text")


class Given:
    """What one use of a filter or function is given, as the rows' `gives` read it: `base`
    (a filter's left side, a function's first argument), the other arguments, those written
    as text, whether keywords were given, and the shapes of the items of a list written in
    the expression (`[a, b] | max`), worked out only when a row asks."""

    def __init__(self, base: Shape, arguments: Sequence[Shape], strings: Sequence[str], keywords: bool, listed: Callable[[], list[Shape]] | None) -> None:
        self.base = base
        self.arguments = list(arguments)
        self.strings = list(strings)
        self.keywords = keywords
        self._listed = listed

    @functools.cached_property
    def listed(self) -> list[Number] | None:
        """The numbers of a list written in the expression, when each item is one."""
        if self._listed is None:
            return None
        numbers = [ranges.as_number(shape) for shape in self._listed()]
        return [number for number in numbers if number is not None] if numbers and all(number is not None for number in numbers) else None

    @property
    def number(self) -> Number | None:
        return ranges.as_number(self.base)


Gives = Callable[[Given], Shape]


@dataclass(frozen=True)
class Row:
    """One filter: what it takes, whether it goes through what it is given item by item, and
    what it gives."""

    takes: Takes = ANYTHING
    gives: Gives = lambda given: ANY
    through_items: bool = False


def computed_from(result: Shape, arguments: Sequence[Shape]) -> Shape:
    """A function's result, computed from what its arguments were read from."""
    sources = frozenset().union(*(getattr(argument, "sources", frozenset()) for argument in arguments))
    return replace(result, sources=sources) if isinstance(result, (Number, ListOf, Text)) and sources else result


# -- what the filters give

def _text(given: Given) -> Shape:
    return TEXT


def _length(given: Given) -> Shape:
    return ranges.length(given.base)


def _absolute(given: Given) -> Shape:
    return ranges.absolute(given.number) if given.number is not None else NUMBER


def _rounded(integer: bool) -> Gives:
    return lambda given: ranges.rounded(given.number, integer=integer) if given.number is not None else NUMBER


def _total(given: Given) -> Shape:
    base = given.base
    item = ranges.as_number(base.item) if isinstance(base, ListOf) else None
    return ranges.total(base, item) if isinstance(base, ListOf) and item is not None else NUMBER


def _extreme(smallest: bool) -> Gives:
    def gives(given: Given) -> Shape:
        if given.listed is not None:
            return ranges.extreme(given.listed, smallest=smallest)
        return _item(given)

    return gives


def _item(given: Given) -> Shape:
    return given.base.item if isinstance(given.base, ListOf) else ANY


def _default(given: Given) -> Shape:
    return replace(given.base, nullable=False).join(given.arguments[0]) if given.arguments and given.base is not ANY else ANY


def _same_list(given: Given) -> Shape:
    return given.base if isinstance(given.base, ListOf) else ListOf(ANY)


def _fewer(given: Given) -> Shape:
    """Some of the list's items: as many or fewer, down to none."""
    return replace(given.base, least=0) if isinstance(given.base, ListOf) else ListOf(ANY)


def _reversed(given: Given) -> Shape:
    return given.base if isinstance(given.base, ListOf) else ANY


def _mapped(given: Given) -> Shape:
    """Each item through a function named by its text (`map('lower')`)."""
    base = given.base
    if given.strings and isinstance(base, ListOf) and not given.keywords:
        return ListOf(computed_from(RESULTS.get(given.strings[0], ANY), [base]), base.least, base.most, base.sources)
    return ANY


_TEXT = Row(gives=_text)

#: A row per filter whose arguments or result the checks know; a filter of the sandbox that
#: is not here takes anything and gives what cannot be known.
FILTERS: dict[str, Row] = {
    "length": Row(A_SEQUENCE, _length),
    "count": Row(A_SEQUENCE, _length),
    "wordcount": Row(gives=lambda given: ranges.length(TEXT)),
    "abs": Row(A_NUMBER, _absolute),
    "round": Row(A_NUMBER, _rounded(integer=False)),
    "int": Row(gives=_rounded(integer=True)),
    "float": Row(gives=_rounded(integer=False)),
    "sum": Row(A_SEQUENCE, _total),
    "min": Row(A_SEQUENCE, _extreme(smallest=True)),
    "max": Row(A_SEQUENCE, _extreme(smallest=False)),
    "first": Row(A_SEQUENCE, _item),
    "last": Row(A_SEQUENCE, _item),
    "random": Row(gives=_item),
    "default": Row(gives=_default),
    "d": Row(gives=_default),
    "list": Row(A_SEQUENCE, _same_list),
    "unique": Row(A_SEQUENCE, _same_list, through_items=True),
    "sort": Row(A_SEQUENCE, _same_list),
    "batch": Row(A_SEQUENCE, _same_list, through_items=True),
    "slice": Row(A_SEQUENCE, _same_list),
    "reverse": Row(A_SEQUENCE, _reversed),
    "select": Row(A_SEQUENCE, _fewer, through_items=True),
    "reject": Row(A_SEQUENCE, _fewer, through_items=True),
    "selectattr": Row(A_SEQUENCE, _fewer, through_items=True),
    "rejectattr": Row(A_SEQUENCE, _fewer, through_items=True),
    "map": Row(A_SEQUENCE, _mapped, through_items=True),
    "join": Row(A_SEQUENCE, _text, through_items=True),
    **dict.fromkeys(
        ("trim", "lower", "upper", "title", "capitalize", "string", "replace", "truncate", "json", "untrusted", "number", "format", "indent", "center", "striptags", "urlencode"),
        _TEXT,
    ),  # they turn what they are given into text (none too: it becomes 'None' or 'null')
}

#: The function library's functions, which are filters too: each gives its result, computed
#: from what it is given.
def _result_of_filter(result: Shape) -> Gives:
    return lambda given: computed_from(result, [given.base, *given.arguments])


def _result_of_call(result: Shape) -> Gives:
    return lambda given: computed_from(result, given.arguments)


FUNCTION_FILTERS: dict[str, Row] = {name: Row(gives=_result_of_filter(result)) for name, result in RESULTS.items()}

_UNKNOWN = Row()


def filter_row(name: str) -> Row:
    """The row of a filter of the sandbox: its own, or its function's of the library."""
    return FILTERS.get(name) or FUNCTION_FILTERS.get(name) or _UNKNOWN


# -- functions called by name

Arity = Literal["one", "several", "any"]


@dataclass(frozen=True)
class Function:
    """A function called by name (`min(a, b)`): the shape it gives when all its arguments
    are numbers (for as many as `arity` says), else the shape it gives anyway."""

    of_numbers: Callable[[list[Number]], Shape] | None = None
    arity: Arity = "any"
    otherwise: Gives = lambda given: NUMBER


def _function_length(given: Given) -> Shape:
    return ranges.length(given.base) if given.arguments else NUMBER


def _function_total(given: Given) -> Shape:
    listed = given.base
    item = ranges.as_number(listed.item) if isinstance(listed, ListOf) and given.arguments else None
    return ranges.total(listed, item) if isinstance(listed, ListOf) and item is not None else NUMBER


FUNCTIONS: dict[str, Function] = {
    "min": Function(lambda numbers: ranges.extreme(numbers, smallest=True), "several"),
    "max": Function(lambda numbers: ranges.extreme(numbers, smallest=False), "several"),
    "abs": Function(lambda numbers: ranges.absolute(numbers[0]), "one"),
    "round": Function(lambda numbers: ranges.rounded(numbers[0]), "one"),
    "int": Function(lambda numbers: ranges.rounded(numbers[0], integer=True), "one"),
    "float": Function(lambda numbers: ranges.rounded(numbers[0]), "one"),
    "len": Function(otherwise=_function_length),
    "sum": Function(otherwise=_function_total),
    "range": Function(otherwise=lambda given: ListOf(NUMBER)),
    **{name: Function(otherwise=_result_of_call(result)) for name, result in RESULTS.items()},
}


def function_gives(function: Function, arguments: list[Shape]) -> Shape:
    """What calling `function` with arguments of these shapes gives."""
    numbers = [ranges.as_number(argument) for argument in arguments]
    known = [number for number in numbers if number is not None]
    fits = {"one": len(arguments) == 1, "several": len(arguments) > 1, "any": False}[function.arity]
    if function.of_numbers is not None and fits and known and len(known) == len(arguments):
        return function.of_numbers(known)
    return function.otherwise(Given(arguments[0] if arguments else ANY, arguments, [], False, None))
