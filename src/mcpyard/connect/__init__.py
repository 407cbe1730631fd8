"""Connections to MCP servers: one supervisor per server over stdio, streamable HTTP, SSE or websocket."""

from mcpyard.connect._calls import LogFn, ProgressFn
from mcpyard.connect._environment import BASE_VARIABLES, LOCATION_VARIABLES, server_environment
from mcpyard.connect._input import MAX_OPEN_QUESTIONS, InputFn, InputRelay
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._snapshot import ServerSnapshot, State
from mcpyard.connect._stdio import MessageWriter, StdioProcess, StdioTransport, parse_message
from mcpyard.connect._supervisor import CANCEL_GRACE, Supervisor
from mcpyard.connect._trace import split_trace_headers
from mcpyard.connect._transports import ClientIdentity

__all__ = [
    "BASE_VARIABLES",
    "CANCEL_GRACE",
    "LOCATION_VARIABLES",
    "MAX_OPEN_QUESTIONS",
    "ClientIdentity",
    "InputFn",
    "InputRelay",
    "LogFn",
    "MessageWriter",
    "ProgressFn",
    "Reaper",
    "ServerSnapshot",
    "State",
    "StdioProcess",
    "StdioTransport",
    "Supervisor",
    "parse_message",
    "server_environment",
    "split_trace_headers",
]
