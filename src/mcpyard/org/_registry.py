"""Registered servers: register, list, edit, refresh and delete; their tools discovered and kept in step (ORG-2, ORG-3).

Registering checks the URL with the outbound guard (NET-1), seals the token (or the client
credentials: client id, secret, issuer and scopes, the issuer checked like the URL) in a table of its
own, connects (30 s in all, NET-2) and discovers the tools: each new tool starts `off`. A
refresh lists them again: a changed definition is suspended until it is reviewed, a tool no
longer listed stays as `removed`. A failed connection raises one alert; the next success
clears it (ORG-8). Deleting a server stops its tools at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.catalog import ServerTools, build_catalog, definition_hash, server_prefix
from mcpyard.org._caller import ADMINS, Caller, ServiceError, not_found, require
from mcpyard.org._events import audit, clear_alert, raise_alert
from mcpyard.org._hosts import OrgHost, model_name
from mcpyard.org._models import Credential, Policy, RegisteredServer, Tool, new_id, utcnow
from mcpyard.org._review import mark_for_review, selections_using
from mcpyard.org._service import OrgService

__all__ = [
    "MAX_NAME",
    "NAME_PATTERN",
    "delete_server",
    "get_server",
    "list_servers",
    "refresh_server",
    "register_server",
    "server_json",
    "server_selections",
    "tool_json",
    "update_server",
]

CLIENT_CREDENTIALS = "client_credentials"
"""The kind of a credential that holds a client-credentials grant (sealed as JSON; `details` shows the rest)."""
_CC_FIELDS = ("client_id", "client_secret", "issuer", "scopes")
MAX_CC_FIELD = 2048
MAX_SCOPES = 32
MAX_SCOPE = 200

NAME_PATTERN = r"^[A-Za-z0-9](?:(?:[A-Za-z0-9-]|_[A-Za-z0-9-])*(?:[A-Za-z0-9]|_[A-Za-z0-9]))?$"
"""A server's name: letters, digits, '-' and single '_', starting and ending with a letter or digit (the API document
gives the same pattern, so it has no look-ahead)."""
MAX_NAME = 40
_NAME = re.compile(NAME_PATTERN)
CONNECTION_ALERT = "connection"


def _check_name(name: object) -> str:
    if not isinstance(name, str) or len(name) > MAX_NAME or _NAME.fullmatch(name) is None:
        raise ServiceError(
            422,
            "invalid_name",
            "a server's name is its tools' prefix: 1 to 40 letters, digits, '-' or single '_', "
            "starting and ending with a letter or digit (tools are named NAME__TOOL)",
        )
    return name


async def _check_url(svc: OrgService, url: object) -> str:
    if not isinstance(url, str) or not url:
        raise ServiceError(
            422, "url_refused", "give the server's streamable HTTP URL, like https://mcp.example.com/mcp"
        )
    return await svc.check_url(url)


def _display(opened: OrgHost | None, server: RegisteredServer, definition: Mapping[str, Any]) -> dict[str, Any]:
    """A definition as people and models may read it: texts cleaned, redacted and tag-escaped (CAT-4)."""
    redactor = opened.host.view.redactor if opened is not None else None
    listing = ServerTools(server.id, server_prefix(server.name, None, 0), (definition,))
    catalog = build_catalog([listing], "__", redactor=redactor)
    entry = next(iter(catalog.entries.values()), None)
    if entry is None:  # refused by the schema bounds: nothing of it is shown but its name
        refused = next(iter(catalog.refused.values()), None)
        return {
            "description": "",
            "input_schema": {},
            "annotations": {},
            "title": None,
            "refused": refused.reason if refused is not None else "not offered",
        }
    return {
        "description": entry.description,
        "title": entry.title,
        "input_schema": dict(entry.input_schema),
        "annotations": dict(entry.annotations),
    }


def tool_json(tool: Tool, server: RegisteredServer, opened: OrgHost | None, *, full: bool = False) -> dict[str, Any]:
    """A tool as the API shows it (API-6); with `full`, the reviewed definition beside the current one when changed."""
    policy = tool.policy
    shown = _display(opened, server, tool.definition)
    item: dict[str, Any] = {
        "id": tool.id,
        "server_id": server.id,
        "name": model_name(server.name, tool.name),
        "tool": tool.name,
        "description": shown["description"],
        "title": shown["title"],
        "input_schema": shown["input_schema"],
        "annotations": shown["annotations"],
        "definition_hash": tool.definition_hash,
        "state": tool.state,
        "policy": policy.policy if policy is not None else "off",
        "reviewed_hash": policy.reviewed_hash if policy is not None else None,
    }
    if full and tool.state == "changed" and policy is not None:
        item["reviewed_definition"] = _display(opened, server, policy.reviewed_definition)
        item["definition"] = shown
    return item


def server_json(
    server: RegisteredServer, tools: Sequence[Tool], credential: Credential | None, opened: OrgHost | None
) -> dict[str, Any]:
    """A server as the API shows it: never its token or client secret, only whether it has one, and of client
    credentials the client id and issuer (ORG-2)."""
    client = credential is not None and credential.kind == CLIENT_CREDENTIALS
    details = (credential.details or {}) if credential is not None and client else {}
    return {
        "id": server.id,
        "name": server.name,
        "url": server.url,
        "state": server.state,
        "last_error": server.last_error,
        "protocol_version": server.protocol_version,
        "has_token": credential is not None and not client,
        "has_client_credentials": client,
        "client_id": details.get("client_id") if client else None,
        "issuer": details.get("issuer") if client else None,
        "created_at": server.created_at.isoformat(),
        "refreshed_at": server.refreshed_at.isoformat() if server.refreshed_at else None,
        "tools": [tool_json(tool, server, opened) for tool in tools],
    }


async def _server(session: AsyncSession, caller: Caller, server_id: str) -> RegisteredServer:
    server = await session.scalar(
        select(RegisteredServer).where(
            RegisteredServer.id == server_id,
            RegisteredServer.org_id == caller.org_id,
            RegisteredServer.deleted_at.is_(None),
        )
    )
    if server is None:
        raise not_found("server")
    return server


async def _tools(session: AsyncSession, server_id: str) -> list[Tool]:
    rows = await session.scalars(select(Tool).where(Tool.server_id == server_id).order_by(Tool.name))
    tools = list(rows)
    for tool in tools:
        await session.refresh(tool, ["policy"])
    return tools


async def _credential(session: AsyncSession, server_id: str) -> Credential | None:
    return await session.scalar(select(Credential).where(Credential.server_id == server_id))


async def _json(svc: OrgService, session: AsyncSession, server: RegisteredServer) -> dict[str, Any]:
    opened = await svc.hosts.get(server.org_id)
    return server_json(server, await _tools(session, server.id), await _credential(session, server.id), opened)


def _check_token(token: object) -> str:
    if not isinstance(token, str) or not token or "\n" in token or "\r" in token:
        raise ServiceError(422, "invalid_token", "bearer_token must be a non-empty string on one line, or left out")
    return token


def _cc_refused(message: str) -> ServiceError:
    return ServiceError(422, "invalid_client_credentials", f"client_credentials: {message}")


def _cc_line(value: Mapping[str, object], name: str) -> str:
    text = value.get(name)
    if not isinstance(text, str) or not text or "\n" in text or "\r" in text or len(text) > MAX_CC_FIELD:
        raise _cc_refused(f"{name} must be a non-empty string on one line, at most {MAX_CC_FIELD} characters")
    return text


async def _check_client_credentials(svc: OrgService, value: object) -> dict[str, Any]:
    """`{client_id, client_secret, issuer, scopes?}` checked: one-line strings, the issuer passes the URL check
    (NET-1, AUTH-4), scopes a short list of short scope tokens. Never quotes the secret."""
    if not isinstance(value, Mapping):
        raise _cc_refused("give an object {client_id, client_secret, issuer, scopes?}, or null")
    unknown = sorted(str(key) for key in value if key not in _CC_FIELDS)
    if unknown:
        raise _cc_refused(f"there is no field {unknown[0]!r}; give client_id, client_secret, issuer and scopes")
    client_id, secret, issuer = (_cc_line(value, name) for name in ("client_id", "client_secret", "issuer"))
    try:
        await svc.check_url(issuer)
    except ServiceError as exc:
        raise ServiceError(exc.status, exc.code, f"client_credentials.issuer: {exc.message}") from None
    scopes = value.get("scopes", [])
    if scopes is None:
        scopes = []
    if (
        not isinstance(scopes, list)
        or len(scopes) > MAX_SCOPES
        or not all(isinstance(scope, str) and scope and len(scope) <= MAX_SCOPE for scope in scopes)
        or any(char.isspace() or not char.isprintable() for scope in scopes for char in scope)
    ):
        raise _cc_refused(
            f"scopes must be a list of at most {MAX_SCOPES} scope names, each 1 to {MAX_SCOPE} printable characters "
            "with no spaces"
        )
    # The issuer is kept as given: the authorization server's metadata must name it exactly (RFC 8414).
    return {"client_id": client_id, "client_secret": secret, "issuer": issuer, "scopes": list(scopes)}


def _both_given() -> ServiceError:
    return ServiceError(
        422,
        "conflicting_credentials",
        "give bearer_token or client_credentials, not both: a server is reached with one credential",
    )


def _new_credential(
    svc: OrgService, org_id: str, server_id: str, token: str | None, client: dict[str, Any] | None
) -> Credential | None:
    """The sealed row for a bearer token or client credentials (client credentials sealed whole, so what
    connects is what was sealed; only client id, issuer and scopes are also kept to be shown)."""
    if token is not None:
        credential = Credential(id=new_id(), org_id=org_id, server_id=server_id, kind="bearer")
        svc.sealer.seal_credential(credential, token)
        return credential
    if client is not None:
        credential = Credential(
            id=new_id(),
            org_id=org_id,
            server_id=server_id,
            kind=CLIENT_CREDENTIALS,
            details={"client_id": client["client_id"], "issuer": client["issuer"], "scopes": client["scopes"]},
        )
        svc.sealer.seal_credential(credential, json.dumps(client, separators=(",", ":")))
        return credential
    return None


def _name_taken(name: str) -> ServiceError:
    return ServiceError(409, "name_taken", f"a server named {name!r} is registered already; choose another name")


async def _free_name(session: AsyncSession, org_id: str, name: str) -> None:
    """409 when a server of the organization has `name`; a deleted server's record gives its name up."""
    taken = await session.scalar(
        select(RegisteredServer).where(RegisteredServer.org_id == org_id, RegisteredServer.name == name)
    )
    if taken is not None and taken.deleted_at is None:
        raise _name_taken(name)
    if taken is not None:
        await session.delete(taken)
        await session.flush()


