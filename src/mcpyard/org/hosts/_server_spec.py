"""A registered server as an organization's host runs it: its spec, the credential bound to its address, its names."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mcpyard.catalog import server_prefix, tool_name
from mcpyard.config import OAuthSettings, ServerSpec
from mcpyard.org.keys import origin_of
from mcpyard.org.store import Credential, RegisteredServer

__all__ = ["CALL_DEADLINE_SECS", "SOURCE", "bound_credential", "model_name", "server_spec", "unsealed_oauth"]

CALL_DEADLINE_SECS = 30.0
"""Every connection attempt and every tool call of a registered server, in all (NET-2)."""
SOURCE = Path("<organization>")
"""Where an organization's servers come from, as a configuration source names it."""
_log = logging.getLogger("mcpyard.org")


def unsealed_oauth(secret: str) -> OAuthSettings:
    """The client-credentials grant sealed as JSON in a credential (ORG-2): the settings that connect with it."""
    fields = json.loads(secret)
    return OAuthSettings(
        grant="client_credentials",
        client_id=str(fields["client_id"]),
        client_secret=str(fields["client_secret"]),
        issuer=str(fields["issuer"]),
        scopes=tuple(str(scope) for scope in fields.get("scopes") or ()),
    )


def server_spec(
    server: RegisteredServer, position: int, token: str | None, oauth: OAuthSettings | None = None
) -> ServerSpec:
    """A registered server as the host runs it: streamable HTTP, 30 s for everything (NET-2), the token or client
    secret redacted.

    The host knows it by its name (unique in the organization), so every message names it as people do.
    """
    headers = (("Authorization", f"Bearer {token}"),) if token else ()
    secrets: tuple[tuple[str, str], ...] = ((f"token of server {server.name}", token),) if token else ()
    if oauth is not None and oauth.client_secret:
        secrets += ((f"client secret of server {server.name}", oauth.client_secret),)
    return ServerSpec(
        id=server.name,
        source="flag",
        source_path=SOURCE,
        position=position,
        name=server.name,
        transport="streamable_http",
        url=server.url,
        headers=headers,
        connect_timeout_secs=CALL_DEADLINE_SECS,
        call_timeout_secs=CALL_DEADLINE_SECS,
        shutdown_timeout_secs=2.0,
        oauth=oauth,
        secret_values=secrets,
    )


def bound_credential(server: RegisteredServer, credential: Credential | None) -> Credential | None:
    """The server's credential if it was entered for the origin of the server's URL now; None otherwise (an edit
    that raced with another, say): a credential never reaches a host it was not entered for. A credential stored
    before credentials were bound has no origin: it was entered for the URL the server had then."""
    if credential is None or "origin" not in (details := credential.details or {}):
        return credential
    if details["origin"] is not None and details["origin"] == origin_of(server.url):
        return credential
    _log.warning("the credential of server %s was entered for another address: it is not sent", server.name)
    return None


def model_name(server_name: str, tool: str) -> str:
    """A registered server's tool as the model sees it (CAT-1): `<server name>__<tool>`."""
    return tool_name(server_prefix(server_name, None, 0), "__", tool)
