"""One Host per organization per process, built from the database instead of files (DESIGN "org/").

Each registered server becomes a streamable HTTP `ServerSpec` whose bearer token, or client
credentials (an `oauth` client-credentials grant, its access tokens kept in memory only), is
unsealed only to build it, in memory; the host is lazy (a server connects when something needs it),
reads the organization's policies from memory (`OrgPolicies`) and writes every call's record to
the database (`OrgRecorder`). Registering, refreshing or deleting a server reloads the host.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard import Host
from mcpyard.auth import MemoryAuthStore
from mcpyard.config import HostSettings, LoadedConfig
from mcpyard.errors import Conflict, StateError
from mcpyard.org.hosts._policies import OrgPolicies
from mcpyard.org.hosts._records import RecordWriter
from mcpyard.org.hosts._server_spec import SOURCE, bound_credential, server_spec, unsealed_oauth
from mcpyard.org.store import Alert, Credential, Policy, RegisteredServer, Tool, new_id
from mcpyard.pipeline import CallRecord
from mcpyard.policy import PinPolicy

__all__ = [
    "CredentialOpener",
    "OrgHost",
    "OrgHosts",
    "OrgRecorder",
    "call_tags",
    "conversation_key",
    "member_of",
]

_log = logging.getLogger("mcpyard.org")


class CredentialOpener(Protocol):
    """Unseals a registered server's stored credential (only to connect; never kept beyond the host's spec)."""

    def unseal_credential(self, credential: Credential) -> str: ...


def call_tags(*, call_id: str | None = None, turn_id: str | None = None) -> dict[str, str]:
    """What a call of the organization carries to its record (`Host.call(tags=...)`): the id its record takes, the
    id a member or an approval already knows it by; the turn whose trace it belongs to."""
    tags = {"call_id": call_id, "turn_id": turn_id}
    return {key: value for key, value in tags.items() if value is not None}


def conversation_key(member_id: str, conversation: str | None) -> str:
    """The host-level conversation of a member's call: result handles never cross members (CALL-4, ORG-7)."""
    return f"{member_id}:{conversation or 'default'}"


def member_of(conversation: str) -> str | None:
    """The member a host-level conversation belongs to."""
    member, sep, _ = conversation.partition(":")
    return member if sep else None


class OrgRecorder:
    """A `CallRecorder` that keeps each call of one organization as a row (the trace and the inbox read them)."""

    def __init__(self, writer: RecordWriter, org_id: str, ids: dict[str, str]) -> None:
        self._writer = writer
        self._org_id = org_id
        self._ids = ids
        """Server name (the host's id for it) → its id in the database."""

    async def record(self, record: CallRecord) -> None:
        await self._writer.write(
            {
                "id": record.tags.get("call_id") or new_id(),
                "org_id": self._org_id,
                "member_id": member_of(record.conversation),
                "conversation": record.conversation,
                "server_id": self._ids.get(record.server) if record.server is not None else None,
                "tool": record.tool,
                "arguments": dict(record.arguments),
                "decision": record.decision,
                "why": record.why,
                "status": record.status,
                "error_code": record.error_code,
                "duration_ms": record.duration_ms,
                "result_bytes": record.result_bytes,
                "summary": record.summary,
                "approval_id": None,
                "turn_id": record.tags.get("turn_id"),
                "started_at": record.at,
            }
        )


@dataclass
class OrgHost:
    """An organization's open host and the policies it reads."""

    host: Host
    policies: OrgPolicies
    ids: dict[str, str]
    """Server name (the host's id for it) → its id in the database."""
    stop: anyio.Event = field(default_factory=anyio.Event)
    alerted: set[str] = field(default_factory=set)
    """Names of servers with an open connection alert: a call that reaches one clears it."""
    tokens: MemoryAuthStore = field(default_factory=MemoryAuthStore)
    """The host's OAuth tokens (client credentials), in memory only: never written to a file."""
    fingerprints: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """Server name → its spec's fingerprint when last applied: a changed server's tokens are forgotten."""


