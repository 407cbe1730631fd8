"""Who is asking: the caller and its role, checked on the server for every action (ORG-1, API-6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpyard.errors import Forbidden, Invalid, NotFound
from mcpyard.org.store import Role

__all__ = ["ADMINS", "Caller", "Role", "not_found", "require", "text_field"]

ADMINS: tuple[Role, ...] = ("owner", "admin")
"""Who may register servers, set policies and add members."""


@dataclass(frozen=True, slots=True)
class Caller:
    """A member of one organization, as authenticated for this request."""

    member_id: str
    org_id: str
    email: str
    role: Role
    revision: int | None = None
    """The organization's change count, read with the caller's credentials (None: not read): the call this request
    makes runs against the organization as it was then, with no second read (ORG-9)."""
    token_id: str | None = None
    """The credential the request came with, when it is a program's: an API token's id, or the id of the grant an
    MCP client's OAuth access token belongs to (its calls count against the per-token limits, ORG-11); None for a
    browser session."""

    @property
    def is_admin(self) -> bool:
        return self.role in ADMINS


def require(caller: Caller, *roles: Role) -> None:
    """Raise 403 unless the caller has one of `roles` (checked on the server for every action, THREATS)."""
    if caller.role not in roles:
        raise Forbidden("forbidden", f"this needs the role {' or '.join(roles)}; you are {caller.role}")


def text_field(body: dict[str, Any], name: str, limit: int, *, required: bool = False) -> str | None:
    """A request's text field: None when left out (unless `required`), else a string of at most `limit`
    characters (a required one not blank), or 422 naming the field."""
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        need = "a non-empty string" if required else "a string"
        raise Invalid("invalid_request", f"`{name}` must be {need} of at most {limit} characters")
    return value


def not_found(what: str) -> NotFound:
    """The one answer for an id that does not exist or belongs to another organization (THREATS)."""
    return NotFound("not_found", f"no {what} with that id in your organization")
