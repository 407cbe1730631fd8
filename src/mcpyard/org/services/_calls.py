"""Every call the organization makes goes one way: a member's own call, an approved run, each call of a turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpyard.agent import HostFacade, TurnClock, current_turn_clock
from mcpyard.org.hosts import call_tags
from mcpyard.org.services._questions import Asker, OrgElicitor
from mcpyard.org.services._service import OrgService
from mcpyard.pipeline import CallResult

if TYPE_CHECKING:
    from mcpyard import Host
    from mcpyard.connect import InputRelay, LogFn, ProgressFn
    from mcpyard.policy import Approver

__all__ = ["TurnCalls", "org_call"]


async def org_call(
    svc: OrgService,
    host: Host,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    conversation: str | None,
    approver: Approver | None,
    asker: Asker | None,
    tags: Mapping[str, str],
    definition_hash: str | None = None,
    clock: TurnClock | None = None,
    on_input: InputRelay | None = None,
    on_progress: ProgressFn | None = None,
    on_log: LogFn | None = None,
) -> CallResult:
    """Run one call on an organization's host: its servers' questions go to `asker` (none: to `on_input`, a client
    that answers them itself; neither: no one is asked, the host's own elicitor refuses them), and its record
    carries `tags` (`call_tags`: its id, its turn; `client`: the MCP client that made it)."""
    return await host.call(
        name,
        arguments,
        conversation=conversation,
        approver=approver,
        definition_hash=definition_hash,
        on_input=asker.relay() if asker is not None else on_input,
        elicitor=OrgElicitor(svc, asker, clock) if asker is not None else None,
        tags=tags,
        on_progress=on_progress,
        on_log=on_log,
    )


class TurnCalls(HostFacade):
    """A host as a turn drives it (`TurnHost`): every call is an `org_call` of the turn, with the turn's asker, on
    the organization's host as the database has it at that call (ORG-9)."""

    def __init__(self, host: Host, svc: OrgService, asker: Asker | None, turn_id: str, org_id: str) -> None:
        super().__init__(host)
        self._svc, self._asker, self._tags = svc, asker, call_tags(turn_id=turn_id)
        self._org_id = org_id

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
    ) -> CallResult:
        opened = await self._svc.hosts.current(self._org_id)
        return await org_call(
            self._svc,
            opened.host,
            name,
            arguments,
            conversation=conversation,
            approver=approver,
            asker=self._asker,
            tags=self._tags,
            # Taken here, in the call's own task: a handshake-era server's question comes on another one.
            clock=current_turn_clock(),
        )
