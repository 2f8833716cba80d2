"""Records the fixtures of tests/fixtures/traces/: the spans the instrumented app
(instrumented_app.py) exports under each convention, as the OpenTelemetry Collector's file
exporter writes them (one OTLP JSON export a line, ids in hex). Run again when an
instrumentation changes what it writes:

    python tests/helpers/record_trace_fixtures.py
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from engine.testing.judge_server import JudgeServer

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "traces"
ANSWER = "The Eiffel Tower is in Paris and was finished in 1889."


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: base64.b64decode(value).hex() if key in ("traceId", "spanId", "parentSpanId") else _hex_ids(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_hex_ids(value) for value in node]
    return node


def record(convention: str, *options: str, name: str | None = None) -> Path:
    lines: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            request = ExportTraceServiceRequest()
            request.ParseFromString(self.rfile.read(int(self.headers["content-length"])))
            lines.append(json.dumps(_hex_ids(json_format.MessageToDict(request))))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    judge = JudgeServer().start()
    judge.on(None, ANSWER)
    try:
        subprocess.run([sys.executable, str(HERE / "instrumented_app.py"), convention, f"http://127.0.0.1:{server.server_address[1]}/v1/traces",
                        judge.base_url, "Where is the Eiffel Tower?", *options], check=True, capture_output=True)
    finally:
        judge.stop()
        server.shutdown()
    path = FIXTURES / f"{name or convention}.otlp.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    for convention in ("openinference", "genai"):
        print(record(convention))
    # OpenTelemetry's OpenAI instrumentation as it is by default: no message content on the span.
    print(record("genai", "--no-content", name="genai-no-content"))
