"""Scoring the OpenTelemetry traces an app exports: OTLP in (a receiver, or the Collector's
files), spans to items by a catalog's `traces:` section, scored by the live scorer, scores
out as spans. The OTLP messages, the SDK and the web server are the `traces` extra's."""

from .collector import TraceCollector, TraceStats
from .mapping import Mapped, Note, TraceItem, TraceReader, group_by_trace
from .otlp import Span, read_file_exporter

__all__ = ["Mapped", "Note", "Span", "TraceCollector", "TraceItem", "TraceReader", "TraceStats", "group_by_trace", "read_file_exporter"]
