"""The organization service as one Starlette app: its routes, its parts opened in the lifespan, its errors.

`org_app(settings)` builds the app with every route, the API's and the pages', made once;
serving it (`mcpyard org serve`, or a test's uvicorn) opens the database, checks its schema,
reads the sealing key, and keeps one host per organization open until it stops. Handlers read
what the lifespan opened from the app's state (`mcpyard org serve` opens the service before it
listens, so a missing database is one line, not a traceback: a server's own lifespan runs
nothing). Approved runs and turns a stopped replica left half-run end as failed, and questions no
process holds any more expire, at start and every half minute, once their holder's lease lapsed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from sqlalchemy.exc import InterfaceError, OperationalError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from mcpyard.connect import EgressGuard
from mcpyard.errors import Invalid, ServiceError, Unavailable, UrlRefused
from mcpyard.ops import IncomingTrace
from mcpyard.org._bodies import MAX_BODY_BYTES
from mcpyard.org.api import (
    BodyLimits,
    Running,
    api_routes,
    error_response,
    health_routes,
    metrics_routes,
    opened,
)
from mcpyard.org.hosts import OrgHosts
from mcpyard.org.keys import PRODUCTION_HASHING, PasswordHashing, Sealer, key_source
from mcpyard.org.mcp import MCP_METHODS, MCP_PATHS, McpEndpoint
from mcpyard.org.oauth import oauth_routes
from mcpyard.org.services import (
    APPROVAL_WAIT_SECONDS,
    HOLD_SECONDS,
    QUESTION_SECONDS,
    Authenticator,
    ModelFactory,
    OrgService,
    SessionSigner,
    SignInLimits,
    WebhookSettings,
    approval_key,
    deliver_webhooks,
    hand_on_tasks,
    no_one_to_ask,
    sweep,
    sweep_questions,
    take_over_tasks,
)
from mcpyard.org.store import check_schema, listen, open_database, utcnow
from mcpyard.org.turns import RateLimits, after_decision
from mcpyard.org.web import Live, Pages, SecurityHeaders, web_routes

__all__ = ["OrgSettings", "org_app"]

LISTENING = "hearing the other replicas' changes"
NOT_LISTENING = "not hearing the other replicas (the database is away?): each call still reads the change counter"
SWEEP_SECONDS = 30.0
"""How often each process looks for questions no process holds any more."""
_log = logging.getLogger("mcpyard.org")


@dataclass(frozen=True, slots=True)
class OrgSettings:
    """How the service runs."""

    database_url: str
    data_home: Path
    environ: Mapping[str, str] = field(default_factory=dict)
    dev: bool = False
    """Plain `http` to loopback servers allowed (development only, NET-1)."""
    secure_cookies: bool = True
    """Session cookies marked Secure (off only for plain-http development)."""
    guard: EgressGuard | None = None
    """The outbound guard (default: the real one; tests give one with a resolver of their own)."""
    models: ModelFactory | None = None
    """The model every turn talks to (default: each organization's endpoint; the demo gives a scripted one)."""
    rate_limits: RateLimits = field(default_factory=RateLimits)
    """Visitors' turns per minute, per visitor and per assistant."""
    live_seconds: float = 1.0
    """How often the pages' live updates look for changes."""
    sign_ins: SignInLimits | None = None
    """Failed sign-ins allowed per address (default: 10 in 5 minutes)."""
    password_hashing: PasswordHashing = PRODUCTION_HASHING
    """argon2id's cost for new passwords (the production parameters; tests give cheaper ones)."""
    question_seconds: float = QUESTION_SECONDS
    """How long a server's question waits in the inbox before it expires and the server hears `cancel`."""
    lease_seconds: float = HOLD_SECONDS
    """How far ahead a replica holds the approved runs and turns it runs; a replica that died leaves them to be
    ended that long after (and at most `sweep_seconds` more)."""
    sweep_seconds: float = SWEEP_SECONDS
    """How often each replica looks for work no replica holds any more."""
    public_url: str | None = None
    """Where people and clients reach the service (`https://mcp.example.com`): the only `Host` and `Origin` its MCP
    endpoint answers (DNS rebinding). None: this machine's loopback addresses only."""
    approval_wait_seconds: float = APPROVAL_WAIT_SECONDS
    """How long an ask-first call made over MCP waits for a person's decision (it stays in the inbox after)."""
    max_body_bytes: int = MAX_BODY_BYTES
    """The largest request body any route reads (1 MiB); a longer one is refused with 413 as it arrives."""
    body_idle_seconds: float = 10.0
    """How long a request body may stop arriving before it is refused with 408."""
    body_total_seconds: float = 30.0
    """How long a request body may take to arrive in all before it is refused with 408."""
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    """How webhook deliveries are sent: attempts, backoff, timeout, how often a replica looks for due ones."""
    clock: Callable[[], datetime] = utcnow
    """The time calls are counted at against the organizations' limits (UTC; tests give a clock they move)."""


@dataclass
class OrgState:
    """What the app holds, for whoever needs to look (tests, the demo): the pages' live updates, and what the
    lifespan opened while it is open."""

    live: Live
    """The pages' open live-update streams."""
    service: OrgService | None = None
    authenticate: Authenticator | None = None


def _session_key(sealer: Sealer) -> bytes:
    """The cookie signing key, derived from the sealing key (never stored, never the key itself)."""
    keyring = sealer.keyring()
    return hmac.new(keyring.keys[keyring.current], b"mcpyard org session cookies", hashlib.sha256).digest()


_SQLITE_REASONS = ("database is locked", "database table is locked", "disk I/O error", "unable to open database file")
"""SQLite's own words for why it refused, which hold no value of the request: said on the log beside the class."""


def _sqlite_reason(exc: Exception) -> str:
    reason = str(getattr(exc, "orig", "") or "")
    return f": {reason}" if reason in _SQLITE_REASONS else ""


def _wants_page(request: Request) -> bool:
    """A browser asking for a page (not a program calling the API)."""
    path = request.url.path
    return not path.startswith(("/api/", "/public/")) and "text/html" in request.headers.get("accept", "")


def _page(status: int, title: str, text: str) -> HTMLResponse:
    """A page for an address the console does not have, or a failure; plain text in a fixed frame."""
    body = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} · mcpyard</title>'
        '<link rel="stylesheet" href="/static/style.css"></head><body><main id="main">'
        f'<h1>{title}</h1><p class="notice error">{html.escape(text)}</p><p><a href="/">Back to the start</a></p>'
        "</main></body></html>"
    )
    return HTMLResponse(body, status_code=status)


