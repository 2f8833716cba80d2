"""Traces read from files for batch runs (`scorers eval`): the OpenTelemetry Collector's file
exporter writes one OTLP JSON export a line; its spans become the items of a catalog's
`traces:` section, as the receiver would make them."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ...catalog.traces import SpanKind, TracesSpec
from ...errors import ConfigError
from .mapping import Note, TraceReader, group_by_trace
from .otlp import read_file_exporter


def is_trace_file(path: Path) -> bool:
    """Whether `path` is a Collector file exporter's output: its first line is an OTLP export."""
    if not path.is_file():
        return False
    with path.open("rb") as lines:
        first = lines.readline(4096)
    return first.lstrip().startswith(b"{") and b'"resourceSpans"' in first


def trace_file_items(path: Path, spec: TracesSpec | None, scorer_ids: Collection[str]) -> tuple[list[dict[str, Any]], list[Note]]:
    """The items of a traces file for `scorer_ids` (all of one kind of the section: llm or
    agent), as data items (id, input, output, context, metadata), and the notes of the spans
    that gave none."""
    if spec is None:
        raise ConfigError(f"{path} holds OpenTelemetry traces: give a catalog with a `traces:` section (--config) that says how its spans become items")
    kind = _kind_of(spec, scorer_ids)
    reader = TraceReader(spec)
    items: list[dict[str, Any]] = []
    notes: list[Note] = []
    for spans in group_by_trace(read_file_exporter(path)).values():
        mapped = reader.items(spans)
        notes.extend(mapped.notes)
        for item in mapped.items:
            if item.kind == kind:
                given = item.given
                items.append({"id": given.run_id, "input": given.input, "output": given.output, "context": given.context, "metadata": dict(given.metadata or {})})
    if not items:
        raise ConfigError(f"{path}: no {kind} span gave an item" + (f" ({len(notes)} spans did not fit: {notes[0]})" if notes else ""))
    return items, notes


def _kind_of(spec: TracesSpec, scorer_ids: Collection[str]) -> SpanKind:
    kinds: set[SpanKind] = set()
    for scorer_id in scorer_ids:
        if spec.llm is not None and scorer_id in spec.llm.scorers:
            kinds.add("llm")
        elif spec.agent is not None and scorer_id in spec.agent.scorers:
            kinds.add("agent")
        else:
            raise ConfigError(f"--scorer {scorer_id}: the catalog's `traces:` section gives it no items (not among llm.scorers or agent.scorers)")
    if len(kinds) > 1:
        raise ConfigError("--scorer: give the scorers of one kind of item at a time (llm: or agent: of the `traces:` section)")
    return kinds.pop()
