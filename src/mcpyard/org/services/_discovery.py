"""Connecting a registered server and keeping the tools it lists in step with the database (ORG-3, ORG-8).

New tools start `off`, a changed definition is suspended until it is reviewed, a tool no longer
listed stays as `removed`; a failed connection raises one alert and the next success clears it.
What a server sent is stored redacted (its own token said back is never kept in clear), while its
hash is the hash of what it sent: a refresh compares like with like, and pinning still sees changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.catalog import definition_hash
from mcpyard.org._words import quoted, text_of
from mcpyard.org.services._events import clear_alert, raise_alert
from mcpyard.org.services._service import OrgService
from mcpyard.org.store import Policy, RegisteredServer, Tool, note_change, utcnow
from mcpyard.secrets import Redactor

__all__ = ["CONNECTION_ALERT", "connect_and_sync"]

CONNECTION_ALERT = "connection"


async def connect_and_sync(svc: OrgService, org_id: str, server_id: str, *, relist: bool = False) -> None:
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
    redactor = host.view.redactor
    async with svc.db.begin() as session:
        server = await session.get(RegisteredServer, server_id)
        if server is None:
            return
        server.refreshed_at = utcnow()
        if error is not None or snapshot is None:
            server.state, server.last_error = "failed", redactor.redact(error or "it did not connect")
            message = f"server {quoted(server.name)} failed: {text_of(server.last_error)}"
            await raise_alert(session, org_id, CONNECTION_ALERT, message, server_id=server_id)
            return
        version = redactor.redact(snapshot.protocol_version) if snapshot.protocol_version is not None else None
        server.state, server.last_error, server.protocol_version = "connected", None, version
        await clear_alert(session, org_id, CONNECTION_ALERT, server_id=server_id)
        await sync_tools(session, server, snapshot.tools, redactor)
        await note_change(session, org_id)
        refreshed = server.refreshed_at
    svc.hosts.listed_here(opened, name, refreshed)


async def sync_tools(
    session: AsyncSession, server: RegisteredServer, listed: Sequence[Mapping[str, Any]], redactor: Redactor
) -> None:
    """Keep what the server lists, redacted, each under the hash of what it sent; a new tool starts `off`."""
    known = {tool.name: tool for tool in await session.scalars(select(Tool).where(Tool.server_id == server.id))}
    seen: set[str] = set()
    now = utcnow()
    for wire in listed:
        name = str(wire.get("name", ""))
        if not name or name in seen or redactor.contains(name):
            continue  # a name holding a secret could be neither stored, shown nor offered without it
        seen.add(name)
        digest = definition_hash(wire)
        kept: dict[str, Any] = redactor.redact_json(dict(wire))
        tool = known.get(name)
        if tool is None:
            tool = Tool(
                org_id=server.org_id,
                server_id=server.id,
                name=name,
                definition=kept,
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
                    reviewed_definition=dict(kept),
                )
            )
            continue
        await session.refresh(tool, ["policy"])
        tool.definition, tool.definition_hash, tool.updated_at = kept, digest, now
        tool.state = "active"  # listed; whether it changed since review is the rules' to say, from the hashes
    for name, tool in known.items():
        if name not in seen and tool.state != "removed":
            tool.state, tool.updated_at = "removed", now