async def register_server(
    svc: OrgService,
    caller: Caller,
    name: object,
    url: object,
    bearer_token: object = None,
    client_credentials: object = None,
) -> dict[str, Any]:
    """Register a server, connect and discover its tools (each starting `off`); 201's body."""
    require(caller, *ADMINS)
    if bearer_token is not None and client_credentials is not None:
        raise _both_given()
    name, url = _check_name(name), await _check_url(svc, url)
    token = _check_token(bearer_token) if bearer_token is not None else None
    client = await _check_client_credentials(svc, client_credentials) if client_credentials is not None else None
    try:
        async with svc.db.begin() as session:
            await _free_name(session, caller.org_id, name)
            server = RegisteredServer(org_id=caller.org_id, name=name, url=url, state="connecting")
            session.add(server)
            await session.flush()
            if (credential := _new_credential(svc, caller.org_id, server.id, token, client)) is not None:
                session.add(credential)
            audit(
                session,
                caller.org_id,
                caller.email,
                "server.register",
                server.id,
                new={
                    "name": name,
                    "url": url,
                    "has_token": token is not None,
                    "has_client_credentials": client is not None,
                },
            )
    except IntegrityError:  # another registration took the name between our look and our write
        raise _name_taken(name) from None
    await _connect_and_sync(svc, caller.org_id, server.id)
    async with svc.db.begin() as session:
        return await _json(svc, session, await _server(session, caller, server.id))


