"""What every page shares: who is signed in, the CSRF check of its forms, rendering, and notices after a redirect.

A page is a module-level `async (pages, request, visit) -> Response`, declared once with its path and
methods (`@PAGES.page("/servers/{server_id}", "GET")`); the route table is built from those
declarations. Each request signs the visitor in from the session cookie (else sends them to sign
in), and a `ServiceError` becomes a notice on the page the action came from. `Pages.form` checks the
CSRF token of every form posted (a hidden `csrf_token` field, or the `X-CSRF-Token` header of a
script's request). Forms post and redirect (303), so every core action works without JavaScript;
the script only makes it smoother. The app keeps its `Pages` on `app.state.pages`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from mcpyard.errors import Forbidden, Invalid, LengthRequired, NotFound, ServiceError, TooLarge
from mcpyard.org._bodies import text_problem
from mcpyard.org._caller import Caller
from mcpyard.org._words import code_span
from mcpyard.org.api import Running, opened
from mcpyard.org.keys import PasswordHashing, same_secret
from mcpyard.org.services import COOKIE, Authenticator, OrgService, SessionSigner, SignInLimits
from mcpyard.org.turns import RateLimits
from mcpyard.org.web._streams import Live
from mcpyard.org.web._text import code_spans, pretty, shown_time, visible, with_results, with_results_cut
from mcpyard.pipeline import FencedResults

__all__ = [
    "NOTICE_COOKIE",
    "Notice",
    "PageHandler",
    "PageRoute",
    "PageRoutes",
    "Pages",
    "PublicHandler",
    "Visit",
    "field",
]

NOTICE_COOKIE = "mcpyard_notice"
MAX_FORM_FIELDS = 400
MAX_FORM_BYTES = 256 * 1024
_NOTICE_CHARS = 1000
NAV = (
    ("servers", "/servers", "MCP servers", False),
    ("tools", "/tools", "Tools & policies", False),
    ("teammates", "/teammates", "Teammates", False),
    ("inbox", "/inbox", "Inbox", False),
    ("assistants", "/assistants", "Assistants", False),
    ("alerts", "/alerts", "Alerts", False),
    ("audit", "/audit", "Audit log", True),
    ("webhooks", "/webhooks", "Webhooks", True),
    ("usage", "/usage", "Usage", True),
    ("limits", "/limits", "Limits", True),
    ("members", "/members", "Members & tokens", False),
    ("clients", "/clients", "MCP clients", False),
)
"""(key, path, label, owners and admins only) of each page in the navigation bar."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One line shown at the top of the next page: what an action did, or why it could not."""

    kind: str  # "done" | "error"
    text: str


@dataclass(frozen=True, slots=True)
class Visit:
    """A signed-in member on a page: who, and the session's CSRF token."""

    caller: Caller
    csrf: str


Endpoint = Callable[[Request], Awaitable[Response]]


def _notice_from(request: Request, signer: SessionSigner) -> Notice | None:
    """The notice the last action left, when its cookie is one of ours (signed: no other site writes a page's words)."""
    raw = request.cookies.get(NOTICE_COOKIE)
    body, _, mac = (raw or "").rpartition(".")
    if not body or not same_secret(mac, signer.csrf(f"notice:{body}")):
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(body.encode() + b"==="))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(value, dict) or value.get("kind") not in ("done", "error"):
        return None
    if not isinstance(value.get("text"), str):
        return None
    return Notice(value["kind"], value["text"][:_NOTICE_CHARS])


def _notice_value(notice: Notice, signer: SessionSigner) -> str:
    text = json.dumps({"kind": notice.kind, "text": notice.text[:_NOTICE_CHARS]})
    body = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
    return f"{body}.{signer.csrf(f'notice:{body}')}"


