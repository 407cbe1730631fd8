"""The public face of `mcpyard.model` is pinned (MOD-1, MOD-2; STYLE 1), and importing it loads no model client."""

from __future__ import annotations

import subprocess
import sys

import mcpyard.model


def test_mod2_the_public_names_of_the_model_package_are_pinned() -> None:
    assert sorted(mcpyard.model.__all__) == sorted(
        [
            "ANTHROPIC", "FORMATS", "INSTRUCTIONS_LIMIT", "MAX_INLINED_PARTS", "MAX_INLINE_DEPTH", "NAME_LIMITS",
            "OPENAI", "AnthropicModel", "ApprovalEvent", "ErrorEvent", "Event", "EventSink",
            "Message",
            "Model", "ModelTools", "OfferedTool", "OpenAIModel", "ParkedEvent", "Profile", "Reply",
            "SchemaLeftOut", "ScriptStep", "ScriptedModel", "TextEvent", "TextSink", "ToolCall", "ToolCallEvent",
            "ToolFormat", "ToolFormatter", "ToolProgressEvent", "ToolResultEvent", "ToolSearchEvent", "TurnEndEvent",
            "format_tool", "format_tools", "host_prompt", "instructions_section",
            "messages_from_json", "messages_to_json", "normalize_schema", "provider_names", "reply",
            "sanitize_instructions", "sendable_call", "sendable_text", "system_prompt", "tool_name",
        ]
    )  # fmt: skip
    for name in mcpyard.model.__all__:
        assert getattr(mcpyard.model, name) is not None


def test_mod2_importing_the_model_package_loads_no_model_client() -> None:
    code = "import sys, mcpyard.model; print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip() == "[]"
