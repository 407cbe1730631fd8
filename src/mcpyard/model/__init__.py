"""Offering MCP to a model: the system prompt's server sections (INS, MOD-1)."""

from mcpyard.model._prompt import INSTRUCTIONS_LIMIT, instructions_section, sanitize_instructions, system_prompt

__all__ = ["INSTRUCTIONS_LIMIT", "instructions_section", "sanitize_instructions", "system_prompt"]
