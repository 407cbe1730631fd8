"""Tools and their policies: each tool has one, set for the definition a person reviewed, and audited (POL-5, ORG-3)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Conflict, Invalid
from mcpyard.org._caller import ADMINS, Caller, not_found, require
from mcpyard.org._words import quoted
from mcpyard.org.services._events import audit
from mcpyard.org.services._server_json import tool_detail_json, tool_json
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import ToolDetailView, ToolView
from mcpyard.org.store import Policy, RegisteredServer, Tool, note_change, utcnow
from mcpyard.policy import POLICIES, PinPolicy

__all__ = ["get_tool", "list_tools", "set_policy"]


async def _tool(session: AsyncSession, caller: Caller, tool_id: str) -> tuple[Tool, RegisteredServer]:
    found = (
        await session.execute(
            select(Tool, RegisteredServer)
            .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
            .where(Tool.id == tool_id, Tool.org_id == caller.org_id, RegisteredServer.deleted_at.is_(None))
        )
    ).first()
    if found is None:
        raise not_found("tool")
    tool, server = found
    await session.refresh(tool, ["policy"])
    return tool, server


async def list_tools(svc: OrgService, caller: Caller) -> list[ToolView]:
    """Every tool of the organization's servers, with its state and policy."""
    opened = await svc.hosts.get(caller.org_id)
    async with svc.db.begin() as session:
        rows = (
            await session.execute(
                select(Tool, RegisteredServer)
                .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
                .where(Tool.org_id == caller.org_id, RegisteredServer.deleted_at.is_(None))
                .order_by(RegisteredServer.name, Tool.name)
            )
        ).all()
        items: list[ToolView] = []
        for tool, server in rows:
            await session.refresh(tool, ["policy"])
            items.append(tool_json(tool, server, opened))
        return items


async def get_tool(svc: OrgService, caller: Caller, tool_id: str) -> ToolDetailView:
    """One tool; when it changed since it was reviewed, the reviewed definition beside the current one."""
    opened = await svc.hosts.get(caller.org_id)
    async with svc.db.begin() as session:
        tool, server = await _tool(session, caller, tool_id)
        return tool_detail_json(tool, server, opened)


async def set_policy(
    svc: OrgService, caller: Caller, tool_id: str, policy: object, definition_hash: object
) -> ToolDetailView:
    """Set a tool's policy for the definition the caller reviewed: 409 `stale_hash` unless it is the current one."""
    require(caller, *ADMINS)
    if policy not in POLICIES:
        raise Invalid("invalid_policy", f"policy must be one of {', '.join(POLICIES)}")
    if not isinstance(definition_hash, str):
        raise Invalid("invalid_hash", "give the definition_hash of the definition you reviewed")
    chosen: PinPolicy = policy
    async with svc.db.begin() as session:
        tool, server = await _tool(session, caller, tool_id)
        if tool.state == "removed":
            raise Conflict("tool_removed", f"the server no longer lists {quoted(tool.name)}; it cannot run")
        if definition_hash != tool.definition_hash:
            raise Conflict(
                "stale_hash",
                f"{quoted(tool.name)} is now at definition {tool.definition_hash[:12]}…, not the one you reviewed; "
                "read it again (GET /api/v1/tools/{id}) and set its policy for that one",
            )
        current = tool.policy
        old = {"policy": current.policy, "definition_hash": current.reviewed_hash} if current is not None else None
        if current is None:
            current = Policy(
                org_id=caller.org_id,
                tool_id=tool.id,
                reviewed_hash=tool.definition_hash,
                reviewed_definition=dict(tool.definition),
            )
            session.add(current)
        current.policy, current.reviewed_hash = chosen, tool.definition_hash
        current.reviewed_definition, current.set_by, current.set_at = dict(tool.definition), caller.member_id, utcnow()
        audit(
            session,
            caller.org_id,
            caller.email,
            "policy.set",
            tool.id,
            old=old,
            new={"policy": chosen, "definition_hash": tool.definition_hash, "tool": tool.name, "server": server.name},
        )
        await note_change(session, caller.org_id)
    opened = await svc.hosts.current(caller.org_id)
    async with svc.db.begin() as session:
        tool, server = await _tool(session, caller, tool_id)
        return tool_detail_json(tool, server, opened)
