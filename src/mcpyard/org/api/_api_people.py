"""People and programs in the JSON API: signing in, browser sessions, who is asking, members and API tokens
(ORG-1, API-6)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpyard.errors import Forbidden, Invalid, NotSignedIn, ServiceError, UnsupportedMedia
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._operations import Operations, running
from mcpyard.org.api._schema import NSTR, STR, S, array, enum, obj, op
from mcpyard.org.keys import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from mcpyard.org.services import (
    COOKIE,
    MemberIdentityView,
    change_role,
    create_token,
    invite_member,
    list_grants,
    list_members,
    list_tokens,
    make_token,
    remove_member,
    revoke_grant,
    revoke_member_token,
    verify_login,
)
from mcpyard.org.store import Member

__all__ = ["API", "BODIES"]

API = Operations()
LOGIN_FIELDS = ("email", "password")
MEMBER_FIELDS = ("email", "role", "password")
TOKEN_FIELDS = ("label",)
ROLE_FIELDS = ("role",)

_ROLE = enum("owner", "admin", "member")
_MEMBER = obj(["id", "email", "role", "org_id"], id=STR, email=STR, role=_ROLE, org_id=STR)
_LISTED_MEMBER = obj(["id", "email", "role", "created_at"], id=STR, email=STR, role=_ROLE, created_at=STR)
_LISTED_TOKEN = obj(["id", "label", "created_at", "last_used_at"], id=STR, label=STR, created_at=STR, last_used_at=NSTR)
_PASSWORD: S = {"type": "string", "minLength": MIN_PASSWORD_LENGTH, "maxLength": MAX_PASSWORD_LENGTH}
_CREDENTIALS = obj(["email", "password"], email=STR, password=STR)
_GRANT = obj(
    ["id", "client_id", "client_name", "resource", "scopes", "created_at", "last_used_at"],
    id=STR,
    client_id=STR,
    client_name=STR,
    resource=STR,
    scopes=array(STR),
    created_at=STR,
    last_used_at=NSTR,
)
BODIES = {"member_identity": _MEMBER, "member": _LISTED_MEMBER, "token": _LISTED_TOKEN, "grant": _GRANT}
"""The bodies these operations answer with, by the name the views test pairs with a service's view."""


def _member_json(member: Member) -> MemberIdentityView:
    return {"id": member.id, "email": member.email, "role": member.role, "org_id": member.org_id}


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


async def _login(request: Request) -> Member:
    """The member these credentials name; failed attempts are counted per address before anything is awaited."""
    parts = running(request)
    address = request.client.host if request.client is not None else "unknown"
    # Counted before anything is awaited: attempts sent at once are each counted (see `_throttle`).
    attempt = parts.sign_ins.reserve(address)
    try:
        email, password = _credentials(await json_body(request, fields=LOGIN_FIELDS))
    except ServiceError:
        parts.sign_ins.give_back(address, attempt)  # no password was tried
        raise
    async with parts.service.db() as session:
        member = await verify_login(session, email=email, password=password, hashing=parts.hashing)
    if member is None:  # the same answer for an unknown email and a wrong password (THREATS)
        raise NotSignedIn("unauthorized", "that email and password do not match a member")
    parts.sign_ins.give_back(address, attempt)
    return member


@API.public(
    "POST",
    "/api/v1/login",
    op(
        "A new API token for the member with this email and password",
        {"200": ("the new token, shown once", obj(["token"], token=STR))},
        "400 401 413 422 429",
        body=_CREDENTIALS,
    ),
)
async def login(request: Request) -> Response:
    member = await _login(request)
    async with running(request).service.db() as session:
        _, token = await create_token(session, member, label="login")
    return JSONResponse({"token": token})


@API.public(
    "POST",
    "/api/v1/session",
    op(
        "Sign in for the web pages: a session cookie, and its CSRF token in the X-CSRF-Token header",
        {"200": ("signed in", obj(["member"], member=_MEMBER))},
        "400 401 403 413 415 422 429",
        body=_CREDENTIALS,
    ),
)
async def start_session(request: Request) -> Response:
    _same_site_json(request)
    member = await _login(request)
    parts = running(request)
    response = JSONResponse({"member": _member_json(member)})
    csrf = await parts.authenticate.start_session(request, response, member, secure=parts.secure_cookies)
    response.headers["X-CSRF-Token"] = csrf
    return response


@API.member(
    "DELETE",
    "/api/v1/session",
    op(
        "Sign out: the session ends on the server, so every copy of its cookie is refused from now on",
        {"204": ("signed out", None)},
        "401 403",
    ),
)
async def end_session(request: Request, caller: Caller) -> Response:
    del caller
    await running(request).authenticate.end_session(request.cookies.get(COOKIE))  # every copy, everywhere
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/")
    return response


