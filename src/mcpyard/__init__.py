"""mcpyard: an MCP host runtime. `Host` is the library's entry point (API-1).

Names are imported on first use, so `import mcpyard` and `mcpyard --help` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpyard._lazy import lazy_names
from mcpyard._version import __version__
from mcpyard.errors import CallError, ConfigError, McpyardError, StateError, UsageError

if TYPE_CHECKING:
    from mcpyard._host import Host, ToolInfo
    from mcpyard._listings import Listings, MemoryListings
    from mcpyard._status import ServerStatus, Status, ToolStatus
    from mcpyard._view import HostView
    from mcpyard.config import Mode
    from mcpyard.connect import InputRelay, ServerSnapshot
    from mcpyard.elicitation import ElicitationAnswer, ElicitationRequest, Elicitor, FormField
    from mcpyard.pipeline import CallRecord, CallRecorder, CallResult
    from mcpyard.policy import Answer, ApprovalCard, Approver, InboxApprover, MemoryPolicies, PolicySource

__all__ = [
    "Answer",
    "ApprovalCard",
    "Approver",
    "CallError",
    "CallRecord",
    "CallRecorder",
    "CallResult",
    "ConfigError",
    "ElicitationAnswer",
    "ElicitationRequest",
    "Elicitor",
    "FormField",
    "Host",
    "HostView",
    "InboxApprover",
    "InputRelay",
    "Listings",
    "McpyardError",
    "MemoryListings",
    "MemoryPolicies",
    "Mode",
    "PolicySource",
    "ServerSnapshot",
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
    "Listings": "mcpyard._listings",
    "MemoryListings": "mcpyard._listings",
    "ServerStatus": "mcpyard._status",
    "Status": "mcpyard._status",
    "ToolStatus": "mcpyard._status",
    "HostView": "mcpyard._view",
    "Mode": "mcpyard.config",
    "CallResult": "mcpyard.pipeline",
    "CallRecord": "mcpyard.pipeline",
    "CallRecorder": "mcpyard.pipeline",
    "InputRelay": "mcpyard.connect",
    "ElicitationAnswer": "mcpyard.elicitation",
    "ElicitationRequest": "mcpyard.elicitation",
    "Elicitor": "mcpyard.elicitation",
    "FormField": "mcpyard.elicitation",
    "ServerSnapshot": "mcpyard.connect",
    "ApprovalCard": "mcpyard.policy",
    "Answer": "mcpyard.policy",
    "Approver": "mcpyard.policy",
    "InboxApprover": "mcpyard.policy",
    "MemoryPolicies": "mcpyard.policy",
    "PolicySource": "mcpyard.policy",
}


__getattr__ = lazy_names(__name__, _LAZY)
