"""The public face of mcpyard (API-1): `__all__` is an API decision, pinned here; `import mcpyard` stays lean."""

from __future__ import annotations

import subprocess
import sys

import mcpyard

PUBLIC = {
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
    "McpyardError",
    "MemoryPolicies",
    "PolicySource",
    "ServerSnapshot",
    "ServerStatus",
    "StateError",
    "Status",
    "ToolInfo",
    "ToolStatus",
    "UsageError",
    "__version__",
}


def test_public_names_are_pinned() -> None:
    assert set(mcpyard.__all__) == PUBLIC
    for name in mcpyard.__all__:
        assert getattr(mcpyard, name) is not None


def test_importing_mcpyard_does_not_import_the_sdk() -> None:
    code = "import sys, mcpyard; print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip() == "False"
