"""What a server's registration or edit gives, checked: its name, URL, bearer token or client credentials (ORG-2).

The URL passes the outbound guard (NET-1); client credentials are one-line strings whose issuer
passes it too (AUTH-4); a credential is sealed into a row of its own. No message quotes a secret.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from mcpyard.errors import Invalid, ServiceError
from mcpyard.org._bodies import unknown_fields
from mcpyard.org.keys import origin_of
from mcpyard.org.services._server_json import CLIENT_CREDENTIALS
from mcpyard.org.services._service import OrgService
from mcpyard.org.store import Credential, new_id

__all__ = [
    "MAX_CC_FIELD",
    "MAX_SCOPE",
    "MAX_SCOPES",
    "MAX_SERVER_NAME",
    "NAME_PATTERN",
    "both_given",
    "check_client_credentials",
    "check_name",
    "check_token",
    "check_url",
    "new_credential",
]

_CC_FIELDS = ("client_id", "client_secret", "issuer", "scopes")
MAX_CC_FIELD = 2048
MAX_SCOPES = 32
MAX_SCOPE = 200

NAME_PATTERN = r"^[A-Za-z0-9](?:(?:[A-Za-z0-9-]|_[A-Za-z0-9-])*(?:[A-Za-z0-9]|_[A-Za-z0-9]))?$"
"""A server's name: letters, digits, '-' and single '_', starting and ending with a letter or digit (the API document
gives the same pattern, so it has no look-ahead)."""
MAX_SERVER_NAME = 40
_NAME = re.compile(NAME_PATTERN)


def check_name(name: object) -> str:
    if not isinstance(name, str) or len(name) > MAX_SERVER_NAME or _NAME.fullmatch(name) is None:
        raise Invalid(
            "invalid_name",
            "a server's name is its tools' prefix: 1 to 40 letters, digits, '-' or single '_', "
            "starting and ending with a letter or digit (tools are named NAME__TOOL)",
        )
    return name


async def check_url(svc: OrgService, url: object) -> str:
    if not isinstance(url, str) or not url:
        raise Invalid("url_refused", "give the server's streamable HTTP URL, like https://mcp.example.com/mcp")
    return await svc.check_url(url)


def check_token(token: object) -> str:
    if not isinstance(token, str) or not token or "\n" in token or "\r" in token:
        raise Invalid("invalid_token", "bearer_token must be a non-empty string on one line, or left out")
    return token


def cc_refused(message: str) -> ServiceError:
    return Invalid("invalid_client_credentials", f"client_credentials: {message}")


def cc_line(value: Mapping[str, object], name: str) -> str:
    text = value.get(name)
    if not isinstance(text, str) or not text or "\n" in text or "\r" in text or len(text) > MAX_CC_FIELD:
        raise cc_refused(f"{name} must be a non-empty string on one line, at most {MAX_CC_FIELD} characters")
    return text


async def check_client_credentials(svc: OrgService, value: object) -> dict[str, Any]:
    """`{client_id, client_secret, issuer, scopes?}` checked: one-line strings, the issuer passes the URL check
    (NET-1, AUTH-4), scopes a short list of short scope tokens. Never quotes the secret."""
    if not isinstance(value, Mapping):
        raise cc_refused("give an object {client_id, client_secret, issuer, scopes?}, or null")
    unknown = unknown_fields((str(key) for key in value), _CC_FIELDS)
    if unknown is not None:
        raise cc_refused(unknown)
    client_id, secret, issuer = (cc_line(value, name) for name in ("client_id", "client_secret", "issuer"))
    try:
        await svc.check_url(issuer)
    except ServiceError as exc:
        raise Invalid(exc.code, f"client_credentials.issuer: {exc.message}") from None
    scopes = value.get("scopes", [])
    if scopes is None:
        scopes = []
    if (
        not isinstance(scopes, list)
        or len(scopes) > MAX_SCOPES
        or not all(isinstance(scope, str) and scope and len(scope) <= MAX_SCOPE for scope in scopes)
        or any(char.isspace() or not char.isprintable() for scope in scopes for char in scope)
    ):
        raise cc_refused(
            f"scopes must be a list of at most {MAX_SCOPES} scope names, each 1 to {MAX_SCOPE} printable characters "
            "with no spaces"
        )
    # The issuer is kept as given: the authorization server's metadata must name it exactly (RFC 8414).
    return {"client_id": client_id, "client_secret": secret, "issuer": issuer, "scopes": list(scopes)}


def both_given() -> ServiceError:
    return Invalid(
        "conflicting_credentials",
        "give bearer_token or client_credentials, not both: a server is reached with one credential",
    )


def new_credential(
    svc: OrgService, org_id: str, server_id: str, url: str, token: str | None, client: dict[str, Any] | None
) -> Credential | None:
    """The sealed row for a bearer token or client credentials, bound to the origin of `url`, the server's URL
    they were entered for (client credentials sealed whole, so what connects is what was sealed; only client id,
    issuer and scopes are also kept to be shown)."""
    origin = origin_of(url)
    if token is not None:
        credential = Credential(
            id=new_id(), org_id=org_id, server_id=server_id, kind="bearer", details={"origin": origin}
        )
        svc.sealer.seal_credential(credential, token)
        return credential
    if client is not None:
        credential = Credential(
            id=new_id(),
            org_id=org_id,
            server_id=server_id,
            kind=CLIENT_CREDENTIALS,
            details={
                "client_id": client["client_id"],
                "issuer": client["issuer"],
                "scopes": client["scopes"],
                "origin": origin,
            },
        )
        svc.sealer.seal_credential(credential, json.dumps(client, separators=(",", ":")))
        return credential
    return None
