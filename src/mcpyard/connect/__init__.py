"""Connections to MCP servers: one supervisor per server over stdio, streamable HTTP or SSE."""

from mcpyard.connect._environment import BASE_VARIABLES, server_environment
from mcpyard.connect._input import MAX_OPEN_QUESTIONS, InputFn, InputRelay
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._stdio import StdioProcess, StdioTransport
from mcpyard.connect._supervisor import ClientIdentity, LogFn, ProgressFn, Supervisor, SupervisorState

__all__ = [
    "BASE_VARIABLES",
    "MAX_OPEN_QUESTIONS",
    "ClientIdentity",
    "InputFn",
    "InputRelay",
    "LogFn",
    "ProgressFn",
    "Reaper",
    "StdioProcess",
    "StdioTransport",
    "Supervisor",
    "SupervisorState",
    "server_environment",
]
