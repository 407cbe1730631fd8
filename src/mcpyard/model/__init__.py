"""Offering MCP to a model: the system prompt's server sections (INS), tool formats per model API (MOD-1)."""

from mcpyard.model._formats import (
    FORMATS,
    NAME_LIMITS,
    ModelTools,
    OfferedTool,
    ToolFormat,
    ToolFormatter,
    format_tool,
    format_tools,
    provider_names,
)
from mcpyard.model._prompt import (
    INSTRUCTIONS_LIMIT,
    host_prompt,
    instructions_section,
    sanitize_instructions,
    system_prompt,
)
from mcpyard.model._schemas import (
    ANTHROPIC,
    MAX_INLINE_DEPTH,
    MAX_INLINED_PARTS,
    OPENAI,
    Profile,
    SchemaLeftOut,
    normalize_schema,
)

__all__ = [
    "ANTHROPIC",
    "FORMATS",
    "INSTRUCTIONS_LIMIT",
    "MAX_INLINED_PARTS",
    "MAX_INLINE_DEPTH",
    "NAME_LIMITS",
    "OPENAI",
    "ModelTools",
    "OfferedTool",
    "Profile",
    "SchemaLeftOut",
    "ToolFormat",
    "ToolFormatter",
    "format_tool",
    "format_tools",
    "host_prompt",
    "instructions_section",
    "normalize_schema",
    "provider_names",
    "sanitize_instructions",
    "system_prompt",
]
