"""Did-you-mean: the words an author probably meant, for misspelt keys, names and values."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`; did you mean 'x'?` when one candidate is close to `word`, else an empty string."""
    close = difflib.get_close_matches(word, [str(candidate) for candidate in candidates], n=1, cutoff=0.6)
    if not close:
        lowered = {str(candidate).casefold(): str(candidate) for candidate in candidates}
        close = [lowered[word.casefold()]] if word.casefold() in lowered else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _members(annotation: Any) -> list[Any]:
    """The types an annotation may hold: the members of a union (Annotated and Optional unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return [member for argument in typing.get_args(annotation) for member in _members(argument)]
    return [annotation]


def _tag(model: type[BaseModel]) -> Any:
    field = model.model_fields.get("kind")
    if field is None:
        return None
    arguments = typing.get_args(field.annotation)
    return arguments[0] if arguments else None


def model_at(model: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel] | None:
    """The pydantic model that validates the mapping at `loc` (a pydantic error location,
    tags of tagged unions included), when there is one."""
    current: Any = model
    for part in loc:
        candidates = [member for member in _members(current) if member is not type(None)]
        if isinstance(part, str):
            tagged = [member for member in candidates if isinstance(member, type) and issubclass(member, BaseModel) and _tag(member) == part]
            if tagged:
                current = tagged[0]
                continue
            models = [member for member in candidates if isinstance(member, type) and issubclass(member, BaseModel)]
            fields = {alias: field for found in models for name, field in found.model_fields.items() for alias in (name, field.alias) if alias}
            if part in fields:
                current = fields[part].annotation
                continue
            mappings = [member for member in candidates if typing.get_origin(member) is dict]
            if mappings:
                current = typing.get_args(mappings[0])[1]
                continue
            return None
        sequences = [member for member in candidates if typing.get_origin(member) is list]
        if not sequences:
            return None
        current = typing.get_args(sequences[0])[0]
    models = [member for member in _members(current) if isinstance(member, type) and issubclass(member, BaseModel)]
    return models[0] if len(models) == 1 else None


def keys_of(model: type[BaseModel]) -> list[str]:
    """The keys an author may write in a mapping that `model` validates (aliases preferred)."""
    return [field.alias or name for name, field in model.model_fields.items()]
