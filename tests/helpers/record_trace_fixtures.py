"""Records the fixtures of tests/fixtures/traces/: the spans the instrumented app
(instrumented_app.py) exports under each convention, and those the Node app using the Vercel AI
SDK (vercel_app/, its npm packages installed in a temporary folder) exports, as the
OpenTelemetry Collector's file exporter writes them (one OTLP JSON export a line, ids in hex).
Run again when an instrumentation changes what it writes:

    python tests/helpers/record_trace_fixtures.py
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from engine.testing import JudgeServer, Reply

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "traces"
ANSWER = "The Eiffel Tower is in Paris and was finished in 1889."
VERCEL_APP = HERE / "vercel_app"


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: base64.b64decode(value).hex() if key in ("traceId", "spanId", "parentSpanId") else _hex_ids(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_hex_ids(value) for value in node]
    return node


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request's body, whole or chunked (as Node's exporters send it)."""
    if handler.headers["content-length"] is not None:
        return handler.rfile.read(int(handler.headers["content-length"]))
    body = b""
    while size := int(handler.rfile.readline().strip(), 16):
        body += handler.rfile.read(size)
        handler.rfile.readline()
    handler.rfile.readline()
    return body


def install_node_app(app: Path, folder: Path) -> Path:
    """The Node app's files copied to `folder` with its npm packages installed there."""
    for source in app.iterdir():
        shutil.copy(source, folder / source.name)
    installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, capture_output=True, text=True, timeout=600)
    if installed.returncode != 0:
        raise RuntimeError(f"npm install in {folder} failed: {installed.stderr[-3000:]}")
    return folder


def script_landmark_lookup(judge: JudgeServer) -> None:
    """The Vercel AI SDK app's model: first it calls the app's tool, then it answers."""
    judge.on("lookup_landmark", [{"name": "Eiffel Tower"}, Reply.raw(ANSWER)])


def record(convention: str, *options: str, name: str | None = None) -> Path:
    """The spans instrumented_app.py exports under `convention`, written to the fixture."""
    judge = JudgeServer().start()
    judge.on(None, ANSWER)
    try:
        return _recorded(name or convention, [sys.executable, str(HERE / "instrumented_app.py"), convention], judge, *options)
    finally:
        judge.stop()


def record_vercel() -> Path:
    """The spans the Vercel AI SDK app exports (one generateText calling one tool)."""
    judge = JudgeServer().start()
    script_landmark_lookup(judge)
    try:
        with tempfile.TemporaryDirectory() as folder:
            return _recorded("vercel", ["node", str(install_node_app(VERCEL_APP, Path(folder)) / "app.js")], judge)
    finally:
        judge.stop()


def _recorded(name: str, app: list[str], judge: JudgeServer, *options: str) -> Path:
    lines: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            request = ExportTraceServiceRequest()
            request.ParseFromString(_body(self))
            lines.append(json.dumps(_hex_ids(json_format.MessageToDict(request))))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        subprocess.run([*app, f"http://127.0.0.1:{server.server_address[1]}/v1/traces", judge.base_url, "Where is the Eiffel Tower?", *options],
                       check=True, capture_output=True)
    finally:
        server.shutdown()
    path = FIXTURES / f"{name}.otlp.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    for convention in ("openinference", "genai"):
        print(record(convention))
    # OpenTelemetry's OpenAI instrumentation as it is by default: no message content on the span.
    print(record("genai", "--no-content", name="genai-no-content"))
    print(record_vercel())
