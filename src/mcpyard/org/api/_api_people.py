"""People and programs in the JSON API: login, browser sessions, members and API tokens (ORG-1, API-6)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import Forbidden, Invalid, NotSignedIn, ServiceError, UnsupportedMedia
from mcpyard.org._bodies import check_text, json_body
from mcpyard.org._caller import Caller
from mcpyard.org.keys import PRODUCTION_HASHING, PasswordHashing
from mcpyard.org.services import (
    COOKIE,
    Authenticator,
    SignInLimits,
    TooManySignIns,
    change_role,
    create_token,
    invite_member,
    list_members,
    list_tokens,
    make_token,
    remove_member,
    revoke_member_token,
    verify_login,
)
from mcpyard.org.store import Member

__all__ = ["people_routes"]

LOGIN_FIELDS = ("email", "password")
MEMBER_FIELDS = ("email", "role", "password")
TOKEN_FIELDS = ("label",)
ROLE_FIELDS = ("role",)


def _member_json(member: Member) -> dict[str, str]:
    return {"id": member.id, "email": member.email, "role": member.role, "org_id": member.org_id}


def _refused(exc: ServiceError) -> JSONResponse:
    response = JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status)
    if isinstance(exc, TooManySignIns):
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


def _credentials(body: dict[str, Any]) -> tuple[str, str]:
    email, password = body.get("email"), body.get("password")
    if not isinstance(email, str) or not isinstance(password, str):
        raise Invalid("invalid_request", "give `email` and `password`")
    return email, password


def _same_site_json(request: Request) -> None:
    """Refuse a sign-in another site could send: a cross-site form cannot say `application/json` (THREATS: CSRF).

    Starting a browser session sets a cookie; without this check a page elsewhere could post a `text/plain`
    form shaped like JSON and sign the visitor's browser in to an account of its choosing.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise UnsupportedMedia("unsupported_media_type", "send the sign-in as JSON (Content-Type: application/json)")
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise Forbidden("csrf", "a browser session starts only from this service's own pages")


def people_routes(
    db: async_sessionmaker[AsyncSession],
    authenticate: Authenticator,
    *,
    secure_cookies: bool,
    sign_ins: SignInLimits | None = None,
    wake: Callable[[str], None] | None = None,
    hashing: PasswordHashing = PRODUCTION_HASHING,
) -> list[Route]:
    """Routes for signing in and for managing members and tokens; `wake` tells a call waiting in this process on a
    question that the question ended (a removed member's)."""
    sign_ins = sign_ins or SignInLimits()

    def guarded(
        handler: Callable[[Request, Caller], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                caller = await authenticate(request)
                check_text(request)
                return await handler(request, caller)
            except ServiceError as exc:
                return JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status)

        return endpoint

    async def _login(request: Request) -> Member:
        check_text(request)
        address = request.client.host if request.client is not None else "unknown"
        # Counted before anything is awaited: attempts sent at once are each counted (see `_throttle`).
        attempt = sign_ins.reserve(address)
        try:
            email, password = _credentials(await json_body(request, fields=LOGIN_FIELDS))
        except ServiceError:
            sign_ins.give_back(address, attempt)  # no password was tried
            raise
        async with db() as session:
            member = await verify_login(session, email=email, password=password, hashing=hashing)
        if member is None:  # the same answer for an unknown email and a wrong password (THREATS)
            raise NotSignedIn("unauthorized", "that email and password do not match a member")
        sign_ins.give_back(address, attempt)
        return member

    async def login(request: Request) -> Response:
        try:
            member = await _login(request)
            async with db() as session:
                _, token = await create_token(session, member, label="login")
        except ServiceError as exc:
            return _refused(exc)
        return JSONResponse({"token": token})

    async def session_start(request: Request) -> Response:
        try:
            _same_site_json(request)
            member = await _login(request)
        except ServiceError as exc:
            return _refused(exc)
        response = JSONResponse({"member": _member_json(member)})
        csrf = await authenticate.start_session(request, response, member, secure=secure_cookies)
        response.headers["X-CSRF-Token"] = csrf
        return response

    async def session_end(request: Request, caller: Caller) -> Response:
        del caller
        await authenticate.end_session(request.cookies.get(COOKIE))  # every copy of the cookie, everywhere
        response = Response(status_code=204)
        response.delete_cookie(COOKIE, path="/")
        return response

    async def members(request: Request, caller: Caller) -> Response:
        if request.method == "GET":  # any member may see who else is in the organization
            async with db() as session:
                return JSONResponse(await list_members(session, caller.org_id))
        body = await json_body(request, fields=MEMBER_FIELDS)
        member = await invite_member(
            db, caller, body.get("email"), body.get("role"), body.get("password"), hashing=hashing
        )
        return JSONResponse(_member_json(member), status_code=201)

    async def member(request: Request, caller: Caller) -> Response:
        member_id = request.path_params["member_id"]
        if request.method == "DELETE":
            removal = await remove_member(db, caller, member_id)
            for question in removal.questions:
                if wake is not None:
                    wake(question)
            return Response(status_code=204)
        body: dict[str, Any] = await json_body(request, fields=ROLE_FIELDS)
        changed = await change_role(db, caller, member_id, body.get("role"))
        return JSONResponse(_member_json(changed))

    async def tokens(request: Request, caller: Caller) -> Response:
        if request.method == "GET":  # the caller's own, never another member's
            async with db() as session:
                return JSONResponse(await list_tokens(session, caller.org_id, caller.member_id))
        body = await json_body(request, fields=TOKEN_FIELDS)
        row, token = await make_token(db, caller, body.get("label", ""))
        return JSONResponse({"token": token, "id": row.id}, status_code=201)

    async def token(request: Request, caller: Caller) -> Response:
        await revoke_member_token(db, caller, request.path_params["token_id"])
        return Response(status_code=204)

    return [
        Route("/api/v1/login", login, methods=["POST"]),
        Route("/api/v1/session", session_start, methods=["POST"]),
        Route("/api/v1/session", guarded(session_end), methods=["DELETE"]),
        Route("/api/v1/members", guarded(members), methods=["GET", "POST"]),
        Route("/api/v1/members/{member_id}", guarded(member), methods=["PATCH", "DELETE"]),
        Route("/api/v1/tokens", guarded(tokens), methods=["GET", "POST"]),
        Route("/api/v1/tokens/{token_id}", guarded(token), methods=["DELETE"]),
    ]
