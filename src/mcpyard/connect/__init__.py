"""Connections to MCP servers: one supervisor per server over stdio, streamable HTTP, SSE or websocket."""

from mcpyard.connect._addresses import address_problem
from mcpyard.connect._calls import LogFn, ProgressFn
from mcpyard.connect._egress import CheckedUrl, EgressGuard, RemoteUrl, check_answers, parse_remote_url
from mcpyard.connect._environment import BASE_VARIABLES, LOCATION_VARIABLES, server_environment
from mcpyard.connect._guarded import guarded_client
from mcpyard.connect._input import MAX_OPEN_QUESTIONS, InputFn, InputRelay
from mcpyard.connect._legacy_tasks import lifetime_secs
from mcpyard.connect._memory import ConfiguredConnections, Connections, InMemoryServers, ServerFactory
from mcpyard.connect._network import Dialer, MemoryResolver, Resolver, SystemResolver, TcpDialer
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._sendable import (
    MAX_ARGUMENTS_BYTES,
    MAX_ARGUMENTS_DEPTH,
    sendable_copy,
    sendable_problem,
    unsendable_text,
)
from mcpyard.connect._snapshot import ServerSnapshot, State
from mcpyard.connect._stdio import StdioProcess, StdioTransport, kill_every_server, parse_message
from mcpyard.connect._supervisor import CANCEL_GRACE, Supervisor
from mcpyard.connect._tasks import (
    FACE_TASK,
    TASKS_EXTENSION,
    MadeTask,
    noticing_tasks,
    poll_secs,
    resumed_task,
    resuming_task,
)
from mcpyard.connect._trace import split_trace_headers
from mcpyard.connect._transports import ClientIdentity
from mcpyard.connect._writer import MessageWriter

__all__ = [
    "BASE_VARIABLES",
    "CANCEL_GRACE",
    "FACE_TASK",
    "LOCATION_VARIABLES",
    "MAX_ARGUMENTS_BYTES",
    "MAX_ARGUMENTS_DEPTH",
    "MAX_OPEN_QUESTIONS",
    "TASKS_EXTENSION",
    "CheckedUrl",
    "ClientIdentity",
    "ConfiguredConnections",
    "Connections",
    "Dialer",
    "EgressGuard",
    "InMemoryServers",
    "InputFn",
    "InputRelay",
    "LogFn",
    "MadeTask",
    "MemoryResolver",
    "MessageWriter",
    "ProgressFn",
    "Reaper",
    "RemoteUrl",
    "Resolver",
    "ServerFactory",
    "ServerSnapshot",
    "State",
    "StdioProcess",
    "StdioTransport",
    "Supervisor",
    "SystemResolver",
    "TcpDialer",
    "address_problem",
    "check_answers",
    "guarded_client",
    "kill_every_server",
    "lifetime_secs",
    "noticing_tasks",
    "parse_message",
    "parse_remote_url",
    "poll_secs",
    "resumed_task",
    "resuming_task",
    "sendable_copy",
    "sendable_problem",
    "server_environment",
    "split_trace_headers",
    "unsendable_text",
]
