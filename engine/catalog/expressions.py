"""Safe expressions for conditions and score arithmetic, and the reducers a score step
uses to turn a list of judged items into a number.

Expressions are Jinja expressions compiled in the sandbox (never Python's `eval`): an
author can write `item.verdict == 'yes'` or `[alignment, coverage] | min * options.scale`
but cannot reach Python internals.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, Undefined, meta
from jinja2.exceptions import SecurityError, TemplateRuntimeError, UndefinedError

from ..errors import ConfigError, ExpressionError
from .spec import ReducerSpec
from .templates import names_read, sandbox

_environment = sandbox()


@functools.lru_cache(maxsize=4096)
def _compiled(source: str) -> tuple[Any, frozenset[str], frozenset[str]]:
    """An expression compiled, the variables it needs, and every name it reads (also those
    that are functions too, see `names_read`). Scorers repeat expressions ("not (output |
    trim)"), so each source is compiled once per process."""
    compiled = _environment.compile_expression(source, undefined_to_none=False)  # first: its syntax errors read best
    parsed = _environment.parse(f"{{{{ {source} }}}}")
    return compiled, frozenset(meta.find_undeclared_variables(parsed)), names_read(parsed)


class Expression:
    """A compiled sandboxed expression; `where` names its origin for error messages."""

    def __init__(self, source: str, where: str = "expression") -> None:
        self.source = source
        self.where = where
        try:
            self._compiled, self.names, self.reads = _compiled(source)
        except TemplateSyntaxError as exc:
            raise ConfigError(f"{where}: invalid expression {source!r}: {exc.message}") from None

    def __call__(self, variables: Mapping[str, Any]) -> Any:
        try:
            value = self._compiled(**variables)
        except (UndefinedError, SecurityError, TemplateRuntimeError, TypeError, ValueError, ZeroDivisionError, AttributeError) as exc:
            raise ExpressionError(f"{self.where}: {self.source!r} failed: {exc}") from None
        if isinstance(value, Undefined):
            # e.g. a key the data does not have: an error here, never a silent value in a result.
            raise ExpressionError(f"{self.where}: {self.source!r} failed: {value._undefined_message}")
        return value

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


class Reducer:
    """A reducer of a score step, compiled: the list at `items` turned into one number."""

    def __init__(self, spec: ReducerSpec, where: str) -> None:
        needs_where = spec.reduce in ("ratio", "count", "average_precision")
        needs_value = spec.reduce in ("mean", "sum", "min", "max")
        if needs_where and spec.where is None:
            raise ConfigError(f"{where}: reducer {spec.reduce!r} needs `where` (a condition per item)")
        if needs_value and spec.value is None:
            raise ConfigError(f"{where}: reducer {spec.reduce!r} needs `value` (a number per item)")
        self.spec = spec
        self.where = where
        self.items = Expression(spec.items, f"{where}.items")
        self.per_item = Expression((spec.where if needs_where else spec.value) or "", f"{where}.{'where' if needs_where else 'value'}")
        # `item` and `rank` are bound per item; what else the reducer reads comes from the run.
        self.names: frozenset[str] = self.items.names | (self.per_item.names - {"item", "rank"})
        self.reads = self.items.reads | (self.per_item.reads - {"item", "rank"})

    def __call__(self, variables: Mapping[str, Any]) -> float:
        items = self.items(variables)
        if items is None:
            items = []
        if not isinstance(items, Iterable) or isinstance(items, (str, bytes, Mapping)):
            raise ExpressionError(f"{self.where}.items: {self.spec.items!r} is not a list")
        items = list(items)
        if not items:
            return self.spec.empty
        values = [self.per_item({**variables, "item": item, "rank": rank}) for rank, item in enumerate(items, 1)]
        return _apply(self.spec.reduce, values, self.spec.empty)


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
