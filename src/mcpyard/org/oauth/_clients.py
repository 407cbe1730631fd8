"""Clients that name themselves by the address of their metadata document (OAuth client ID metadata documents).

The client's id is an https URL; its document, read there through the outbound guard (public
addresses only, no redirects, a few KiB at most), must name that same URL as its `client_id` and
give its redirect URIs. Such a client is public: it has no secret and proves itself by PKCE and its
exact redirect URIs. A document is read again once it is an hour old.
"""

from __future__ import annotations

import json
import logging
import re
import time
import unicodedata
from collections import OrderedDict
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.connect import guarded_client
from mcpyard.errors import CallError, ServiceError, UrlRefused
from mcpyard.org._bodies import text_problem
from mcpyard.org.services import OrgService
from mcpyard.org.store import OAuthClient, OAuthGrant, utcnow

__all__ = [
    "DOCUMENT_SECONDS",
    "MAX_DOCUMENT_BYTES",
    "MAX_NAME_CHARS",
    "MAX_REDIRECT_URIS",
    "MAX_UNUSED_CLIENTS",
    "DocumentReads",
    "make_room",
    "metadata_document_client",
    "metadata_problem",
    "redirect_problem",
]

DOCUMENT_SECONDS = 3600
"""How long a client's metadata document is used before it is read again."""
MAX_DOCUMENT_BYTES = 16 * 1024
"""The largest metadata document read."""
MAX_NAME_CHARS = 100
"""The longest client name taken: the consent page shows it whole."""
MAX_REDIRECT_URIS = 10
MAX_TEXT_CHARS = 2000
"""The longest text of any other field (an address, a contact)."""
FETCH_SECONDS = 10.0
"""How long reading a document may take, in all."""
MAX_READING = 8
"""Documents read at once by one replica; a client named while that many are read is refused."""
FAILED_SECONDS = 300.0
"""How long an address whose document could not be used is not read again."""
MAX_FAILED = 10_000
UNUSED_CLIENT_SECONDS = 24 * 3600
"""How long a client no member has allowed is kept."""
MAX_UNUSED_CLIENTS = 10_000
"""How many clients no member has allowed may be kept at once; past it, the oldest go."""
_log = logging.getLogger("mcpyard.org")
_NEVER_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about", "ftp", "ws", "wss"})
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,63}")
_NETLOC = re.compile(r"[A-Za-z0-9.:\-\[\]]{0,300}")
_EMBEDDED = re.compile(r"/*[a-z][a-z0-9+.-]*:", re.IGNORECASE)
"""A path that starts with another scheme (`microsoft-edge:https://…`): a browser opening that address."""


def metadata_problem(metadata: dict[str, Any]) -> str | None:
    """What makes a client's metadata (registered, or its document) unusable, or None: a name a person could be
    misled by (control or direction characters, over `MAX_NAME_CHARS`), a text that cannot be stored (NUL, a lone
    surrogate) or is over `MAX_TEXT_CHARS`, more than `MAX_REDIRECT_URIS` redirect URIs, more than
    `MAX_DOCUMENT_BYTES` in all."""
    if len(json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
        return f"the client's metadata is over {MAX_DOCUMENT_BYTES // 1024} KiB"
    redirects = metadata.get("redirect_uris")
    if isinstance(redirects, list) and len(redirects) > MAX_REDIRECT_URIS:
        return f"a client may have at most {MAX_REDIRECT_URIS} redirect URIs"
    name = metadata.get("client_name")
    if name is not None:
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
            return f"client_name must be a text of at most {MAX_NAME_CHARS} characters"
        if any(unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") for char in name):
            return "client_name may not hold control, direction or invisible formatting characters"
    pending: list[Any] = list(metadata.values())
    while pending:
        value = pending.pop()
        if isinstance(value, list | tuple):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                return f"a text of the client's metadata is over {MAX_TEXT_CHARS} characters"
            if (problem := text_problem(value)) is not None:
                return f"a text of the client's metadata {problem}"
    return None


def redirect_problem(uri: str) -> str | None:
    """Why a client may not have `uri` as a redirect address, or None: https, http to this machine only (a
    native app's loopback listener), or an app's own scheme; never a script, a file or a fragment."""
    if len(uri) > 2000:
        return "a redirect URI is over 2000 characters"
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return "a redirect URI must be an address that can be read (RFC 3986)"
    scheme = parts.scheme.lower()
    if not _SCHEME.fullmatch(scheme) or scheme in _NEVER_SCHEMES:
        return f"a redirect URI may not use {scheme or 'no'} scheme"
    if parts.fragment or "#" in uri:
        return "a redirect URI has no fragment"
    if not _NETLOC.fullmatch(parts.netloc):
        return "a redirect URI's host is not a plain host name"
    if scheme == "http" and host not in _LOOPBACK:
        return "an http redirect URI must be this machine's own (127.0.0.1, localhost); use https"
    if scheme in ("http", "https") and not host:
        return "a redirect URI needs a host"
    if scheme not in ("http", "https") and _EMBEDDED.match(parts.path):
        return "an app's redirect URI may not carry another address (a scheme that opens a browser elsewhere)"
    return None


async def metadata_document_client(
    svc: OrgService, reads: DocumentReads, client_id: str
) -> OAuthClientInformationFull | None:
    """The client the document at `client_id` describes, or None when it cannot be used (the authorization
    endpoint then refuses the client)."""
    async with svc.db.begin() as session:
        row = await session.get(OAuthClient, client_id)
    fresh = (
        row is not None
        and row.fetched_at is not None
        and utcnow() - row.fetched_at < timedelta(seconds=DOCUMENT_SECONDS)
    )
    document = row.client_metadata if row is not None and fresh else await _read(svc, reads, client_id)
    if document is None:
        return None
    if not fresh:
        async with svc.db.begin() as session:
            stored = await session.get(OAuthClient, client_id)
            if stored is None:
                await make_room(session)
                session.add(
                    OAuthClient(
                        client_id=client_id, kind="metadata_document", client_metadata=document, fetched_at=utcnow()
                    )
                )
            elif stored.kind == "metadata_document":
                stored.client_metadata, stored.fetched_at = document, utcnow()
    return _client(client_id, document)


async def make_room(session: AsyncSession) -> None:
    """Before a client is added: clients no member has allowed go after `UNUSED_CLIENT_SECONDS`, and past
    `MAX_UNUSED_CLIENTS` the oldest go (registration and client documents are open to anyone: the table
    cannot be filled, and someone filling it does not lock out the clients people use)."""
    unused = OAuthClient.client_id.not_in(select(OAuthGrant.client_id))
    cutoff = utcnow() - timedelta(seconds=UNUSED_CLIENT_SECONDS)
    await session.execute(delete(OAuthClient).where(unused, OAuthClient.created_at < cutoff))
    count = await session.scalar(select(func.count()).select_from(OAuthClient).where(unused)) or 0
    if count >= MAX_UNUSED_CLIENTS:
        oldest = select(OAuthClient.client_id).where(unused).order_by(OAuthClient.created_at)
        surplus = list(await session.scalars(oldest.limit(count - MAX_UNUSED_CLIENTS + 1)))
        await session.execute(delete(OAuthClient).where(OAuthClient.client_id.in_(surplus)))


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
                "scope": "mcp",
            }
        )
    except ValidationError:
        return None


