"""A scripted judge that loops inside its answer, as a small model decoding under a JSON
grammar does: what the answer schema's bounds (`maxLength`) stop, and what runs on to the
token limit without them.

    server.fallback = looping()                   # every schema no script names
    server.on("Claims", looping(" and the sky"))   # one schema
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .scripts import Reply, Request

#: Characters per token, for a scripted judge that counts its answer against max_tokens.
CHARS_PER_TOKEN = 4


def looping(answer: Any = None, phrase: str = " and so on") -> Callable[[Request], Reply]:
    """A judge that loops as a small model decoding under a JSON grammar does: every free-text
    string of its answer keeps repeating `phrase`. A string with a `maxLength` is closed
    there, as the grammar forces; one without runs on until the request's `max_tokens` (at
    CHARS_PER_TOKEN characters each) and the answer is cut off (`finish_reason: "length"`),
    as a real server answers.

    `answer` (a dict, or a function of the request giving one) fixes the values a rule needs
    (a label, as many verdicts as claims); what it leaves out is built from the schema the
    request asks for: looping text, the first enum value, the lowest number allowed, false,
    one item per list."""

    def reply(request: Request) -> Reply:
        schema = request.answer_schema or {}
        budget = (request.max_tokens or 4096) * CHARS_PER_TOKEN
        given = answer(request) if callable(answer) else answer
        value = _looped(schema, schema, phrase, budget, given)
        text = json.dumps(value)
        if len(text) > budget:
            return Reply.cut_off(text[:budget], usage=(50, request.max_tokens or 4096))
        return Reply(answer=value, usage=(50, len(text) // CHARS_PER_TOKEN + 1))

    return reply


def _looped(schema: dict[str, Any], root: dict[str, Any], phrase: str, budget: int, given: Any = None) -> Any:
    """`given`, or a value `schema` allows with its free-text strings looping on `phrase`
    (also inside a `given` object or list, where `given` leaves them out)."""
    if "$ref" in schema:
        target: Any = root
        for part in str(schema["$ref"]).removeprefix("#/").split("/"):
            target = target[part]
        return _looped(target, root, phrase, budget, given)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return _looped(next(option for option in schema[union] if option.get("type") != "null"), root, phrase, budget, given)
    kind = schema.get("type")
    if kind == "object":
        known = given if isinstance(given, dict) else {}
        properties = schema.get("properties") or {}
        return {**known, **{name: _looped(child, root, phrase, budget, known.get(name)) for name, child in properties.items()}}
    if kind == "array":
        items = given if isinstance(given, list) else [None] * max(1, int(schema.get("minItems", 1)))
        return [_looped(schema.get("items") or {}, root, phrase, budget, item) for item in items]
    if given is not None:
        return given
    if "enum" in schema:
        return schema["enum"][0]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + (1 if "exclusiveMinimum" in schema else 0) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    length = int(schema.get("maxLength", budget + 1))
    return ("A" + phrase * (length // max(len(phrase), 1) + 1))[:length]
