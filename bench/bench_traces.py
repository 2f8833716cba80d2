"""How the traces receiver (`scorers collect`) holds up (not a test): spans ingested per
second over OTLP/HTTP, the memory 100,000 spans waiting take, and what the receiver adds to
the exporting app's request against a baseline measured in the same run, the same app
exporting to a server that answers and does nothing.

    python bench/bench_traces.py [--spans 100000] [--requests 200]

The spans are the recorded OpenInference trace (tests/fixtures/traces), copied under new
trace ids, sent 512 to a request as the SDK's batch processor sends them. The app's request
is an OpenAI SDK call to the scripted server, traced by OpenInference, measured with the SDK's
batch span processor (the usual setup: spans leave on the SDK's own thread) and with its simple
one (each span exported inside the request: the worst case).
"""

from __future__ import annotations

import argparse
import copy
import json
import tracemalloc
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from engine import LiveScorer, builtin_catalog
from engine.catalog.traces import TracesSpec
from engine.runs.traces import TraceCollector
from engine.runs.traces.otlp import request_from_json
from engine.runs.traces.receiver import TraceReceiver
from engine.testing import JudgeServer

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "traces" / "openinference.otlp.jsonl"
PER_REQUEST = 512


def requests_of(spans: int) -> list[bytes]:
    """Protobuf export requests holding `spans` spans: the fixture's trace, again and again."""
    template = json.loads(FIXTURE.read_text().splitlines()[0])
    per_trace = len(template["resourceSpans"][0]["scopeSpans"][0]["spans"])
    bodies, batch, trace = [], [], 0
    while trace * per_trace < spans:
        copied = copy.deepcopy(template["resourceSpans"][0]["scopeSpans"][0]["spans"])
        for span in copied:
            span["traceId"] = f"{trace:032x}"
        batch.extend(copied)
        trace += 1
        if len(batch) >= PER_REQUEST or trace * per_trace >= spans:
            request = copy.deepcopy(template)
            request["resourceSpans"][0]["scopeSpans"][0]["spans"] = batch
            bodies.append(request_from_json(request).SerializeToString())
            batch = []
    return bodies


def collector(folder: Path, *, waiting: bool) -> TraceCollector:
    """A collector scoring whole runs with a computed scorer (no judge); `waiting`: no trace
    is ever complete, so every span stays in memory (the memory figure)."""
    spec = TracesSpec(convention="openinference", agent={"scorers": ["used-no-tools"]})
    live = LiveScorer([builtin_catalog().create("used-no-tools")], store=folder / "scores.sqlite", run="traces", flush_at_exit=0, queue_size=100_000)
    settle = 1e9 if waiting else 0.2
    return TraceCollector(spec, live, folder / f"spool-{waiting}.sqlite", settle=settle, trace_timeout=settle, max_pending=1_000_000)


def ingest(bodies: Sequence[bytes], folder: Path) -> tuple[float, int]:
    """Spans per second the receiver accepts (kept in its spool and answered), and how many."""
    receiver = TraceReceiver(collector(folder, waiting=False), port=0).start()
    try:
        with httpx.Client(timeout=60) as client:
            start = time.perf_counter()
            for body in bodies:
                answered = client.post(receiver.endpoint, content=body, headers={"content-type": "application/x-protobuf"})
                answered.raise_for_status()
            took = time.perf_counter() - start
        spans = receiver.collector.stats.spans
    finally:
        receiver.stop(timeout=120)
    return spans / took, spans


def memory(bodies: Sequence[bytes], folder: Path) -> tuple[float, int]:
    """The memory (MB, as Python allocates it) the spans take while they wait, and how many wait."""
    from engine.runs.traces.otlp import decode_request

    held = collector(folder, waiting=True)
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    for body in bodies:
        held.accept(decode_request(body, "application/x-protobuf"))
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    spans = held.stats.spans
    held.spool.close()
    held.live.close(0)
    return (after - before) / 1024 / 1024, spans


