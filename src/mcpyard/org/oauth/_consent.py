"""A member's consent to an MCP client: what the consent page shows, and the code or refusal it sends back (ORG-10).

The page shows the client (its name as it gave it, and where it sends the member back), the
organization, and what the client may do. Allowing makes a grant for that client, member and
resource, and a code the client exchanges once; denying sends the client `access_denied`. Either
way the request is taken once: a second answer finds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import construct_redirect_uri
from sqlalchemy import delete, select

from mcpyard.errors import Conflict, NotFound
from mcpyard.org._caller import Caller
from mcpyard.org.keys import token_hash
from mcpyard.org.oauth._provider import consent_request_id
from mcpyard.org.services import CODE_SECONDS, OrgService, audit, new_code
from mcpyard.org.store import OAuthClient, OAuthCode, OAuthGrant, OAuthRequest, Organization, Teammate, utcnow

__all__ = ["Consent", "consent_of", "decide"]


@dataclass(frozen=True, slots=True)
class Consent:
    """What the consent page shows."""

    request: str
    """The opaque id the page's form sends back."""
    client_id: str
    client_name: str
    redirect_uri: str
    """Where the member's browser is sent back with the code."""
    redirect_host: str
    """Where the page says the member goes back to: a web address's host, an app's own address whole."""
    organization: str
    resource: str
    teammate: str | None
    """The teammate whose tools the client would use, for a teammate's endpoint."""


async def _request(svc: OrgService, opaque: str) -> OAuthRequest:
    async with svc.db.begin() as session:
        found = await session.get(OAuthRequest, consent_request_id(opaque))
    if found is None or found.expires_at <= utcnow():
        raise NotFound(
            "not_found", "this sign-in request expired or was answered already; start again from your client"
        )
    return found


async def _client_name(svc: OrgService, client_id: str) -> str:
    async with svc.db.begin() as session:
        client = await session.get(OAuthClient, client_id)
    name = (client.client_metadata.get("client_name") if client is not None else None) or client_id
    return str(name)[:200]


async def _teammate(svc: OrgService, caller: Caller, resource: str) -> str | None:
    """The teammate a teammate endpoint's resource names (404 when it is not one of the member's organization)."""
    _, _, rest = resource.partition("/mcp/teammates/")
    if not rest:
        return None
    async with svc.db.begin() as session:
        name = await session.scalar(
            select(Teammate.name).where(
                Teammate.id == rest, Teammate.org_id == caller.org_id, Teammate.deleted_at.is_(None)
            )
        )
    if name is None:
        raise NotFound("not_found", "that teammate is not one of your organization's")
    return str(name)


async def consent_of(svc: OrgService, caller: Caller, opaque: str) -> Consent:
    request = await _request(svc, opaque)
    params: dict[str, Any] = request.params
    redirect = urlsplit(str(params["redirect_uri"]))
    async with svc.db.begin() as session:
        organization = await session.scalar(select(Organization.name).where(Organization.id == caller.org_id))
    return Consent(
        request=opaque,
        client_id=request.client_id,
        client_name=await _client_name(svc, request.client_id),
        redirect_uri=str(params["redirect_uri"]),
        # A web address by its host; an app's own scheme whole (`com.evil://claude.ai/cb` is not claude.ai).
        redirect_host=redirect.netloc if redirect.scheme in ("http", "https") else str(params["redirect_uri"]),
        organization=str(organization),
        resource=str(params["resource"]),
        teammate=await _teammate(svc, caller, str(params["resource"])),
    )


async def decide(svc: OrgService, caller: Caller, opaque: str, *, allow: bool, issuer: str) -> str:
    """Answer the request once; the address to send the member's browser back to the client."""
    consent = await consent_of(svc, caller, opaque)
    async with svc.db.begin() as session:
        taken = await session.scalar(
            delete(OAuthRequest).where(OAuthRequest.id == consent_request_id(opaque)).returning(OAuthRequest.params)
        )
        if taken is None:
            raise Conflict("already_decided", "this sign-in request was answered already")
        params: dict[str, Any] = taken
        redirect, state = str(params["redirect_uri"]), params.get("state")
        if not allow:
            return construct_redirect_uri(redirect, error="access_denied", state=state, iss=issuer)
        grant = OAuthGrant(
            org_id=caller.org_id,
            member_id=caller.member_id,
            client_id=consent.client_id,
            client_name=consent.client_name,
            resource=consent.resource,
            scopes=list(params["scopes"]),
        )
        session.add(grant)
        await session.flush()
        code = new_code()
        session.add(
            OAuthCode(
                code_hash=token_hash(code),
                grant_id=grant.id,
                code_challenge=str(params["code_challenge"]),
                redirect_uri=redirect,
                redirect_uri_provided_explicitly=bool(params["redirect_uri_provided_explicitly"]),
                expires_at=utcnow() + timedelta(seconds=CODE_SECONDS),
            )
        )
        audit(
            session,
            caller.org_id,
            caller.email,
            "oauth.grant",
            grant.id,
            new={"client": consent.client_name, "client_id": consent.client_id, "resource": consent.resource},
        )
    return construct_redirect_uri(redirect, code=code, state=state, iss=issuer)
