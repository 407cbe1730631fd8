"""mcpyard: an MCP host runtime. `Host` is the library's entry point (API-1).

Names are imported on first use, so `import mcpyard` and `mcpyard --help` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpyard._version import __version__
from mcpyard.errors import CallError, ConfigError, McpyardError, StateError, UsageError

if TYPE_CHECKING:
    from mcpyard._host import Host, ToolInfo
    from mcpyard._status import ServerStatus, Status, ToolStatus
    from mcpyard.connect import InputRelay
    from mcpyard.pipeline import CallResult
    from mcpyard.policy import Answer, ApprovalCard

__all__ = [
    "Answer",
    "ApprovalCard",
    "CallError",
    "CallResult",
    "ConfigError",
    "Host",
    "InputRelay",
    "McpyardError",
    "ServerStatus",
    "StateError",
    "Status",
    "ToolInfo",
    "ToolStatus",
    "UsageError",
    "__version__",
]

_LAZY = {
    "Host": "mcpyard._host",
    "ToolInfo": "mcpyard._host",
    "ServerStatus": "mcpyard._status",
    "Status": "mcpyard._status",
    "ToolStatus": "mcpyard._status",
    "CallResult": "mcpyard.pipeline",
    "InputRelay": "mcpyard.connect",
    "ApprovalCard": "mcpyard.policy",
    "Answer": "mcpyard.policy",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpyard' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
