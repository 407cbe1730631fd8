"""The Host: one session over every configured server, the core all faces drive (API-1).

It owns the supervisors and the session, and publishes what it knows as one immutable
`HostView` whenever a server, the catalog or the configuration changes; the pipeline, the
status page and the read side are functions of that view. Its parts: the read side
(`_reading.HostReading`), the model-facing side (`_offer.ModelOffer`), resources and prompts
(`_resources.ResourceReader`), and the servers it runs (`_servers.Servers`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types

from mcpyard._listings import Listings
from mcpyard._offer import ModelOffer
from mcpyard._plan import HostOptions, Plan, make_plan, read_plan, resolve_workspace
from mcpyard._resources import ResourceReader
from mcpyard._servers import Servers
from mcpyard._status import Status
from mcpyard._tools import ToolInfo
from mcpyard._version import __version__
from mcpyard._view import Publisher
from mcpyard.auth import AuthStore
from mcpyard.config import MODES, LoadedConfig, Mode, secrets_in_use
from mcpyard.connect import ClientIdentity, Connections, EgressGuard, InputRelay, LogFn, ProgressFn, ServerSnapshot
from mcpyard.elicitation import Elicitor, keep_answers_out_of_logs
from mcpyard.errors import StateError, UsageError
from mcpyard.model import ToolFormatter
from mcpyard.pipeline import (
    CallRecorder,
    CallRequest,
    CallResult,
    IdempotentCache,
    MemoryRecorder,
    Recorders,
    Results,
    Session,
    run,
)
from mcpyard.policy import Approver, PolicySource
from mcpyard.secrets import Redactor

__all__ = ["Host", "ToolInfo"]

_log = logging.getLogger("mcpyard")


class Host(ModelOffer, ResourceReader):
    """A host session (configuration, a supervisor per server, catalog, call pipeline), opened with `Host.open`."""

    def __init__(
        self,
        options: HostOptions,
        *,
        mode: Mode,
        approver: Approver | None,
        recorder: CallRecorder | None,
        elicitor: Elicitor | None = None,
        parts: Mapping[str, Any] | None = None,
    ) -> None:
        self.workspace = options.workspace
        self._options = options
        self._history = MemoryRecorder()
        recorders = self._history if recorder is None else Recorders([self._history, recorder])
        # `parts`: the session's own result store or cache, where `open` was given one.
        self.session = Session(mode, approver, recorders, **(parts or {}), elicitor=elicitor)
        identity = ClientIdentity("mcpyard", __version__, self.session.id)
        self._servers = Servers(options, identity, redactor=lambda: self._redactor, on_change=self._on_server_change)
        if self._servers.reaper.spawns:
            # Hooks start under the reaper too: not even a helper in its own session outlives a call.
            self.session.start_hooks = self._servers.reaper.tree
        self._views = Publisher(workspace=options.workspace, environ=options.environ)
        self._redactor = Redactor()
        self._formats, self._offered, self._budgets = ToolFormatter(), {}, {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._calls_in_flight = 0
        self._reloading = False

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
        lazy: bool = False,
        config: LoadedConfig | None = None,
        egress: EgressGuard | None = None,
        elicitor: Elicitor | None = None,
        auth_store: AuthStore | None = None,
        connections: Connections | None = None,
        results: Results | None = None,
        cache: IdempotentCache | None = None,
        listings: Listings | None = None,
    ) -> AsyncIterator[Host]:
        """Read the configuration, connect every server concurrently, and yield the host.

        With `lazy`, nothing starts at first: a server starts when a call needs it (only that call waits) or on
        `host.start()`, offering meanwhile what it listed last time (a call runs only on that tool; see `call`).

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
            lazy: start each server only when something needs it (see above).
            config: the configuration to run, in place of reading the files (a program that keeps its
                own, such as the organization service); `reload(config=...)` replaces it.
            egress: send every remote server's HTTP through this outbound guard (public https addresses only,
                pinned once checked, no redirects, bounded answers and calls; no websocket). None: no guard.
            elicitor: `async (ElicitationRequest) -> ElicitationAnswer`: who answers a server's questions
                during a call (elicitation, form and URL modes). Given one, mcpyard declares elicitation to
                every server; an accepted form is completed with its defaults and checked against the form
                before it goes back. None: elicitation is not declared, and a server that asks anyway is
                told it is not supported.
            auth_store: where OAuth registrations and tokens are kept (`MemoryAuthStore`: in memory only,
                never written). None: `mcp-auth.json` in the data folder (AUTH-3).
            connections: how to reach servers in place of their configured transports: `InMemoryServers`
                connects the servers it builds in this process over the SDK's in-memory transport (a
                program's own servers, or tests). None: every server as configured.
            results: where long results are kept by handle (CALL-4). None: in memory, for this host only.
            cache: the idempotent cache (CALL-6); `IdempotentCache(max_entries=0)` keeps nothing. None: the default.
            listings: where a lazy host keeps what servers listed (`MemoryListings`: in memory). None: a file.

        Raises:
            ConfigError: a configuration source cannot be used (nothing was started).
            UsageError: an argument is wrong.
        """
        from mcpyard._paths import config_home as default_config_home
        from mcpyard._paths import data_home as default_data_home

        if mode is not None and mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        env = dict(os.environ if environ is None else environ)
        options = HostOptions(
            workspace=await anyio.to_thread.run_sync(resolve_workspace, workspace),
            environ=env,
            config_home=config_home or default_config_home(env),
            data_home=data_home or default_data_home(env),
            config_file=Path(config_file) if config_file is not None else None,
            trust_project=trust_project,
            secrets=dict(secrets) if secrets is not None else None,
            policies=policies,
            open_browser=open_browser,
            relay_input=relay_input,
            elicit=elicitor is not None,
            lazy=lazy,
            config=config,
            egress=egress,
            auth_store=auth_store,
            connections=connections,
            listings=listings,
        )
        if elicitor is not None or relay_input:
            keep_answers_out_of_logs()  # what a person types into a form is never logged (SEC-2)
        plan, pinned = await anyio.to_thread.run_sync(read_plan, options)
        chosen = mode or plan.config.settings.mode or "ask"
        parts = {name: part for name, part in (("store", results), ("cache", cache)) if part is not None}
        host = cls(options, mode=chosen, approver=approver, recorder=recorder, elicitor=elicitor, parts=parts)
        try:
            async with anyio.create_task_group() as tg:
                host._tg = tg
                try:
                    await host._apply(plan, pinned)
                    yield host
                finally:
                    host._tg = None
                    await host._servers.stop_all(sys.exc_info()[1])  # in a hurry if interrupted (CONN-5)
        except BaseExceptionGroup as group:
            # The caller's own exception should reach it as itself, not wrapped by our task group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from group.exceptions[0].__cause__
            raise
        finally:
            await host._servers.close()

    async def _apply(self, plan: Plan, policies: PolicySource) -> None:
        """Stop servers that left or changed, start new or changed ones, wait for them to settle (CFG-7)."""
        if self._tg is None:
            raise StateError("the host is not open")
        # Every value mcpyard will put into a request or an environment, redacted wherever it comes back (SEC-3).
        redactor = Redactor(secrets_in_use(plan.runnable, self._options.environ))
        old = self._views.view.plan if self._views.view is not None else None
        started = await self._servers.apply(old, plan, self._tg, lazy=self._options.lazy)
        self._redactor = redactor
        self._publish(plan, policies, relist=True)
        await self._servers.settle(started)

    def _on_server_change(self, snapshot: ServerSnapshot) -> None:
        if not snapshot.connected:  # the end of a connection forgets its results (CALL-6)
            self.session.cache.forget_server(snapshot.id)
        before = self._servers.heard(snapshot)
        if snapshot.connected and before is not None and before.tools is not snapshot.tools and self._tg is not None:
            self._servers.keep_listing(snapshot, self._tg)
        if before is not None and (view := self._views.view) is not None:
            self._publish(view.plan, view.policies, relist=before.tools is not snapshot.tools)

    def _publish(self, plan: Plan, policies: PolicySource, *, relist: bool) -> None:
        servers = self._servers
        self._views.publish(plan, policies, self._redactor, servers.snapshots(), servers.connections(), relist=relist)

    async def start(self, server_ids: Iterable[str] | None = None) -> None:
        """Start the servers a lazy host has not started yet (all of them by default); wait until each settled.

        Each waits at most its own connect timeout; a server that fails is reported on the status page.
        """
        if self._tg is None:
            raise StateError("the host is not open")
        ids = list(self._servers.pending() if server_ids is None else server_ids)
        await self._servers.start(ids, self._tg)

    async def wait_until(self, predicate: Callable[[Host], bool]) -> None:
        """Wait until `predicate(host)` holds, checked on every new view; bound it with `anyio.fail_after`."""
        while not predicate(self):
            await self._views.changed()

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
        approver: Approver | None = None,
        definition_hash: str | None = None,
        elicitor: Elicitor | None = None,
        tags: Mapping[str, str] | None = None,
        offered: bool = True,
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
            approver: answers this call's card instead of the host's approver.
            definition_hash: run only if the tool's live definition has this hash (CAT-2), else `tool_changed`.
            elicitor: answers the server's questions during this call instead of the host's elicitor
                (servers are told of elicitation only when the host was opened with an elicitor).
            tags: the caller's own labels for the call (text to text), copied into its `CallRecord`.
            offered: False when no listing was offered for this call (a person naming the tool, as `mcpyard
                call` does): a lazy host's listing kept from the last run then does not bind it (CAT-2).
        """
        if tags and not all(isinstance(key, str) and isinstance(value, str) for key, value in tags.items()):
            return CallResult.refusal("invalid_arguments", "`tags` must map text to text; nothing was sent", tool=name)
        if self._reloading:
            return CallResult.refusal("reloading", "the configuration is being reloaded; call again in a moment")
        self._calls_in_flight += 1
        try:
            kept = await self._servers.ready_for(name, self.view, self._tg) if self._options.lazy else None
            request = CallRequest(
                name, dict(arguments or {}), conversation or self.session.id, on_progress, on_log, on_input
            )
            request.kept_hash = kept if offered else None
            request.definition_hash, request.approver, request.elicitor = definition_hash, approver, elicitor
            if tags:
                request.tags = dict(tags)  # a copy: the record keeps them as they were when the call began
            return await run(self.view, self.session, request)
        except Exception as exc:  # last resort: a library call never raises for a call that failed
            # The traceback goes to the log (redacted), for a report; the caller reads one line.
            _log.error("%s failed inside mcpyard\n%s", name, self.redact(traceback.format_exc()))
            message = f"{name} failed inside mcpyard: {type(exc).__name__}; please report it"
            return CallResult.refusal("internal_error", message, tool=name)
        finally:
            self._calls_in_flight -= 1

    def on_server_log(self, listener: Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]]) -> None:
        """Call `listener(server, message)` with each log message a server sends while none of its calls runs
        (a message during a call goes to that call's `on_log`); cleaned and redacted first (SEC-3)."""
        self._servers.listen_logs(listener)

    # ----------------------------------------------------------------- sign-in and reload

    def complete_sign_in(self, server_id: str, redirect_url: str) -> bool:
        """Finish a server's sign-in with the redirect address pasted back; whether it was the awaited one (AUTH-2)."""
        supervisor = self._servers.get(server_id)
        return supervisor is not None and supervisor.complete_sign_in(redirect_url)

    async def reload(self, config: LoadedConfig | None = None) -> Status:
        """Re-read every source and apply the difference (CFG-7); with `config`, apply that configuration instead.

        Refused while a call is in flight (with `config`: a call to a server it would stop or restart).

        Raises:
            StateError: a call is in flight.
            ConfigError: a source cannot be used; the running servers are left as they were.
        """
        if self._tg is None:
            raise StateError("the host is not open")
        if self._reloading:
            raise StateError("a reload is already running; wait for it to finish")
        options = self._options if config is None else dataclasses.replace(self._options, config=config)
        busy = self._calls_in_flight if config is None else self._servers.busy_among(make_plan(config))
        if busy:
            raise StateError(
                f"cannot reload while {busy} tool call(s) are in flight; wait for them to finish, then reload"
            )
        self._reloading = True
        try:
            plan, policies = await anyio.to_thread.run_sync(read_plan, options)
            self._options = options
            self.session.cache.clear()
            self.session.session_allows.clear()
            await self._apply(plan, policies)
        finally:
            self._reloading = False
        return self.status()
