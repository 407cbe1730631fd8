"""The gateway: every governed tool as one MCP server over stdio or streamable HTTP (GW)."""

from mcpyard.gateway._context import conversation_of
from mcpyard.gateway._face import Offer, ToolFace
from mcpyard.gateway._logs import LogLevels
from mcpyard.gateway._rounds import elicitation_modes
from mcpyard.gateway._serve import BearerGuard, serve_http, serve_stdio
from mcpyard.gateway._server import GATEWAY_INSTRUCTIONS, Gateway

__all__ = [
    "GATEWAY_INSTRUCTIONS",
    "BearerGuard",
    "Gateway",
    "LogLevels",
    "Offer",
    "ToolFace",
    "conversation_of",
    "elicitation_modes",
    "serve_http",
    "serve_stdio",
]
