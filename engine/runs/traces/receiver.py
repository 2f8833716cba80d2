"""The OTLP/HTTP traces receiver (`POST /v1/traces`, protobuf or JSON, gzip or not), which any
OpenTelemetry SDK or Collector exports to. It keeps what it accepts (the spool) and answers at
once; scoring happens on the collector's thread and the live scorer's. Bound to 127.0.0.1
unless told otherwise, and then only with a token, sent as `Authorization: Bearer TOKEN` (or
the `x-scorers-token` header)."""

from __future__ import annotations

import gzip
import hmac
import socket
import threading
import time
import zlib
from typing import Any

from ...errors import ConfigError, DataError
from .collector import TraceCollector
from .otlp import PROTOBUF, decode_request, encode_response

LOOPBACK = "127.0.0.1"
TOKEN_HEADER = "x-scorers-token"
#: The largest export request taken (after decompression): more is refused, not read whole.
MAX_BODY = 64 * 1024 * 1024


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise ConfigError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}); give another port, or 0 for a free one") from None
    listener.listen(512)
    return listener


def create_app(collector: TraceCollector, token: str | None) -> Any:
    """The Starlette app: one route, `POST /v1/traces`."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    def allowed(request: Request) -> bool:
        if token is None:
            return True
        given = request.headers.get(TOKEN_HEADER) or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), token.encode())

    async def traces(request: Request) -> Response:
        if not allowed(request):
            return PlainTextResponse("a token is needed: Authorization: Bearer TOKEN (as `scorers collect` printed it)", status_code=401)
        content_type = request.headers.get("content-type", PROTOBUF)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:  # refused before it is read
            return PlainTextResponse(f"an export request of {declared} bytes: at most {MAX_BODY} are taken", status_code=413)
        body = await request.body()
        try:
            body = _decompressed(body, request.headers.get("content-encoding", ""))
            spans = decode_request(body, content_type)
        except DataError as exc:
            return PlainTextResponse(str(exc), status_code=400)
        shed = await run_in_threadpool(collector.accept, spans)
        answer, media_type = encode_response(content_type, shed, f"{shed} spans not scored: the scorer is behind (traces sampled by trace id)" if shed else "")
        return Response(answer, media_type=media_type)

    return Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])


def _decompressed(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        if len(body) > MAX_BODY:
            raise DataError(f"an export request of {len(body)} bytes: at most {MAX_BODY} are taken")
        return body
    if encoding not in ("gzip", "deflate"):
        raise DataError(f"content-encoding {encoding!r}: gzip, deflate or none are taken")
    try:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS)
        out = inflater.decompress(body, MAX_BODY + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise DataError(f"the body is not {encoding} data: {exc}") from None
    if len(out) > MAX_BODY:
        raise DataError(f"an export request of more than {MAX_BODY} bytes once decompressed: refused")
    return out


def check_exposure(host: str, token: str | None) -> None:
    """Another address than the loopback one is reachable by other machines: only with a token."""
    if host not in (LOOPBACK, "localhost") and not token:
        raise ConfigError(f"--host {host}: other machines can reach it there; give --token (or SCORERS_COLLECT_TOKEN) so only your exporters are taken")


class TraceReceiver:
    """The receiver on a thread of its own (tests, the bench) or in the foreground (the CLI)."""

    def __init__(self, collector: TraceCollector, *, host: str = LOOPBACK, port: int = 4318, token: str | None = None) -> None:
        check_exposure(host, token)
        try:
            import uvicorn
        except ImportError:
            raise ConfigError('the traces receiver needs the `traces` extra: pip install "llm-scorers[traces]"') from None
        self.collector = collector
        self.host = host
        self.listener = _bind(host, port)
        self.port = self.listener.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(create_app(collector, token), log_level="warning", lifespan="off", access_log=False))
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}/v1/traces"

    def run(self) -> None:
        self.collector.start()
        self.server.run(sockets=[self.listener])

    def start(self) -> TraceReceiver:
        self._thread = threading.Thread(target=self.run, name="scorers-collect", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop taking spans, then close the collector (see TraceCollector.close)."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self.listener.close()
        return self.collector.close(timeout)
