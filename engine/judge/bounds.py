"""Bounds of one answer, worked out for one request: how many items a list must or may have,
how long a string may be, which texts a string must be one of (a scorer's YAML declares them
as expressions over the item and earlier answers; the step evaluates them per request).

An answer model with bounds (`bounded(model, bounds)`) is the one thing both sides read: its
JSON schema, sent to the judge, carries them as `minItems` / `maxItems` / `maxLength` /
`enum` (a grammar-constrained decoder such as llama.cpp's, vLLM's or Ollama's then cannot
write a wrong count or ramble past them), and its validation refuses an answer outside them
(a judge that does not decode under the schema is asked again with the reason). The longest
answer the schema allows gives the call's `max_tokens` (`answer_token_limit`).
"""

from __future__ import annotations

import functools
import json
import math
import re
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, model_validator

Keyword = Literal["items", "min_items", "max_items", "max_length", "enum", "minimum", "maximum"]
#: What each keyword bounds: a list's items, a string, or a number.
LIST_KEYWORDS: frozenset[str] = frozenset({"items", "min_items", "max_items"})
STRING_KEYWORDS: frozenset[str] = frozenset({"max_length", "enum"})
NUMBER_KEYWORDS: frozenset[str] = frozenset({"minimum", "maximum"})

#: Characters per token of the longest answer a schema allows. English text takes about 4
#: characters a token, but a token is never less than one character, and a small model
#: caught in a loop inside a string writes one-character tokens (".", "!", a space): at one
#: a character, an answer its schema allows is never cut off. A model that rambles is ended
#: by the bounds themselves, which a server decoding under the schema enforces.
CHARS_PER_TOKEN = 1.0
#: Tokens of room per JSON value for the whitespace a grammar lets a model put around it
#: (newlines and an indent), and for the answer as a whole.
TOKENS_PER_VALUE = 8
TOKENS_PER_ANSWER = 16


@dataclass(frozen=True)
class FieldBound:
    """One bound: `path` names a field as `scorers show` does (`verdicts`, `claims[]`,
    `verdicts[].statement`), `keyword` what is bounded, `value` a count, a length, or the
    texts allowed."""

    path: str
    keyword: Keyword
    value: int | float | tuple[str, ...]

    def described(self) -> str:
        if self.keyword == "enum":
            assert isinstance(self.value, tuple)
            return f"{self.path}: one of {len(self.value)} given texts"
        if self.keyword in NUMBER_KEYWORDS:
            return f"{self.path}: {'at least' if self.keyword == 'minimum' else 'at most'} {self.value:g}"
        words = {"items": "exactly {}", "min_items": "at least {}", "max_items": "at most {}", "max_length": "at most {}"}
        unit = "characters" if self.keyword == "max_length" else "items"
        return f"{self.path}: {words[self.keyword].format(self.value)} {unit if self.value != 1 else unit[:-1]}"