class _Switch(SpanExporter):
    """The app's exporter: sends to whichever OTLP exporter is current."""

    def __init__(self) -> None:
        self.current: SpanExporter | None = None

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        assert self.current is not None
        return self.current.export(spans)

    def shutdown(self) -> None:
        pass


class _Either(SpanProcessor):
    """The app's span processor: the simple one (export inside the request) or the batch one."""

    def __init__(self, **processors: SpanProcessor) -> None:
        self.processors = processors
        self.current = next(iter(processors.values()))

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.current.on_start(span, parent_context)

    def on_end(self, span: Any) -> None:
        self.current.on_end(span)

    def shutdown(self) -> None:
        for processor in self.processors.values():
            processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return all(processor.force_flush(timeout_millis) for processor in self.processors.values())


def request_latency(requests: int, folder: Path) -> dict[tuple[str, str], list[float]]:
    """The app's request times (ms) per (span processor, export target): the receiver, and a
    no-op server as the baseline, interleaved so both meet the same conditions."""
    import openai
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    class NoOp(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

    noop = ThreadingHTTPServer(("127.0.0.1", 0), NoOp)
    threading.Thread(target=noop.serve_forever, daemon=True).start()
    judge = JudgeServer().start()
    judge.on(None, "The Eiffel Tower is in Paris.")
    receiver = TraceReceiver(collector(folder, waiting=False), port=0).start()
    switch = _Switch()
    either = _Either(simple=SimpleSpanProcessor(switch), batch=BatchSpanProcessor(switch))
    provider = TracerProvider()
    provider.add_span_processor(either)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=judge.base_url, api_key="bench")
    targets = {
        "no-op server": OTLPSpanExporter(endpoint=f"http://127.0.0.1:{noop.server_address[1]}/v1/traces"),
        "receiver": OTLPSpanExporter(endpoint=receiver.endpoint),
    }
    times: dict[tuple[str, str], list[float]] = {(processor, name): [] for processor in either.processors for name in targets}
    try:
        for processor, chosen in either.processors.items():
            either.current = chosen
            for round_ in range(requests):
                for name, exporter in (targets.items() if round_ % 2 else reversed(targets.items())):
                    either.force_flush()  # the other target's spans leave before this one is current
                    switch.current = exporter
                    start = time.perf_counter()
                    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Where is the Eiffel Tower?"}])
                    times[(processor, name)].append((time.perf_counter() - start) * 1000)
            either.force_flush()
    finally:
        OpenAIInstrumentor().uninstrument()
        receiver.stop(timeout=60)
        judge.stop()
        noop.shutdown()
    return times


def _median_p95(values: list[float]) -> str:
    ordered = sorted(values)
    return f"median {statistics.median(ordered):.2f} ms, p95 {ordered[max(0, int(len(ordered) * 0.95) - 1)]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200, help="App requests per exporter target")
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="traces-bench-"))
    bodies = requests_of(arguments.spans)
    rate, sent = ingest(bodies, folder)
    print(f"ingested: {sent:,} spans in {len(bodies)} requests of up to {PER_REQUEST}: {rate:,.0f} spans/s (kept in the spool, then answered)")
    megabytes, waiting = memory(bodies, folder)
    print(f"memory: {waiting:,} spans waiting take {megabytes:,.0f} MB of Python allocations ({megabytes * 1024 * 1024 / max(waiting, 1):,.0f} bytes a span)")
    latency = request_latency(arguments.requests, folder)
    print(f"the app's request, an OpenAI call traced by OpenInference ({arguments.requests} requests each, interleaved):")
    for processor, when in (("batch", "exported on the SDK's own thread (the usual setup)"), ("simple", "exported inside the request (the worst case)")):
        print(f"  {processor} span processor, {when}:")
        for name in ("no-op server", "receiver"):
            print(f"    to the {name}: {_median_p95(latency[(processor, name)])}")
        added = statistics.median(latency[(processor, "receiver")]) - statistics.median(latency[(processor, "no-op server")])
        print(f"    the receiver adds {added:+.2f} ms at the median")


if __name__ == "__main__":
    main()
