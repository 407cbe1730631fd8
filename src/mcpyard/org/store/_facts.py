"""A stored tool's facts as the organization's rules read them (`mcpyard.org.rules`)."""

from __future__ import annotations

from mcpyard.org.rules import Purpose, Reason, ToolFacts, why_not
from mcpyard.org.store._models import Policy, RegisteredServer, Tool

__all__ = ["facts_of", "why_not_now"]


def facts_of(tool: Tool, policy: Policy | None, server: RegisteredServer, bound_hash: str | None = None) -> ToolFacts:
    """`bound_hash`: the definition a publication or an approval was made for."""
    return ToolFacts(
        listed=tool.state != "removed",
        server_deleted=server.deleted_at is not None,
        policy=policy.policy if policy is not None else None,
        reviewed_hash=policy.reviewed_hash if policy is not None else None,
        live_hash=tool.definition_hash,
        bound_hash=bound_hash,
    )


def why_not_now(
    tool: Tool, policy: Policy | None, server: RegisteredServer, purpose: Purpose, bound_hash: str | None = None
) -> Reason | None:
    """Why this stored tool may not serve `purpose` now, or None."""
    return why_not(facts_of(tool, policy, server, bound_hash), purpose)
