"""What an answer schema declares that can never take effect: a `default` its own field
refuses (the answer gets it whenever the judge leaves the field out), and a token limit below
the shortest answer the schema accepts (every answer is cut off)."""

from __future__ import annotations

import json
import math
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
    if not isinstance(schema, LocatedDict):
        return
    if "default" in schema and path:
        why = _refusal(schema, schema["default"])
        if why is not None:
            yield ".".join(path), schema, schema["default"], why
    for key, value in schema.items():
        if key == "properties" and isinstance(value, Mapping):
            for name, child in value.items():
                yield from _defaults(child, [*path, str(name)])
        elif key in ("$defs", "definitions") and isinstance(value, Mapping):
            for name, child in value.items():
                yield from _defaults(child, [str(name)])
        elif key == "items":
            yield from _defaults(value, [*path, "items"] if path else ["items"])


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


def least_answer(model: type[BaseModel]) -> tuple[str, list[str]]:
    """The shortest answer (as compact JSON) the model's schema accepts, and what makes it
    long: the fields that must hold at least many characters or items."""
    schema = model.model_json_schema()
    definitions = schema.get("$defs", {})
    long: list[str] = []

    def least(node: Mapping[str, Any], where: str) -> Any:
        if "$ref" in node:
            return least(definitions.get(str(node["$ref"]).rsplit("/", 1)[-1], {}), where)
        options = node.get("anyOf")
        if isinstance(options, list):
            found = [least(option, where) for option in options]
            return min(found, key=lambda value: len(json.dumps(value, separators=(",", ":"))))
        if "const" in node:
            return node["const"]
        if isinstance(node.get("enum"), list) and node["enum"]:
            return min(node["enum"], key=lambda value: len(json.dumps(value)))
        kind = node.get("type")
        if kind == "null":
            return None
        if kind == "string":
            size = int(node.get("minLength", 0))
            if size >= 40:
                long.append(f"{where} needs at least {size} characters")
            return "x" * size
        if kind in ("integer", "number"):
            low = node.get("minimum", node.get("exclusiveMinimum", 0))
            return int(math.ceil(low)) if isinstance(low, (int, float)) and low > 0 else 0
        if kind == "boolean":
            return False
        if kind == "array":
            size = int(node.get("minItems", 0))
            if size >= 2:
                long.append(f"{where} needs at least {size} items")
            item = node.get("items", {})
            return [least(item, f"{where}[]") for _ in range(size)] if isinstance(item, Mapping) else []
        properties = node.get("properties", {})
        required = node.get("required", [])
        return {name: least(child, f"{where}.{name}" if where else name) for name, child in properties.items() if name in required}

    shortest = least(schema, "")
    return json.dumps(shortest, separators=(",", ":"), ensure_ascii=False), long


def least_tokens(answer: str) -> int:
    return math.ceil(len(answer) / CHARACTERS_PER_TOKEN)
