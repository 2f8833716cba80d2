"""What a value may be, as the load-time checks see it (a `Shape`), and the names an
expression may read at one point of a scorer (a `Scope`).

They live below the catalog because a step kind says, in its own module, which names it
gives the steps after it and of which shape (see `scoring/steps/`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class Shape:
    """What a value may be; the base class knows nothing (any attribute may be read)."""

    def describe(self) -> str:
        return "a value"


ANY = Shape()


@dataclass(frozen=True)
class Text(Shape):
    enum: tuple[str, ...] | None = None

    def describe(self) -> str:
        return f"one of {', '.join(map(repr, self.enum))}" if self.enum else "text"


@dataclass(frozen=True)
class Number(Shape):
    def describe(self) -> str:
        return "a number"


@dataclass(frozen=True)
class Boolean(Shape):
    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape = ANY

    def describe(self) -> str:
        return "a list"


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


def shape_of(annotation: Any, what: str = "it") -> Shape:
    """The shape of values a pydantic annotation allows."""
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return shape_of(arguments[0], what)
    if origin is typing.Union or origin is types.UnionType:
        present = [argument for argument in arguments if argument is not type(None)]
        return shape_of(present[0], what) if len(present) == 1 else ANY
    if origin is typing.Literal:
        if all(isinstance(value, str) for value in arguments):
            return Text(tuple(arguments))
        if all(isinstance(value, bool) for value in arguments):
            return BOOLEAN
        return NUMBER if all(isinstance(value, (int, float)) for value in arguments) else ANY
    if origin is list:
        return ListOf(shape_of(arguments[0], f"an item of {what}") if arguments else ANY)
    if annotation is bool:
        return BOOLEAN
    if annotation in (int, float):
        return NUMBER
    if annotation is str:
        return TEXT
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return Record({name: shape_of(info.annotation, f"{what}.{name}") for name, info in annotation.model_fields.items()}, what)
    return ANY


@dataclass(frozen=True)
class Scope:
    """The names an expression may read here, and why some others may not (a step that
    runs later, the context in a step that does not declare it)."""

    names: Mapping[str, Shape]
    unavailable: Mapping[str, str] = field(default_factory=dict)

    def with_names(self, added: Mapping[str, Shape]) -> Scope:
        unavailable = {name: why for name, why in self.unavailable.items() if name not in added}
        return Scope({**self.names, **added}, unavailable)

    def without(self, name: str, why: str) -> Scope:
        return Scope({key: value for key, value in self.names.items() if key != name}, {**self.unavailable, name: why})