@dataclass(frozen=True)
class AnswerBounds:
    """The bounds of one request's answer, each field at most once per keyword."""

    fields: tuple[FieldBound, ...]

    def __bool__(self) -> bool:
        return bool(self.fields)

    def described(self) -> list[str]:
        return [bound.described() for bound in self.fields]

    def applied(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of the JSON schema `schema` with the bounds written into it. A field
        defined once under `$defs` is copied in place when bounded, so other uses of the
        definition keep theirs; a bound never loosens what the schema already says."""
        result: dict[str, Any] = copied(dict(schema))
        definitions = result.get("$defs", {})
        for bound in self.fields:
            node = _node(result, definitions, _steps(bound.path))
            _tighten(node, bound)
        if definitions:  # a definition copied in place of its only use is sent once, not twice
            used = _references(result)
            result["$defs"] = {name: schema for name, schema in definitions.items() if name in used}
            if not result["$defs"]:
                del result["$defs"]
        return result

    def problems(self, answer: BaseModel) -> list[str]:
        """What in `answer` is outside the bounds, in words for the judge and the user."""
        found: list[str] = []
        for bound in self.fields:
            for where, value in _values(answer, _steps(bound.path), ""):
                problem = _problem(bound, value)
                if problem is not None:
                    found.append(f"{where or 'the answer'}: {problem}")
        return found


def _references(schema: dict[str, Any]) -> set[str]:
    """The definitions a schema still reaches through `$ref`, from its root."""
    definitions = schema.get("$defs", {})
    found: set[str] = set()
    pending = [{key: value for key, value in schema.items() if key != "$defs"}]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str):
                name = reference.rsplit("/", 1)[-1]
                if name not in found and name in definitions:
                    found.add(name)
                    pending.append(definitions[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


def _steps(path: str) -> list[str]:
    """`verdicts[].statement` as ["verdicts", "[]", "statement"]."""
    return [part for part in re.split(r"(\[\])|\.", path) if part]


def _resolved(node: dict[str, Any], definitions: Mapping[str, Any]) -> dict[str, Any]:
    """The schema a node stands for, copied in place of a `$ref`, past a nullable `anyOf`."""
    if "$ref" in node:
        target = copied(definitions[str(node.pop("$ref")).rsplit("/", 1)[-1]])
        node.update(target)
    for option in node.get("anyOf", []):
        if option.get("type") != "null":
            return _resolved(option, definitions)
    return node


def _node(schema: dict[str, Any], definitions: Mapping[str, Any], steps: list[str]) -> dict[str, Any]:
    node = _resolved(schema, definitions)
    for step in steps:
        node = _resolved(node["items"] if step == "[]" else node["properties"][step], definitions)
    return node


def _tighten(node: dict[str, Any], bound: FieldBound) -> None:
    value = bound.value
    if bound.keyword == "enum":
        assert isinstance(value, tuple)
        node["enum"] = list(dict.fromkeys(value))
        node.pop("maxLength", None)
        return
    assert isinstance(value, (int, float))
    if bound.keyword == "minimum":
        node["minimum"] = max(value, node.get("minimum", value))
    if bound.keyword == "maximum":
        node["maximum"] = min(value, node.get("maximum", value))
    if bound.keyword in ("items", "max_items"):
        node["maxItems"] = min(value, node.get("maxItems", value))
    if bound.keyword in ("items", "min_items"):
        node["minItems"] = max(value, node.get("minItems", value))
    if bound.keyword == "max_length":
        node["maxLength"] = min(value, node.get("maxLength", value))


def _values(value: Any, steps: list[str], where: str) -> Iterator[tuple[str, Any]]:
    """Every value at `steps` inside an answer, with where it is (`verdicts[2].statement`)."""
    if not steps:
        yield where, value
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        for index, item in enumerate(value if isinstance(value, list) else []):
            yield from _values(item, rest, f"{where}[{index}]")
        return
    child = getattr(value, step, None) if isinstance(value, BaseModel) else (value.get(step) if isinstance(value, Mapping) else None)
    if child is not None:
        yield from _values(child, rest, f"{where}.{step}" if where else step)


def _comparable(text: str) -> str:
    return " ".join(text.split()).casefold()


def _problem(bound: FieldBound, value: Any) -> str | None:
    limit = bound.value
    if bound.keyword == "enum":
        assert isinstance(limit, tuple)
        if isinstance(value, str) and _comparable(value) not in {_comparable(text) for text in limit}:
            shown = ", ".join(json.dumps(text, ensure_ascii=False) for text in limit[:5]) + (", ..." if len(limit) > 5 else "")
            return f"{json.dumps(value, ensure_ascii=False)[:80]} is not one of the texts given; copy one exactly: {shown}"
        return None
    assert isinstance(limit, (int, float))
    if bound.keyword in NUMBER_KEYWORDS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if (bound.keyword == "minimum" and value < limit) or (bound.keyword == "maximum" and value > limit):
            return f"{value:g} is {'below' if bound.keyword == 'minimum' else 'above'} the {limit:g} allowed"
        return None
    if bound.keyword == "max_length":
        if isinstance(value, str) and len(value) > limit:
            return f"{len(value)} characters, more than the {limit} allowed"
        return None
    count = len(value) if isinstance(value, list) else None
    if count is None:
        return None
    if bound.keyword == "items" and count != limit:
        return f"{count} items where exactly {limit} are asked"
    if bound.keyword == "min_items" and count < limit:
        return f"{count} items where at least {limit} are asked"
    if bound.keyword == "max_items" and count > limit:
        return f"{count} items, more than the {limit} allowed"
    return None


def copied(schema: Any) -> Any:
    """A copy of a JSON schema (dicts, lists and scalars) whose dicts and lists can be changed:
    `copy.deepcopy` took a fifth of the CPU of bounding an answer model, each item's, in a
    profile of a batch run, for a tree that holds nothing else."""
    if isinstance(schema, dict):
        return {key: copied(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [copied(value) for value in schema]
    return schema


# Each model's own JSON schema, made once.
_schemas: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema (not to be changed: every reader shares it). A bounded model's
    is the one it was made with, not a copy of it: each item's answer model is a new bounded
    one, read by the cache key, the token limit and the probabilities of its answer."""
    schema = model.__dict__.get("bounded_schema")
    if schema is not None:
        return schema  # type: ignore[no-any-return]
    schema = _schemas.get(model)
    if schema is None:
        schema = _schemas[model] = model.model_json_schema()
    return schema


@functools.lru_cache(maxsize=512)
def bounded(model: type[BaseModel], bounds: AnswerBounds) -> type[BaseModel]:
    """`model` whose JSON schema carries `bounds` and whose validation refuses an answer
    outside them (after the model's own checks and rules); made once per model and bounds."""
    if not bounds:
        return model
    schema = bounds.applied(schema_of(model))

    class Bounded(model):  # type: ignore[valid-type,misc]
        bounded_from: ClassVar[type[BaseModel]] = model
        answer_bounds: ClassVar[AnswerBounds] = bounds
        bounded_schema: ClassVar[dict[str, Any]] = schema

        @model_validator(mode="after")
        def _within_bounds(self) -> Any:
            problems = bounds.problems(self)
            if problems:
                raise ValueError("; ".join(problems))
            return self

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            # What Instructor, a response cache and the Batch API read: the schema with the bounds.
            return copied(schema) if not args and not kwargs else bounds.applied(model.model_json_schema(*args, **kwargs))

    Bounded.__name__ = Bounded.__qualname__ = model.__name__  # the request names the schema after the class
    Bounded.__doc__ = model.__doc__
    return Bounded


def unbounded(model: type[BaseModel]) -> type[BaseModel]:
    """The answer model a bounded one was made from (itself when it has no bounds)."""
    found: type[BaseModel] = getattr(model, "bounded_from", model)
    return found


def bounds_of(model: type[BaseModel] | None) -> AnswerBounds | None:
    found = getattr(model, "answer_bounds", None)
    return found if isinstance(found, AnswerBounds) else None


_token_limits: weakref.WeakKeyDictionary[type[BaseModel], int | None] = weakref.WeakKeyDictionary()


def answer_token_limit(model: type[BaseModel]) -> int | None:
    """The most tokens an answer valid under `model`'s JSON schema can take (None when the
    schema leaves a string or a list unbounded): the `max_tokens` that answer needs."""
    if model in _token_limits:
        return _token_limits[model]
    schema = schema_of(model)
    longest = _longest(schema, schema.get("$defs", {}))
    limit = None if longest is None else math.ceil(longest[0] / CHARS_PER_TOKEN) + TOKENS_PER_VALUE * longest[1] + TOKENS_PER_ANSWER
    _token_limits[model] = limit
    return limit


def longest_answer_characters(model: type[BaseModel]) -> int | None:
    """The characters of the longest compact JSON answer `model`'s schema allows (None when
    a string or a list is left unbounded)."""
    schema = schema_of(model)
    longest = _longest(schema, schema.get("$defs", {}))
    return None if longest is None else longest[0]


def _longest(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> tuple[int, int] | None:
    """(characters, values) of the longest compact JSON `node` allows; None if unbounded."""
    if "$ref" in node:
        return _longest(definitions[str(node["$ref"]).rsplit("/", 1)[-1]], definitions)
    if "anyOf" in node:
        options = [_longest(option, definitions) for option in node["anyOf"]]
        return None if any(option is None for option in options) else max(options)  # type: ignore[type-var]
    if "enum" in node:
        return max(len(json.dumps(value)) for value in node["enum"]), 1
    kind = node.get("type")
    if kind == "object":
        chars, values = 2, 1
        for name, child in (node.get("properties") or {}).items():
            found = _longest(child, definitions)
            if found is None:
                return None
            chars, values = chars + len(json.dumps(name)) + 2 + found[0], values + found[1]
        return chars, values
    if kind == "array":
        item = _longest(node.get("items") or {}, definitions)
        if item is None or "maxItems" not in node:
            return None
        count = int(node["maxItems"])
        return 2 + count * (item[0] + 1), 1 + count * item[1]
    if kind == "string":
        # Quotes, and escapes (a quotation mark, a newline) of a tenth of the characters.
        return (int(node["maxLength"] * 1.1) + 2, 1) if "maxLength" in node else None
    if kind == "integer" and "minimum" in node and "maximum" in node:
        return max(len(str(int(node["minimum"]))), len(str(int(node["maximum"])))), 1
    if kind in ("integer", "number"):
        return 24, 1
    if kind in ("boolean", "null"):
        return 5, 1
    return None


def text_token_limit(characters: int) -> int:
    """The tokens a free text of `characters` characters may take."""
    return math.ceil(characters / CHARS_PER_TOKEN) + TOKENS_PER_ANSWER


def max_tokens_for(max_tokens: int | None, model: type[BaseModel] | None, thinks: bool) -> int | None:
    """The `max_tokens` a call is sent: the step's, or less when its answer's schema allows
    no longer an answer. A judge that thinks before answering (a reasoning model) keeps the
    step's: its thinking counts against the same limit."""
    if model is None or thinks:
        return max_tokens
    needed = answer_token_limit(model)
    if needed is None:
        return max_tokens
    return needed if max_tokens is None else min(max_tokens, needed)