async def list_servers(svc: OrgService, caller: Caller) -> list[dict[str, Any]]:
    async with svc.db.begin() as session:
        servers = await session.scalars(
            select(RegisteredServer)
            .where(RegisteredServer.org_id == caller.org_id, RegisteredServer.deleted_at.is_(None))
            .order_by(RegisteredServer.created_at)
        )
        return [await _json(svc, session, server) for server in servers]


async def get_server(svc: OrgService, caller: Caller, server_id: str) -> dict[str, Any]:
    async with svc.db.begin() as session:
        return await _json(svc, session, await _server(session, caller, server_id))


async def update_server(svc: OrgService, caller: Caller, server_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Edit a server's name, URL, token or client credentials (`bearer_token: null` or `client_credentials: null`
    removes it; giving one replaces the other); it connects again with them."""
    require(caller, *ADMINS)
    unknown = set(changes) - {"name", "url", "bearer_token", "client_credentials"}
    if unknown:
        raise ServiceError(
            422,
            "invalid_field",
            f"a server has no field {sorted(unknown)[0]!r}; give name, url, bearer_token or client_credentials",
        )
    if changes.get("bearer_token") is not None and changes.get("client_credentials") is not None:
        raise _both_given()
    token = _check_token(changes["bearer_token"]) if changes.get("bearer_token") is not None else None
    client = (
        await _check_client_credentials(svc, changes["client_credentials"])
        if changes.get("client_credentials") is not None
        else None
    )
    try:
        async with svc.db.begin() as session:
            server = await _server(session, caller, server_id)
            old = {"name": server.name, "url": server.url}
            if "name" in changes and (name := _check_name(changes["name"])) != server.name:
                await _free_name(session, caller.org_id, name)
                server.name = name
            if "url" in changes:
                server.url = await _check_url(svc, changes["url"])
            if token is not None or client is not None:  # a server has one credential: the new one replaces it
                await session.execute(delete(Credential).where(Credential.server_id == server.id))
                session.add(_new_credential(svc, caller.org_id, server.id, token, client))
            for field, kind in (("bearer_token", "bearer"), ("client_credentials", CLIENT_CREDENTIALS)):
                if field in changes and changes[field] is None:
                    await session.execute(
                        delete(Credential).where(Credential.server_id == server.id, Credential.kind == kind)
                    )
            audit(
                session,
                caller.org_id,
                caller.email,
                "server.update",
                server.id,
                old=old,
                new={
                    "name": server.name,
                    "url": server.url,
                    "token_changed": "bearer_token" in changes,
                    "client_credentials_changed": "client_credentials" in changes,
                },
            )
    except IntegrityError:  # another edit or registration took the name between our look and our write
        raise _name_taken(str(changes["name"])) from None
    await _connect_and_sync(svc, caller.org_id, server_id)
    return await get_server(svc, caller, server_id)


async def delete_server(svc: OrgService, caller: Caller, server_id: str) -> None:
    """Delete a server: its tools stop at once; calls to them are refused as `server_deleted` (ORG-8)."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        server = await _server(session, caller, server_id)
        server.deleted_at = utcnow()
        server.state = "deleted"
        await session.execute(delete(Credential).where(Credential.server_id == server.id))
        await clear_alert(session, caller.org_id, CONNECTION_ALERT, server_id=server.id)
        await mark_for_review(session, caller.org_id, server.id, server.name)
        audit(
            session,
            caller.org_id,
            caller.email,
            "server.delete",
            server.id,
            old={"name": server.name, "url": server.url},
        )
    opened = await svc.hosts.get(caller.org_id)
    opened.policies.forget_server(server.name)
    await svc.hosts.reload(caller.org_id)


