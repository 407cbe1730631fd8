"""What every service function of the organization service works with: the database, hosts, sealing, the guard."""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import anyio
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org.hosts import OrgHosts
from mcpyard.org.store import Credential, utcnow

if TYPE_CHECKING:
    from mcpyard.connect import EgressGuard, MadeTask
    from mcpyard.model import Model

__all__ = [
    "APPROVAL_WAIT_SECONDS",
    "HOLD_SECONDS",
    "QUESTION_SECONDS",
    "CredentialSealer",
    "KeptTasks",
    "ModelFactory",
    "OrgService",
    "UrlCheck",
    "Wakeups",
    "approval_key",
]

HOLD_SECONDS = 30.0
"""How far ahead a process holds an approved run or a turn it runs (renewed every third of that): once a dead
process's lease lapsed, any replica ends what it held."""
APPROVAL_WAIT_SECONDS = 600.0
"""How long an ask-first call made over MCP waits for a person's decision before its request gives up (it stays
in the inbox)."""
QUESTION_SECONDS = 600.0
"""How long a server's question waits for a person before it expires and the server hears `cancel` (10 minutes)."""

UrlCheck = Callable[[str], Awaitable[str]]
"""The URL as it will be stored (normalized), or a `ServiceError` `url_refused` when the outbound guard would not
connect to it (NET-1)."""


ModelFactory = Callable[[str, "str | None"], "Model"]
"""A model for an organization (and a model name, None: its default): the service's own, instead of the
organization's endpoint (the demo's scripted model)."""


Decided = Callable[["OrgService", str, str], Awaitable[None]]
"""What goes on once an approval of an organization is decided (`(svc, org_id, approval_id)`): the turn parked on it,
if one is, continues. The turns stand above the inbox, so the service's assembly hands this in."""


class CredentialSealer(Protocol):
    """Seals a credential's secret into its row, and opens it again to connect (ORG-2)."""

    def seal_credential(self, credential: Credential, secret: str) -> None: ...

    def unseal_credential(self, credential: Credential) -> str: ...

    def seal(self, secret: str, *, context: bytes) -> tuple[str, bytes]: ...

    def unseal(self, key_id: str, sealed: bytes, *, context: bytes, what: str = ...) -> str: ...

    def holds(self, kid: str) -> bool: ...


def approval_key(approval_id: str) -> str:
    """The name an approval's decision wakes whoever waits for it under (`Wakeups`)."""
    return f"approval:{approval_id}"


class Wakeups:
    """Who in this process waits for a question's answer: an answer given here wakes its call at once (an answer
    given through another process is seen when the call next reads its question, within half a second)."""

    def __init__(self) -> None:
        self._events: dict[str, anyio.Event] = {}

    def event(self, question_id: str) -> anyio.Event:
        return self._events.setdefault(question_id, anyio.Event())

    def wake(self, question_id: str) -> None:
        event = self._events.pop(question_id, None)
        if event is not None:
            event.set()

    def forget(self, question_id: str) -> None:
        self._events.pop(question_id, None)


class KeptTasks:
    """The servers' tasks this process follows for long calls kept in the database, by call id: when it stops, it
    leaves them running on their servers for another replica to take over (`MadeTask.detach`)."""

    def __init__(self) -> None:
        self._tasks: dict[str, MadeTask] = {}
        self.holder = secrets.token_hex(8)
        """This process, as the long calls' rows name whoever follows them."""
        self.tidied_at = -math.inf
        """When this process last gave up and forgot old long calls (monotonic)."""

    def add(self, call_id: str, made: MadeTask) -> None:
        self._tasks[call_id] = made

    def remove(self, call_id: str) -> None:
        self._tasks.pop(call_id, None)

    def detach_all(self) -> list[str]:
        """Detach every task followed here; the calls' ids."""
        for made in self._tasks.values():
            made.detach()
        return list(self._tasks)


@dataclass(frozen=True, slots=True)
class OrgService:
    """The service's parts, built once at start and passed to every service function."""

    db: async_sessionmaker[AsyncSession]
    hosts: OrgHosts
    sealer: CredentialSealer
    check_url: UrlCheck
    models: ModelFactory | None = None
    """The service's own model for every turn (None: each organization's endpoint, `PUT /api/v1/model`)."""
    guard: EgressGuard | None = None
    """The outbound guard every request to an organization's model endpoint goes through (NET-1)."""
    question_seconds: float = QUESTION_SECONDS
    """How long a server's question waits for an answer before it expires (the server then hears `cancel`)."""
    approval_wait_seconds: float = APPROVAL_WAIT_SECONDS
    """How long an ask-first call over MCP waits for its decision (ORG-10)."""
    hold_seconds: float = HOLD_SECONDS
    """How far ahead this process holds the runs and turns it runs (a dead replica's end that long after)."""
    wakeups: Wakeups = field(default_factory=Wakeups)
    kept: KeptTasks = field(default_factory=KeptTasks)
    """The long calls' tasks this process follows (`TaskCall`)."""
    known_limits: dict[str, tuple[int, dict[str, int | None]]] = field(default_factory=dict)
    """Each organization's limits as last read, with its change count then (a change of limits moves it)."""
    decided: Decided | None = None
    """Awaited by approving (once the run ended) and declining: a turn parked on the approval goes on."""
    clock: Callable[[], datetime] = utcnow
    """The time calls are counted at against the organization's limits (tests give a clock they move)."""
