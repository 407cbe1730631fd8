"""The first stage: finding the tool a call names, or saying exactly why it cannot be found (CALL-1, POL-5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpyard.catalog import clean_text, sanitize_name
from mcpyard.pipeline._call import Call, Refusal

if TYPE_CHECKING:
    from mcpyard import HostView
    from mcpyard.pipeline._session import Session

__all__ = ["resolve"]


async def resolve(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Find the tool by its model-facing name; a removed, unavailable or unknown one is refused (CALL-1, POL-5)."""
    del session
    name = call.request.name
    entry = view.catalog.get(name)
    if entry is None:
        return _not_offered(view, name)
    offered = {call.request.definition_hash, call.request.kept_hash} - {None}
    if offered - {entry.definition_hash}:
        return Refusal(
            "tool_changed",
            f"{name} is not the tool that was offered: its definition changed since; nothing was sent; "
            "list the tools again and call it again",
        )
    spec, connection = view.specs.get(entry.server), view.connections.get(entry.server)
    if spec is None or connection is None:
        return Refusal("server_unavailable", f"server {entry.server!r} is not running")
    call.entry, call.spec, call.connection = entry, spec, connection
    return call


def _not_offered(view: HostView, name: str) -> Refusal:
    if (refused := view.catalog.refused.get(name)) is not None:
        return Refusal(
            "invalid_schema",
            f"{name} is not offered: {refused.reason}; report it to the maintainers of server {refused.server!r}",
        )
    if (removed := view.removed().get(name)) is not None:
        server_id = removed[0]
        return Refusal("removed", f"{name} was reviewed, but server {server_id!r} no longer lists it; it cannot run")
    if (known := view.known.get(name)) is not None:
        server_id = known[0]
        snapshot = view.servers.get(server_id)
        state = str(snapshot.state) if snapshot is not None else "not running"
        if state == "connected":  # listed before (this session, or its last run), not any more
            hint = "list the tools with `mcpyard tools`"
            return Refusal("unknown_tool", f"unknown tool {name!r}: server {server_id!r} no longer lists it; {hint}")
        why = f": {snapshot.reason}" if snapshot is not None and snapshot.reason else ""
        return Refusal("server_unavailable", f"{name} belongs to server {server_id!r}, which is {state}{why}")
    if (down := _down_owner(view, name)) is not None:
        return down
    known_names = sorted(view.catalog.entries)
    close = [other for other in known_names if name.lower() in other.lower() or other.endswith(name)][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else "; list the tools with `mcpyard tools`"
    return Refusal("unknown_tool", f"unknown tool {name!r}{hint}")


def _down_owner(view: HostView, name: str) -> Refusal | None:
    """A name under the prefix of a server that is not connected: that server's state and why, not "unknown"."""
    separator = view.settings.tool_name_separator
    owners = [
        (prefix, spec)
        for spec in view.plan.config.servers
        if name.startswith(
            f"{(prefix := view.plan.prefixes.get(spec.id) or sanitize_name(spec.name or spec.id))}{separator}"
        )
    ]
    if not owners:
        return None
    _, spec = max(owners, key=lambda owner: len(owner[0]))
    snapshot = view.servers.get(spec.id)
    state: str
    reason: str | None
    if spec.state != "ok":
        state, reason = spec.state, spec.problem
    elif snapshot is not None and not snapshot.connected:
        state, reason = str(snapshot.state), snapshot.reason
    elif spec.id in view.plan.shadowed_by:
        state, reason = "shadowed", f"by server {view.plan.shadowed_by[spec.id].id!r}"
    else:
        return None  # connected (or starting): the tool itself is unknown
    why = f": {clean_text(reason)}" if reason else ""
    if state == "disabled":  # not meant to run: its tools are simply not offered (CAT-4)
        return Refusal("unknown_tool", f"unknown tool {name!r}: server {spec.id!r}, whose prefix it has, is disabled")
    return Refusal(
        "server_unavailable",
        f"{name} would be a tool of server {spec.id!r}, which is {state.replace('_', ' ')}{why}; see `mcpyard status`",
    )