class DocumentReads:
    """The documents this replica is reading and failed to read: anyone may name a client by an address, so
    at most `MAX_READING` are read at once (each within `FETCH_SECONDS` in all), and an address that failed is
    not read again for `FAILED_SECONDS`."""

    def __init__(self) -> None:
        self.reading = anyio.CapacityLimiter(MAX_READING)
        self.failed: OrderedDict[str, float] = OrderedDict()

    def recently_failed(self, client_id: str) -> bool:
        since = self.failed.get(client_id)
        return since is not None and time.monotonic() - since < FAILED_SECONDS

    def fail(self, client_id: str) -> None:
        self.failed[client_id] = time.monotonic()
        self.failed.move_to_end(client_id)
        while len(self.failed) > MAX_FAILED:
            self.failed.popitem(last=False)


async def _read(svc: OrgService, reads: DocumentReads, client_id: str) -> dict[str, Any] | None:
    if svc.guard is None or reads.recently_failed(client_id) or reads.reading.available_tokens < 1:
        return None
    async with reads.reading:
        body = await _fetch(svc, client_id)
    document = _document(client_id, body) if body is not None else None
    if document is None:
        reads.fail(client_id)
    return document


async def _fetch(svc: OrgService, client_id: str) -> bytes | None:
    """The document's bytes, or None: refused, unreachable, not 200, over the limit, or not whole in time."""
    assert svc.guard is not None
    try:
        with anyio.fail_after(FETCH_SECONDS):  # in all: a server sending a byte at a time gets no longer
            await svc.check_url(client_id)
            async with (
                guarded_client(svc.guard, timeout=httpx2.Timeout(FETCH_SECONDS)) as http,
                http.stream("GET", client_id, headers={"Accept": "application/json"}) as response,
            ):
                if response.status_code != 200:
                    return None
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        return None  # read no further than the limit
                return body
    except (ServiceError, UrlRefused, CallError, httpx2.HTTPError, OSError, TimeoutError, ValueError) as exc:
        _log.info("a client's metadata document could not be read (%s)", type(exc).__name__)
        return None


def _document(client_id: str, body: bytes) -> dict[str, Any] | None:
    """What a client's document says of it, or None when it cannot be used."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        return None  # a document must name the address it was read from
    if any(key.startswith("client_secret") for key in document):
        return None  # a public client has no secret to publish
    redirects = document.get("redirect_uris")
    if not isinstance(redirects, list) or not redirects or not all(isinstance(item, str) for item in redirects):
        return None
    if any(redirect_problem(item) for item in redirects) or metadata_problem(document) is not None:
        return None
    return {
        key: document[key] for key in ("client_id", "client_name", "client_uri", "redirect_uris") if key in document
    }
