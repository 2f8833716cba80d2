"""An item's trace as the report and the workbench show it beside its scores: one line per
span, indented under its parent, with when it started and how long it took, and what it did
(the tool called, with its arguments and result; the documents retrieved). Read from the span
tree a trace's items keep in their metadata (`trace`, see mapping.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

#: The longest a tool's arguments, its result or a document is shown.
SHOWN_CHARS = 300


class TraceLine(BaseModel):
    depth: int
    name: str
    kind: str | None
    start_ms: float
    duration_ms: float
    status: str
    scored: bool = False
    detail: list[str] = []


def trace_lines(metadata: Mapping[str, Any] | None) -> list[TraceLine]:
    """The lines of an item's trace (none for an item that did not come from a trace)."""
    tree = (metadata or {}).get("trace")
    if not isinstance(tree, list):
        return []
    scored = (metadata or {}).get("span_id")
    lines: list[TraceLine] = []

    def walk(nodes: list[Any], depth: int) -> None:
        for node in nodes:
            if not isinstance(node, Mapping):
                continue
            lines.append(TraceLine(
                depth=depth, name=str(node.get("name", "")), kind=node.get("kind"), start_ms=float(node.get("start_ms", 0)),
                duration_ms=float(node.get("duration_ms", 0)), status=str(node.get("status", "unset")), scored=node.get("span_id") == scored,
                detail=_detail(node),
            ))
            walk(list(node.get("children") or []), depth + 1)

    walk(tree, 0)
    return lines


def _detail(node: Mapping[str, Any]) -> list[str]:
    tool = node.get("tool")
    if isinstance(tool, Mapping):
        call = f"{tool.get('name')}({_short(tool.get('arguments'))})"
        return [f"{call} -> {_short(tool.get('result'))}"]
    return [_short(document) for document in node.get("documents") or []]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
