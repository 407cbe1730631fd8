"""Offering MCP to a model (INS, MOD-1): what the host gives a model, below the host; the loop is `mcpyard.agent`.

The system prompt's server sections, the tools in each model API's format, the messages and events
of a turn, and the models a turn talks to: any OpenAI-compatible endpoint (`OpenAIModel`),
Anthropic's API (`AnthropicModel`, with the `anthropic` extra) or a script (`ScriptedModel`). The
model clients are imported only when a backend is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpyard.model._backend import Model, Reply, TextSink
from mcpyard.model._events import (
    ApprovalEvent,
    ErrorEvent,
    Event,
    EventSink,
    ParkedEvent,
    TextEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
    ToolSearchEvent,
    TurnEndEvent,
)
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
    tool_name,
)
from mcpyard.model._messages import (
    Message,
    ToolCall,
    messages_from_json,
    messages_to_json,
    sendable_call,
    sendable_text,
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
from mcpyard.model._scripted import ScriptedModel, ScriptStep, reply

if TYPE_CHECKING:
    from mcpyard.model._anthropic import AnthropicModel
    from mcpyard.model._openai import OpenAIModel

__all__ = [
    "ANTHROPIC",
    "FORMATS",
    "INSTRUCTIONS_LIMIT",
    "MAX_INLINED_PARTS",
    "MAX_INLINE_DEPTH",
    "NAME_LIMITS",
    "OPENAI",
    "AnthropicModel",
    "ApprovalEvent",
    "ErrorEvent",
    "Event",
    "EventSink",
    "Message",
    "Model",
    "ModelTools",
    "OfferedTool",
    "OpenAIModel",
    "ParkedEvent",
    "Profile",
    "Reply",
    "SchemaLeftOut",
    "ScriptStep",
    "ScriptedModel",
    "TextEvent",
    "TextSink",
    "ToolCall",
    "ToolCallEvent",
    "ToolFormat",
    "ToolFormatter",
    "ToolProgressEvent",
    "ToolResultEvent",
    "ToolSearchEvent",
    "TurnEndEvent",
    "format_tool",
    "format_tools",
    "host_prompt",
    "instructions_section",
    "messages_from_json",
    "messages_to_json",
    "normalize_schema",
    "provider_names",
    "reply",
    "sanitize_instructions",
    "sendable_call",
    "sendable_text",
    "system_prompt",
    "tool_name",
]

# The backends import their clients: only when one is used.
_LAZY = {
    "AnthropicModel": "mcpyard.model._anthropic",
    "OpenAIModel": "mcpyard.model._openai",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpyard.model' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
