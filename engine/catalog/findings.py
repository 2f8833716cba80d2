"""A finding of the load-time checks in an expression or template (a problem or a warning,
with where in the text it is), and how expressions are written back in messages."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from jinja2 import nodes

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """What is wrong in an expression or template: its message, the template line it is on
    (1 in a one-line expression), a pattern finding its column (group 1 when given), and
    whether it is a certain mistake (an error) or a warning, which has a `code` an author
    silences it by (`# scorers: ignore[code]` on its line)."""

    message: str
    line: int
    pattern: str | None = None
    severity: Severity = "error"
    code: str | None = None


def name_pattern(name: str) -> str:
    return rf"(?<![\w.'\"])({re.escape(name)})(?!\w)"


def attribute_pattern(name: str) -> str:
    return rf"(?:\.\s*|\[\s*['\"])({re.escape(name)})(?!\w)"


def string_pattern(value: str) -> str:
    return rf"(['\"]{re.escape(value)}['\"])"


def path_of(node: nodes.Node) -> str | None:
    """`a.b.c` for a chain of names and attributes (and constant keys), for messages."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        base = path_of(node.node)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        base = path_of(node.node)
        if base is None:
            return None
        return f"{base}.{node.arg.value}" if isinstance(node.arg.value, str) else f"{base}[{node.arg.value!r}]"
    return None


_OPERATORS = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**"}


def written(node: nodes.Node) -> str | None:
    """An expression as an author would write it, for the common forms (names, fields,
    filters, calls, arithmetic); None for others."""
    if isinstance(node, (nodes.Name, nodes.Getattr)):
        return path_of(node)
    if isinstance(node, nodes.Const):
        return repr(node.value) if isinstance(node.value, str) else str(node.value).lower() if isinstance(node.value, bool) else str(node.value)
    if isinstance(node, nodes.Getitem):
        base, key = written(node.node), written(node.arg)
        return f"{base}[{key}]" if base and key else None
    if isinstance(node, nodes.Filter) and node.node is not None:
        base = written(node.node)
        arguments = [written(argument) for argument in node.args]
        if base is None or None in arguments or node.kwargs:
            return None
        return f"{base} | {node.name}" + (f"({', '.join(arguments)})" if arguments else "")  # type: ignore[arg-type]
    if isinstance(node, nodes.Call) and not node.kwargs:
        callee = written(node.node)
        arguments = [written(argument) for argument in node.args]
        return f"{callee}({', '.join(arguments)})" if callee and None not in arguments else None  # type: ignore[arg-type]
    if isinstance(node, nodes.BinExpr):
        left, right = written(node.left), written(node.right)
        return f"({left} {operator_symbol(node)} {right})" if left and right else None
    if isinstance(node, (nodes.List, nodes.Tuple)):
        items = [written(item) for item in node.items]
        return f"[{', '.join(items)}]" if None not in items else None  # type: ignore[arg-type]
    if isinstance(node, nodes.Neg):
        inner = written(node.node)
        return f"-{inner}" if inner else None
    return None


def operator_symbol(node: nodes.BinExpr) -> str:
    return _OPERATORS.get(type(node).__name__, node.operator)


def bare(text: str) -> str:
    """`text` without the brackets `written` puts around an operation."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def loose_pattern(text: str) -> str:
    """A pattern finding `text` as written, whatever the spacing around its operators."""
    return r"\s*".join(map(re.escape, text.replace(" ", "")))
