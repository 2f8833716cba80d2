"""How likely each allowed value of a structured answer was, read from the judge's token
log-probabilities, or counted over repeated samples where a provider gives none.

A server that decodes tokens (OpenAI's chat completions, vLLM, llama.cpp) returns, for each
token of the answer, its log-probability and the top candidates it was chosen from. For each
enum, boolean and small-number field of the answer schema, the token where the field's value
starts is found, and every candidate there is matched to the allowed value it begins (a
candidate the schema does not allow is dropped): the candidates are the model's distribution
before the grammar forced the answer into the schema, so the mass left is renormalised over
what the schema allows. A number field (a 1-5 rating) also gets its expected value. Each
element of a list of verdicts gets its own figures (`verdicts[3].verdict`).

When a candidate begins several allowed values (`n` of "no" and "none"), the tokens after it
would tell them apart, but only the chosen path's are known: its mass goes to the value the
answer wrote when that is one of them, else it is shared equally.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from .bounds import schema_of
from .protocol import FieldProbabilities

#: How many candidates per token are asked for (OpenAI allows up to 20; a few hold nearly all the mass).
TOP_LOGPROBS = 5
#: The parameters that ask a server for them.
LOGPROB_PARAMETERS: dict[str, Any] = {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
#: A whole-number field with a range this wide or narrower gets a distribution over its values.
MAX_NUMBER_RANGE = 20

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"[ \t\n\r]*")

# The fields of each answer model that get figures (path pattern -> allowed values), worked out once.
_weighed: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def token_logprobs(choice: Any) -> list[dict[str, Any]] | None:
    """The tokens of a chat completion's choice with their log-probabilities, as plain dicts
    (`token`, `logprob`, `top_logprobs`), whether the choice was read from a stream or whole."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    return [entry if isinstance(entry, dict) else entry.model_dump() for entry in content]


def from_logprobs(model: type[BaseModel], text: str, tokens: Sequence[dict[str, Any]] | None) -> tuple[FieldProbabilities, ...] | None:
    """The figures of each weighed field of `model` in the answer `text`, from the `tokens`
    that wrote it (None when there are none, or they do not spell the answer)."""
    if not tokens:
        return None
    if not weighs(model):  # no field to weigh (claims, a reason): nothing read
        return None
    schema = _schema(model)
    written = "".join(str(token.get("token", "")) for token in tokens)
    offset = written.find(text)
    if offset < 0:
        return None
    starts: list[int] = []
    position = 0
    for token in tokens:
        starts.append(position)
        position += len(str(token.get("token", "")))
    figures: list[FieldProbabilities] = []
    begins_at = min((found for found in (text.find("{"), text.find("[")) if found >= 0), default=-1)  # past a code fence
    if begins_at < 0:
        return None
    try:
        scalars = list(_scalars(text, begins_at, schema, schema.get("$defs", {}), ""))
    except (ValueError, IndexError):
        return None
    for path, chosen, start, allowed in scalars:
        begins = offset + start + (1 if isinstance(chosen, str) else 0)
        index = bisect.bisect_right(starts, begins) - 1
        if index < 0:
            continue
        token = tokens[index]
        prefix = written[starts[index] : begins]
        weights = _weights(token, prefix, chosen, allowed)
        if weights is not None:
            figures.append(_figures(path, chosen, allowed, weights, "logprobs"))
    return tuple(figures) or None


def weighs(model: type[BaseModel]) -> bool:
    """Whether an answer of `model` has a field with more than one allowed value to weigh."""
    return bool(_schema(model).get("x-weighs"))


def from_samples(model: type[BaseModel], answers: Sequence[Any]) -> tuple[FieldProbabilities, ...] | None:
    """The figures of each weighed field as the share of `answers` (repeated samples of one
    question, validated) that gave each value; a field is weighed where the first answer has it."""
    schema = _schema(model)
    if not schema or not answers:
        return None
    found: list[dict[str, tuple[Any, list[Any]]]] = []
    for answer in answers:
        text = answer.model_dump_json() if isinstance(answer, BaseModel) else json.dumps(answer)
        found.append({path: (chosen, allowed) for path, chosen, _, allowed in _scalars(text, 0, schema, schema.get("$defs", {}), "")})
    figures = []
    for path, (chosen, allowed) in found[0].items():
        counts = Counter(json.dumps(each[path][0]) for each in found if path in each)
        weights = {json.dumps(value): float(counts.get(json.dumps(value), 0)) for value in allowed}
        figures.append(_figures(path, chosen, allowed, weights, "samples"))
    return tuple(figures) or None


def _figures(path: str, chosen: Any, allowed: list[Any], weights: dict[str, float], source: Any) -> FieldProbabilities:
    total = sum(weights.values())
    probabilities = [weights.get(json.dumps(value), 0.0) / total for value in allowed]
    numbers = all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in allowed)
    expected = sum(value * probability for value, probability in zip(allowed, probabilities)) if numbers else None
    return FieldProbabilities(field=path, chosen=chosen, values=list(allowed), probabilities=probabilities, expected=expected, source=source)


