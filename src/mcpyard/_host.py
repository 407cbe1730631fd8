"""The Host: one session over every configured server, the core all faces drive (API-1).

It owns the supervisors and the session, and publishes what it knows as one immutable
`HostView` whenever a server, the catalog or the configuration changes; the pipeline, the
status page and the read side are functions of that view.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import anyio
import anyio.abc
import mcp_types as types

from mcpyard._plan import Plan, Running, make_plan, plan_changes, read_config, resolve_workspace
from mcpyard._resources import PromptInfo, ResourceInfo, TemplateInfo, list_prompts, list_resources, list_templates
from mcpyard._resources import owner_of_uri as _owner_of_uri
from mcpyard._status import Status, build_status
from mcpyard._tools import READ_RESULT_INFO, ToolInfo, offered_tools
from mcpyard._version import __version__
from mcpyard._view import HostView, ViewCell
from mcpyard.auth import AUTH_FILE, AuthStore
from mcpyard.catalog import Catalog, ServerTools, build_catalog, clean_text
from mcpyard.config import LoadedConfig, Mode, ServerSpec
from mcpyard.connect import ClientIdentity, InputRelay, LogFn, ProgressFn, Reaper, ServerSnapshot, Supervisor
from mcpyard.errors import CallError, StateError, UsageError
from mcpyard.pipeline import CallRecord, CallRecorder, CallRequest, CallResult, MemoryRecorder, Recorders, Session, run
from mcpyard.policy import Approver, PinPolicies, PinStore, PolicySource, Rules
from mcpyard.secrets import Redactor, secrets_in_use

__all__ = ["Host", "ToolInfo"]

MODES: tuple[Mode, ...] = ("read-only", "plan", "ask", "auto")
CONNECT_SLACK = 3.0
"""Beyond a server's connect and shutdown timeouts (a failed start is torn down before it is
reported), how long `open()` waits before giving up on it."""
TERM_GRACE = 2.0


class Host:
    """A host session: configuration, one supervisor per server, the catalog and the call pipeline.

    Open it with `Host.open(...)`; everything it started stops when the block ends.
    """

    def __init__(self, *, workspace: Path, environ: Mapping[str, str], data_home: Path, **options: Any) -> None:
        self.workspace = workspace
        self._environ = environ
        self._data_home = data_home
        self._options = options
        """`config_file`, `config_home`, `trust_project`, `secrets`, `policies`, `open_browser`, `relay_input`."""
        self._history = MemoryRecorder()
        recorder: CallRecorder | None = options.get("recorder")
        self.session = Session(
            mode=options.get("mode") or "ask",
            approver=options.get("approver"),
            recorder=self._history if recorder is None else Recorders([self._history, recorder]),
        )
        self._identity = ClientIdentity("mcpyard", __version__, self.session.id)
        self._supervisors: dict[str, Supervisor] = {}
        self._started: dict[str, ServerSpec] = {}
        """The spec each supervisor was started with."""
        self._finished: dict[str, anyio.Event] = {}
        self._snapshots: dict[str, ServerSnapshot] = {}
        self._known: dict[str, tuple[str, str]] = {}
        """Every model-facing name ever listed, with its server: a call to a tool of a stopped server names it."""
        self._redactor = Redactor()
        self._cell = ViewCell()
        self._view: HostView | None = None
        self._changed = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._calls_in_flight = 0
        self._reloading = False
        self._reaper = Reaper()
        self._auth_store = AuthStore(data_home / AUTH_FILE)
        self._resource_listeners: list[Callable[[str, str], Awaitable[None]]] = []

    # ----------------------------------------------------------------- opening

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        workspace: Path | str | None = None,
        config_file: Path | str | None = None,
        mode: Mode | None = None,
        approver: Approver | None = None,
        trust_project: bool = False,
        *,
        environ: Mapping[str, str] | None = None,
        config_home: Path | None = None,
        data_home: Path | None = None,
        secrets: Mapping[str, str] | None = None,
        open_browser: bool = False,
        relay_input: bool = False,
        policies: PolicySource | None = None,
        recorder: CallRecorder | None = None,
    ) -> AsyncIterator[Host]:
        """Read the configuration, connect every server concurrently, and yield the host.

        Args:
            workspace: the project folder (default: the current directory).
            config_file: a config file that comes before every other source (CFG-1).
            mode: `read-only`, `plan`, `ask` or `auto` (default: the config's, else `ask`).
            approver: `async (card) -> "once" | "session" | "deny"`, or None: calls that must ask are refused.
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
            policies: where reviewed per-tool policies come from (default: the pins `mcpyard pin` saves).
            recorder: also hand every call's record to this (`host.history()` keeps the session's either way).

        Raises:
            ConfigError: a configuration source cannot be used (nothing was started).
            UsageError: an argument is wrong.
        """
        from mcpyard._paths import config_home as default_config_home
        from mcpyard._paths import data_home as default_data_home

        if mode is not None and mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        env = dict(os.environ if environ is None else environ)
        root = await anyio.to_thread.run_sync(resolve_workspace, workspace)
        host = cls(
            workspace=root,
            environ=env,
            data_home=data_home or default_data_home(env),
            config_file=Path(config_file) if config_file is not None else None,
            config_home=config_home or default_config_home(env),
            mode=mode,
            approver=approver,
            trust_project=trust_project,
            secrets=dict(secrets) if secrets is not None else None,
            open_browser=open_browser,
            relay_input=relay_input,
            policies=policies,
            recorder=recorder,
        )
        plan, pinned = await anyio.to_thread.run_sync(host._read)
        if mode is None and plan.config.settings.mode is not None:
            host.session.mode = plan.config.settings.mode
        try:
            async with anyio.create_task_group() as tg:
                host._tg = tg
                try:
                    await host._apply(plan, pinned)
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

    def _read(self) -> tuple[Plan, PolicySource]:
        """The configuration and the reviewed policies, as they are on disk now (in a worker thread)."""
        options = self._options
        secrets = options.get("secrets")
        if secrets is None:
            from mcpyard.secrets import default_secret_store

            secrets = default_secret_store(self._data_home).get_all()
        config = read_config(
            workspace=self.workspace,
            config_file=options.get("config_file"),
            trust_project=bool(options.get("trust_project")),
            environ=self._environ,
            config_home=options["config_home"],
            data_home=self._data_home,
            secrets=secrets,
        )
        policies: PolicySource | None = options.get("policies")
        return make_plan(config), policies or PinPolicies(PinStore(self._data_home / "pins.json").load())

    async def _apply(self, plan: Plan, policies: PolicySource) -> None:
        """Stop servers that left or changed, start new or changed ones, wait for them to settle (CFG-7)."""
        old = self._view.plan if self._view is not None else None
        running = {
            server_id: Running(self._started[server_id], s.snapshot.state not in ("failed", "stopped"))
            for server_id, s in self._supervisors.items()
            if not self._finished[server_id].is_set()
        }
        changes = plan_changes(old, plan, running)
        for server_id in [*changes.stop, *(i for i in self._supervisors if i not in running)]:
            self._supervisors[server_id].request_stop()
            await self._finished[server_id].wait()
            for table in (self._supervisors, self._started, self._finished, self._snapshots):
                table.pop(server_id, None)
        # Every value mcpyard will put into a request or an environment, redacted wherever it comes back (SEC-3).
        self._redactor = Redactor(secrets_in_use(plan.runnable, self._environ))
        started = [self._start(spec) for spec in changes.start]
        self._publish(plan, policies, relist=True)
        if started:
            limit = max(s.connect_timeout_secs + s.shutdown_timeout_secs for s in changes.start) + TERM_GRACE
            with anyio.move_on_after(limit + CONNECT_SLACK):
                for supervisor in started:
                    await supervisor.wait_settled()

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
            open_browser=bool(self._options.get("open_browser")),
            relay_input=bool(self._options.get("relay_input")),
            on_resource_updated=self._resource_updated,
        )
        finished = anyio.Event()

        async def run_server() -> None:
            try:
                await supervisor.run()
            finally:
                finished.set()

        self._supervisors[spec.id] = supervisor
        self._started[spec.id] = spec
        self._finished[spec.id] = finished
        self._snapshots[spec.id] = supervisor.snapshot
        self._tg.start_soon(run_server, name=f"mcpyard server {spec.id}")
        return supervisor

    def _redact(self, text: str) -> str:
        return self._redactor.redact(text)  # looked up on each use: a reload brings a new redactor

    async def _resource_updated(self, server_id: str, uri: str) -> None:
        for listener in list(self._resource_listeners):
            with contextlib.suppress(Exception):  # one listener's failure is not another's
                await listener(server_id, uri)

    def _on_server_change(self, snapshot: ServerSnapshot) -> None:
        if snapshot.id not in self._supervisors or self._view is None:
            return  # stopped by a reload, or before the first view
        if not snapshot.connected:
            self.session.cache.forget_server(snapshot.id)  # the end of a connection forgets its results (CALL-6)
        before = self._snapshots.get(snapshot.id)
        self._snapshots[snapshot.id] = snapshot
        self._publish(self._view.plan, self._view.policies, relist=before is None or before.tools is not snapshot.tools)

    def _publish(self, plan: Plan, policies: PolicySource, *, relist: bool) -> None:
        """Build and publish a new view; the catalog is built again only when a listing changed."""
        catalog = self._view.catalog if self._view is not None and not relist else self._build_catalog(plan)
        settings = plan.config.settings
        self._view = self._cell.view = HostView(
            plan=plan,
            catalog=catalog,
            servers=MappingProxyType(dict(self._snapshots)),
            connections=MappingProxyType(dict(self._supervisors)),
            policies=policies,
            redactor=self._redactor,
            known=MappingProxyType(dict(self._known)),
            workspace=self.workspace,
            environ=self._environ,
            rules=Rules(settings.allow, settings.deny),
            cell=self._cell,
        )
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def _build_catalog(self, plan: Plan) -> Catalog:
        listings = [
            ServerTools(server_id, plan.prefixes[server_id], snapshot.tools)
            for server_id in plan.specs
            if (snapshot := self._snapshots.get(server_id)) is not None and snapshot.tools
        ]
        catalog = build_catalog(listings, plan.config.settings.tool_name_separator, redactor=self._redactor)
        self._known.update((entry.name, (entry.server, entry.tool)) for entry in catalog.entries.values())
        return catalog

    async def wait_until(self, predicate: Callable[[Host], bool]) -> None:
        """Wait until `predicate(host)` holds, re-checking whenever the host publishes a new view.

        Bound it with `anyio.fail_after`; it never gives up on its own.
        """
        while not predicate(self):
            await self._changed.wait()

    # ----------------------------------------------------------------- reading

    @property
    def view(self) -> HostView:
        """What the host knows now, as one immutable view (replaced, never changed)."""
        if self._view is None:
            raise StateError("the host is not open")
        return self._view

    @property
    def config(self) -> LoadedConfig:
        return self.view.plan.config

    @property
    def catalog(self) -> Catalog:
        return self.view.catalog

    @property
    def mode(self) -> Mode:
        return self.session.mode

    @property
    def session_id(self) -> str:
        return self.session.id

    def tools(self) -> list[ToolInfo]:
        """The model-facing tools of every connected server (CAT-1, CAT-3, CAT-4), then the built-in `read_result`."""
        return [*offered_tools(self.view), READ_RESULT_INFO]

    def server_tools(self) -> list[ToolInfo]:
        """The model-facing tools of the connected servers only (a pinned `off` or changed tool is held back)."""
        return offered_tools(self.view)

    def servers(self) -> list[ServerSnapshot]:
        """Each running server as its supervisor last saw it: state, listings, process."""
        return list(self.view.servers.values())

    def server(self, server_id: str) -> ServerSnapshot | None:
        """One running server's last snapshot, or None when it does not run (not configured, skipped, shadowed)."""
        return self.view.servers.get(server_id)

    def resources(self) -> list[ResourceInfo]:
        """Every connected server's resources, named like its tools, descriptions clean and redacted."""
        return list_resources(self.view)

    def templates(self) -> list[TemplateInfo]:
        return list_templates(self.view)

    def prompts(self) -> list[PromptInfo]:
        return list_prompts(self.view)

    def owner_of_uri(self, uri: str) -> str | None:
        """The server that lists the resource, else the first whose template fits it."""
        return _owner_of_uri(self.view, uri)

    def history(self) -> list[CallRecord]:
        """This session's calls, oldest first (the last 1,000): what ran, was refused or failed, and why."""
        return self._history.records()

    def system_prompt(self) -> str:
        """The server instruction sections for the model's system prompt (INS-1 to INS-3, MOD-1).

        Each connected server's instructions, as sent at its last connect, sanitized and
        fenced under the server's tool prefix. A stdio server that stopped leaves the prompt;
        a remote server's section stays while it reconnects, until reload.
        """
        from mcpyard.model import system_prompt

        view = self.view
        return system_prompt(
            # Cleaned before redacting, so a secret split by invisible characters is caught whole.
            (view.plan.prefixes[server_id], view.redactor.redact(clean_text(snapshot.instructions)))
            for server_id, snapshot in view.servers.items()
            if snapshot.instructions and server_id in view.plan.prefixes
        )

    def status(self) -> Status:
        """Every configured server with its state and reason (CLI-1, API-2)."""
        return build_status(self.view, session_id=self.session_id, mode=self.mode)

    # ----------------------------------------------------------------- calls and requests

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
        request = CallRequest(
            name, dict(arguments or {}), conversation or self.session.id, on_progress, on_log, on_input
        )
        self._calls_in_flight += 1
        try:
            return await run(self.view, self.session, request)
        except Exception as exc:  # last resort: a library call never raises for a call that failed
            message = f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"
            return CallResult.refusal("internal_error", message, tool=name)
        finally:
            self._calls_in_flight -= 1

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """Read a resource from the server that lists it, or whose template fits it; text redacted (SEC-3).

        Raises:
            CallError: no connected server lists it, or the server failed.
        """
        server = self.owner_of_uri(uri)
        if server is None:
            raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
        result = await self._request(server, lambda client: client.read_resource(uri))
        return types.ReadResourceResult.model_validate(self._redacted(result))

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> types.GetPromptResult:
        """Get a prompt by its offered name; messages redacted (SEC-3).

        Raises:
            CallError: no such prompt, or the server failed.
        """
        info = next((info for info in self.prompts() if info.name == name), None)
        if info is None:
            raise CallError("unknown_prompt", f"no prompt {name!r}; `host.prompts()` lists them")
        prompt, given = info.prompt, dict(arguments or {})
        result = await self._request(info.server, lambda client: client.get_prompt(prompt, given))
        return types.GetPromptResult.model_validate(self._redacted(result))

    async def complete(
        self,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: dict[str, str],
        context: dict[str, str] | None = None,
        *,
        visible: Callable[[str], bool] = lambda server: True,
    ) -> types.CompleteResult:
        """Completion candidates from the server that owns the prompt or template; values redacted.

        `visible(server)`: whether the asker may see that server's prompts and templates.

        Raises:
            CallError: no visible server owns it, or the server failed.
        """
        if isinstance(ref, types.PromptReference):
            prompt = next((p for p in self.prompts() if visible(p.server) and ref.name in (p.name, p.prompt)), None)
            if prompt is None:
                raise CallError("unknown_prompt", f"no prompt {ref.name!r} to complete")
            server, ref = prompt.server, types.PromptReference(type="ref/prompt", name=prompt.prompt)
        else:
            template = next((t for t in self.templates() if visible(t.server) and t.uri_template == ref.uri), None)
            if template is None:
                raise CallError("unknown_resource", f"no resource template {ref.uri!r} to complete")
            server = template.server
        result = await self._request(server, lambda client: client.complete(ref, argument, context))
        return types.CompleteResult.model_validate(self._redacted(result))

    async def _request(self, server: str, send: Callable[[Any], Awaitable[Any]]) -> Any:
        supervisor = self._supervisors.get(server)
        spec = self.view.specs.get(server)
        if supervisor is None or spec is None:
            raise CallError("server_unavailable", f"server {server!r} is not running")
        return await supervisor.request(send, timeout_secs=spec.call_timeout_secs)

    def _redacted(self, result: types.Result) -> Any:
        return self.view.redactor.redact_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))

    async def watch_resource(self, uri: str) -> str:
        """Watch a resource at the server that lists it (or whose template fits it); returns the server's id.

        Raises:
            CallError: no connected server lists it, or the server does not offer subscriptions.
        """
        server = self.owner_of_uri(uri)
        if server is None or server not in self._supervisors:
            raise CallError("unknown_resource", f"no connected server lists the resource {uri!r}")
        await self._supervisors[server].watch(uri)
        return server

    async def unwatch_resource(self, server: str, uri: str) -> None:
        """Drop one watch made by `watch_resource`."""
        supervisor = self._supervisors.get(server)
        if supervisor is not None:
            await supervisor.unwatch(uri)

    def on_resource_updated(self, listener: Callable[[str, str], Awaitable[None]]) -> None:
        """Call `listener(server, uri)` when a watched resource changes."""
        self._resource_listeners.append(listener)

    # ----------------------------------------------------------------- sign-in and reload

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
            plan, policies = await anyio.to_thread.run_sync(self._read)
            self.session.cache.clear()
            self.session.session_allows.clear()
            await self._apply(plan, policies)
        finally:
            self._reloading = False
        return self.status()
