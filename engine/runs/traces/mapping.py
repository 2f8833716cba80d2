"""The spans of one trace as items to score, by a catalog's `traces:` section (its convention's
JMESPath per field, engine/catalog/traces.py):

- each LLM span is an item for the `llm:` scorers: its input and output, and as context the
  documents of the retrieval spans beside it (under the same parent, at any depth) and what
  its own `context` field reads (the tool results in its prompt, for the Vercel AI SDK);
- each root span with LLM, tool or retrieval spans under it is an item for the `agent:`
  scorers: the run's input, its tool calls and results in the order they started, its final
  answer, and the documents of all its retrieval spans.

Every item keeps the trace and span ids, and the trace's span tree (names, timings, tool calls,
documents) in its metadata. A span that does not give what its item needs is a `Note` naming
the span and the attribute read, never an empty item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...catalog.traces import SpanKind, TracesSpec
from ...scoring import RunInput
from .otlp import Span


@dataclass(frozen=True)
class TraceItem:
    """One item of a trace: what is scored, and which scorers score it."""

    kind: SpanKind
    given: RunInput
    scorers: tuple[str, ...]

    @property
    def trace_id(self) -> str:
        return str((self.given.metadata or {})["trace_id"])


@dataclass(frozen=True)
class Note:
    """Why a span gave no item."""

    trace_id: str
    span_id: str
    span_name: str
    text: str

    def __str__(self) -> str:
        return f"span {self.span_name!r} ({self.span_id} of trace {self.trace_id}): {self.text}"


@dataclass
class Mapped:
    items: list[TraceItem] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


def group_by_trace(spans: Iterable[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    return traces


class TraceReader:
    """Reads the spans of traces with one `traces:` section; see the module docstring."""

    def __init__(self, spec: TracesSpec) -> None:
        import jmespath

        self.spec = spec
        self._kind = jmespath.compile(spec.preset.kind)
        self._fields = {
            kind: {name: (expression, jmespath.compile(expression)) for name, expression in spec.fields(kind).items()}
            for kind in ("llm", "retrieval", "tool", "agent")
        }

    def kind(self, span: Span) -> SpanKind | None:
        named = self._kind.search(_view(span))
        return self.spec.preset.kinds.get(named) if isinstance(named, str) else None

    def read(self, span: Span, kind: SpanKind, name: str) -> Any:
        """What the field's expression finds in the span; None when nothing, or when the span's
        values are not of the types the expression works on (a note says so where it matters)."""
        from jmespath.exceptions import JMESPathError

        found = self._fields[kind].get(name)
        if found is None:
            return None
        try:
            return found[1].search(_view(span))
        except JMESPathError:
            return None

    def admitted(self, span: Span) -> bool:
        """Whether the span passes the section's `where:`."""
        for key, wanted in self.spec.where.items():
            value = span.attributes.get(key, span.resource.get(key))
            if value != wanted:
                return False
        return True

    def items(self, spans: list[Span]) -> Mapped:
        """The items of one trace's spans."""
        mapped = Mapped()
        kinds = {span.span_id: self.kind(span) for span in spans}
        children: dict[str | None, list[Span]] = {}
        ids = {span.span_id for span in spans}
        for span in sorted(spans, key=lambda span: span.start_ns):
            children.setdefault(span.parent_id if span.parent_id in ids else None, []).append(span)
        tree = self._tree(children, kinds, None)
        if self.spec.llm is not None:
            for span in spans:
                if kinds[span.span_id] == "llm" and self.admitted(span):
                    self._llm_item(span, children, kinds, tree, mapped)
        if self.spec.agent is not None:
            for root in children.get(None, []):
                below = list(_descendants(root, children))
                if self.admitted(root) and (kinds[root.span_id] == "agent" or any(kinds[span.span_id] in ("llm", "tool", "retrieval") for span in below)):
                    self._agent_item(root, below, kinds, tree, mapped)
        return mapped

    def _llm_item(self, span: Span, children: Mapping[str | None, list[Span]], kinds: Mapping[str, SpanKind | None], tree: list[dict[str, Any]], mapped: Mapped) -> None:
        assert self.spec.llm is not None
        output = _text(self.read(span, "llm", "output"))
        if not output:
            calls = self.read(span, "llm", "tool_calls")
            if calls:
                output = [{"role": "assistant", "content": None, "tool_calls": _tool_calls(calls, span.span_id)}]
        if not output:
            mapped.notes.append(self._missing(span, "llm", "output"))
            return
        parent = None if span in children.get(None, []) else span.parent_id
        around = [other for other in _descendants_of(parent, children) if kinds[other.span_id] == "retrieval"]
        documents = self._documents(around) + self._texts(self.read(span, "llm", "context"))
        given = RunInput(
            output=output, input=_text(self.read(span, "llm", "input")), context=documents or None,
            metadata=self._metadata(span, "llm", tree), run_id=f"{span.trace_id}-{span.span_id}",
        )
        mapped.items.append(TraceItem("llm", given, tuple(self.spec.llm.scorers)))

    def _agent_item(self, root: Span, below: list[Span], kinds: Mapping[str, SpanKind | None], tree: list[dict[str, Any]], mapped: Mapped) -> None:
        assert self.spec.agent is not None
        messages: list[dict[str, Any]] = []
        last_answer: Any = None
        for span in below:
            kind = kinds[span.span_id]
            if kind == "tool":
                name = self.read(span, "tool", "name")
                if not isinstance(name, str) or not name:
                    mapped.notes.append(self._missing(span, "tool", "name"))
                    continue
                arguments = self.read(span, "tool", "arguments")
                call = {"id": span.span_id, "type": "function", "function": {"name": name, "arguments": _as_json_text(arguments)}}
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                messages.append({"role": "tool", "tool_call_id": span.span_id, "content": _as_json_text(self.read(span, "tool", "result"))})
            elif kind == "llm":
                last_answer = _text(self.read(span, "llm", "output")) or last_answer
        answer = _text(self.read(root, "agent", "output")) if kinds[root.span_id] == "agent" else None
        answer = answer or last_answer
        if not answer and not messages:
            mapped.notes.append(self._missing(root, "agent", "output"))
            return
        if answer:
            messages.append({"role": "assistant", "content": answer})
        question = _text(self.read(root, "agent", "input")) if kinds[root.span_id] == "agent" else None
        if not question:
            first_llm = next((span for span in below if kinds[span.span_id] == "llm"), None)
            question = _text(self.read(first_llm, "llm", "input")) if first_llm is not None else None
        documents = self._documents([span for span in below if kinds[span.span_id] == "retrieval"])
        given = RunInput(
            output=messages, input=question, context=documents or None, metadata=self._metadata(root, "agent", tree),
            run_id=f"{root.trace_id}-{root.span_id}",
        )
        mapped.items.append(TraceItem("agent", given, tuple(self.spec.agent.scorers)))

    def _documents(self, spans: list[Span]) -> list[str]:
        return [text for span in spans for text in self._texts(self.read(span, "retrieval", "documents"))]

    @staticmethod
    def _texts(found: Any) -> list[str]:
        """A context field's values, each as text (JSON for a structured one); empty ones left out."""
        values = (_text(value) for value in (found if isinstance(found, list) else [found] if found else []))
        return [_as_json_text(value) for value in values if value]

    def _missing(self, span: Span, kind: SpanKind, name: str) -> Note:
        expression = self._fields[kind].get(name, ("(no reading in this convention)", None))[0]
        article = "an" if kind in ("llm", "agent") else "a"
        hint = f" ({self.spec.preset.hidden_content})" if name in ("input", "output") and self.spec.preset.hidden_content else ""
        return Note(span.trace_id, span.span_id, span.name, f"{article} {kind} span with no {name}: {self.spec.convention} reads it by {expression}, which found nothing{hint}")

    def _metadata(self, span: Span, kind: SpanKind, tree: list[dict[str, Any]]) -> dict[str, Any]:
        metadata: dict[str, Any] = {"trace_id": span.trace_id, "span_id": span.span_id, "span_name": span.name, "span_kind": kind, "trace": tree}
        service = span.resource.get("service.name")
        if service is not None:
            metadata["service.name"] = service
        return metadata

    def _tree(self, children: Mapping[str | None, list[Span]], kinds: Mapping[str, SpanKind | None], parent: str | None) -> list[dict[str, Any]]:
        """The trace as the report shows it: each span's name, kind, start (ms after the
        trace's first span), duration, status, and its tool call or documents; children nested."""
        first = min((span.start_ns for spans in children.values() for span in spans), default=0)
        nodes = []
        for span in children.get(parent, []):
            kind = kinds[span.span_id]
            node: dict[str, Any] = {
                "name": span.name, "span_id": span.span_id, "kind": kind, "start_ms": round((span.start_ns - first) / 1e6, 3),
                "duration_ms": round(span.duration_ms, 3), "status": span.status,
            }
            if kind == "tool":
                node["tool"] = {"name": self.read(span, "tool", "name"), "arguments": self.read(span, "tool", "arguments"), "result": self.read(span, "tool", "result")}
            elif kind == "retrieval":
                node["documents"] = self._documents([span])
            node["children"] = self._tree(children, kinds, span.span_id)
            nodes.append(node)
        return nodes


