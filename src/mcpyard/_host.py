"""The Host: one session over every configured server, the core all faces drive (API-1)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from mcpyard._plan import Plan, header_names, make_plan, read_config, resolve_workspace, websocket_note
from mcpyard._status import ServerStatus, Status, ToolStatus
from mcpyard._version import __version__
from mcpyard.auth import AUTH_FILE, AuthStore
from mcpyard.catalog import Catalog, CatalogEntry, ServerTools, build_catalog, clean_text, tool_name
from mcpyard.config import LoadedConfig, Mode, ServerSpec, source_words
from mcpyard.connect import ClientIdentity, InputRelay, LogFn, ProgressFn, Reaper, Supervisor
from mcpyard.errors import StateError, UsageError
from mcpyard.pipeline import READ_RESULT_TOOL, CallResult, CallRunner, Session
from mcpyard.policy import Pin, PinStore
from mcpyard.secrets import Redactor
from mcpyard.secrets._inventory import secrets_in_use

__all__ = ["Host", "ToolInfo"]

MODES: tuple[Mode, ...] = ("read-only", "plan", "ask", "auto")
CONNECT_SLACK = 3.0
"""Beyond a server's connect and shutdown timeouts (a failed start is torn down before it is
reported), how long `open()` waits before giving up on it."""
TERM_GRACE = 2.0


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as offered to the model (`Host.tools()`)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    server: str
    tool: str
    title: str | None
    definition_hash: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "annotations": self.annotations,
            "server": self.server,
            "tool": self.tool,
            "title": self.title,
            "definition_hash": self.definition_hash,
        }


class Host:
    """A host session: configuration, one supervisor per server, the catalog and the call pipeline.

    Open it with `Host.open(...)`; everything it started stops when the block ends.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        config_file: Path | None,
        mode: Mode | None,
        approver: Any,
        trust_project: bool,
        environ: Mapping[str, str],
        config_home: Path,
        data_home: Path,
        secrets: Mapping[str, str] | None,
    ) -> None:
        if mode is not None and mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        self.workspace = workspace
        self.session = Session(mode=mode or "ask", approver=approver)
        self._config_file = config_file
        self._mode_arg = mode
        self._trust_project = trust_project
        self._environ = environ
        self._config_home = config_home
        self._data_home = data_home
        self._secrets = secrets
        self._identity = ClientIdentity("mcpyard", __version__, self.session.id)
        self._plan: Plan | None = None
        self._supervisors: dict[str, Supervisor] = {}
        self._finished: dict[str, anyio.Event] = {}
        self._catalog = Catalog()
        self._tg: anyio.abc.TaskGroup | None = None
        self._calls_in_flight = 0
        self._reloading = False
        self._known_names: dict[str, tuple[str, str]] = {}
        """Every model-facing name ever listed, with its server: a call to a tool of a stopped server names it."""
        self._runner = CallRunner(
            session=self.session,
            workspace=workspace,
            catalog=lambda: self._catalog,
            server=self._supervisors.get,
            settings=lambda: self.config.settings,
            environ=environ,
            pins=lambda: self.pins,
        )
        self.pins: Mapping[tuple[str, str], Pin] = {}
        """Reviewed per-tool policies (POL-5), read at open and on reload."""
        self._changed = anyio.Event()
        self._reaper = Reaper()
        self._auth_store = AuthStore(data_home / AUTH_FILE)
        self._open_browser = False
        self._relay_input = False
        self._resource_listeners: list[Callable[[str, str], Awaitable[None]]] = []
        """`(server, uri)` callbacks for updates of watched resources (the gateway's subscriptions)."""

    # ----------------------------------------------------------------- opening

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        workspace: Path | str | None = None,
        config_file: Path | str | None = None,
        mode: Mode | None = None,
        approver: Any = None,
        trust_project: bool = False,
        *,
        environ: Mapping[str, str] | None = None,
        config_home: Path | None = None,
        data_home: Path | None = None,
        secrets: Mapping[str, str] | None = None,
        open_browser: bool = False,
        relay_input: bool = False,
    ) -> AsyncIterator[Host]:
        """Read the configuration, connect every server concurrently, and yield the host.

        Args:
            workspace: the project folder (default: the current directory).
            config_file: a config file that comes before every other source (CFG-1).
            mode: `read-only`, `plan`, `ask` or `auto` (default: the config's, else `ask`).
            approver: `async (card) -> "once" | "session" | "deny"`, or None.
            trust_project: load the workspace's `.mcp.json` even if it was never trusted.
            environ: the environment to expand and pass on (default: `os.environ`).
            config_home: folder of the user config (default: `MCPYARD_CONFIG_HOME` or the platform's).
            data_home: folder of mcpyard's data (default: `MCPYARD_DATA_HOME` or the platform's).
            secrets: secrets by name for `${secret:NAME}` (default: the saved ones, SEC-1,
                read again on every reload).
            open_browser: open a server's sign-in page in the browser when it needs one (AUTH-2);
                either way the status page shows its address.
            relay_input: tell servers that sampling and elicitation are supported; a server's such
                request during a call goes to that call's `on_input` (the gateway relays it to its client).

        Raises:
            ConfigError: a configuration source cannot be used (nothing was started).
            UsageError: an argument is wrong.
        """
        from mcpyard._paths import config_home as default_config_home
        from mcpyard._paths import data_home as default_data_home

        env = dict(os.environ if environ is None else environ)
        root = await anyio.to_thread.run_sync(resolve_workspace, workspace)
        host = cls(
            workspace=root,
            config_file=Path(config_file) if config_file is not None else None,
            mode=mode,
            approver=approver,
            trust_project=trust_project,
            environ=env,
            config_home=config_home or default_config_home(env),
            data_home=data_home or default_data_home(env),
            secrets=dict(secrets) if secrets is not None else None,
        )
        host._open_browser = open_browser
        host._relay_input = relay_input
        plan = make_plan(await anyio.to_thread.run_sync(host._load))
        host.pins = await anyio.to_thread.run_sync(host._load_pins)
        if mode is None and plan.config.settings.mode is not None:
            host.session.mode = plan.config.settings.mode
        try:
            async with anyio.create_task_group() as tg:
                host._tg = tg
                try:
                    await host._apply(plan)
                    yield host
                finally:
                    host._tg = None
                    for supervisor in host._supervisors.values():
                        supervisor.request_stop()
                    # Leaving the task group waits for every server to be stopped (CONN-5).
        except BaseExceptionGroup as group:
            # The caller's own exception should reach it as itself, not wrapped by our task group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from group.exceptions[0].__cause__
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(host._reaper.close)

    def _load(self) -> LoadedConfig:
        secrets = self._secrets
        if secrets is None:
            from mcpyard.secrets import default_secret_store

            secrets = default_secret_store(self._data_home).get_all()
        return read_config(
            workspace=self.workspace,
            config_file=self._config_file,
            trust_project=self._trust_project,
            environ=self._environ,
            config_home=self._config_home,
            data_home=self._data_home,
            secrets=secrets,
        )

    async def _apply(self, plan: Plan) -> None:
        """Stop servers that left or changed, start new or changed ones, wait for them to settle."""
        old = self._plan
        self._plan = plan
        # Every value mcpyard will put into a request or an environment, redacted wherever it comes back (SEC-3).
        self.session.redactor = Redactor(secrets_in_use(plan.runnable, self._environ))
        wanted = {spec.id: spec for spec in plan.runnable}
        for server_id, supervisor in list(self._supervisors.items()):
            spec = wanted.get(server_id)
            same = (
                spec is not None
                and old is not None
                and spec.fingerprint() == supervisor.spec.fingerprint()
                and plan.prefixes[server_id] == old.prefixes.get(server_id)
                # A failed or stopped server is tried again on reload.
                and not self._finished[server_id].is_set()
                and supervisor.state not in ("failed", "stopped")
            )
            if same and spec is not None:
                supervisor.spec = spec
                continue
            supervisor.request_stop()
            await self._finished[server_id].wait()
            del self._supervisors[server_id]
        started = [self._start(spec) for spec in plan.runnable if spec.id not in self._supervisors]
        self._rebuild_catalog()
        if started:
            limit = (
                max(s.spec.connect_timeout_secs + s.spec.shutdown_timeout_secs for s in started)
                + TERM_GRACE
                + CONNECT_SLACK
            )
            with anyio.move_on_after(limit):
                for supervisor in started:
                    await supervisor.settled.wait()

    def _start(self, spec: ServerSpec) -> Supervisor:
        assert self._tg is not None
        supervisor = Supervisor(
            spec,
            workspace=self.workspace,
            environ=self._environ,
            identity=self._identity,
            on_change=self._on_server_change,
            reaper=self._reaper,
            redact=self._redact,
            auth_store=self._auth_store,
            open_browser=self._open_browser,
            relay_input=self._relay_input,
            on_resource_updated=self._resource_updated,
        )
        tg = self._tg
        finished = anyio.Event()

        async def run() -> None:
            try:
                await supervisor.run()
            finally:
                finished.set()

        self._supervisors[spec.id] = supervisor
        self._finished[spec.id] = finished
        tg.start_soon(run, name=f"mcpyard server {spec.id}")
        return supervisor

    def _redact(self, text: str) -> str:
        # Looked up on each use: a reload brings a new redactor.
        return self.session.redactor.redact(text)

    async def _resource_updated(self, server_id: str, uri: str) -> None:
        for listener in list(self._resource_listeners):
            with contextlib.suppress(Exception):  # one listener's failure is not another's
                await listener(server_id, uri)

    def _on_server_change(self, supervisor: Supervisor) -> None:
        if supervisor.state != "connected":
            # The end of a connection forgets that server's cached results (CALL-6).
            self.session.cache.forget_server(supervisor.spec.id)
        self._rebuild_catalog()

    def _removed(self, server_id: str) -> list[tuple[str, Pin]]:
        """Pinned tools a connected server no longer lists, with their model-facing names (POL-5)."""
        supervisor = self._supervisors.get(server_id)
        if supervisor is None or supervisor.state != "connected" or self._plan is None:
            return []
        listed = {entry.tool for entry in self._catalog.of_server(server_id)}
        prefix = self._plan.prefixes[server_id]
        return [
            (tool_name(prefix, self.settings_separator, pin.tool), pin)
            for (server, tool), pin in sorted(self.pins.items())
            if server == server_id and tool not in listed
        ]

    def _pin_state(self, entry: CatalogEntry) -> str | None:
        pin = self.pins.get((entry.server, entry.tool))
        if pin is None:
            return None
        return pin.policy if pin.definition_hash == entry.definition_hash else "changed"

    def _load_pins(self) -> Mapping[tuple[str, str], Pin]:
        return PinStore(self._data_home / "pins.json").load()

    def _rebuild_catalog(self) -> None:
        if self._plan is None:
            return
        listings = [
            ServerTools(spec.id, self._plan.prefixes[spec.id], supervisor.tools)
            for spec in self._plan.runnable
            if (supervisor := self._supervisors.get(spec.id)) is not None and supervisor.tools
        ]
        self._catalog = build_catalog(listings, self.settings_separator, redactor=self.session.redactor)
        self._known_names.update((entry.name, (entry.server, entry.tool)) for entry in self._catalog.entries.values())
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def wait_until(self, predicate: Callable[[Host], bool]) -> None:
        """Wait until `predicate(host)` holds, re-checking whenever a server's state or tools change.

        Bound it with `anyio.fail_after`; it never gives up on its own.
        """
        while not predicate(self):
            await self._changed.wait()

    # ----------------------------------------------------------------- reading

    @property
    def config(self) -> LoadedConfig:
        if self._plan is None:
            raise StateError("the host is not open")
        return self._plan.config

    @property
    def settings_separator(self) -> str:
        return self._plan.config.settings.tool_name_separator if self._plan else "__"

    @property
    def mode(self) -> Mode:
        return self.session.mode

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def tools(self) -> list[ToolInfo]:
        """The model-facing tools of every connected server (CAT-1, CAT-3, CAT-4), then the built-in `read_result`."""
        builtin = ToolInfo(
            name=str(READ_RESULT_TOOL["name"]),
            description=str(READ_RESULT_TOOL["description"]),
            input_schema=READ_RESULT_TOOL["inputSchema"],
            annotations=READ_RESULT_TOOL["annotations"],
            server="mcpyard",
            tool=str(READ_RESULT_TOOL["name"]),
            title="Read a stored result",
            definition_hash="",
        )
        return [*self.server_tools(), builtin]

    def server_tools(self) -> list[ToolInfo]:
        """The model-facing tools of the connected servers only.

        A pinned tool that is `off`, or whose definition changed since it was reviewed, is not
        offered: its new text never reaches the model before a person reviews it (POL-5).
        """
        return [
            ToolInfo(
                name=entry.name,
                description=entry.description,
                input_schema=entry.input_schema,
                annotations=entry.annotations,
                server=entry.server,
                tool=entry.tool,
                title=entry.title,
                definition_hash=entry.definition_hash,
            )
            for entry in self._catalog.entries.values()
            if not self.pins or self._pin_state(entry) not in ("off", "changed")
        ]

    def system_prompt(self) -> str:
        """The server instruction sections for the model's system prompt (INS-1 to INS-3, MOD-1).

        Each connected server's instructions, as sent at its last connect, sanitized and
        fenced under the server's tool prefix. A stdio server that stopped leaves the prompt;
        a remote server's section stays while it reconnects, until reload.
        """
        from mcpyard.model import system_prompt

        if self._plan is None:
            return ""
        prefixes = self._plan.prefixes
        redact = self.session.redactor.redact
        return system_prompt(
            # Cleaned before redacting, so a secret split by invisible characters is caught whole.
            (prefixes[server_id], redact(clean_text(text)))
            for server_id, text in self.instructions().items()
            if server_id in prefixes
        )

    def instructions(self) -> dict[str, str]:
        """Raw instructions by server id, as the connected servers sent them."""
        return {
            server_id: supervisor.instructions
            for server_id, supervisor in self._supervisors.items()
            if supervisor.instructions
        }

    def status(self) -> Status:
        """Every configured server with its state and reason (CLI-1, API-2)."""
        plan = self._plan
        if plan is None:
            raise StateError("the host is not open")
        warnings = list(plan.config.warnings)
        servers: list[ServerStatus] = []
        for spec in plan.config.servers:
            servers.append(self._server_status(plan, spec))
            supervisor = self._supervisors.get(spec.id)
            if supervisor is not None:
                warnings.extend(
                    text for w in supervisor.warnings if (text := self.session.redactor.redact(w)) not in warnings
                )
        return Status(
            session_id=self.session_id,
            mode=self.mode,
            workspace=self.workspace,
            warnings=tuple(warnings),
            servers=tuple(servers),
        )

    def _server_status(self, plan: Plan, spec: ServerSpec) -> ServerStatus:
        base: dict[str, Any] = {
            "id": spec.id,
            "name": plan.prefixes[spec.id],
            "source": spec.source,
            "transport": spec.transport,
            **header_names(spec),
            "command": spec.command,
            "url": spec.url,
        }
        if spec.state != "ok":
            return ServerStatus(state=spec.state, reason=spec.problem, **base)
        if (owner := plan.shadowed_by.get(spec.id)) is not None:
            reason = (
                f"shadowed by server {owner.id!r} from the {source_words(owner.source)} {owner.source_path}: "
                f"both use the tool prefix {plan.prefixes[spec.id]!r}; rename one with `name`"
            )
            return ServerStatus(state="shadowed", reason=reason, **base)
        supervisor = self._supervisors.get(spec.id)
        if supervisor is None:  # being started by a reload right now
            return ServerStatus(state="connecting", reason="starting", **base)
        base["transport"] = supervisor.transport_used
        tools = tuple(
            ToolStatus(entry.name, entry.tool, dict(entry.annotations), entry.definition_hash, self._pin_state(entry))
            for entry in self._catalog.of_server(spec.id)
        )
        tools += tuple(
            ToolStatus(name, pin.tool, {}, pin.definition_hash, "removed") for name, pin in self._removed(spec.id)
        )
        redact = self.session.redactor.redact
        return ServerStatus(
            state=supervisor.state,
            reason=redact(supervisor.reason) if supervisor.reason else None,
            protocol_version=supervisor.protocol_version,
            tools=tools,
            instructions_bytes=len((supervisor.instructions or "").encode()),
            sign_in_url=(
                supervisor.sign_in.page_url
                if supervisor.state == "waiting_for_sign_in" and supervisor.sign_in is not None
                else None
            ),
            note=redact(supervisor.note) if supervisor.note else websocket_note(spec),
            **base,
        )

    # ----------------------------------------------------------------- calls

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressFn | None = None,
        conversation: str | None = None,
        on_log: LogFn | None = None,
        on_input: InputRelay | None = None,
    ) -> CallResult:
        """Run one tool call through the whole pipeline (CALL); failures come back as a `CallResult`, never raised.

        Args:
            name: the model-facing tool name, or `read_result`.
            arguments: the tool's arguments; file parameters take local paths (CAT-3).
            on_progress: called with `(progress, total, message)` as the server reports progress.
            conversation: whose result store handles belong to (default: this host session's).
            on_log: called with each log message the server sends while the call runs (redacted).
            on_input: where the server's sampling and elicitation requests go while the call runs
                (with `relay_input`; redacted before they are sent on).
        """
        if self._reloading:
            return CallResult.refusal("reloading", "the configuration is being reloaded; call again in a moment")
        if name not in self._catalog.entries and self.pins:
            # Only a name the catalog does not know can be a removed, pinned tool (POL-5).
            for server_id in self._supervisors:
                if any(removed == name for removed, _ in self._removed(server_id)):
                    message = (
                        f"{name} was reviewed (pinned), but server {server_id!r} no longer lists it; it cannot run"
                    )
                    return CallResult.refusal("removed", message, tool=name, server=server_id)
        if name not in self._catalog.entries and (known := self._known_names.get(name)) is not None:
            server_id, _ = known
            supervisor = self._supervisors.get(server_id)
            why = f": {supervisor.reason}" if supervisor is not None and supervisor.reason else ""
            state = supervisor.state if supervisor is not None else "not running"
            message = f"{name} belongs to server {server_id!r}, which is {state}{why}"
            return CallResult.refusal("server_unavailable", message, tool=name, server=server_id)
        self._calls_in_flight += 1
        try:
            return await self._runner.run(
                name, arguments, on_progress=on_progress, conversation=conversation, on_log=on_log, on_input=on_input
            )
        except Exception as exc:  # last resort: a library call never raises for a call that failed
            message = f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"
            return CallResult.refusal("internal_error", message, tool=name)
        finally:
            self._calls_in_flight -= 1

    # ----------------------------------------------------------------- reload

    def complete_sign_in(self, server_id: str, redirect_url: str) -> bool:
        """Finish a server's sign-in with the address the browser was sent to, pasted back (AUTH-2).

        Returns whether it was the awaited sign-in's answer (its `state` must match).
        """
        supervisor = self._supervisors.get(server_id)
        return supervisor is not None and supervisor.complete_sign_in(redirect_url)

    async def reload(self) -> Status:
        """Re-read every source and apply the difference (CFG-7).

        Raises:
            StateError: a call is in flight.
            ConfigError: a source cannot be used; the running servers are left as they were.
        """
        if self._tg is None:
            raise StateError("the host is not open")
        if self._reloading:
            raise StateError("a reload is already running; wait for it to finish")
        if self._calls_in_flight:
            raise StateError(
                f"cannot reload while {self._calls_in_flight} tool call(s) are in flight; "
                "wait for them to finish, then reload"
            )
        self._reloading = True
        try:
            plan = make_plan(await anyio.to_thread.run_sync(self._load))
            self.pins = await anyio.to_thread.run_sync(self._load_pins)
            self.session.cache.clear()
            self.session.session_allows.clear()
            await self._apply(plan)
        finally:
            self._reloading = False
        return self.status()
