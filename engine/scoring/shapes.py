"""What a value may be, as the load-time checks see it (a `Shape`), and the names an
expression may read at one point of a scorer (a `Scope`).

They live below the catalog because a step kind says, in its own module, which names it
gives the steps after it and of which shape (see `scoring/steps/`).
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class Shape:
    """What a value may be; the base class knows nothing (any attribute may be read)."""

    #: Whether the value may be none: an answer field its schema does not require, an input
    #: the scorer does not require.
    nullable: bool = field(default=False, kw_only=True)

    def describe(self) -> str:
        return "a value"

    def join(self, other: Shape) -> Shape:
        """What a value is that is either this or `other` (the two branches of a condition)."""
        if type(self) is not type(other) or type(self) is Shape:
            return ANY
        return replace(self._joined(other), nullable=self.nullable or other.nullable)

    def _joined(self, other: Any) -> Shape:
        return self if self == other else ANY


ANY = Shape()

_INFINITY = math.inf


@dataclass(frozen=True)
class Text(Shape):
    enum: tuple[str, ...] | None = None
    #: What it is read from (see `Number.sources`).
    sources: frozenset[str] = frozenset()

    def describe(self) -> str:
        return f"one of {', '.join(map(repr, self.enum))}" if self.enum else "text"

    def _joined(self, other: Text) -> Shape:
        enum = tuple(dict.fromkeys((*self.enum, *other.enum))) if self.enum and other.enum else None
        return Text(enum, self.sources | other.sources)


@dataclass(frozen=True)
class Number(Shape):
    """A number, with the range it can take when that is known (from a schema's or an
    option's minimum and maximum, a list's length, the arithmetic of an expression)."""

    low: float = -_INFINITY
    high: float = _INFINITY
    #: Whether both ends are values the number can take, not only bounds of them (arithmetic
    #: on numbers that depend on each other can find a range wider than what they give).
    tight: bool = False
    integer: bool = False
    #: Known not to be 0 (tested before it is read), though its range spans 0.
    nonzero: bool = False
    #: What it is computed from: the steps, run fields and options it reads (`analyze`,
    #: `output`, `options.scale`). Two numbers computed from the same one, or from answers a
    #: rule ties together, are not independent of each other.
    sources: frozenset[str] = frozenset()

    def describe(self) -> str:
        return "a number"

    @property
    def bounded(self) -> bool:
        """Whether both ends of the range are known."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def may_be_zero(self) -> bool:
        return not self.nonzero and self.low <= 0 <= self.high

    def span(self) -> str:
        """The range as an author reads it: `1 to 10`, `0 or more`."""
        if self.bounded:
            return f"{_shown(self.low)} to {_shown(self.high)}" if self.low != self.high else _shown(self.low)
        if math.isfinite(self.low):
            return f"{_shown(self.low)} or more"
        if math.isfinite(self.high):
            return f"{_shown(self.high)} or less"
        return "any number"

    def _joined(self, other: Number) -> Shape:
        return Number(
            min(self.low, other.low), max(self.high, other.high), tight=self.tight and other.tight, integer=self.integer and other.integer,
            nonzero=self.nonzero and other.nonzero, sources=self.sources | other.sources,
        )