def _descendants(span: Span, children: Mapping[str | None, list[Span]]) -> Iterable[Span]:
    for child in children.get(span.span_id, []):
        yield child
        yield from _descendants(child, children)


def _descendants_of(parent: str | None, children: Mapping[str | None, list[Span]]) -> list[Span]:
    found: list[Span] = []
    for child in children.get(parent, []):
        found.append(child)
        found.extend(_descendants(child, children))
    return found


def _view(span: Span) -> dict[str, Any]:
    """What a convention's expressions read: flattened indexed attributes as lists, JSON text as JSON."""
    return {"name": span.name, "attributes": _nested(span.attributes), "resource": span.resource,
            "events": [{"name": event.name, "attributes": _nested(event.attributes)} for event in span.events]}


def _nested(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """`llm.input_messages.0.message.content` read as `llm.input_messages` -> [{"message.content": ...}]."""
    nested: dict[str, Any] = {}
    for key, value in attributes.items():
        _place(nested, key.split("."), _json_or_text(value))
    return nested


def _place(into: dict[str, Any], parts: list[str], value: Any) -> None:
    index = next((position for position, part in enumerate(parts) if part.isdigit() and position > 0), None)
    if index is None:
        into[".".join(parts)] = value
        return
    key, number, rest = ".".join(parts[:index]), int(parts[index]), parts[index + 1:]
    listed = into.setdefault(key, [])
    if not isinstance(listed, list):
        return  # a plain attribute of that name was given too: it wins
    while len(listed) <= number:
        listed.append({})
    if not rest:
        listed[number] = value
    elif isinstance(listed[number], dict):
        _place(listed[number], rest, value)


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(value: Any) -> Any:
    """A field's value as the scorers take it: text parts joined, an empty value as None."""
    if isinstance(value, list) and value and all(isinstance(part, Mapping) and part.get("type") == "text" for part in value):
        return "".join(str(part.get("text", part.get("content", ""))) for part in value)
    if value in ("", [], {}):
        return None
    return value


def _as_json_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _tool_calls(calls: Any, span_id: str) -> list[dict[str, Any]]:
    found = calls if isinstance(calls, list) else [calls]
    return [
        {"id": f"{span_id}-{index}", "type": "function", "function": {"name": call.get("name"), "arguments": _as_json_text(call.get("arguments"))}}
        for index, call in enumerate(found) if isinstance(call, Mapping)
    ]