def _weights(token: dict[str, Any], prefix: str, chosen: Any, allowed: list[Any]) -> dict[str, float] | None:
    """Each allowed value's share of the candidates at `token` (keyed by its JSON), the part of
    each candidate before the value (`prefix`: a quote, a space) taken off first."""
    candidates: dict[str, float] = {}
    for candidate in token.get("top_logprobs") or ():
        candidates.setdefault(str(candidate.get("token", "")), float(candidate.get("logprob", -math.inf)))
    candidates.setdefault(str(token.get("token", "")), float(token.get("logprob", 0.0)))
    written = [(json.dumps(value), _rendered(value)) for value in allowed]
    chosen_key = json.dumps(chosen)
    weights: dict[str, float] = {}
    for text, logprob in candidates.items():
        if not text.startswith(prefix) or len(text) == len(prefix) or logprob == -math.inf:
            continue
        piece = text[len(prefix) :]
        begun = [key for key, rendered in written if rendered.startswith(piece) or _ends_with_value(piece, rendered)]
        if not begun:
            continue
        share = math.exp(logprob)
        if chosen_key in begun and len(begun) > 1:
            begun = [chosen_key]
        for key in begun:
            weights[key] = weights.get(key, 0.0) + share / len(begun)
    return weights if sum(weights.values()) > 0 else None


def _rendered(value: Any) -> str:
    """How a value is written in JSON after its opening quote (a string's closing quote included)."""
    text = json.dumps(value, ensure_ascii=False)
    return text[1:] if isinstance(value, str) else text


def _ends_with_value(piece: str, rendered: str) -> bool:
    """`piece` writes the whole value and then what follows it (`true,`, `4}`, `yes"}`)."""
    if not piece.startswith(rendered):
        return False
    after = piece[len(rendered) : len(rendered) + 1]
    return rendered.endswith('"') or not (after.isalnum() or after in ".eE")


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, marked `x-weighs` when a field of it gets figures."""
    schema = _weighed.get(model)
    if schema is None:
        shared = schema_of(model)  # not copied: each item's bounded answer model is new, and this is read only
        schema = _weighed[model] = {**shared, "x-weighs": _weighs(shared, shared.get("$defs", {}), 0)}
    return schema


def _weighs(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> bool:
    """Whether a value of `schema`, or one inside it, has more than one allowed value to weigh."""
    node = _node(schema, defs)
    allowed = allowed_values(node)
    if (allowed is not None and len(allowed) > 1) or depth > 20:
        return allowed is not None and len(allowed) > 1
    children = [*node.get("properties", {}).values(), *([node["items"]] if isinstance(node.get("items"), dict) else [])]
    return any(_weighs(child, defs, depth + 1) for child in children)


def _node(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value, its `$ref` followed and an optional's `null` branch left out."""
    for _ in range(20):
        if "$ref" in schema:
            schema = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
            continue
        branches = [branch for branch in schema.get("anyOf", ()) if branch.get("type") != "null"]
        if len(branches) == 1:
            schema = branches[0]
            continue
        return schema
    return schema


def allowed_values(schema: dict[str, Any]) -> list[Any] | None:
    """The values a field may take, when they are few: an enum, a constant, a boolean, or a
    whole number within a narrow range."""
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    kind = schema.get("type")
    if kind == "boolean":
        return [True, False]
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and "exclusiveMinimum" in schema:
            low = math.floor(schema["exclusiveMinimum"]) + 1
        if high is None and "exclusiveMaximum" in schema:
            high = math.ceil(schema["exclusiveMaximum"]) - 1
        if isinstance(low, (int, float)) and isinstance(high, (int, float)) and 0 <= high - low <= MAX_NUMBER_RANGE:
            return list(range(math.ceil(low), math.floor(high) + 1))
    return None


def _scalars(text: str, at: int, schema: dict[str, Any], defs: dict[str, Any], path: str) -> Iterator[tuple[str, Any, int, list[Any]]]:
    """(path, value, where it starts, allowed values) of each weighed field of the JSON value
    at `at` in `text`; raises ValueError on text that is not JSON."""
    node = _node(schema, defs)
    for path_, value, start, allowed, _ in _walk(text, at, node, defs, path):
        if allowed is not None:
            yield path_, value, start, allowed


def _walk(text: str, at: int, node: dict[str, Any], defs: dict[str, Any], path: str) -> Iterator[tuple[str, Any, int, list[Any] | None, int]]:
    """Each value at and under `at`: (path, value, start, allowed, end); containers are
    yielded after their contents, with value None."""
    first = text[at]
    if first == "{":
        properties = node.get("properties", {})
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        if text[at] == "}":
            yield path, None, at, None, at + 1
            return
        while True:
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
            if text[at] != ":":
                raise ValueError("expected ':'")
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            child = _node(properties.get(key, {}), defs)
            end = at
            for found in _walk(text, at, child, defs, f"{path}.{key}" if path else key):
                end = found[4]
                yield found
            at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text[at] == "}":
                yield path, None, at, None, at + 1
                return
            if text[at] != ",":
                raise ValueError("expected ','")
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if first == "[":
        items = _node(node.get("items", {}), defs)
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        index = 0
        if text[at] == "]":
            yield path, None, at, None, at + 1
            return
        while True:
            end = at
            for found in _walk(text, at, items, defs, f"{path}[{index}]"):
                end = found[4]
                yield found
            at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text[at] == "]":
                yield path, None, at, None, at + 1
                return
            if text[at] != ",":
                raise ValueError("expected ','")
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            index += 1
    if first == '"':
        value, end = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
    elif text.startswith("true", at):
        value, end = True, at + 4
    elif text.startswith("false", at):
        value, end = False, at + 5
    elif text.startswith("null", at):
        value, end = None, at + 4
    else:
        number = _NUMBER.match(text, at)
        if number is None:
            raise ValueError(f"unexpected {first!r}")
        written = number.group()
        value, end = (float(written) if any(mark in written for mark in ".eE") else int(written)), number.end()
    allowed = allowed_values(node) if value is not None else None
    yield path, value, at, allowed if allowed is not None and len(allowed) > 1 else None, end  # one allowed value: nothing to weigh
