"""The public face of mcpyard (API-1): `__all__` is an API decision, pinned here; `import mcpyard` stays lean."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import get_args, get_type_hints

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
}


def test_public_names_are_pinned() -> None:
    assert set(mcpyard.__all__) == PUBLIC
    for name in mcpyard.__all__:
        assert getattr(mcpyard, name) is not None


def test_api1_mode_is_exported_as_the_type_of_host_opens_mode() -> None:
    import mcpyard.config

    assert mcpyard.Mode is mcpyard.config.Mode
    assert get_args(mcpyard.Mode) == ("read-only", "plan", "ask", "auto")
    assert inspect.signature(mcpyard.Host.open).parameters["mode"].annotation == "Mode | None"
    assert get_type_hints(mcpyard.Host.open)["mode"] == mcpyard.Mode | None


def test_api1_the_type_hints_of_the_public_names_resolve_at_run_time() -> None:
    """What `typing.get_type_hints` (a validator, a documentation tool, a dependency injector) reads of the public
    classes and of every public method of `Host` names real types, never a name only a type checker knew."""
    for name in mcpyard.__all__:
        value = getattr(mcpyard, name)
        if inspect.isclass(value):
            get_type_hints(value)
    host = mcpyard.Host
    for name, member in inspect.getmembers(host, callable):
        if not name.startswith("_"):
            get_type_hints(member)
    assert get_type_hints(host.open)["approver"] == mcpyard.Approver | None


def test_api1_the_library_page_names_every_public_name() -> None:
    page = (Path(__file__).parents[1] / "docs" / "library.md").read_text(encoding="utf-8")
    assert [name for name in sorted(PUBLIC) if f"`{name}`" not in page] == []


def test_importing_mcpyard_does_not_import_the_sdk() -> None:
    code = "import sys, mcpyard; print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip() == "False"


ORG_PUBLIC = {
    "CALL_DEADLINE_SECS",
    "DATABASE_ENV",
    "DemoConsole",
    "DemoModel",
    "EnvKeySource",
    "FileKeySource",
    "OrgSettings",
    "PRODUCTION_HASHING",
    "PasswordHashing",
    "check_new_password",
    "check_schema",
    "default_database_url",
    "demo_console",
    "demo_servers",
    "describe_url",
    "ensure_key",
    "head_revision",
    "init_organization",
    "issue_token",
    "key_source",
    "open_database",
    "org_app",
    "resolve_database_url",
    "rotate_key",
    "run_demo",
    "upgrade",
    "withdraw_token",
}
"""What the organization service offers the console (`mcpyard org`): ORG-9, API-5."""


def test_the_organization_services_public_names_are_pinned_and_importing_it_stays_lean() -> None:
    import mcpyard.org

    assert set(mcpyard.org.__all__) == ORG_PUBLIC
    code = "import sys, mcpyard.org; print(any(m.split('.')[0] in ('sqlalchemy', 'starlette') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip() == "False"
    for name in mcpyard.org.__all__:
        assert getattr(mcpyard.org, name) is not None