class Pages:
    """Renders templates and guards page routes; the running service behind them is read at each request, so the
    routes are made once, with the app, and serve whichever service its lifespan opened."""

    def __init__(self, opened: Callable[[], Running | None], live: Live) -> None:
        self._opened = opened
        self.live = live
        """The open live-update streams of this process (`/events`)."""
        self.templates = Environment(
            loader=PackageLoader("mcpyard.org.web", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["pretty"] = pretty
        self.templates.filters["visible"] = visible
        self.templates.filters["when"] = shown_time
        self.templates.filters["code"] = code_spans
        self.templates.filters["results"] = with_results
        self.templates.filters["results_cut"] = with_results_cut
        # A call's result as the service made it: the fence it starts with is the service's own.
        self.templates.filters["fences"] = lambda text: FencedResults.of([text or ""])

    @property
    def running(self) -> Running:
        """What the lifespan opened (503 before it opened, or after it closed)."""
        return opened(self._opened())

    @property
    def svc(self) -> OrgService:
        return self.running.service

    @property
    def authenticate(self) -> Authenticator:
        return self.running.authenticate

    @property
    def sign_ins(self) -> SignInLimits:
        """Failed sign-ins per address, shared with the JSON API's."""
        return self.running.sign_ins

    @property
    def hashing(self) -> PasswordHashing:
        """How new passwords are hashed (and the cost of checking an unknown account's)."""
        return self.running.hashing

    @property
    def rate_limits(self) -> RateLimits:
        """Visitors' turns per minute, shared with the JSON API's."""
        return self.running.rate_limits

    def secure(self, request: Request) -> bool:
        """Whether cookies are marked Secure: always over https, and by default everywhere."""
        return self.running.secure_cookies or request.url.scheme == "https"

    def render(
        self, request: Request, template: str, context: Mapping[str, Any], *, visit: Visit | None, status: int = 200
    ) -> HTMLResponse:
        page = self.templates.get_template(template)
        notice = _notice_from(request, self.authenticate.signer)
        caller = visit.caller if visit else None
        nav = [item for item in NAV if caller is not None and (not item[3] or caller.is_admin)]
        html = page.render(
            request_path=request.url.path,
            visit=visit,
            caller=caller,
            csrf=visit.csrf if visit else "",
            nav=nav,
            notice=notice,
            **context,
        )
        response = HTMLResponse(html, status_code=status)
        if notice is not None:
            response.delete_cookie(NOTICE_COOKIE, path="/")
        return response

    def redirect(self, request: Request, to: str, notice: Notice | None = None) -> RedirectResponse:
        """After a form: back to a page of ours (303), with what happened shown there once."""
        response = RedirectResponse(to if to.startswith("/") and not to.startswith("//") else "/", status_code=303)
        if notice is not None:
            response.set_cookie(
                NOTICE_COOKIE,
                _notice_value(notice, self.authenticate.signer),
                max_age=120,
                httponly=True,
                samesite="lax",
                secure=self.secure(request),
                path="/",
            )
        return response

    async def visit_of(self, request: Request) -> Visit | None:
        cookie = request.cookies.get(COOKIE)
        found = await self.authenticate.session_of(cookie) if cookie else None
        if found is None:
            return None
        caller, csrf = found
        return Visit(caller, csrf)

    async def form(self, request: Request, visit: Visit | None, *, csrf: str | None = None) -> FormData:
        """The posted form, after its CSRF token was checked against the session's (or `csrf`, before sign-in)."""
        expected = csrf if csrf is not None else (visit.csrf if visit else "")
        length = request.headers.get("content-length", "")
        if not length.isdigit():  # browsers always say how long a form is; a stream without end is refused
            raise LengthRequired("length_required", "send the form with its Content-Length")
        if int(length) > MAX_FORM_BYTES:
            raise TooLarge("too_large", f"the form is over {MAX_FORM_BYTES} bytes")
        form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=MAX_FORM_BYTES)
        given = form.get("csrf_token") or request.headers.get("x-csrf-token", "")
        if not isinstance(given, str) or not expected or not same_secret(given, expected):
            raise Forbidden("csrf", "this form is out of date (its CSRF token did not match); reload the page")
        for key, value in form.multi_items():
            problem = text_problem(key) or (text_problem(value) if isinstance(value, str) else None)
            if problem is not None:  # the field's name is shown only when it is itself usable
                where = "a form field's name" if text_problem(key) else f"the form field {code_span(key[:80])}"
                raise Invalid("invalid_request", f"{where}: {problem}")
        return form

    async def serve(self, request: Request, handler: PageHandler, back: str | None) -> Response:
        """Run a signed-in member's page; a refused action goes back to `back` (or the page) with why."""
        visit = await self.visit_of(request)
        if visit is None:
            if request.method != "GET":
                return self.redirect(request, "/login", Notice("error", "your session ended; sign in again"))
            here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return self.redirect(request, f"/login?next={quote(here, safe='/')}")
        if any(text_problem(str(value)) for value in request.path_params.values()):
            return self.error(request, visit, NotFound("not_found", "nothing here has that id"))
        try:
            return await handler(self, request, visit)
        except ServiceError as exc:
            if request.method == "GET":
                return self.error(request, visit, exc)
            target = (back or request.url.path).format(**request.path_params)
            return self.redirect(request, target, Notice("error", exc.message))

    def error(self, request: Request, visit: Visit | None, exc: ServiceError) -> HTMLResponse:
        context = {"title": "Not possible", "status": exc.status, "code": exc.code, "message": exc.message}
        return self.render(request, "error.html", context, visit=visit, status=exc.status)


PageHandler = Callable[[Pages, Request, Visit], Awaitable[Response]]
"""A signed-in member's page."""
PublicHandler = Callable[[Pages, Request], Awaitable[Response]]
"""A page anyone may open (signing in, a published assistant's visitors), which checks what it needs itself."""


def pages_of(request: Request) -> Pages:
    """The app's pages (set by `org_app`)."""
    found = request.app.state.pages
    assert isinstance(found, Pages), "org_app sets app.state.pages"
    return found


@dataclass(frozen=True, slots=True)
class PageRoute:
    """One declared page: `methods` on `path` run `endpoint`."""

    path: str
    methods: tuple[str, ...]
    endpoint: Endpoint


class PageRoutes:
    """A module's pages, in the order they are declared."""

    def __init__(self) -> None:
        self.declared: list[PageRoute] = []

    def page(self, path: str, *methods: str, back: str | None = None) -> Callable[[PageHandler], PageHandler]:
        """Declare a signed-in member's page; a refused action goes back to `back` (a path like `path`), or to
        the page itself. The handler is returned as it is: call it only from its route, which signs in."""

        def declare(handler: PageHandler) -> PageHandler:
            async def endpoint(request: Request) -> Response:
                return await pages_of(request).serve(request, handler, back)

            self.declared.append(PageRoute(path, methods, endpoint))
            return handler

        return declare

    def public(self, path: str, *methods: str) -> Callable[[PublicHandler], PublicHandler]:
        """Declare a page that needs no account."""

        def declare(handler: PublicHandler) -> PublicHandler:
            async def endpoint(request: Request) -> Response:
                return await handler(pages_of(request), request)

            self.declared.append(PageRoute(path, methods, endpoint))
            return handler

        return declare


def field(form: FormData, name: str, default: str = "") -> str:
    """A text field of a form (the default when it is absent)."""
    value = form.get(name, default)
    return value if isinstance(value, str) else default
