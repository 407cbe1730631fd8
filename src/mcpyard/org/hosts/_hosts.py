"""One Host per organization per process, built from the database and kept in step with it (DESIGN "org/", ORG-9).

Each registered server becomes a streamable HTTP `ServerSpec` whose bearer token, or client
credentials (an `oauth` client-credentials grant, its access tokens kept in memory only), is
unsealed only to build it, in memory; the host is lazy (a server connects when something needs
it, offered meanwhile with the tools the database lists for it, whichever replica listed them),
reads the organization's policies from memory (`OrgPolicies`), keeps long results in the
database (`OrgResults`) and writes every call's record there (`OrgRecorder`).

Replicas share the database and nothing else: before each call, `current` reads the
organization's change counter and, when another replica (or this one) changed something, brings
the host in step first: policies and alerts anew, only the servers whose definition changed
restarted, and a server whose tools were listed again elsewhere listed again here. Results are
never reused across calls (no idempotent cache): a call through another replica could have changed
what a server holds without this one hearing of it.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard import Host, MemoryListings
from mcpyard.auth import MemoryAuthStore
from mcpyard.errors import Conflict, StateError
from mcpyard.ops import CallLogRecorder, MetricsRecorder
from mcpyard.org.hosts._loading import CredentialOpener, Loaded, load_organization
from mcpyard.org.hosts._policies import OrgPolicies
from mcpyard.org.hosts._records import OrgRecorder, RecordWriter, member_of
from mcpyard.org.hosts._results import OrgResults
from mcpyard.org.store import revision_of
from mcpyard.pipeline import IdempotentCache, Recorders

__all__ = ["CredentialOpener", "OrgHost", "OrgHosts"]

_log = logging.getLogger("mcpyard.org")


@dataclass
class OrgHost:
    """An organization's open host and what it was last brought in step with."""

    host: Host
    policies: OrgPolicies
    ids: dict[str, str]
    """Server name (the host's id for it) → its id in the database."""
    revision: int = 0
    """The organization's change counter the host is in step with."""
    stop: anyio.Event = field(default_factory=anyio.Event)
    alerted: set[str] = field(default_factory=set)
    """Names of servers with an open connection alert: a call that reaches one clears it."""
    tokens: MemoryAuthStore = field(default_factory=MemoryAuthStore)
    """The host's OAuth tokens (client credentials), in memory only: never written to a file."""
    fingerprints: dict[str, tuple[object, ...]] = field(default_factory=dict)
    """Server name → its spec's fingerprint when last applied: a changed server's tokens are forgotten."""
    listed: dict[str, datetime | None] = field(default_factory=dict)
    """Server name → when its tools were listed into the database, as of the host's last listing of it."""
    listings: MemoryListings = field(default_factory=MemoryListings)
    """What each server listed, as the database holds it: what the host offers of a server it has not started."""


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
        self.hearing = "no announcements on SQLite: each call reads the change counter"
        """Whether this replica hears the others' announcements (what `/readyz` says)."""
        self._stepped = anyio.Event()
        """Set (and replaced) each time a host was brought in step."""
        self._stepped_since: set[str] = set()
        """Organizations brought in step since `changed` last returned."""
        self._catching_up: dict[str, bool] = {}
        """Organizations being brought in step in the background, each with whether another change came since."""
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
        """The organization's host, opened now if it is not open yet (as the database holds it now)."""
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

    async def current(self, org_id: str, *, seen: int | None = None) -> OrgHost:
        """The organization's host in step with the database: what a call runs on (ORG-9).

        Reads the organization's change counter (or takes `seen`, read just now with the request's credentials);
        when it moved since the host was last brought in step (a change on any replica), applies what changed
        before returning. A server that changed while calls to it are in flight keeps its old definition until
        they end (its policies apply at once); the next call tries again.
        """
        opened = await self.get(org_id)
        revision = seen
        if revision is None:
            async with self._db.begin() as session:
                revision = await revision_of(session, org_id)
        if revision != opened.revision:
            with contextlib.suppress(Conflict):
                await self._catch_up(org_id, opened, known=revision)
        return opened

    async def reload(self, org_id: str) -> OrgHost:
        """Apply the organization's servers as the database has them now (a host not open yet opens with them); a
        server that failed or stopped starts again.

        Raises:
            ServiceError: 409 `calls_in_flight`: a server that changed has calls in flight (one may wait for an
                answer in the inbox); what changed is saved and applies at the next reload.
        """
        opened = self._hosts.get(org_id)
        if opened is None:
            return await self.get(org_id)
        await self._catch_up(org_id, opened, restart=True)
        return opened

    async def _catch_up(self, org_id: str, opened: OrgHost, *, known: int | None = None, restart: bool = False) -> None:
        """Bring `opened` in step with the database, unless another task did since the counter read `known`
        (`restart`: reload the host's servers even if none changed, which starts failed ones again)."""
        async with self._locks.setdefault(org_id, anyio.Lock()):
            if known is not None and opened.revision == known:
                return
            loaded = await load_organization(self._db, self._credentials, org_id)
            opened.policies.replace_all(loaded.reviewed)
            opened.ids.clear()
            opened.ids.update(loaded.ids)
            opened.alerted = set(loaded.alerted)
            fresh = {spec.id: spec.fingerprint() for spec in loaded.config.servers}
            opened.listings.replace(loaded.listings)  # before a reload, whose new servers offer them too
            if restart or fresh != opened.fingerprints:
                _forget_changed(opened, fresh)
                try:
                    await opened.host.reload(config=loaded.config)
                except StateError:
                    raise Conflict(
                        "calls_in_flight",
                        "the change is saved, but a changed server still has calls in flight (a call may be waiting "
                        "for an answer in the inbox): it applies once they end; refresh the server then",
                    ) from None
                opened.fingerprints = fresh
            await self._list_again(opened, loaded)
            opened.revision = loaded.revision
            self._stepped_since.add(org_id)
            stepped, self._stepped = self._stepped, anyio.Event()
            stepped.set()

    async def _list_again(self, opened: OrgHost, loaded: Loaded) -> None:
        """List again the tools of each running server whose tools were listed into the database since this host
        last listed them (a refresh on another replica): the host offers what the database knows."""
        host = opened.host
        for name, refreshed in loaded.refreshed.items():
            before = opened.listed.get(name)
            opened.listed[name] = refreshed
            snapshot = host.server(name)
            if before is None or refreshed == before or snapshot is None or not snapshot.connected:
                continue
            try:
                await host.refresh(name)
            except Exception as exc:  # the server's failure: its tools stay as the database says (changed: refused)
                _log.warning("listing the tools of %s again failed (%s)", name, type(exc).__name__)

    async def in_step(self, org_id: str, revision: int) -> None:
        """Return once the organization's open host is in step with `revision` or later (bound it with
        `anyio.fail_after`): how a change announced by another replica is seen to have arrived."""
        while (opened := self._hosts.get(org_id)) is None or opened.revision < revision:
            await self._stepped.wait()

    async def changed(self) -> set[str]:
        """Wait until some organization's host was brought in step with a change; which organizations were (each
        change is reported once, to whoever waits)."""
        while not self._stepped_since:
            await self._stepped.wait()
        changed, self._stepped_since = self._stepped_since, set()
        return changed

    def heard(self, org_id: str) -> None:
        """A replica announced a change of the organization: bring its host (if open here) in step now, in the
        background, so the next call finds it done (a call reads the counter either way)."""
        if org_id not in self._hosts or self._background is None:
            return
        if org_id in self._catching_up:
            self._catching_up[org_id] = True  # read again once the current round ends
            return
        self._catching_up[org_id] = False

        async def catch_up() -> None:
            try:
                while True:
                    await self.current(org_id)
                    if not self._catching_up[org_id]:
                        return
                    self._catching_up[org_id] = False
            finally:
                del self._catching_up[org_id]

        self.spawn(catch_up, "bringing an organization's host in step")

    def missed(self) -> None:
        """Announcements may have been missed (the listener reconnected): bring every open host in step."""
        for org_id in list(self._hosts):
            self.heard(org_id)

    def listed_here(self, opened: OrgHost, name: str, refreshed: datetime | None) -> None:
        """This process itself listed `name`'s tools into the database (at `refreshed`): nothing to list again."""
        opened.listed[name] = refreshed

    async def _keep(self, org_id: str, *, task_status: anyio.abc.TaskStatus[OrgHost]) -> None:
        loaded = await load_organization(self._db, self._credentials, org_id)
        policies = OrgPolicies(loaded.reviewed)
        tokens = MemoryAuthStore()
        ids = dict(loaded.ids)
        listings = MemoryListings(loaded.listings)
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
            recorder=Recorders(
                [
                    OrgRecorder(self.records, org_id, ids),
                    MetricsRecorder(org_id),
                    CallLogRecorder(org=org_id, who=lambda record: member_of(record.conversation)),
                ]
            ),
            lazy=True,
            config=loaded.config,
            auth_store=tokens,
            results=OrgResults(self._db, org_id),
            cache=IdempotentCache(max_entries=0),
            listings=listings,
            **self._host_options(),
        ) as host:
            opened = OrgHost(
                host,
                policies,
                ids,
                revision=loaded.revision,
                alerted=set(loaded.alerted),
                tokens=tokens,
                fingerprints={spec.id: spec.fingerprint() for spec in loaded.config.servers},
                listed=dict(loaded.refreshed),
                listings=listings,
            )
            task_status.started(opened)
            await opened.stop.wait()


def _forget_changed(opened: OrgHost, fresh: dict[str, tuple[object, ...]]) -> None:
    """Forget the tokens of every server whose spec changed or went: a new client or issuer never gets the old
    client's tokens (THREATS: credentials per authorization server)."""
    for name, fingerprint in opened.fingerprints.items():
        if fresh.get(name) != fingerprint:
            opened.tokens.forget(name)
