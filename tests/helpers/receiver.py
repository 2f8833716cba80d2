"""A real HTTP receiver on 127.0.0.1 for alert tests: it counts and keeps every JSON body
POSTed to it, and can be told to fail the first requests, to answer slowly, or to hold the
first request (a post in flight, for a signal or a kill to find)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, fail_first: int = 0, status: int = 503, delay: float = 0.0, hold_first: float = 0.0) -> None:
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []  # of every request, taken or not
        self.attempts = 0
        self.fail_first = fail_first
        self.status = status
        self.delay = delay
        #: Seconds the first request is held before it is answered (the later ones wait `delay`).
        self.hold_first = hold_first
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.attempts += 1
                    receiver.headers.append(dict(self.headers.items()))
                    failing = receiver.attempts <= receiver.fail_first
                    if not failing:
                        receiver.bodies.append(json.loads(body))
                    delay = receiver.hold_first if receiver.attempts == 1 and receiver.hold_first else receiver.delay
                time.sleep(delay)
                try:
                    self.send_response(receiver.status if failing else 200)
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the sender is gone (stopped while its request was held)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T000/secret-path"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def kinds(self) -> list[str]:
        return [body.get("kind", body.get("text", "")) for body in self.bodies]