@API.member("GET", "/api/v1/me", op("Who the caller is", {"200": ("the caller", _MEMBER)}, "401"))
async def me(request: Request, caller: Caller) -> Response:
    del request
    shown = MemberIdentityView(id=caller.member_id, email=caller.email, role=caller.role, org_id=caller.org_id)
    return JSONResponse(shown)


@API.member(
    "GET",
    "/api/v1/members",
    op("The organization's members, by email", {"200": ("every member", array(_LISTED_MEMBER))}, "401"),
)
async def members(request: Request, caller: Caller) -> Response:
    async with running(request).service.db() as session:  # any member may see who else is in the organization
        return JSONResponse(await list_members(session, caller.org_id))


@API.member(
    "POST",
    "/api/v1/members",
    op(
        "Add a member (owner, admin; only an owner adds an owner)",
        {"201": ("the new member", _MEMBER)},
        "400 401 403 413 422",
        body=obj(["email", "role", "password"], email=STR, role=_ROLE, password=_PASSWORD),
    ),
)
async def add_member(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=MEMBER_FIELDS)
    parts = running(request)
    member = await invite_member(
        parts.service.db, caller, body.get("email"), body.get("role"), body.get("password"), hashing=parts.hashing
    )
    return JSONResponse(_member_json(member), status_code=201)


@API.member(
    "PATCH",
    "/api/v1/members/{member_id}",
    op(
        "Change a member's role (owner, admin; only an owner grants or takes the owner role; 409 `last_owner`"
        " for the last owner's demotion); audited as `member.role_changed`",
        {"200": ("the member as it now is", _MEMBER)},
        "400 401 403 404 409 413 422",
        body=obj(["role"], role=_ROLE),
    ),
)
async def change_member(request: Request, caller: Caller) -> Response:
    body: dict[str, Any] = await json_body(request, fields=ROLE_FIELDS)
    changed = await change_role(running(request).service.db, caller, request.path_params["member_id"], body.get("role"))
    return JSONResponse(_member_json(changed))


@API.member(
    "DELETE",
    "/api/v1/members/{member_id}",
    op(
        "Remove a member (owner, admin; only an owner removes an owner; anyone may remove themselves, i.e."
        " leave; 409 `last_owner` for the last owner). Its sessions end and its API tokens are revoked at"
        " once, the approvals it started that wait are declined and its calls' pending questions cancelled;"
        " its records stay. Audited as `member.removed`",
        {"204": ("removed", None)},
        "401 403 404 409",
    ),
)
async def delete_member(request: Request, caller: Caller) -> Response:
    svc = running(request).service
    removal = await remove_member(svc.db, caller, request.path_params["member_id"])
    for question in removal.questions:  # a call waiting on one in this process hears that it ended
        svc.wakeups.wake(question)
    return Response(status_code=204)


@API.member(
    "GET",
    "/api/v1/tokens",
    op(
        "The caller's own API tokens not revoked, newest first (never a token or its hash)",
        {"200": ("the tokens", array(_LISTED_TOKEN))},
        "401",
    ),
)
async def tokens(request: Request, caller: Caller) -> Response:
    async with running(request).service.db() as session:  # the caller's own, never another member's
        return JSONResponse(await list_tokens(session, caller.org_id, caller.member_id))


@API.member(
    "POST",
    "/api/v1/tokens",
    op(
        "A new API token for the caller, shown once",
        {"201": ("the new token and its id", obj(["token", "id"], token=STR, id=STR))},
        "400 401 403 413 422",
        body=obj([], label=STR),
        body_required=False,
    ),
)
async def new_token(request: Request, caller: Caller) -> Response:
    body = await json_body(request, fields=TOKEN_FIELDS)
    row, token = await make_token(running(request).service.db, caller, body.get("label", ""))
    return JSONResponse({"token": token, "id": row.id}, status_code=201)


@API.member(
    "DELETE",
    "/api/v1/tokens/{token_id}",
    op(
        "Revoke a token: the caller's own (owners and admins: any in the organization)",
        {"204": ("revoked", None)},
        "401 403 404",
    ),
)
async def revoke_token(request: Request, caller: Caller) -> Response:
    await revoke_member_token(running(request).service.db, caller, request.path_params["token_id"])
    return Response(status_code=204)


@API.member(
    "GET",
    "/api/v1/oauth/grants",
    op(
        "The MCP clients the caller allowed to act for them (connected apps), newest first; never a token",
        {"200": ("the grants", array(_GRANT))},
        "401",
    ),
)
async def grants(request: Request, caller: Caller) -> Response:
    return JSONResponse(await list_grants(running(request).service, caller))


@API.member(
    "DELETE",
    "/api/v1/oauth/grants/{grant_id}",
    op(
        "Revoke one of the caller's connected apps: every token it holds stops working at once, on every replica",
        {"204": ("revoked", None)},
        "401 404",
    ),
)
async def revoke_grant_of(request: Request, caller: Caller) -> Response:
    await revoke_grant(running(request).service, caller, request.path_params["grant_id"])
    return Response(status_code=204)
