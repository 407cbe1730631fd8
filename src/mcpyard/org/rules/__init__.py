"""The organization's rules, as pure functions of what is known: tested as tables, with no database and no HTTP."""

from mcpyard.org.rules._limits import (
    LIMIT_FIELDS,
    MAX_PER_DAY,
    MAX_PER_MINUTE,
    Period,
    Reached,
    Subject,
    SubjectKind,
    Window,
    checked_limits,
    limit_problem,
    windows_of,
)
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

__all__ = [
    "LIMIT_FIELDS",
    "MAX_PER_DAY",
    "MAX_PER_MINUTE",
    "PURPOSES",
    "REASONS",
    "Period",
    "Purpose",
    "Reached",
    "Reason",
    "Subject",
    "SubjectKind",
    "ToolFacts",
    "ToolState",
    "Window",
    "checked_limits",
    "limit_problem",
    "tool_state",
    "why_not",
    "windows_of",
]