class OrgHosts:
    """The open hosts of this process, one per organization, opened on first use and kept until the service stops."""

    def __init__(
        self,
        db: async_sessionmaker[AsyncSession],
        credentials: CredentialOpener,
        data_home: Path,
        *,
        host_options: Callable[[], dict[str, Any]] = dict,
    ) -> None:
        self._db = db
        self._credentials = credentials
        self._data_home = data_home
        self._host_options = host_options
        """More `Host.open` keywords (the outbound guard)."""
        self._hosts: dict[str, OrgHost] = {}
        self.records = RecordWriter(db)
        """Every call's record; `records.flush()` before reading them."""
        self._locks: dict[str, anyio.Lock] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._background: anyio.abc.TaskGroup | None = None
        """Where `spawn` runs work: cancelled first when the service stops."""
        self._running = 0
        self._quiet = anyio.Event()
        """Set while no background work runs."""
        self._quiet.set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[OrgHosts]:
        """Keep hosts open while the block runs; every one is closed (its servers stopped) when it ends."""
        async with self.records.running(), anyio.create_task_group() as tg:
            self._tg = tg
            try:
                async with anyio.create_task_group() as background:
                    self._background = background
                    try:
                        yield self
                    finally:
                        # Work still running when the service stops (a turn, a call waiting for an answer) ends
                        # first, saying so, while the hosts and the database are still open.
                        self._background = None
                        background.cancel_scope.cancel()
            finally:
                self._tg = None
                for opened in self._hosts.values():
                    opened.stop.set()
                self._hosts.clear()

    def redact(self, text: str) -> str:
        """`text` with every secret any open organization host sends replaced by its name (SEC-3)."""
        for opened in list(self._hosts.values()):
            text = opened.host.redact(text)
        return text

    def spawn(self, work: Callable[[], Awaitable[None]], what: str) -> None:
        """Run `work` in the background while the service runs (a turn going on after its approval, a call waiting
        for an answer); a failure is one line on the log, never the service's end; work still running when the
        service stops is cancelled."""
        if self._background is None:
            raise RuntimeError("the organization hosts are not running")

        self._running += 1
        if self._quiet.is_set():
            self._quiet = anyio.Event()

        async def guarded() -> None:
            try:
                await work()
            except Exception:  # last resort: one piece of work, never the service
                _log.error("%s failed\n%s", what, self.redact(traceback.format_exc()))
            finally:
                self._running -= 1
                if not self._running:
                    self._quiet.set()

        self._background.start_soon(guarded)

    async def settled(self) -> None:
        """Return once no background work started by `spawn` is running (what a test or a shutdown waits for)."""
        while not self._quiet.is_set():
            await self._quiet.wait()

    async def get(self, org_id: str) -> OrgHost:
        """The organization's host, opened now if it is not open yet."""
        if (opened := self._hosts.get(org_id)) is not None:
            return opened
        async with self._locks.setdefault(org_id, anyio.Lock()):
            if (opened := self._hosts.get(org_id)) is not None:
                return opened
            if self._tg is None:
                raise RuntimeError("the organization hosts are not running")
            started: OrgHost = await self._tg.start(self._keep, org_id)
            self._hosts[org_id] = started
            return started

    async def reload(self, org_id: str) -> OrgHost:
        """Apply the organization's servers as the database has them now (a host not open yet opens with them).

        Raises:
            ServiceError: 409 `calls_in_flight`: a server that changed has calls in flight (one may wait for an
                answer in the inbox); what changed is saved and applies at the next reload.
        """
        opened = self._hosts.get(org_id)
        if opened is None:
            return await self.get(org_id)
        async with self._locks.setdefault(org_id, anyio.Lock()):
            config, reviewed, ids = await self._load(org_id)
            opened.policies.replace_all(reviewed)
            opened.ids.clear()
            opened.ids.update(ids)
            _forget_changed(opened, config)
            try:
                await opened.host.reload(config=config)
            except StateError:
                raise Conflict(
                    "calls_in_flight",
                    "the change is saved, but a changed server still has calls in flight (a call may be waiting for "
                    "an answer in the inbox): it applies once they end; refresh the server then",
                ) from None
        return opened

    async def _keep(self, org_id: str, *, task_status: anyio.abc.TaskStatus[OrgHost]) -> None:
        config, reviewed, ids = await self._load(org_id)
        policies = OrgPolicies(reviewed)
        tokens = MemoryAuthStore()
        home = self._data_home / "org-hosts" / org_id
        workspace = home / "workspace"  # empty, and no grants: an organization's calls never read local files
        await anyio.Path(workspace).mkdir(parents=True, exist_ok=True)
        async with Host.open(
            workspace=workspace,
            mode="ask",
            environ={},
            config_home=home / "config",
            data_home=home / "data",
            secrets={},
            policies=policies,
            recorder=OrgRecorder(self.records, org_id, ids),
            lazy=True,
            config=config,
            auth_store=tokens,
            **self._host_options(),
        ) as host:
            alerted = await self._alerted(org_id)
            opened = OrgHost(
                host,
                policies,
                ids,
                alerted={name for name, id_ in ids.items() if id_ in alerted},
                tokens=tokens,
                fingerprints={spec.id: spec.fingerprint() for spec in config.servers},
            )
            task_status.started(opened)
            await opened.stop.wait()

    async def _alerted(self, org_id: str) -> set[str]:
        async with self._db.begin() as session:
            rows = await session.scalars(
                select(Alert.server_id).where(
                    Alert.org_id == org_id, Alert.kind == "connection", Alert.cleared_at.is_(None)
                )
            )
            return {server for server in rows if server is not None}

    async def _load(self, org_id: str) -> tuple[LoadedConfig, list[tuple[str, str, PinPolicy, str]], dict[str, str]]:
        async with self._db.begin() as session:
            servers = (
                await session.scalars(
                    select(RegisteredServer)
                    .where(RegisteredServer.org_id == org_id, RegisteredServer.deleted_at.is_(None))
                    .order_by(RegisteredServer.created_at)
                )
            ).all()
            credentials = {
                c.server_id: c for c in (await session.scalars(select(Credential).where(Credential.org_id == org_id)))
            }
            rows = (
                await session.execute(
                    select(RegisteredServer.name, Tool.name, Policy.policy, Policy.reviewed_hash)
                    .join(Policy, Policy.tool_id == Tool.id)
                    .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
                    .where(Tool.org_id == org_id, RegisteredServer.deleted_at.is_(None))
                )
            ).all()
        specs = []
        for position, server in enumerate(servers):
            credential = bound_credential(server, credentials.get(server.id))
            secret = self._credentials.unseal_credential(credential) if credential is not None else None
            if credential is not None and secret is not None and credential.kind == "client_credentials":
                specs.append(server_spec(server, position, None, unsealed_oauth(secret)))
            else:
                specs.append(server_spec(server, position, secret))
        config = LoadedConfig(
            servers=tuple(specs), settings=HostSettings(mode="ask"), warnings=(), sources=(("flag", SOURCE),)
        )
        reviewed: list[tuple[str, str, PinPolicy, str]] = [
            (server, tool, policy, reviewed_hash) for server, tool, policy, reviewed_hash in rows
        ]
        return config, reviewed, {server.name: server.id for server in servers}


def _forget_changed(opened: OrgHost, config: LoadedConfig) -> None:
    """Forget the tokens of every server whose spec changed or went: a new client or issuer never gets the old
    client's tokens (THREATS: credentials per authorization server)."""
    fresh = {spec.id: spec.fingerprint() for spec in config.servers}
    for name, fingerprint in opened.fingerprints.items():
        if fresh.get(name) != fingerprint:
            opened.tokens.forget(name)
    opened.fingerprints = fresh
