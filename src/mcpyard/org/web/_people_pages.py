"""Pages for people: signing in and out, members, and API tokens (ORG-1).

Sign-in answers the same for an unknown email and a wrong password, after the same work; the
session cookie is rotated at every sign-in. The sign-in form carries a CSRF token of its own, tied
to a cookie set with the form, so no other site can sign a browser in to an account of its choosing.
A new API token is shown once, on the page that made it, and never again.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import Response

from mcpyard.errors import Invalid, ServiceError
from mcpyard.org._words import text_of
from mcpyard.org.services import (
    COOKIE,
    TooManySignIns,
    change_role,
    invite_member,
    list_members,
    list_tokens,
    make_token,
    remove_member,
    revoke_member_token,
    verify_login,
)
from mcpyard.org.web._pages import Notice, PageRoutes, Pages, Visit, field

__all__ = ["PAGES"]

LOGIN_COOKIE = "mcpyard_login"


def _next(value: str) -> str:
    """Where to go after signing in: a path of ours only (never another site)."""
    return value if value.startswith("/") and not value.startswith("//") and "\\" not in value else "/"


PAGES = PageRoutes()


def login_csrf(pages: Pages, value: str) -> str:
    return pages.authenticate.signer.csrf(f"login:{value}")


@PAGES.public("/login", "GET", "POST")
async def login(pages: Pages, request: Request) -> Response:
    if request.method == "GET":
        visit = await pages.visit_of(request)
        if visit is not None:
            return pages.redirect(request, _next(request.query_params.get("next", "/")))
        value = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
        context = {
            "title": "Sign in",
            "login_csrf": login_csrf(pages, value),
            "next": request.query_params.get("next", "/"),
        }
        response = pages.render(request, "login.html", context, visit=None)
        response.set_cookie(
            LOGIN_COOKIE, value, max_age=3600, httponly=True, samesite="strict", secure=pages.secure(request)
        )
        return response
    value = request.cookies.get(LOGIN_COOKIE, "")
    try:
        form = await pages.form(request, None, csrf=login_csrf(pages, value) if value else "")
    except ServiceError as exc:
        return pages.redirect(request, "/login", Notice("error", exc.message))
    email, password, after = field(form, "email"), field(form, "password"), _next(field(form, "next", "/"))
    address = request.client.host if request.client is not None else "unknown"
    try:
        attempt = pages.sign_ins.reserve(address)  # counted before anything is awaited (see `_throttle`)
    except TooManySignIns as exc:
        context = {"title": "Sign in", "login_csrf": login_csrf(pages, value), "next": after, "failed": exc.message}
        refused = pages.render(request, "login.html", context, visit=None, status=429)
        refused.headers["Retry-After"] = str(exc.retry_after)
        return refused
    async with pages.svc.db() as session:
        member = await verify_login(session, email=email, password=password, hashing=pages.hashing)
    if member is None:
        context = {
            "title": "Sign in",
            "login_csrf": login_csrf(pages, value),
            "next": after,
            "email": email[:320],
            "failed": "That email and password do not match a member (or the account is locked for a while).",
        }
        return pages.render(request, "login.html", context, visit=None, status=401)
    pages.sign_ins.give_back(address, attempt)
    signed_in = pages.redirect(request, after)
    await pages.authenticate.start_session(request, signed_in, member, secure=pages.secure(request))
    signed_in.delete_cookie(LOGIN_COOKIE, path="/")
    return signed_in


@PAGES.page("/logout", "POST", back="/")
async def logout(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    await pages.authenticate.end_session(request.cookies.get(COOKIE))  # every copy of the cookie, everywhere
    response = pages.redirect(request, "/login", Notice("done", "You are signed out."))
    response.delete_cookie(COOKIE, path="/")
    return response


@PAGES.page("/", "GET")
async def home(pages: Pages, request: Request, visit: Visit) -> Response:
    return pages.redirect(request, "/servers" if visit.caller.is_admin else "/teammates")


async def members_page(pages: Pages, request: Request, visit: Visit, *, new_token: str | None = None) -> Response:
    async with pages.svc.db.begin() as session:
        members = await list_members(session, visit.caller.org_id)
        tokens = await list_tokens(session, visit.caller.org_id, visit.caller.member_id)
    context = {"title": "Members & tokens", "members": members, "tokens": tokens, "new_token": new_token}
    return pages.render(request, "members.html", context, visit=visit)


@PAGES.page("/members", "GET", "POST")
async def members(pages: Pages, request: Request, visit: Visit) -> Response:
    if request.method == "GET":
        return await members_page(pages, request, visit)
    form = await pages.form(request, visit)
    role = field(form, "role")
    member = await invite_member(
        pages.svc.db, visit.caller, field(form, "email"), role, field(form, "password"), hashing=pages.hashing
    )
    return pages.redirect(request, "/members", Notice("done", f"{text_of(member.email)} is added, as {role}."))


@PAGES.page("/tokens", "POST", back="/members")
async def tokens(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    _, token = await make_token(pages.svc.db, visit.caller, field(form, "label"))
    return await members_page(pages, request, visit, new_token=token)


@PAGES.page("/tokens/{token_id}/revoke", "POST", back="/members")
async def revoke(pages: Pages, request: Request, visit: Visit) -> Response:
    await pages.form(request, visit)
    await revoke_member_token(pages.svc.db, visit.caller, request.path_params["token_id"])
    return pages.redirect(request, "/members", Notice("done", "The token is revoked; programs using it are refused."))


@PAGES.page("/members/{member_id}/role", "POST", back="/members")
async def role(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    changed = await change_role(pages.svc.db, visit.caller, request.path_params["member_id"], field(form, "role"))
    return pages.redirect(request, "/members", Notice("done", f"{text_of(changed.email)} is now {changed.role}."))


@PAGES.page("/members/{member_id}/remove", "POST", back="/members")
async def remove(pages: Pages, request: Request, visit: Visit) -> Response:
    form = await pages.form(request, visit)
    if field(form, "confirm") != "yes":
        raise Invalid("not_confirmed", "tick the box to confirm the removal, then press Remove again")
    removal = await remove_member(pages.svc.db, visit.caller, request.path_params["member_id"])
    for question in removal.questions:
        pages.svc.wakeups.wake(question)
    if removal.member_id == visit.caller.member_id:
        left = pages.redirect(request, "/login", Notice("done", "You left the organization."))
        left.delete_cookie(COOKIE, path="/")
        return left
    text = f"{text_of(removal.email)} is removed: signed out, tokens revoked, waiting calls declined."
    return pages.redirect(request, "/members", Notice("done", text))
