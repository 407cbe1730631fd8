"""What the configuration says to run: the plan (who shadows whom), and reading it for a workspace (CFG, CAT-1)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from mcpyard._listings import Listings
from mcpyard.auth import AuthStore
from mcpyard.catalog import server_prefix
from mcpyard.config import LoadedConfig, ProjectTrust, ServerSpec, TrustStore, load_config
from mcpyard.connect import Connections, EgressGuard, split_trace_headers
from mcpyard.errors import UsageError
from mcpyard.policy import PinPolicies, PinStore, PolicySource

__all__ = [
    "Changes",
    "HostOptions",
    "Plan",
    "Running",
    "header_names",
    "make_plan",
    "plan_changes",
    "read_config",
    "read_plan",
    "resolve_workspace",
    "websocket_note",
]


@dataclass(frozen=True, slots=True)
class Plan:
    """What the configuration says to run: specs, and who shadows whom."""

    config: LoadedConfig
    prefixes: Mapping[str, str]
    shadowed_by: Mapping[str, ServerSpec]
    specs: Mapping[str, ServerSpec]
    """The servers that run (valid, enabled, not shadowed), by id, in configuration order."""

    @property
    def runnable(self) -> list[ServerSpec]:
        return list(self.specs.values())

    def owners_by_prefix(self, name: str) -> list[str]:
        """The servers that run and whose tools' names start like `name` (prefix and separator), longest first."""
        separator = self.config.settings.tool_name_separator
        owners = [server_id for server_id in self.specs if name.startswith(f"{self.prefixes[server_id]}{separator}")]
        return sorted(owners, key=lambda server_id: -len(self.prefixes[server_id]))


def read_config(
    *,
    workspace: Path,
    config_file: Path | None,
    trust_project: bool,
    environ: Mapping[str, str],
    config_home: Path,
    data_home: Path,
    secrets: Mapping[str, str],
) -> LoadedConfig:
    """Read every source for a workspace, with its trust as recorded (CFG-1, CFG-6).

    `trust_project` trusts every project server for this read; else each one that
    `mcpyard trust` recorded and that has not changed since.

    Raises:
        ConfigError: a source cannot be used.
    """
    from mcpyard._paths import trust_file, user_config_file

    trusted: bool | ProjectTrust = True
    if not trust_project:
        trusted = TrustStore(trust_file(data_home)).record(workspace) or False
    return load_config(
        workspace=workspace,
        config_file=config_file,
        user_config_file=user_config_file(config_home),
        trusted=trusted,
        # `${MCPYARD_PYTHON}` is the Python that runs mcpyard unless it is set: the demo servers and
        # the README's example run with it, whatever `python3` on PATH is.
        environ={"MCPYARD_PYTHON": sys.executable, **environ},
        secrets=secrets,
    )


@dataclass(frozen=True, slots=True)
class HostOptions:
    """How a host was opened: where it reads its configuration and data, and what its servers may do."""

    workspace: Path
    environ: Mapping[str, str]
    config_home: Path
    data_home: Path
    config_file: Path | None = None
    trust_project: bool = False
    secrets: Mapping[str, str] | None = None
    """Secrets by name for `${secret:NAME}`; None: the saved ones, read again on every reload (SEC-1)."""
    policies: PolicySource | None = None
    """Reviewed per-tool policies; None: the pins `mcpyard pin` saved, read again on every reload (POL-5)."""
    open_browser: bool = False
    relay_input: bool = False
    elicit: bool = False
    """Declare elicitation (form and URL) to servers: the host has an elicitor to put questions to."""
    lazy: bool = False
    """Start each server only when something needs it (a call to one of its tools, `Host.start`)."""
    config: LoadedConfig | None = None
    """The configuration to run, given by a program that keeps its own, in place of reading files."""
    egress: EgressGuard | None = None
    """The outbound guard every remote server's HTTP goes through (NET-1, NET-2); None: no guard."""
    auth_store: AuthStore | None = None
    """Where OAuth registrations and tokens are kept; None: `mcp-auth.json` in the data folder (AUTH-3)."""
    connections: Connections | None = None
    """How servers are reached in place of their configured transports (`InMemoryServers`); None: as configured."""
    listings: Listings | None = None
    """Where a lazy host's servers not started yet find their last listing; None: a file in the data folder."""


