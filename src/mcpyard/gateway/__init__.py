"""The gateway: every governed tool as one MCP server over stdio or streamable HTTP (GW)."""

from mcpyard.gateway._context import conversation_of, wire_result
from mcpyard.gateway._face import ToolFace
from mcpyard.gateway._logs import LogLevels
from mcpyard.gateway._offered import Offer
from mcpyard.gateway._rounds import elicitation_modes
from mcpyard.gateway._serve import BearerGuard, serve_http, serve_stdio
from mcpyard.gateway._server import GATEWAY_INSTRUCTIONS, Gateway
from mcpyard.gateway._tasks import FaceTask, TaskElsewhere, task_state

__all__ = [
    "GATEWAY_INSTRUCTIONS",
    "BearerGuard",
    "FaceTask",
    "Gateway",
    "LogLevels",
    "Offer",
    "TaskElsewhere",
    "ToolFace",
    "conversation_of",
    "elicitation_modes",
    "serve_http",
    "serve_stdio",
    "task_state",
    "wire_result",
]
