"""Serving the workbench with uvicorn on the loopback address, with a token in its URL."""

from __future__ import annotations

import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..judge import JudgeSettings, ResponseCache
from ..scrub import install_log_filter
from ..store import Store, open_store

LOOPBACK = "127.0.0.1"


class WorkbenchMissing(ConfigError):
    """The `workbench` extra (Starlette, uvicorn) is not installed."""


def _require_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise WorkbenchMissing('the workbench needs the `workbench` extra: pip install "llm-scorers[workbench]"') from None


def _bind(host: str, port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise ConfigError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror}); give another port, or 0 for a free one") from None
    listener.listen(128)
    return listener


class Workbench:
    """A workbench server on a thread of its own (tests, the screenshot script), or in the
    foreground (`run`, the CLI)."""

    def __init__(
        self,
        catalog: Path,
        store: Store | str | Path,
        *,
        data: Path | None = None,
        judge: JudgeSettings | None = None,
        cache: ResponseCache | str | Path | bool | None = True,
        port: int = 0,
        concurrency: int = 8,
        max_cost: float | None = None,
        token: str | None = None,
        drafts: Path | None = None,
    ) -> None:
        _require_extra()
        import uvicorn

        from .app import Settings, create_app, new_token

        opened = open_store(store)
        assert opened is not None
        self.token = token or new_token()
        #: What the page sends in a header with every API request (see app.py): not the token.
        self.session_key = new_token()
        settings = Settings(
            catalog=catalog, store=opened, data=data, judge=judge or JudgeSettings(), cache=ResponseCache.of(cache), concurrency=concurrency,
            max_cost=max_cost, token=self.token, session_key=self.session_key, drafts=drafts,
        )
        self.app = create_app(settings)  # a bad catalog folder fails here, before a port is taken
        self.listener = _bind(LOOPBACK, port)
        self.port = self.listener.getsockname()[1]
        install_log_filter()  # an API key never reaches the server's log
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="on"))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/?token={self.token}"

    def run(self) -> None:
        """Serve until Ctrl-C (a run going on is stopped; what it finished is kept)."""
        self.server.run(sockets=[self.listener])

    def start(self) -> Workbench:
        self._thread = threading.Thread(target=self.run, name="scorers-workbench", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self.listener.close()


def serve(
    catalog: Path,
    store: Store | str | Path,
    *,
    open_browser: bool = True,
    announce: Callable[[str], Any] = print,
    **options: Any,
) -> None:
    """Start the workbench in the foreground, print its address (with the token), and open
    it in the browser unless told not to."""
    workbench = Workbench(catalog, store, **options)
    announce(f"The workbench for {catalog} is at {workbench.url}")
    announce("Only this machine can reach it, and only with the token in that link. Ctrl-C stops it (a run keeps what it finished).")
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(workbench.url,)).start()
    try:
        workbench.run()
    except KeyboardInterrupt:  # uvicorn stops gracefully, then passes Ctrl-C on: the way to stop it
        pass
    announce("The workbench stopped; what its runs finished is in the results store.")