def read_plan(options: HostOptions) -> tuple[Plan, PolicySource]:
    """The configuration and the reviewed policies as they are on disk now (blocking: run it in a worker thread).

    Raises:
        ConfigError: a source, or the pins file, cannot be used.
    """
    if options.config is not None:
        return make_plan(options.config), options.policies or PinPolicies({})
    secrets = options.secrets
    if secrets is None:
        from mcpyard.secrets import default_secret_store

        secrets = default_secret_store(options.data_home).get_all()
    config = read_config(
        workspace=options.workspace,
        config_file=options.config_file,
        trust_project=options.trust_project,
        environ=options.environ,
        config_home=options.config_home,
        data_home=options.data_home,
        secrets=secrets,
    )
    pinned = options.policies or PinPolicies(PinStore(options.data_home / "pins.json").load())
    return make_plan(config), pinned


def make_plan(config: LoadedConfig) -> Plan:
    prefixes = {spec.id: server_prefix(spec.name, spec.id, spec.position) for spec in config.servers}
    owner: dict[str, ServerSpec] = {}
    shadowed_by: dict[str, ServerSpec] = {}
    # Later entries have higher priority: they keep the prefix (CAT-1).
    for spec in reversed(config.servers):
        if spec.state != "ok":
            continue
        prefix = prefixes[spec.id]
        if prefix in owner:
            shadowed_by[spec.id] = owner[prefix]
        else:
            owner[prefix] = spec
    specs = {s.id: s for s in config.servers if s.state == "ok" and s.id not in shadowed_by}
    return Plan(config, prefixes, shadowed_by, MappingProxyType(specs))


@dataclass(frozen=True, slots=True)
class Running:
    """A server that runs now, as a reload sees it."""

    spec: ServerSpec
    """What it was started with."""
    healthy: bool
    """Still connecting or connected; False once it failed, stopped or its task ended."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What a reload does: servers to stop, to keep running as they are, and to start."""

    stop: tuple[str, ...]
    keep: tuple[str, ...]
    start: tuple[ServerSpec, ...]


def plan_changes(old: Plan | None, new: Plan, running: Mapping[str, Running]) -> Changes:
    """The difference between what runs and what the new plan says (CFG-7).

    A server is kept when it is still wanted with the same connection settings and tool
    prefix and is healthy; one that left, changed, failed or stopped is stopped, and started
    again when still wanted; new ones start.
    """
    stop: list[str] = []
    keep: list[str] = []
    for server_id, now in running.items():
        spec = new.specs.get(server_id)
        same = (
            spec is not None
            and old is not None
            and now.healthy
            and spec.fingerprint() == now.spec.fingerprint()
            and new.prefixes[server_id] == old.prefixes.get(server_id)
        )
        (keep if same else stop).append(server_id)
    kept = set(keep)
    start = tuple(spec for spec in new.specs.values() if spec.id not in kept)
    return Changes(tuple(stop), tuple(keep), start)


def websocket_note(spec: ServerSpec) -> str | None:
    if spec.transport == "websocket" and spec.headers:
        return "websocket servers get no headers: the configured ones are not sent"
    return None


def header_names(spec: ServerSpec) -> dict[str, tuple[str, ...]]:
    """Configured header names sent and not sent (never values): websocket sends none (AUTH-1, CALL-3)."""
    if spec.transport == "websocket":
        return {"headers_sent": (), "headers_not_sent": tuple(name for name, _ in spec.headers)}
    sent, not_sent = split_trace_headers(spec.headers)
    return {"headers_sent": tuple(name for name, _ in sent), "headers_not_sent": tuple(not_sent)}


def resolve_workspace(workspace: Path | str | None) -> Path:
    root = Path(workspace if workspace is not None else Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"workspace {str(root)!r} is not a folder (check --workspace)")
    return root
