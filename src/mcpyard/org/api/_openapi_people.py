"""The people operations of the organization's OpenAPI document: sign-in, sessions, members, tokens (API-6)."""

from __future__ import annotations

from mcpyard.org.api._openapi_parts import NSTR, STR, S, array, enum, obj, op, path
from mcpyard.org.keys import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH

__all__ = ["people_paths"]

_ROLE = enum("owner", "admin", "member")
_ME = obj(["id", "email", "role", "org_id"], id=STR, email=STR, role=_ROLE, org_id=STR)
_MEMBER = obj(["id", "email", "role", "org_id"], id=STR, email=STR, role=_ROLE, org_id=STR)
_LISTED_MEMBER = obj(["id", "email", "role", "created_at"], id=STR, email=STR, role=_ROLE, created_at=STR)
_LISTED_TOKEN = obj(["id", "label", "created_at", "last_used_at"], id=STR, label=STR, created_at=STR, last_used_at=NSTR)
_PASSWORD: S = {"type": "string", "minLength": MIN_PASSWORD_LENGTH, "maxLength": MAX_PASSWORD_LENGTH}
_CREDENTIALS = obj(["email", "password"], email=STR, password=STR)


def people_paths() -> S:
    return {
        "/api/v1/login": {
            "post": op(
                "A new API token for the member with this email and password",
                {"200": ("the new token, shown once", obj(["token"], token=STR))},
                "400 401 413 422 429",
                body=_CREDENTIALS,
                public=True,
            )
        },
        "/api/v1/session": {
            "post": op(
                "Sign in for the web pages: a session cookie, and its CSRF token in the X-CSRF-Token header",
                {"200": ("signed in", obj(["member"], member=_MEMBER))},
                "400 401 403 413 415 422 429",
                body=_CREDENTIALS,
                public=True,
            ),
            "delete": op(
                "Sign out: the session ends on the server, so every copy of its cookie is refused from now on",
                {"204": ("signed out", None)},
                "401 403",
            ),
        },
        "/api/v1/me": {"get": op("Who the caller is", {"200": ("the caller", _ME)}, "401")},
        "/api/v1/members": {
            "get": op("The organization's members, by email", {"200": ("every member", array(_LISTED_MEMBER))}, "401"),
            "post": op(
                "Add a member (owner, admin; only an owner adds an owner)",
                {"201": ("the new member", _MEMBER)},
                "400 401 403 413 422",
                body=obj(["email", "role", "password"], email=STR, role=_ROLE, password=_PASSWORD),
            ),
        },
        "/api/v1/members/{member_id}": {
            "parameters": [path("member_id")],
            "patch": op(
                "Change a member's role (owner, admin; only an owner grants or takes the owner role; 409 `last_owner`"
                " for the last owner's demotion); audited as `member.role_changed`",
                {"200": ("the member as it now is", _MEMBER)},
                "400 401 403 404 409 413 422",
                body=obj(["role"], role=_ROLE),
            ),
            "delete": op(
                "Remove a member (owner, admin; only an owner removes an owner; anyone may remove themselves, i.e."
                " leave; 409 `last_owner` for the last owner). Its sessions end and its API tokens are revoked at"
                " once, the approvals it started that wait are declined and its calls' pending questions cancelled;"
                " its records stay. Audited as `member.removed`",
                {"204": ("removed", None)},
                "401 403 404 409",
            ),
        },
        "/api/v1/tokens": {
            "get": op(
                "The caller's own API tokens not revoked, newest first (never a token or its hash)",
                {"200": ("the tokens", array(_LISTED_TOKEN))},
                "401",
            ),
            "post": op(
                "A new API token for the caller, shown once",
                {"201": ("the new token and its id", obj(["token", "id"], token=STR, id=STR))},
                "400 401 403 413 422",
                body=obj([], label=STR),
                body_required=False,
            ),
        },
        "/api/v1/tokens/{token_id}": {
            "parameters": [path("token_id")],
            "delete": op(
                "Revoke a token: the caller's own (owners and admins: any in the organization)",
                {"204": ("revoked", None)},
                "401 403 404",
            ),
        },
    }