async def server_selections(svc: OrgService, caller: Caller, server_id: str) -> list[dict[str, Any]]:
    """What deleting the server would affect: the assistants using its tools and the teammates allowed it, as
    `{kind, id, name}` by kind then name (owner, admin)."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        server = await _server(session, caller, server_id)
        return await selections_using(session, caller.org_id, server.id)


async def refresh_server(svc: OrgService, caller: Caller, server_id: str) -> dict[str, Any]:
    """Discover the tools again: changed ones are suspended, missing ones `removed`, new ones `off` (ORG-3)."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        await _server(session, caller, server_id)
    await _connect_and_sync(svc, caller.org_id, server_id, relist=True)
    return await get_server(svc, caller, server_id)


async def _connect_and_sync(svc: OrgService, org_id: str, server_id: str, *, relist: bool = False) -> None:
    """Bring the host in step with the database, connect the server, and keep what it lists."""
    opened = await svc.hosts.reload(org_id)
    host = opened.host
    name = next((name for name, id_ in opened.ids.items() if id_ == server_id), None)
    if name is None:
        return
    await host.start([name])
    snapshot = host.server(name)
    error: str | None = None
    if snapshot is not None and snapshot.connected and relist:
        try:
            snapshot = await host.refresh(name)
        except Exception as exc:  # a failed refresh is the server's failure, said on the page
            error = f"listing the tools again failed: {exc}"
    if snapshot is None or not snapshot.connected:
        error = error or (snapshot.reason if snapshot is not None else None) or "it did not connect"
    async with svc.db.begin() as session:
        server = await session.get(RegisteredServer, server_id)
        if server is None:
            return
        server.refreshed_at = utcnow()
        if error is not None or snapshot is None:
            server.state, server.last_error = "failed", error
            await raise_alert(
                session, org_id, CONNECTION_ALERT, f"server {server.name!r} failed: {error}", server_id=server_id
            )
            return
        server.state, server.last_error, server.protocol_version = "connected", None, snapshot.protocol_version
        await clear_alert(session, org_id, CONNECTION_ALERT, server_id=server_id)
        changed = await _sync_tools(session, server, snapshot.tools)
    if error is None:
        opened.alerted.discard(name)
    for tool, policy, reviewed_hash in changed:
        opened.policies.set(name, tool, policy, reviewed_hash)  # type: ignore[arg-type]  # stored policies


