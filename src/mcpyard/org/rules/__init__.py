"""The organization's rules, as pure functions of what is known: tested as tables, with no database and no HTTP."""

from mcpyard.org.rules._tools import (
    PURPOSES,
    REASONS,
    Purpose,
    Reason,
    ToolFacts,
    ToolState,
    tool_state,
    why_not,
)

__all__ = ["PURPOSES", "REASONS", "Purpose", "Reason", "ToolFacts", "ToolState", "tool_state", "why_not"]
