"""Registered servers: register, list, edit, refresh and delete; their tools discovered and kept in step (ORG-2, ORG-3).

Registering checks the URL with the outbound guard (NET-1), seals the token (or the client
credentials: client id, secret, issuer and scopes, the issuer checked like the URL) in a table of its
own, connects (30 s in all, NET-2) and discovers the tools: each new tool starts `off`. A
refresh lists them again: a changed definition is suspended until it is reviewed, a tool no
longer listed stays as `removed`. A failed connection raises one alert; the next success
clears it (ORG-8). Deleting a server stops its tools at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Conflict, Invalid, ServiceError
from mcpyard.org._bodies import unknown_fields
from mcpyard.org._caller import ADMINS, Caller, not_found, require
from mcpyard.org._words import quoted
from mcpyard.org.keys import same_origin
from mcpyard.org.services._discovery import CONNECTION_ALERT, connect_and_sync
from mcpyard.org.services._events import audit, clear_alert
from mcpyard.org.services._review import mark_for_review, selections_using
from mcpyard.org.services._server_input import (
    both_given,
    check_client_credentials,
    check_name,
    check_token,
    check_url,
    new_credential,
)
from mcpyard.org.services._server_json import CLIENT_CREDENTIALS, server_json
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import CredentialField, EditedServerView, SelectionView, ServerView
from mcpyard.org.store import Credential, RegisteredServer, Tool, note_change, utcnow

__all__ = [
    "delete_server",
    "get_server",
    "list_servers",
    "refresh_server",
    "register_server",
    "server_selections",
    "update_server",
]


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


async def _json(svc: OrgService, session: AsyncSession, server: RegisteredServer) -> ServerView:
    opened = await svc.hosts.get(server.org_id)
    return server_json(server, await _tools(session, server.id), await _credential(session, server.id), opened)


def _name_taken(name: str) -> ServiceError:
    return Conflict("name_taken", f"a server named {quoted(name)} is registered already; choose another name")


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
) -> ServerView:
    """Register a server, connect and discover its tools (each starting `off`); 201's body."""
    require(caller, *ADMINS)
    if bearer_token is not None and client_credentials is not None:
        raise both_given()
    name, url = check_name(name), await check_url(svc, url)
    token = check_token(bearer_token) if bearer_token is not None else None
    client = await check_client_credentials(svc, client_credentials) if client_credentials is not None else None
    try:
        async with svc.db.begin() as session:
            await _free_name(session, caller.org_id, name)
            server = RegisteredServer(org_id=caller.org_id, name=name, url=url, state="connecting")
            session.add(server)
            await session.flush()
            if (credential := new_credential(svc, caller.org_id, server.id, url, token, client)) is not None:
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
            await note_change(session, caller.org_id)
    except IntegrityError:  # another registration took the name between our look and our write
        raise _name_taken(name) from None
    await connect_and_sync(svc, caller.org_id, server.id)
    async with svc.db.begin() as session:
        return await _json(svc, session, await _server(session, caller, server.id))


async def list_servers(svc: OrgService, caller: Caller) -> list[ServerView]:
    async with svc.db.begin() as session:
        servers = await session.scalars(
            select(RegisteredServer)
            .where(RegisteredServer.org_id == caller.org_id, RegisteredServer.deleted_at.is_(None))
            .order_by(RegisteredServer.created_at)
        )
        return [await _json(svc, session, server) for server in servers]


async def get_server(svc: OrgService, caller: Caller, server_id: str) -> ServerView:
    async with svc.db.begin() as session:
        return await _json(svc, session, await _server(session, caller, server_id))


async def update_server(
    svc: OrgService, caller: Caller, server_id: str, changes: Mapping[str, Any]
) -> EditedServerView:
    """Edit a server's name, URL, token or client credentials (`bearer_token: null` or `client_credentials: null`
    removes it; giving one replaces the other); it connects again with them.

    A credential is bound to the origin it was entered for: a URL edited to another origin drops the stored one
    unless a new one comes in the same request. The answer is the server with `credentials_dropped`, the fields
    dropped so (`["bearer_token"]`, `["client_credentials"]` or `[]`)."""
    require(caller, *ADMINS)
    unknown = unknown_fields(changes, ("name", "url", "bearer_token", "client_credentials"))
    if unknown is not None:
        raise Invalid("invalid_request", unknown)
    if changes.get("bearer_token") is not None and changes.get("client_credentials") is not None:
        raise both_given()
    token = check_token(changes["bearer_token"]) if changes.get("bearer_token") is not None else None
    client = (
        await check_client_credentials(svc, changes["client_credentials"])
        if changes.get("client_credentials") is not None
        else None
    )
    try:
        async with svc.db.begin() as session:
            server = await _server(session, caller, server_id)
            old = {"name": server.name, "url": server.url}
            if "name" in changes and (name := check_name(changes["name"])) != server.name:
                await _free_name(session, caller.org_id, name)
                server.name = name
            if "url" in changes:
                server.url = await check_url(svc, changes["url"])
            dropped: list[CredentialField] = []
            if token is not None or client is not None:  # a server has one credential: the new one replaces it
                await session.execute(delete(Credential).where(Credential.server_id == server.id))
                session.add(new_credential(svc, caller.org_id, server.id, server.url, token, client))
            elif not same_origin(old["url"], server.url) and (stored := await _credential(session, server.id)):
                # Never sent to a host it was not entered for: whoever may edit the URL could read it there.
                dropped.append("bearer_token" if stored.kind == "bearer" else "client_credentials")
                await session.delete(stored)
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
                    "credentials_dropped": dropped,
                },
            )
            await note_change(session, caller.org_id)
    except IntegrityError:  # another edit or registration took the name between our look and our write
        raise _name_taken(str(changes["name"])) from None
    await connect_and_sync(svc, caller.org_id, server_id)
    return {**await get_server(svc, caller, server_id), "credentials_dropped": dropped}


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
        await note_change(session, caller.org_id)
    # A call of its still in flight (waiting for an answer, say): its tools are refused already; the next call
    # that finds it ended stops the server.
    with contextlib.suppress(ServiceError):
        await svc.hosts.reload(caller.org_id)


async def server_selections(svc: OrgService, caller: Caller, server_id: str) -> list[SelectionView]:
    """What deleting the server would affect: the assistants using its tools and the teammates allowed it, as
    `{kind, id, name}` by kind then name (owner, admin)."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        server = await _server(session, caller, server_id)
        return await selections_using(session, caller.org_id, server.id)


async def refresh_server(svc: OrgService, caller: Caller, server_id: str) -> ServerView:
    """Discover the tools again: changed ones are suspended, missing ones `removed`, new ones `off` (ORG-3)."""
    require(caller, *ADMINS)
    async with svc.db.begin() as session:
        await _server(session, caller, server_id)
    await connect_and_sync(svc, caller.org_id, server_id, relist=True)
    return await get_server(svc, caller, server_id)
