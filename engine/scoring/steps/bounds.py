"""`bounds:` of a judge step: how long each list and string of the answer may be, worked out
per request from the item and earlier answers (data, not code per scorer):

    bounds:
      claims: {max_items: "sentences(output) | length + 2"}     # no more claims than sentences, and a little
      claims[]: {max_length: "sentences(output) | map('length') | max * 2"}
      verdicts: {items: "preprocess.claims | length"}            # exactly one verdict per claim
      verdicts[].statement: {enum: preprocess.claims}             # a claim, copied: one of them

A field is named as `scorers show` names it (`verdicts[].reason`); each keyword takes a number
or an expression. Both the JSON schema sent to the judge and the validation of its answer
carry the values (see `judge/bounds.py`), and they set the call's `max_tokens`. Paths,
keywords and names are checked at load, each at its line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ConfigError
from ...judge.bounds import LIST_KEYWORDS, NUMBER_KEYWORDS, AnswerBounds, FieldBound, Keyword, bounded, schema_of
from ..plan import Evaluable
from .base import StepBuilder, StepCall, Written


class FieldBounds(BaseModel):
    """The bounds of one field of a judge's answer; each is a number or an expression over
    the run's fields, the options and earlier steps' answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: int | str | None = Field(default=None, description="A list has exactly this many items (e.g. one verdict per claim)")
    min_items: int | str | None = Field(default=None, description="A list has at least this many items")
    max_items: int | str | None = Field(default=None, description="A list has at most this many items")
    max_length: int | str | None = Field(default=None, description="A string has at most this many characters")
    enum: str | None = Field(default=None, description="An expression giving the texts a string must be one of (e.g. preprocess.claims)")
    minimum: float | str | None = Field(default=None, description="A number is at least this (e.g. options.min_score)")
    maximum: float | str | None = Field(default=None, description="A number is at most this (e.g. options.max_score)")


def bound_expressions(written: Mapping[str, FieldBounds]) -> tuple[Written, ...]:
    """The expressions of a step's `bounds:` as written, for its kind's `sources` (numbers
    are not expressions)."""
    return tuple(
        Written(value, ("bounds", path, keyword))
        for path, bounds in written.items()
        if bounds is not None
        for keyword, value in bounds.model_dump(exclude_none=True).items()
        if isinstance(value, str)
    )


@dataclass(frozen=True)
class BoundPlan:
    """One bound, compiled: a number, or an expression evaluated per request."""

    path: str
    keyword: Keyword
    value: int | float | Evaluable


def compile_bounds(written: Mapping[str, FieldBounds], answer_model: type[BaseModel] | None, build: StepBuilder) -> tuple[BoundPlan, ...]:
    """The step's bounds, each checked against the answer's fields and placed at its line
    when wrong (an unknown field, a keyword for another type, a name that does not exist)."""
    if not written:
        return ()
    if answer_model is None:
        build.problem(f"{build.label}.bounds: bounds need an answer schema (`schema:`) whose fields they bound", "bounds")
        return ()
    schema = schema_of(answer_model)  # the one a run's bounded answers start from
    fields = dict(_fields(schema, schema.get("$defs", {}), ""))
    plans: list[BoundPlan] = []
    for path, bounds in written.items():
        kind = fields.get(path)
        if kind is None:
            known = ", ".join(name for name, found in fields.items() if found in ("array", "string", "integer", "number")) or "none"
            build.problem(f"{build.label}.bounds: the answer has no list, string or number {path!r} (it has: {known})", "bounds", path)
            continue
        for keyword in get_args(Keyword):
            value = getattr(bounds, keyword)
            if value is None:
                continue
            wanted = "array" if keyword in LIST_KEYWORDS else ("number" if keyword in NUMBER_KEYWORDS else "string")
            if kind != wanted and not (wanted == "number" and kind == "integer"):
                build.problem(f"{build.label}.bounds.{path}.{keyword}: {path} is {_a(kind)}; {keyword} bounds {_a(wanted)}", "bounds", path, keyword)
                continue
            if isinstance(value, str):
                plans.append(BoundPlan(path, keyword, build.expression(value, "bounds", path, keyword)[0]))
            elif keyword in NUMBER_KEYWORDS:
                plans.append(BoundPlan(path, keyword, value))
            elif isinstance(value, bool) or value < 0 or not float(value).is_integer():
                build.problem(f"{build.label}.bounds.{path}.{keyword}: must be a count of 0 or more, or an expression (got {value!r})", "bounds", path, keyword)
            else:
                plans.append(BoundPlan(path, keyword, int(value)))
    return tuple(plans)


def _a(kind: str) -> str:
    return {"array": "a list", "string": "a string", "enum": "a choice among fixed values", "object": "an object", "integer": "an integer", "number": "a number"}.get(kind, f"a {kind}")


def _fields(node: Mapping[str, Any], definitions: Mapping[str, Any], path: str) -> list[tuple[str, str]]:
    """(path, JSON type) of every field below `node`, as bounds name them."""
    if "$ref" in node:
        return _fields(definitions[str(node["$ref"]).rsplit("/", 1)[-1]], definitions, path)
    for option in node.get("anyOf", []):
        if option.get("type") != "null":
            return _fields(option, definitions, path)
    kind = str(node.get("type"))
    found = [(path, "enum" if "enum" in node else kind)] if path else []
    if kind == "array" and isinstance(node.get("items"), Mapping):
        found += _fields(node["items"], definitions, f"{path}[]")
    for name, child in (node.get("properties") or {}).items():
        found += _fields(child, definitions, f"{path}.{name}" if path else name)
    return found


def bounded_answer(model: type[BaseModel], plans: tuple[BoundPlan, ...], scope: Mapping[str, Any], call: StepCall, step: str) -> type[BaseModel]:
    """`model` with the bounds of this request, evaluated in `scope`."""
    if not plans:
        return model
    evaluated = (_evaluated(plan, scope, call, step) for plan in plans)
    return bounded(model, AnswerBounds(tuple(bound for bound in evaluated if bound is not None)))


def _evaluated(plan: BoundPlan, scope: Mapping[str, Any], call: StepCall, step: str) -> FieldBound | None:
    """The bound for this request; None for an `enum` of no texts (no string is asked for
    then, as when there is no tool call to name: the list's count says so)."""
    if isinstance(plan.value, (int, float)):
        return FieldBound(plan.path, plan.keyword, plan.value)
    value = call.evaluate(plan.value, scope)
    where = f"{call.scorer_id}.{step}.bounds.{plan.path}.{plan.keyword}"
    if plan.keyword == "enum":
        if not isinstance(value, (list, tuple)) or not all(isinstance(text, str) for text in value):
            raise ConfigError(f"{where}: gave {value!r}, not a list of texts")
        return FieldBound(plan.path, plan.keyword, tuple(value)) if value else None
    if plan.keyword in NUMBER_KEYWORDS:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{where}: gave {value!r}, not a number")
        return FieldBound(plan.path, plan.keyword, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: gave {value!r}, not a count of 0 or more")
    if plan.keyword == "items" and not float(value).is_integer():
        raise ConfigError(f"{where}: gave {value!r}, not a whole number of items")
    # A bound worked out as a fraction is loosened to the next whole count, never tightened.
    count = math.floor(value) if plan.keyword == "min_items" else math.ceil(value)
    return FieldBound(plan.path, plan.keyword, count)
