"""The workbench's web application: the page, its assets, and the JSON routes it calls.

Every request needs the session's token: in the URL printed at start (`?token=...`), which
sets a cookie for the requests after it. Any other request gets 403, so another local user
cannot drive the workbench. Requests naming another host than the loopback address are
refused too (a DNS-rebinding page names its own).

A cookie is not enough for the API: a browser sends a SameSite=Strict cookie to every port
of 127.0.0.1, so a page served on another port is "same site". Every API request must also
carry the session's key in the `X-Workbench-Session` header, which only the workbench's own
page knows (it is written into the page, which another origin cannot read) and which another
origin cannot send without a CORS preflight the workbench never grants; come from the
workbench's own origin (`Origin`, `Sec-Fetch-Site`) when the browser says where it comes
from; and be JSON. A refused request changes nothing.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ScorerError
from ..judge import JudgeSettings, ResponseCache
from ..scrub import scrub
from ..store import Store
from .datasets import NotOffered
from .messages import one_line
from .review import ROUTES as REVIEW_ROUTES
from .review import ReviewDesk
from .runner import Runner
from .session import Session
from .workspace import OutsideCatalog, SaveConflict

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "scorers_workbench"


@dataclass(frozen=True)
class Settings:
    """How the workbench was started."""

    catalog: Path
    store: Store
    data: Path | None = None
    judge: JudgeSettings = JudgeSettings()
    cache: ResponseCache | None = None
    concurrency: int = 8
    max_cost: float | None = None
    token: str = ""
    session_key: str = ""
    drafts: Path | None = None


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _same(carried: str, secret: str) -> bool:
    return bool(secret) and hmac.compare_digest(carried.encode(), secret.encode())


def _refusal(request: Request, token: str, session_key: str) -> tuple[int, str] | None:
    """Why a request is refused (status, one line), or None to let it through."""
    host = request.headers.get("host") or ""
    if host.rsplit(":", 1)[0].strip("[]") not in ("127.0.0.1", "localhost", "::1"):
        return 403, "this workbench answers on the loopback address only"
    carried = request.query_params.get("token") or request.cookies.get(COOKIE) or ""
    if not _same(carried, token):
        return 403, "this workbench needs the link with its token, as printed when it started"
    if not request.url.path.startswith("/api/"):
        return None
    origin = request.headers.get("origin")
    if origin is not None and origin != f"http://{host}":
        return 403, f"a request from {origin} is refused: only the workbench's own page may call it"
    if request.headers.get("sec-fetch-site") not in (None, "same-origin"):
        return 403, "a request from another site is refused: only the workbench's own page may call it"
    if not _same(request.headers.get("x-workbench-session") or "", session_key):
        return 403, "this request does not come from the workbench's page (no session header): reload the page"
    if request.method != "POST" or (request.headers.get("content-type") or "").split(";")[0].strip().lower() != "application/json":
        return 415, "the workbench's API takes JSON only (POST, Content-Type: application/json)"
    return None


class TokenGate:
    """Lets a request through when it carries the token (URL or cookie) and names a loopback
    host, and, for the API, when it carries the page's session header from the workbench's own
    origin as JSON; 403 (415 for what is not JSON) otherwise. A page loaded with the token in
    its URL gets the cookie."""

    def __init__(self, app: ASGIApp, token: str, session_key: str) -> None:
        self.app = app
        self.token = token
        self.session_key = session_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)

        async def framed(message: MutableMapping[str, Any]) -> None:  # every answer, refusals too
            if message["type"] == "http.response.start":
                message.setdefault("headers", []).extend(NOT_FRAMED)
            await outer(message)

        outer, send = send, framed
        refused = _refusal(request, self.token, self.session_key)
        if refused is not None:
            status, why = refused
            api = request.url.path.startswith("/api/")
            response: Response = JSONResponse({"error": why}, status_code=status) if api else PlainTextResponse(f"{status}: {why}", status_code=status)
            await response(scope, receive, send)
            return
        given = request.query_params.get("token")
        if given is None:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, with_cookie)


#: No other page may show the workbench in a frame (a click there would be a click here).
NOT_FRAMED = [(b"content-security-policy", b"frame-ancestors 'none'"), (b"x-frame-options", b"DENY")]


#: A route's method, of the session (the editor's routes) or of the review desk.
Handler = Callable[[Any, dict[str, Any]], Any]


def _route(session: Session, handler: Handler, blocking: bool = True, owner: object | None = None) -> Callable[[Request], Awaitable[Response]]:
    """A JSON route: the body in, the handler's value out (a method of `owner`, the session by
    default); a mistake of the user's (a bad path, an unknown scorer, a file outside the
    catalog) is one line with status 400 (403 for a write outside the catalog folder), naming
    files as the tuner finds them."""
    words = session.workspace.words

    async def endpoint(request: Request) -> Response:
        try:
            loaded = await request.json()
        except ValueError:
            return JSONResponse({"error": "the request body is not JSON"}, status_code=400)
        body: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
        try:
            called = owner if owner is not None else session
            value = await asyncio.to_thread(handler, called, body) if blocking else await handler(called, body)
        except SaveConflict as exc:
            return JSONResponse({"error": words(one_line(exc)), "conflicts": [conflict.as_json() for conflict in exc.conflicts]}, status_code=409)
        except (OutsideCatalog, NotOffered) as exc:
            return JSONResponse({"error": words(one_line(exc))}, status_code=403)
        except (ScorerError, ValueError, OSError) as exc:
            return JSONResponse({"error": words(one_line(exc))}, status_code=400)
        except Exception as exc:  # a bug of ours: one line on the page, never a key
            return JSONResponse({"error": f"unexpected error ({type(exc).__name__}): {words(scrub(str(exc)))}"}, status_code=500)
        return JSONResponse(value)

    return endpoint


def create_app(settings: Settings) -> Starlette:
    """The workbench for one catalog folder; `settings.token` guards every request."""
    runner = Runner(settings.store, settings.cache, settings.concurrency, settings.max_cost)
    session = Session(settings.catalog, runner, data=settings.data, judge=settings.judge, drafts=settings.drafts)

    # The page carries the session key the API asks for: only a page read from here knows it.
    pages = {
        name: (STATIC / name).read_text(encoding="utf-8").replace('content="SESSION-KEY"', f'content="{settings.session_key}"', 1)
        for name in ("index.html", "review.html")
    }
    desk = ReviewDesk(settings.store, session.catalog)

    async def page(request: Request) -> Response:
        shown = pages["review.html" if request.url.path == "/review" else "index.html"]
        return HTMLResponse(shown, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await runner.stop()  # what is finished is saved; the run is marked interrupted
            session.close()

    blocking_routes: dict[str, Handler] = {
        "state": Session.state, "scorer": Session.scorer, "check": Session.check, "truth": Session.truth, "items": Session.items,
        "status": Session.status, "report": Session.report, "item": Session.item,
        "versions": Session.versions, "diff": Session.diff, "variant": Session.variant, "calibrate": Session.calibrate,
        "aligned": Session.aligned, "accept": Session.accept, "draft": Session.draft, "file": Session.file,
    }
    async_routes: dict[str, Handler] = {
        "estimate": Session.estimate, "run": Session.run, "stop": Session.stop, "save": Session.save, "preview": Session.preview,
        "run_item": Session.run_item,
    }
    routes: list[BaseRoute] = [Route("/", page), Route("/review", page)]
    for name, review_handler in REVIEW_ROUTES.items():
        routes.append(Route(f"/api/{name}", _route(session, review_handler, owner=desk), methods=["POST"]))
    for name, handler in blocking_routes.items():
        routes.append(Route(f"/api/{name}", _route(session, handler), methods=["POST"]))
    for name, handler in async_routes.items():
        routes.append(Route(f"/api/{name}", _route(session, handler, blocking=False), methods=["POST"]))
    routes.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(TokenGate, token=settings.token, session_key=settings.session_key)
    return app