async def _keep_sweeping(service: OrgService, every: float) -> None:
    """Questions, approved runs and turns whose process stopped holding them end, and long calls whose process stopped
    holding them are taken over, on whichever replica looks first."""
    while True:
        await anyio.sleep(every)
        try:
            await sweep(service)
            await sweep_questions(service)
            await take_over_tasks(service)
        except Exception as exc:  # the database is away for a moment: the next round tries again
            _log.warning("sweeping lapsed work failed (%s)", type(exc).__name__)


@dataclass(frozen=True, slots=True)
class _Replicas:
    """What a replica does with the others' announcements (`Ears`): a question answered wakes the call waiting on it
    here; any other change brings the organization's host in step; after a reconnection, every host."""

    service: OrgService

    def heard(self, payload: str) -> None:
        org_id, _, what = payload.partition(" ")
        kind, _, ident = what.partition(" ")
        if kind == "question":
            self.service.wakeups.wake(ident)
        elif kind == "approval":
            self.service.wakeups.wake(approval_key(ident))
        else:
            self.service.hosts.heard(org_id)

    def missed(self) -> None:
        self.service.hosts.missed()

    def listening(self, up: bool) -> None:
        self.service.hosts.hearing = LISTENING if up else NOT_LISTENING


def org_app(settings: OrgSettings) -> Starlette:
    """The organization service's app; its parts open when it is served."""
    state = OrgState(live=Live(settings.live_seconds))
    mcp = McpEndpoint()
    guard = settings.guard or EgressGuard(dev=settings.dev)

    async def check_url(url: str) -> str:
        try:
            return (await guard.check_url(url)).url
        except UrlRefused as exc:
            raise Invalid("url_refused", exc.message) from None

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_database(settings.database_url) as db:
            await check_schema(db)
            sealer = Sealer(key_source(settings.environ, settings.data_home))
            # Every host declares elicitation; each call brings the elicitor that asks its own people.
            options = {"egress": guard, "elicitor": no_one_to_ask}
            hosts = OrgHosts(db.sessions, sealer, settings.data_home, host_options=lambda: options)
            service = OrgService(
                db.sessions,
                hosts,
                sealer,
                check_url,
                settings.models,
                guard,
                question_seconds=settings.question_seconds,
                hold_seconds=settings.lease_seconds,
                approval_wait_seconds=settings.approval_wait_seconds,
                decided=after_decision,
                clock=settings.clock,
            )
            authenticate = Authenticator(db.sessions, SessionSigner(_session_key(sealer)))
            sign_ins = settings.sign_ins or SignInLimits()
            state.service, state.authenticate = service, authenticate
            app.state.running = Running(
                service,
                authenticate,
                sign_ins,
                settings.rate_limits,
                secure_cookies=settings.secure_cookies,
                hashing=settings.password_hashing,
            )
            async with (
                hosts.running(),
                mcp.running(service, settings.public_url),
                anyio.create_task_group() as sweeping,
            ):
                if not db.is_sqlite:  # SQLite's replicas read the change counter before each call instead
                    hosts.hearing = NOT_LISTENING
                    await sweeping.start(listen, db.url, _Replicas(service))
                await sweep(service)
                await sweep_questions(service)
                await take_over_tasks(service)
                sweeping.start_soon(_keep_sweeping, service, settings.sweep_seconds)
                sweeping.start_soon(deliver_webhooks, service, settings.webhooks)
                try:
                    yield
                finally:
                    await hand_on_tasks(service)  # before the calls following them end: left running, not cancelled
                    sweeping.cancel_scope.cancel()
                    app.state.running = None
                    state.service = state.authenticate = None

    async def not_found(request: Request, exc: Exception) -> Response:
        del exc
        if _wants_page(request):
            return _page(404, "Not found", "Nothing is at this address.")
        return error_response(404, "not_found", f"no such endpoint: {request.method} {request.url.path}")

    async def not_allowed(request: Request, exc: Exception) -> Response:
        del exc
        if _wants_page(request):
            return _page(405, "Not here", "This address does not take that request; go back to the page you came from.")
        return error_response(405, "method_not_allowed", f"{request.url.path} does not take {request.method}")

    async def failed(request: Request, exc: Exception) -> Response:
        # One line, no traceback, and nothing of what the request carried (ERR-1).
        message = f"the service failed ({type(exc).__name__}); please report it"
        if _wants_page(request):
            return _page(500, "Something went wrong", message)
        return error_response(500, "internal_error", message)

    async def database_away(request: Request, exc: Exception) -> Response:
        # The database dropped or refused the connection (restarting, failing over): the request is not served,
        # nothing of it was acknowledged, and the next one may well be. One line on the log, no traceback.
        _log.warning("a request found the database away (%s%s)", type(exc).__name__, _sqlite_reason(exc))
        away = Unavailable(
            "database_unavailable",
            "the database did not answer (it may be restarting); nothing was done: try again in a moment",
        )
        if _wants_page(request):
            return _page(away.status, "Try again in a moment", away.message)
        response = error_response(away.status, away.code, away.message)
        response.headers["Retry-After"] = "2"
        return response

    async def refused(request: Request, exc: Exception) -> Response:
        # A refusal no route answered itself (a page asked for while the service is not serving).
        assert isinstance(exc, ServiceError)
        if _wants_page(request):
            return _page(exc.status, "Not possible", exc.message)
        return error_response(exc.status, exc.code, exc.message, exc.details)

    handlers: dict[Any, Any] = {
        404: not_found,
        405: not_allowed,
        500: failed,
        ServiceError: refused,
        OperationalError: database_away,
        InterfaceError: database_away,
        Exception: failed,
    }
    app = Starlette(
        routes=[
            *api_routes(),
            *health_routes(),
            *metrics_routes(),
            *(Route(path, mcp, methods=list(MCP_METHODS)) for path in MCP_PATHS),
            *oauth_routes(lambda: opened(getattr(app.state, "running", None)).service),
            *web_routes(),
        ],
        lifespan=lifespan,
        exception_handlers=handlers,
        middleware=[
            Middleware(IncomingTrace),
            Middleware(SecurityHeaders),
            Middleware(
                BodyLimits,
                max_bytes=settings.max_body_bytes,
                idle_seconds=settings.body_idle_seconds,
                total_seconds=settings.body_total_seconds,
            ),
        ],
    )
    app.state.org = state
    app.state.pages = Pages(lambda: getattr(app.state, "running", None), state.live)
    return app
