"""Clients that name themselves by the address of their metadata document (OAuth client ID metadata documents).

The client's id is an https URL; its document, read there through the outbound guard (public
addresses only, no redirects, a few KiB at most), must name that same URL as its `client_id` and
give its redirect URIs. Such a client is public: it has no secret and proves itself by PKCE and its
exact redirect URIs. A document is read again once it is an hour old.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

import httpx2
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from mcpyard.connect import guarded_client
from mcpyard.errors import ServiceError, UrlRefused
from mcpyard.org.services import OrgService
from mcpyard.org.store import OAuthClient, utcnow

__all__ = ["DOCUMENT_SECONDS", "MAX_DOCUMENT_BYTES", "metadata_document_client"]

DOCUMENT_SECONDS = 3600
"""How long a client's metadata document is used before it is read again."""
MAX_DOCUMENT_BYTES = 16 * 1024
"""The largest metadata document read."""
FETCH_SECONDS = 10.0
_log = logging.getLogger("mcpyard.org")


async def metadata_document_client(svc: OrgService, client_id: str) -> OAuthClientInformationFull | None:
    """The client the document at `client_id` describes, or None when it cannot be used (the authorization
    endpoint then refuses the client)."""
    async with svc.db.begin() as session:
        row = await session.get(OAuthClient, client_id)
    fresh = (
        row is not None
        and row.fetched_at is not None
        and utcnow() - row.fetched_at < timedelta(seconds=DOCUMENT_SECONDS)
    )
    document = row.client_metadata if row is not None and fresh else await _read(svc, client_id)
    if document is None:
        return None
    if not fresh:
        async with svc.db.begin() as session:
            stored = await session.get(OAuthClient, client_id)
            if stored is None:
                session.add(
                    OAuthClient(
                        client_id=client_id, kind="metadata_document", client_metadata=document, fetched_at=utcnow()
                    )
                )
            elif stored.kind == "metadata_document":
                stored.client_metadata, stored.fetched_at = document, utcnow()
    return _client(client_id, document)


def _client(client_id: str, document: dict[str, Any]) -> OAuthClientInformationFull | None:
    try:
        return OAuthClientInformationFull.model_validate(
            {
                "client_id": client_id,
                "redirect_uris": document.get("redirect_uris"),
                "client_name": document.get("client_name"),
                "client_uri": document.get("client_uri") or None,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }
        )
    except ValidationError:
        return None


async def _read(svc: OrgService, client_id: str) -> dict[str, Any] | None:
    if svc.guard is None:
        return None
    try:
        await svc.check_url(client_id)
        async with guarded_client(svc.guard, timeout=httpx2.Timeout(FETCH_SECONDS)) as http:
            response = await http.get(client_id, headers={"Accept": "application/json"})
    except (ServiceError, UrlRefused, httpx2.HTTPError, OSError) as exc:  # refused, unreachable, or it broke off
        _log.info("a client's metadata document could not be read (%s)", type(exc).__name__)
        return None
    if response.status_code != 200 or len(response.content) > MAX_DOCUMENT_BYTES:
        return None
    try:
        document = json.loads(response.content)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        return None  # a document must name the address it was read from
    if any(key.startswith("client_secret") for key in document):
        return None  # a public client has no secret to publish
    redirects = document.get("redirect_uris")
    if not isinstance(redirects, list) or not redirects or not all(isinstance(item, str) for item in redirects):
        return None
    return {
        key: document[key] for key in ("client_id", "client_name", "client_uri", "redirect_uris") if key in document
    }
