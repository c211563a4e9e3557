"""The console's FastAPI router: login / logout, the auth and CSRF gates, static files.

`build_console(backend_provider, token)` returns an `APIRouter` to include under `/console` and
the `StaticFiles` app to mount at `/console/static`. Every page and action requires a valid
session cookie; every state change (POST) also requires the CSRF token (form field `csrf` or
header `X-CSRF-Token`), else 403. Unauthenticated: pages redirect to the login form, everything
else gets 401 — never data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape

from pallas.core.errors import PermissionDenied
from pallas.providers.error_text import llm_error_zh
from pallas.web.auth import COOKIE, SESSION_TTL_S, ConsoleAuth
from pallas.web.backend import ConsoleBackend
from pallas.web.views import chat_zh, processor_zh, task_zh

log = logging.getLogger("pallas.console")
HERE = Path(__file__).parent
PREFIX = "/console"
# scripts only from our own static files (no inline handlers); inline styles for bar widths
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

templates = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
# `tojson` shows Chinese as Chinese (not \uXXXX); it still escapes < > & ' for HTML.
templates.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
templates.globals["task_zh"] = task_zh  # model tasks and error codes in Chinese on every page
templates.globals["llm_error_zh"] = llm_error_zh
templates.globals["processor_zh"] = processor_zh
templates.globals["chat_zh"] = chat_zh  # group 0 holds the private chats: 私聊


class NotLoggedIn(PermissionDenied):
    def __init__(self, page: bool) -> None:
        self.page = page


@dataclass(frozen=True, slots=True)
class Session:
    sid: str
    csrf: str
    backend: ConsoleBackend


@dataclass(frozen=True, slots=True)
class Listening:
    """Where the bot listens for OneBot connections, and with which access token ("" = none):
    NoneBot's settings, known to the console once the bot is up (the first-run checklist)."""

    host: str = "127.0.0.1"
    port: int = 8080
    access_token: str = ""


class Console:
    """Holds the backend provider and the auth; pages call `session()` / `render()`."""

    def __init__(self, backend: Callable[[], ConsoleBackend | None]) -> None:
        self._backend = backend
        self._auth: ConsoleAuth | None = None
        self.listening: Listening | None = None  # None until started
        # OneBot frames refused since start, by kind (the edge's counters; none before start)
        self.refused_frames: Callable[[], Mapping[str, int]] = dict

    def start(
        self,
        auth: ConsoleAuth,
        listening: Listening | None = None,
        refused_frames: Callable[[], Mapping[str, int]] | None = None,
    ) -> None:
        self._auth = auth
        self.listening = listening
        if refused_frames is not None:
            self.refused_frames = refused_frames

    @property
    def auth(self) -> ConsoleAuth:
        if self._auth is None:
            raise HTTPException(503, "the bot is starting")
        return self._auth

    def backend(self) -> ConsoleBackend:
        backend = self._backend()
        if backend is None:
            raise HTTPException(503, "the bot is starting")
        return backend

    async def session(self, request: Request) -> Session:
        sid = await self.auth.session_id(request.cookies.get(COOKIE))
        if sid is None:
            raise NotLoggedIn(page=request.method == "GET" and "hx-request" not in request.headers)
        return Session(sid, self.auth.csrf_token(sid), self.backend())

    async def checked(self, request: Request) -> Session:
        """A logged-in session whose POST carries the right CSRF token (else 403)."""
        session = await self.session(request)
        candidate = request.headers.get("x-csrf-token")
        if candidate is None:
            form = await request.form()
            value = form.get("csrf")
            candidate = value if isinstance(value, str) else None
        if not self.auth.csrf_ok(session.sid, candidate):
            raise HTTPException(403, "missing or wrong CSRF token")
        return session

    def render(self, name: str, session: Session | None, **values: Any) -> HTMLResponse:
        html = templates.get_template(name).render(
            prefix=PREFIX, csrf=session.csrf if session else "", **values
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def login_routes(router: APIRouter, console: Console) -> None:
    @router.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request) -> Response:
        return console.render("login.html", None, error="")

    @router.post("/login")
    async def login(request: Request, token: str = Form("")) -> Response:
        client = _client(request)
        if await console.auth.login_blocked(client):
            page = console.render("login.html", None, error="尝试次数过多，请 5 分钟后再试")
            page.status_code = 429
            return page
        if not console.auth.token_matches(token):
            await console.auth.record_failure(client)
            page = console.render("login.html", None, error="令牌不对")
            page.status_code = 401
            return page
        await console.auth.clear_failures(client)
        response = RedirectResponse(f"{PREFIX}/", status_code=303)
        response.set_cookie(
            COOKIE,
            console.auth.new_session(),
            max_age=SESSION_TTL_S,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=PREFIX,
        )
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        await console.checked(request)
        await console.auth.revoke(request.cookies.get(COOKIE))
        log.info("console: logged out (the session's cookie is refused from now on)")
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(COOKIE, path=PREFIX)
        return response


def not_logged_in_response(exc: NotLoggedIn) -> Response:
    if exc.page:
        return RedirectResponse(f"{PREFIX}/login", status_code=303)
    return Response("login required", status_code=401, media_type="text/plain")


class ConsoleRoute(APIRoute):
    """Turns `NotLoggedIn` into the redirect / 401 inside the route itself, so the console needs
    no exception handler on the host app (whose handlers are fixed once it has served)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except NotLoggedIn as exc:
                return not_logged_in_response(exc)
            except RequestValidationError as exc:
                if not bad_group_id(exc):
                    raise
                return group_not_found_page(request.path_params.get("group_id", ""))

        return guarded


def bad_group_id(exc: RequestValidationError) -> bool:
    """The URL's group id is not a number (`/g/abc/routing`)."""
    return any(tuple(e.get("loc", ()))[:2] == ("path", "group_id") for e in exc.errors())


def group_not_found_page(raw: str) -> HTMLResponse:
    """A Chinese 404 page (not FastAPI's JSON) for a group id that is not a number; it shows
    no data, so it needs no session."""
    html = templates.get_template("not_found.html").render(
        prefix=PREFIX, csrf="", page="", message=f"「{raw}」不是群号：群号是一串数字。"
    )
    return HTMLResponse(html, status_code=404, headers=SECURITY_HEADERS)


def static_files() -> StaticFiles:
    return StaticFiles(directory=HERE / "static")