async def _sync_tools(
    session: AsyncSession, server: RegisteredServer, listed: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str, str]]:
    """Keep what the server lists; returns each new tool's `(name, "off", hash)` for the host's policies."""
    known = {tool.name: tool for tool in await session.scalars(select(Tool).where(Tool.server_id == server.id))}
    fresh: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    now = utcnow()
    for wire in listed:
        name = str(wire.get("name", ""))
        if not name or name in seen:
            continue
        seen.add(name)
        digest = definition_hash(wire)
        tool = known.get(name)
        if tool is None:
            tool = Tool(
                org_id=server.org_id,
                server_id=server.id,
                name=name,
                definition=dict(wire),
                definition_hash=digest,
                state="active",
            )
            session.add(tool)
            await session.flush()
            # New tools start `off`, bound to the definition discovered (POL-5): discovery is not review.
            session.add(
                Policy(
                    org_id=server.org_id,
                    tool_id=tool.id,
                    policy="off",
                    reviewed_hash=digest,
                    reviewed_definition=dict(wire),
                )
            )
            fresh.append((name, "off", digest))
            continue
        await session.refresh(tool, ["policy"])
        tool.definition, tool.definition_hash, tool.updated_at = dict(wire), digest, now
        reviewed = tool.policy.reviewed_hash if tool.policy is not None else digest
        tool.state = "active" if reviewed == digest else "changed"
    for name, tool in known.items():
        if name not in seen and tool.state != "removed":
            tool.state, tool.updated_at = "removed", now
    return fresh