def _shown(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class Boolean(Shape):
    def describe(self) -> str:
        return "true or false"

    def _joined(self, other: Boolean) -> Shape:
        return BOOLEAN


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape = ANY
    #: How many items it holds at least and at most (a schema's minItems and maxItems).
    least: int = 0
    most: float = _INFINITY
    #: The answers it is read from, as paths (see `Number.sources`).
    sources: frozenset[str] = frozenset()

    def describe(self) -> str:
        return "a list"

    def _joined(self, other: ListOf) -> Shape:
        return ListOf(self.item.join(other.item), min(self.least, other.least), max(self.most, other.most), self.sources | other.sources)


@dataclass(frozen=True)
class Record(Shape):
    """A mapping with known fields (an answer, the options, a tool call)."""

    fields: Mapping[str, Shape] = field(default_factory=dict)
    what: str = "it"

    def describe(self) -> str:
        return f"{self.what} (fields: {', '.join(self.fields) or 'none'})"


TEXT = Text()
NUMBER = Number()
BOOLEAN = Boolean()


def shape_of(annotation: Any, what: str = "it", constraints: Sequence[Any] = ()) -> Shape:
    """The shape of values a pydantic annotation allows, with the bounds of its constraints
    (`Field(ge=1, le=5)`, `max_length=...`) and of the constraints given beside it: read by
    the row of `_BY_ORIGIN` for a generic annotation, of `_BY_TYPE` for a plain type."""
    origin = typing.get_origin(annotation)
    if origin is not None:
        read = _BY_ORIGIN.get(origin)
        return read(typing.get_args(annotation), what, constraints) if read is not None else ANY
    if isinstance(annotation, type) and annotation in _BY_TYPE:
        return _BY_TYPE[annotation](annotation, _bounds(constraints))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return Record({name: shape_of(info.annotation, f"{what}.{name}", info.metadata) for name, info in annotation.model_fields.items()}, what)
    return ANY


def _annotated(arguments: tuple[Any, ...], what: str, constraints: Sequence[Any]) -> Shape:
    return shape_of(arguments[0], what, [*constraints, *arguments[1:]])


def _union(arguments: tuple[Any, ...], what: str, constraints: Sequence[Any]) -> Shape:
    """One type, or none: the shape of that type, which may be none. Anything else is not known."""
    present = [argument for argument in arguments if argument is not type(None)]
    if len(present) != 1:
        return ANY
    return replace(shape_of(present[0], what, constraints), nullable=len(present) < len(arguments))


def _literal(arguments: tuple[Any, ...], what: str, constraints: Sequence[Any]) -> Shape:
    """The values written out: texts (an enum), true or false, or numbers (their range)."""
    if all(isinstance(value, str) for value in arguments):
        return Text(tuple(arguments))
    if all(isinstance(value, bool) for value in arguments):
        return BOOLEAN
    if all(isinstance(value, (int, float)) for value in arguments):
        return Number(min(arguments), max(arguments), tight=True, integer=all(isinstance(value, int) for value in arguments))
    return ANY


def _list(arguments: tuple[Any, ...], what: str, constraints: Sequence[Any]) -> Shape:
    bounds = _bounds(constraints)
    item = shape_of(arguments[0], f"an item of {what}") if arguments else ANY
    return ListOf(item, int(bounds.get("min_length", 0)), bounds.get("max_length", _INFINITY))


def _number(annotation: Any, bounds: dict[str, float]) -> Shape:
    """A number between its bounds; an integer's exclusive bounds are the next integers in
    (an integer above 0 is at least 1), so its range is exact."""
    low, high = bounds.get("ge", bounds.get("gt", -_INFINITY)), bounds.get("le", bounds.get("lt", _INFINITY))
    integer = annotation is int
    if integer:
        low = math.floor(low) + 1 if "gt" in bounds else math.ceil(low) if math.isfinite(low) else low
        high = math.ceil(high) - 1 if "lt" in bounds else math.floor(high) if math.isfinite(high) else high
    nonzero = ("gt" in bounds and bounds["gt"] >= 0) or ("lt" in bounds and bounds["lt"] <= 0)
    exclusive = "gt" in bounds or "lt" in bounds
    return Number(low, high, tight=math.isfinite(low) and math.isfinite(high) and (integer or not exclusive), integer=integer, nonzero=nonzero)


#: How each generic annotation is read, from its arguments (`list[str]`: `(str,)`).
_BY_ORIGIN: dict[Any, Callable[[tuple[Any, ...], str, Sequence[Any]], Shape]] = {
    typing.Annotated: _annotated, typing.Union: _union, types.UnionType: _union, typing.Literal: _literal, list: _list,
}
#: How each plain type is read, with the bounds of its constraints.
_BY_TYPE: dict[Any, Callable[[Any, dict[str, float]], Shape]] = {
    bool: lambda annotation, bounds: BOOLEAN, int: _number, float: _number, str: lambda annotation, bounds: TEXT,
}


def _bounds(constraints: Sequence[Any]) -> dict[str, float]:
    """The bounds among pydantic's and annotated-types' constraints: ge, gt, le, lt, min_length, max_length."""
    found: dict[str, float] = {}
    for constraint in constraints:
        nested = getattr(constraint, "metadata", None)
        if isinstance(nested, list):  # a FieldInfo inside Annotated
            found.update(_bounds(nested))
        for name in ("ge", "gt", "le", "lt", "min_length", "max_length"):
            value = getattr(constraint, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = value
    return found


@dataclass(frozen=True)
class Scope:
    """The names an expression may read here, and why some others may not (a step that
    runs later, the context in a step that does not declare it)."""

    names: Mapping[str, Shape]
    unavailable: Mapping[str, str] = field(default_factory=dict)
    #: The steps whose answers rules constrain, with what else those rules read: their values
    #: may be narrower than their schemas say, and are tied to what the rules compare them with.
    constrained: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def with_names(self, added: Mapping[str, Shape]) -> Scope:
        unavailable = {name: why for name, why in self.unavailable.items() if name not in added}
        return Scope({**self.names, **added}, unavailable, self.constrained)

    def without(self, name: str, why: str) -> Scope:
        return Scope({key: value for key, value in self.names.items() if key != name}, {**self.unavailable, name: why}, self.constrained)

    def constrained_by_rules(self, step: str, reads: frozenset[str]) -> Scope:
        return Scope(self.names, self.unavailable, {**self.constrained, step: reads})

    def tied_to(self, root: str) -> frozenset[str]:
        """What values read from `root` are tied to by rules (both ways)."""
        return self.constrained.get(root, frozenset()) | frozenset(step for step, reads in self.constrained.items() if root in reads)
