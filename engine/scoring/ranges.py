"""What arithmetic, comparisons and tests do to the shapes of values, as the load-time checks
see them: the range of `a - b` from the ranges of `a` and `b` (interval arithmetic), what
`a > 3` being true tells of `a`, whether a comparison of two ranges has one outcome whatever
the values. A number's range is found exactly when every value it is computed from is
read once (`tight`); otherwise it may be wider than what the expression gives, never
narrower.

Below the catalog, because a step kind works out the shapes of what it gives (a score
step's reducers) from the shapes of what it reads.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Literal

from .shapes import ANY, Boolean, ListOf, Number, Shape

Operator = Literal["add", "sub", "mul", "div", "floordiv", "mod", "pow"]
Comparison = Literal["eq", "ne", "gt", "gteq", "lt", "lteq"]

_INFINITY = math.inf
#: A comparison's outcome when false, said as its negation.
NEGATED: dict[Comparison, Comparison] = {"eq": "ne", "ne": "eq", "gt": "lteq", "gteq": "lt", "lt": "gteq", "lteq": "gt"}
#: A comparison read from the other side (`3 < a` is `a > 3`).
FLIPPED: dict[Comparison, Comparison] = {"eq": "eq", "ne": "ne", "gt": "lt", "gteq": "lteq", "lt": "gt", "lteq": "gteq"}


def constant(value: float) -> Number:
    return Number(value, value, tight=True, integer=float(value).is_integer(), nonzero=value != 0)


def as_number(shape: Shape) -> Number | None:
    """A number, or true/false taken as 1/0 (as Python's arithmetic takes them); None otherwise."""
    if isinstance(shape, Number):
        return shape
    if isinstance(shape, Boolean):
        return Number(0, 1, tight=True, integer=True)
    return None


def _product(first: float, second: float) -> float:
    return 0.0 if first == 0 or second == 0 else first * second  # 0 × ∞ is 0 here: a factor known to be 0


def _quotient(first: float, second: float) -> float:
    if math.isinf(second):
        return 0.0 if math.isfinite(first) else math.copysign(_INFINITY, first) * math.copysign(1, second)
    return first / second


def arithmetic(operator: Operator, left: Number, right: Number) -> Number:
    """The range of `left <operator> right`."""
    sources = left.sources | right.sources
    # Interval arithmetic gives the exact range when the two are independent of each other.
    independent = left.tight and right.tight and not (left.sources & right.sources)
    integer = left.integer and right.integer
    low, high, tight = -_INFINITY, _INFINITY, False
    if operator == "add":
        low, high, tight = left.low + right.low, left.high + right.high, independent
    elif operator == "sub":
        low, high, tight = left.low - right.high, left.high - right.low, independent
    elif operator == "mul":
        ends = [_product(a, b) for a in (left.low, left.high) for b in (right.low, right.high)]
        low, high, tight = min(ends), max(ends), independent
    elif operator in ("div", "floordiv"):
        low, high, tight = _divided(left, right)
        tight = tight and independent and operator == "div"
        integer = operator == "floordiv" and integer
        if operator == "floordiv":
            low, high = math.floor(low) if math.isfinite(low) else low, math.floor(high) if math.isfinite(high) else high
    elif operator == "mod" and right.low > 0:
        low, high = (0, right.high) if left.low >= 0 else (-right.high, right.high)
    elif operator == "pow" and right.low == right.high and float(right.low).is_integer() and right.low >= 0:
        power = int(right.low)
        ends = [left.low**power if math.isfinite(left.low) else _INFINITY, left.high**power if math.isfinite(left.high) else _INFINITY]
        if power % 2 == 0:
            low = 0 if left.low <= 0 <= left.high else min(ends)
            high = max(ends)
        else:
            low, high = (left.low**power if math.isfinite(left.low) else -_INFINITY), ends[1]
        tight, integer = left.tight, left.integer
    return Number(low, high, tight=tight, integer=integer, nonzero=False, sources=sources)


def _divided(left: Number, right: Number) -> tuple[float, float, bool]:
    if right.low > 0 or right.high < 0:
        ends = [_quotient(a, b) for a in (left.low, left.high) for b in (right.low, right.high)]
        return min(ends), max(ends), True
    if left.low == left.high == 0:
        return 0, 0, True
    if right.nonzero and right.low == 0:  # above 0, but as close to it as may be
        return (0 if left.low >= 0 else -_INFINITY), (_quotient(left.high, right.high) if left.high <= 0 else _INFINITY), False
    if right.nonzero and right.high == 0:
        return (0 if left.high <= 0 else -_INFINITY), (_INFINITY if left.low < 0 else 0), False
    return -_INFINITY, _INFINITY, False


def negated(value: Number) -> Number:
    return replace(value, low=-value.high, high=-value.low)


def absolute(value: Number) -> Number:
    if value.low >= 0:
        return value
    if value.high <= 0:
        return negated(value)
    return replace(value, low=0, high=max(-value.low, value.high), nonzero=False)


def rounded(value: Number, integer: bool = False) -> Number:
    """`round`, `int`: monotone, so the ends of the range become the rounded ends."""
    def end(number: float) -> float:
        return float(math.trunc(number)) if integer and math.isfinite(number) else number

    return replace(value, low=end(value.low), high=end(value.high), integer=integer or value.integer, nonzero=value.nonzero and not integer)


def extreme(values: list[Number], smallest: bool) -> Number:
    """The range of the least (or the greatest) of several numbers."""
    pick = min if smallest else max
    sources = frozenset().union(*(value.sources for value in values))
    independent = all(value.tight for value in values) and sum(len(value.sources) for value in values) == len(sources)
    return Number(
        pick(value.low for value in values), pick(value.high for value in values), tight=independent,
        integer=all(value.integer for value in values), sources=sources,
    )


def total(items: ListOf, value: Number) -> Number:
    """The range of the sum of a list of numbers each in `value`'s range."""
    most = items.most
    low = min(_product(value.low, items.least), _product(value.low, most)) if value.low < 0 else _product(value.low, items.least)
    high = max(_product(value.high, items.least), _product(value.high, most)) if value.high > 0 else _product(value.high, items.least)
    return Number(low, high, tight=value.tight and math.isfinite(most), integer=value.integer, sources=value.sources | items.sources)


def length(shape: Shape) -> Number:
    """The range of a list's (or a text's) length."""
    if isinstance(shape, ListOf):
        return Number(shape.least, shape.most, tight=True, integer=True, nonzero=shape.least > 0, sources=shape.sources)
    return Number(0, _INFINITY, integer=True, sources=getattr(shape, "sources", frozenset()))


def outcome(operator: Comparison, left: Number, right: Number) -> bool | None:
    """True or False when `left <operator> right` has that outcome whatever the values of the
    two ranges; None when it can go either way."""
    if not (left.low <= left.high and right.low <= right.high):
        return None
    if operator in ("gt", "lteq"):
        always = left.low > right.high
        never = left.high <= right.low
    elif operator in ("lt", "gteq"):
        always = left.high < right.low
        never = left.low >= right.high
    else:
        always = left.low == left.high == right.low == right.high
        never = left.high < right.low or right.high < left.low
    found = True if always else False if never else None
    if found is None or operator in ("gt", "lt", "eq"):
        return found
    return not found  # gteq is `not lt`, lteq `not gt`, ne `not eq`


def truthy(shape: Shape) -> Shape:
    """What a value is, known to be true (not none, not 0, not empty)."""
    if isinstance(shape, Number):
        low = 1 if shape.integer and shape.low == 0 else shape.low
        high = -1 if shape.integer and shape.high == 0 else shape.high
        return replace(shape, low=low, high=high, nonzero=True, nullable=False)
    if isinstance(shape, ListOf):
        return replace(shape, least=max(shape.least, 1), nullable=False)
    return shape if shape is ANY else replace(shape, nullable=False)


def falsy(shape: Shape) -> Shape:
    """What a value is, known to be false (none, 0, empty)."""
    if isinstance(shape, Number) and shape.low <= 0 <= shape.high:
        return replace(shape, low=0, high=0, nonzero=False)
    if isinstance(shape, ListOf):
        return replace(shape, most=0)
    return shape


def compared_with(shape: Number, operator: Comparison, value: float) -> Number:
    """What `shape <operator> value` being true tells of the number."""
    low, high, nonzero = shape.low, shape.high, shape.nonzero
    if operator == "eq":
        low, high = max(low, value), min(high, value)
    elif operator == "ne":
        nonzero = nonzero or value == 0
    elif operator in ("gt", "gteq"):
        strict = operator == "gt"
        bound = (math.floor(value) + 1 if strict else math.ceil(value)) if shape.integer else value
        low = max(low, bound)
        nonzero = nonzero or value > 0 or (strict and value == 0)
    else:
        strict = operator == "lt"
        bound = (math.ceil(value) - 1 if strict else math.floor(value)) if shape.integer else value
        high = min(high, bound)
        nonzero = nonzero or value < 0 or (strict and value == 0)
    return replace(shape, low=low, high=high, nonzero=nonzero, nullable=False)
