"""OTLP trace data in and out: an export request (protobuf or JSON, as `POST /v1/traces`
receives it) or a line of the OpenTelemetry Collector's file exporter, read with the official
`opentelemetry-proto` messages, and flattened to `Span`s: ids in hex, attributes as plain
values, events with theirs.

OTLP's JSON encoding writes trace and span ids in hex where protobuf's JSON mapping expects
base64; `_ids_as_base64` turns them over before `json_format` parses the rest.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError, DataError

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_ID_KEYS = ("traceId", "spanId", "parentSpanId")


class TracesMissing(ConfigError):
    """The `traces` extra (opentelemetry-proto) is not installed."""


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    """One span as exported, flattened: what the mapping reads."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = ()
    resource: dict[str, Any] = field(default_factory=dict)
    status: str = "unset"  # unset, ok or error
    status_message: str = ""

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    def as_json(self) -> dict[str, Any]:
        """A plain-JSON form (what the spool keeps and the report shows); `span_of` reads it back."""
        return {
            "trace_id": self.trace_id, "span_id": self.span_id, "parent_id": self.parent_id, "name": self.name, "start_ns": self.start_ns,
            "end_ns": self.end_ns, "attributes": self.attributes, "resource": self.resource, "status": self.status,
            "status_message": self.status_message,
            "events": [{"name": event.name, "time_ns": event.time_ns, "attributes": event.attributes} for event in self.events],
        }


def span_of(data: Mapping[str, Any]) -> Span:
    """The span `Span.as_json` wrote."""
    events = tuple(SpanEvent(event["name"], int(event["time_ns"]), dict(event.get("attributes") or {})) for event in data.get("events") or [])
    return Span(
        trace_id=data["trace_id"], span_id=data["span_id"], parent_id=data.get("parent_id"), name=data["name"], start_ns=int(data["start_ns"]),
        end_ns=int(data["end_ns"]), attributes=dict(data.get("attributes") or {}), events=events, resource=dict(data.get("resource") or {}),
        status=data.get("status", "unset"), status_message=data.get("status_message", ""),
    )


def _proto() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError:
        raise TracesMissing('reading OpenTelemetry traces needs the `traces` extra: pip install "llm-scorers[traces]"') from None
    return trace_service_pb2


def decode_request(body: bytes, content_type: str) -> list[Span]:
    """The spans of one OTLP/HTTP export request; DataError when the body is not one."""
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind == JSON:
            request = request_from_json(json.loads(body))
        else:
            request = _proto().ExportTraceServiceRequest()
            request.ParseFromString(body)
    except Exception as exc:
        raise DataError(f"not an OTLP trace export ({kind or 'no content type'}): {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    return list(_spans(request))


def request_from_json(data: Any) -> Any:
    """The ExportTraceServiceRequest an OTLP JSON export (hex ids) writes."""
    from google.protobuf import json_format

    request = _proto().ExportTraceServiceRequest()
    json_format.ParseDict(_ids_as_base64(data), request, ignore_unknown_fields=True)
    return request


def encode_response(content_type: str, rejected: int = 0, message: str = "") -> tuple[bytes, str]:
    """The ExportTraceServiceResponse in the request's encoding; `rejected` spans (shed) are
    reported as OTLP's partial success, which exporters log."""
    service = _proto()
    response = service.ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    if content_type.split(";")[0].strip().lower() == JSON:
        from google.protobuf import json_format

        return json.dumps(json_format.MessageToDict(response)).encode(), JSON
    return response.SerializeToString(), PROTOBUF


def read_file_exporter(path: str | Path) -> Iterator[Span]:
    """The spans of a file the Collector's file exporter wrote (one OTLP JSON export a line);
    a line that is not one is a DataError naming the file and line."""
    path = Path(path)
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield from decode_request(line, JSON)
            except DataError as exc:
                raise DataError(f"{path}:{number}: {exc}") from None


def _ids_as_base64(node: Any) -> Any:
    """OTLP JSON's hex ids turned into the base64 protobuf's JSON mapping reads."""
    if isinstance(node, dict):
        return {key: _id_base64(value) if key in _ID_KEYS and isinstance(value, str) else _ids_as_base64(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_ids_as_base64(value) for value in node]
    return node


def _id_base64(value: str) -> str:
    try:
        return base64.b64encode(bytes.fromhex(value)).decode()
    except ValueError:
        raise DataError(f"span id {value[:40]!r} is not hex, as OTLP JSON writes ids") from None


def _spans(request: Any) -> Iterator[Span]:
    statuses = {0: "unset", 1: "ok", 2: "error"}
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield Span(
                    trace_id=binascii.hexlify(span.trace_id).decode(),
                    span_id=binascii.hexlify(span.span_id).decode(),
                    parent_id=binascii.hexlify(span.parent_span_id).decode() or None,
                    name=span.name,
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                    attributes=_attributes(span.attributes),
                    events=tuple(SpanEvent(event.name, event.time_unix_nano, _attributes(event.attributes)) for event in span.events),
                    resource=resource,
                    status=statuses.get(span.status.code, "unset"),
                    status_message=span.status.message,
                )


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)
