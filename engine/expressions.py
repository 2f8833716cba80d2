"""Safe expressions for conditions and score arithmetic, and the reducers a score step
uses to turn a list of judged items into a number.

Expressions are Jinja expressions compiled in the sandbox (never Python's `eval`): an
author can write `item.verdict == 'yes'` or `[alignment, coverage] | min * options.scale`
but cannot reach Python internals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from jinja2 import StrictUndefined, TemplateSyntaxError, meta
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field

from .errors import ConfigError


class ExpressionError(Exception):
    """An expression failed while being evaluated (a missing field, a wrong type)."""


#: Functions available to every expression and template, beside Jinja's own filters.
SAFE_GLOBALS: dict[str, Any] = {
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "len": len,
    "sum": sum,
    "float": float,
    "int": int,
}

_environment = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
_environment.globals.update(SAFE_GLOBALS)


class Expression:
    """A compiled sandboxed expression; `where` names its origin for error messages."""

    def __init__(self, source: str, where: str = "expression") -> None:
        self.source = source
        self.where = where
        try:
            self._compiled = _environment.compile_expression(source, undefined_to_none=False)
            self.names: frozenset[str] = frozenset(meta.find_undeclared_variables(_environment.parse(f"{{{{ {source} }}}}")))
        except TemplateSyntaxError as exc:
            raise ConfigError(f"{where}: invalid expression {source!r}: {exc.message}") from None

    def __call__(self, variables: Mapping[str, Any]) -> Any:
        try:
            return self._compiled(**variables)
        except (UndefinedError, SecurityError, TypeError, ValueError, ZeroDivisionError, AttributeError) as exc:
            raise ExpressionError(f"{self.where}: {self.source!r} failed: {exc}") from None

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


def plain(value: Any) -> Any:
    """Pydantic models to dicts, recursively, so expressions see plain data."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


class Reducer(BaseModel):
    """Turns the list found at `items` into one number.

    - `ratio`: share of items for which `where` holds.
    - `mean` / `sum` / `min` / `max`: of `value` computed per item.
    - `count`: number of items for which `where` holds.
    - `average_precision`: items are ranked; `where` marks the relevant ones; the mean of
      precision@k over the ranks k of relevant items (0 when none is relevant).

    `empty` is the number an empty list gives (a ratio of nothing is not defined otherwise).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    reduce: Literal["ratio", "mean", "sum", "min", "max", "count", "average_precision"]
    items: str = Field(description="Expression giving the list, e.g. analyze.verdicts")
    where: str | None = Field(default=None, description="Condition per item, sees `item`")
    value: str | None = Field(default=None, description="Number per item, sees `item`")
    empty: float = 0.0

    def compile(self, where: str) -> Callable[[Mapping[str, Any]], float]:
        needs_where = self.reduce in ("ratio", "count", "average_precision")
        needs_value = self.reduce in ("mean", "sum", "min", "max")
        if needs_where and self.where is None:
            raise ConfigError(f"{where}: reducer {self.reduce!r} needs `where` (a condition per item)")
        if needs_value and self.value is None:
            raise ConfigError(f"{where}: reducer {self.reduce!r} needs `value` (a number per item)")
        items_expr = Expression(self.items, f"{where}.items")
        per_item_source = (self.where if needs_where else self.value) or ""
        per_item = Expression(per_item_source, f"{where}.{'where' if needs_where else 'value'}")
        kind, empty = self.reduce, self.empty

        def reduce(variables: Mapping[str, Any]) -> float:
            items = items_expr(variables)
            if items is None:
                items = []
            if not isinstance(items, Iterable) or isinstance(items, (str, bytes, Mapping)):
                raise ExpressionError(f"{where}.items: {self.items!r} is not a list")
            items = list(items)
            if not items:
                return empty
            per_item_values = [per_item({**variables, "item": item, "rank": rank}) for rank, item in enumerate(items, 1)]
            return _apply(kind, per_item_values, empty)

        return reduce


def _apply(kind: str, values: list[Any], empty: float) -> float:
    if kind == "ratio":
        return sum(1 for value in values if value) / len(values)
    if kind == "count":
        return float(sum(1 for value in values if value))
    if kind == "average_precision":
        relevant_seen = 0
        precision_sum = 0.0
        for rank, value in enumerate(values, 1):
            if value:
                relevant_seen += 1
                precision_sum += relevant_seen / rank
        return precision_sum / relevant_seen if relevant_seen else empty
    numbers = [_number(value) for value in values]
    if kind == "sum":
        return float(sum(numbers))
    if kind == "mean":
        return sum(numbers) / len(numbers)
    if kind == "min":
        return min(numbers)
    return max(numbers)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ExpressionError(f"expected a number per item, got {value!r}")
    return float(value)
