"""The workbench's web application: the page, its assets, and the JSON routes it calls.

Every route needs the session's token: in the URL printed at start (`?token=...`), which
sets a cookie for the requests after it. Any other request gets 403, so another local user
or a web page open in the same browser cannot drive the workbench. Requests naming another
host than the loopback address are refused too (a DNS-rebinding page names its own).
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
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ScorerError
from ..judge import ResponseCache
from ..scrub import scrub
from ..store import Store
from .runner import Runner
from .session import Session
from .workspace import OutsideCatalog

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "scorers_workbench"


@dataclass(frozen=True)
class Settings:
    """How the workbench was started."""

    catalog: Path
    store: Store
    data: Path | None = None
    model: str | None = None
    cache: ResponseCache | None = None
    concurrency: int = 8
    max_cost: float | None = None
    token: str = ""


def new_token() -> str:
    return secrets.token_urlsafe(24)


class TokenGate:
    """Lets a request through when it carries the token (URL or cookie) and names a loopback
    host; 403 otherwise. A page loaded with the token in its URL gets the cookie."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        given = request.query_params.get("token")
        carried = given or request.cookies.get(COOKIE) or request.headers.get("x-workbench-token") or ""
        if host not in ("127.0.0.1", "localhost", "::1") or not hmac.compare_digest(carried.encode(), self.token.encode()):
            response: Response = PlainTextResponse("403: this workbench needs the link with its token, as printed when it started", status_code=403)
            await response(scope, receive, send)
            return
        if given is None:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, with_cookie)


Handler = Callable[[Session, dict[str, Any]], Any]


def _route(session: Session, handler: Handler, blocking: bool = True) -> Callable[[Request], Awaitable[Response]]:
    """A JSON route: the body in, the handler's value out; a mistake of the user's (a bad
    path, an unknown scorer, a file outside the catalog) is one line with status 400 (403
    for a write outside the catalog folder)."""

    async def endpoint(request: Request) -> Response:
        body: dict[str, Any] = {}
        if request.method == "POST":
            try:
                loaded = await request.json()
            except ValueError:
                return JSONResponse({"error": "the request body is not JSON"}, status_code=400)
            body = loaded if isinstance(loaded, dict) else {}
        else:
            body = dict(request.query_params)
        body.pop("token", None)
        try:
            value = await asyncio.to_thread(handler, session, body) if blocking else await handler(session, body)
        except OutsideCatalog as exc:
            return JSONResponse({"error": scrub(str(exc))}, status_code=403)
        except (ScorerError, ValueError, OSError) as exc:
            return JSONResponse({"error": scrub(str(exc))}, status_code=400)
        except Exception as exc:  # a bug of ours: one line on the page, never a key
            return JSONResponse({"error": f"unexpected error ({type(exc).__name__}): {scrub(str(exc))}"}, status_code=500)
        return JSONResponse(value)

    return endpoint


def create_app(settings: Settings) -> Starlette:
    """The workbench for one catalog folder; `settings.token` guards every request."""
    runner = Runner(settings.store, settings.cache, settings.concurrency, settings.max_cost)
    session = Session(settings.catalog, runner, data=settings.data, model=settings.model)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await runner.stop()  # what is finished is saved; the run is marked interrupted
            session.close()

    blocking_routes: dict[str, Handler] = {
        "state": Session.state, "scorer": Session.scorer, "check": Session.check, "items": Session.items,
        "preview": Session.preview, "status": Session.status, "report": Session.report, "item": Session.item,
        "versions": Session.versions, "diff": Session.diff, "variant": Session.variant, "calibrate": Session.calibrate,
        "aligned": Session.aligned, "accept": Session.accept,
    }  # fmt: skip
    async_routes: dict[str, Handler] = {"estimate": Session.estimate, "run": Session.run, "stop": Session.stop, "save": Session.save}
    routes: list[BaseRoute] = [Route("/", page)]
    for name, handler in blocking_routes.items():
        routes.append(Route(f"/api/{name}", _route(session, handler), methods=["GET", "POST"]))
    for name, handler in async_routes.items():
        routes.append(Route(f"/api/{name}", _route(session, handler, blocking=False), methods=["POST"]))
    routes.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(TokenGate, token=settings.token)
    return app
