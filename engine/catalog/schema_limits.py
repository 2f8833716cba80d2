"""What an answer schema declares that can never take effect: a `default` its own field
refuses (the answer gets it whenever the judge leaves the field out), and a token limit below
the shortest answer the schema accepts (every answer is cut off)."""

from __future__ import annotations

import functools
import json
import math
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from .source import LocatedDict, position

#: Characters of JSON a token holds, as tokenizers of the common models count English and
#: JSON punctuation: an estimate, so what it finds is a warning, not a refusal.
CHARACTERS_PER_TOKEN = 4
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,), "object": (dict,)}


def refused_defaults(data: Any, path: Path) -> list[ConfigError]:
    """Every `default` of a schema file that its own field refuses, at the default's place."""
    return [
        ConfigError(f"{field}.default: {value!r} {why}: an answer that leaves the field out gets it", *(position(node, ["default"], value=True) or (path, None, None)))
        for field, node, value, why in _defaults(data, [])
    ]


def _defaults(schema: Any, path: list[str]) -> Iterator[tuple[str, Mapping[str, Any], Any, str]]:
    for field, node in subschemas(schema, path):
        if "default" in node and field:
            why = _refusal(node, node["default"])
            if why is not None:
                yield field, node, node["default"], why


def subschemas(schema: Any, path: list[str]) -> Iterator[tuple[str, LocatedDict]]:
    """Every schema inside a schema file as written (its properties, their items, the
    definitions under `$defs`, the branches of `anyOf`), with the field it describes."""
    if isinstance(schema, LocatedDict):
        yield ".".join(path), schema
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, child in value.items():
                    yield from subschemas(child, [*path, str(name)])
            elif key in ("$defs", "definitions") and isinstance(value, Mapping):
                for name, child in value.items():
                    yield from subschemas(child, [str(name)])
            elif key in ("items", "anyOf"):
                yield from subschemas(value, path)
    elif isinstance(schema, list):
        for child in schema:
            yield from subschemas(child, path)


def _refusal(schema: Mapping[str, Any], value: Any) -> str | None:
    """Why `value` does not fit `schema` (a field of an answer schema), or None when it does."""
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else [each for each in kind if isinstance(each, str)] if isinstance(kind, list) else []
    if value is None:
        return None if "null" in kinds or not kinds else f"is none, and the field is {kind}"
    kinds = [each for each in kinds if each != "null"]
    if kinds and not any(isinstance(value, _TYPES.get(each, object)) and not (each in ("integer", "number") and isinstance(value, bool)) for each in kinds):
        return f"is not of the field's type, {kinds[0]}"
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return f"is not one of the field's enum values ({', '.join(map(repr, schema['enum']))})"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for keyword, word in (("minimum", "below"), ("maximum", "above"), ("exclusiveMinimum", "not above"), ("exclusiveMaximum", "not below")):
            bound = schema.get(keyword)
            if isinstance(bound, (int, float)) and _breaks(keyword, value, bound):
                return f"is {word} the field's {keyword} ({bound:g})"
    sized = {"string": ("minLength", "maxLength", "characters"), "array": ("minItems", "maxItems", "items")}
    for each, (least, most, unit) in sized.items():
        if isinstance(value, (str, list)) and isinstance(value, _TYPES[each]):
            if isinstance(schema.get(least), int) and len(value) < schema[least]:
                return f"has fewer than the field's {least} ({schema[least]} {unit})"
            if isinstance(schema.get(most), int) and len(value) > schema[most]:
                return f"has more than the field's {most} ({schema[most]} {unit})"
    return None


def _breaks(keyword: str, value: float, bound: float) -> bool:
    return {"minimum": value < bound, "maximum": value > bound, "exclusiveMinimum": value <= bound, "exclusiveMaximum": value >= bound}[keyword]


def least_answer(model: type[BaseModel], least_items: Mapping[str, int] | None = None) -> tuple[str, list[str]]:
    """The shortest answer (as compact JSON) the answer model accepts, and what makes it long:
    the fields that must hold at least many characters or items. Read from the model's fields
    (their types and constraints) and `least_items`, the least count of a list a step's
    `bounds:` demand, by the field's path (`verdicts`, `claims[]`); once per model and counts."""
    return _least_answer(model, tuple(sorted((least_items or {}).items())))


@functools.lru_cache(maxsize=256)
def _least_answer(model: type[BaseModel], least_items: tuple[tuple[str, int], ...]) -> tuple[str, list[str]]:
    long: list[str] = []
    demanded = dict(least_items)

    def least(annotation: Any, constraints: list[Any], where: str) -> Any:
        origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Annotated:
            return least(arguments[0], [*constraints, *arguments[1:]], where)
        if origin is typing.Union or origin is types.UnionType:
            return None if type(None) in arguments else least(arguments[0], constraints, where)
        if origin is typing.Literal:
            return min(arguments, key=lambda value: len(json.dumps(value)))
        bounds = _constraints(constraints)
        if origin is list:
            size = max(int(bounds.get("min_length", 0)), demanded.get(where, 0))
            if size >= 2:
                long.append(f"{where} needs at least {size} items")
            return [least(arguments[0] if arguments else Any, [], f"{where}[]") for _ in range(size)]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return {name: least(info.annotation, list(info.metadata), f"{where}.{name}" if where else name) for name, info in annotation.model_fields.items() if info.is_required()}
        if annotation is str:
            size = int(bounds.get("min_length", 0))
            if size >= 40:
                long.append(f"{where} needs at least {size} characters")
            return "x" * size
        if annotation in (int, float):
            low = bounds.get("ge", bounds.get("gt", 0))
            return max(0, int(math.ceil(low)))
        if annotation is bool:
            return False
        return {} if origin is dict else None

    shortest = least(model, [], "")
    return json.dumps(shortest, separators=(",", ":"), ensure_ascii=False), long


def _constraints(found: list[Any]) -> dict[str, float]:
    bounds: dict[str, float] = {}
    for constraint in found:
        if isinstance(getattr(constraint, "metadata", None), list):  # a FieldInfo inside Annotated
            bounds.update(_constraints(constraint.metadata))
        for name in ("ge", "gt", "min_length"):
            value = getattr(constraint, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds[name] = value
    return bounds


def least_tokens(answer: str) -> int:
    return math.ceil(len(answer) / CHARACTERS_PER_TOKEN)
