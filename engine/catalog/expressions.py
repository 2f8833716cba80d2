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

from jinja2 import TemplateSyntaxError, Undefined, nodes
from jinja2.exceptions import SecurityError, TemplateAssertionError, TemplateRuntimeError, UndefinedError

from ..errors import ConfigError, DivisionByZero, ExpressionError, ValueRefused
from .lints import zero_division_hint
from .wording import lone_equals
from .spec import ReducerSpec
from .templates import names_read, parse_expression, sandbox

_environment = sandbox()


@functools.lru_cache(maxsize=4096)
def _checked(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """An expression parsed and checked as `compile_expression` would (the same parser, so
    its syntax errors read the same), without generating its code: the variables it needs,
    and every name it reads (also those that are functions too, see `names_read`). Scorers
    repeat expressions ("not (output | trim)"), so each source is checked once per process."""
    expression = parse_expression(source)
    _refuse_unknown_filters_and_tests(expression, soft=False)
    reads = names_read(nodes.Template([nodes.Output([expression])]))
    # What it needs from the variables, as Jinja's `meta.find_undeclared_variables` says
    # without generating code: an expression declares nothing (no assignment, no loop), so
    # every name it loads, but the environment's globals and `self` (the template itself).
    return frozenset(name for name in reads if name not in _environment.globals and name != "self"), reads


def _refuse_unknown_filters_and_tests(node: nodes.Node, soft: bool) -> None:
    """The one error Jinja's code generator adds to its parser's for an expression: a filter
    or test it does not know, unless inside a conditional expression (there Jinja waits for
    the branch to run; the catalog's name check reports it anyway)."""
    if isinstance(node, (nodes.Filter, nodes.Test)) and not soft and node.name is not None:
        known = _environment.filters if isinstance(node, nodes.Filter) else _environment.tests
        if node.name not in known:
            kind = "filter" if isinstance(node, nodes.Filter) else "test"
            raise TemplateAssertionError(f"No {kind} named {node.name!r}.", node.lineno, None, None)
    for child in node.iter_child_nodes():
        _refuse_unknown_filters_and_tests(child, soft or isinstance(node, nodes.CondExpr))


@functools.lru_cache(maxsize=4096)
def _compiled(source: str) -> Any:
    """The expression's code, generated the first time it is evaluated: checking a catalog
    (`scorers check`, `scorers list`) needs only `_checked`."""
    return _environment.compile_expression(source, undefined_to_none=False)


class Expression:
    """A compiled sandboxed expression; `where` names its origin for error messages."""

    def __init__(self, source: str, where: str = "expression") -> None:
        self.source = source
        self.where = where
        #: FILE:LINE:COLUMN where the expression is written, once the catalog knows it: an
        #: error at run time names it.
        self.place: str | None = None
        try:
            self.names, self.reads = _checked(source)
        except TemplateSyntaxError as exc:
            meant = "; `=` sets a value: to compare, write `==`" if lone_equals(source) is not None else ""
            raise ConfigError(f"{where}: invalid expression {source!r}: {exc.message}{meant}") from None

    def __call__(self, variables: Mapping[str, Any]) -> Any:
        try:
            value = _compiled(self.source)(**variables)
        except ValueRefused:
            raise
        except ZeroDivisionError:
            raise DivisionByZero(f"{self._origin()}: {self.source!r} failed: division by zero{zero_division_hint(self.source)}") from None
        except (UndefinedError, SecurityError, TemplateRuntimeError, TypeError, ValueError, AttributeError) as exc:
            raise ExpressionError(f"{self._origin()}: {self.source!r} failed: {exc}") from None
        if isinstance(value, Undefined):
            # e.g. a key the data does not have: an error here, never a silent value in a result.
            raise ExpressionError(f"{self._origin()}: {self.source!r} failed: {value._undefined_message}")
        return value

    def _origin(self) -> str:
        return f"{self.place}: {self.where}" if self.place else self.where

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
