"""Every call the organization makes goes one way: a member's own call, an approved run, each call of a turn."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from mcpyard.agent import HostFacade, TurnClock, current_turn_clock
from mcpyard.connect import noticing_tasks, resuming_task
from mcpyard.org.hosts import call_tags
from mcpyard.org.services._call_results import result_json
from mcpyard.org.services._questions import Asker, OrgElicitor
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._task_calls import end_moved, lapsed_tasks
from mcpyard.org.services._task_keeper import TaskKeeper
from mcpyard.org.store import TaskCall, new_id
from mcpyard.pipeline import CallRequest, CallResult, refused

if TYPE_CHECKING:
    from mcpyard import Host
    from mcpyard.connect import InputRelay, LogFn, ProgressFn
    from mcpyard.policy import Approver

__all__ = ["TurnCalls", "org_call", "take_over_tasks"]


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
    resumes: str | None = None,
    member: tuple[str, str] | None = None,
) -> CallResult:
    """Run one call on an organization's host: its servers' questions go to `asker` (none: to `on_input`, a client
    that answers them itself; neither: no one is asked, the host's own elicitor refuses them), and its record
    carries `tags` (`call_tags`: its id, its turn; `client`: the MCP client that made it).

    A member's call (or a call of a member's turn) whose server answers with a task is kept in the database while
    it runs (`TaskKeeper`); `resumes`: the server's task id of such a call taken over from a replica that stopped,
    followed to its result instead of sending the call again; `member` (`(org_id, member_id)`): whose long calls
    are kept when the call has no `asker` (a client answering its servers' questions itself)."""
    keeper = None
    holder = asker if asker is not None or member is None else Asker(*member)
    if holder is not None and holder.member_id is not None and holder.refusal is None:
        call = (name, host, arguments or {})
        call_id = tags.get("call_id") or holder.call_id or new_id()
        keeper = TaskKeeper(svc, holder, call, conversation or "", call_id, resumed=resumes is not None)
    if keeper is not None and on_progress is not None:
        on_progress = _both(on_progress, keeper.progress)
    ended: list[CallResult] = []  # stays empty when the keeper cancelled the call: another replica follows it
    try:
        with (
            noticing_tasks(keeper.notice) if keeper is not None else contextlib.nullcontext(),
            resuming_task(resumes) if resumes is not None else contextlib.nullcontext(),
        ):
            async with keeper.keeping() if keeper is not None else contextlib.nullcontext():
                result = await host.call(
                    name,
                    arguments,
                    conversation=conversation,
                    approver=approver,
                    definition_hash=definition_hash,
                    on_input=asker.relay() if asker is not None else on_input,
                    elicitor=OrgElicitor(svc, asker, clock) if asker is not None else None,
                    tags=tags,
                    on_progress=on_progress or (keeper.progress if keeper is not None else None),
                    on_log=on_log,
                )
                ended.append(result)
    except anyio.get_cancelled_exc_class():
        if keeper is not None:
            await keeper.cancelled()
        raise
    if not ended and keeper is not None and keeper.cancel_asked:  # its client cancelled it through another replica
        await keeper.cancelled()
        return CallResult.refusal("cancelled", f"{name} was cancelled by its client", tool=name)
    if not ended:  # another replica took the task over (this one was thought gone): it ends there
        message = f"{name}: another replica of the service follows this call's task now; its result comes there"
        return CallResult.refusal("task_moved", message, tool=name)
    result = ended[0]
    if keeper is not None:
        await keeper.finish(result_json(result, keeper.call_id))
    return result


def _both(first: ProgressFn, then: ProgressFn) -> ProgressFn:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        await first(progress, total, message)
        await then(progress, total, message)

    return report


async def take_over_tasks(svc: OrgService) -> int:
    """Follow, in the background, the long calls whose replica stopped holding them, to their results; how many."""
    taken = await lapsed_tasks(svc)
    for row, task_id in taken:
        svc.hosts.spawn(functools.partial(_follow, svc, row, task_id), "a long call taken over")
    return len(taken)


async def _follow(svc: OrgService, row: TaskCall, task_id: str) -> None:
    """A long call taken over: the same task followed on this replica's connection, its result kept for its member;
    its server's questions go to that member's inbox. A server no longer the one that made the task (deleted, or
    pointed elsewhere since) is never sent its id: the call ends, saying so."""
    opened = await svc.hosts.current(row.org_id)
    if opened.host.view.task_target(row.server) != row.target:
        await end_moved(svc, row)
        return
    asker = Asker(row.org_id, row.member_id, turn_id=row.turn_id, call_id=row.id)
    await org_call(
        svc,
        opened.host,
        row.tool,
        row.arguments,  # redacted: only its record keeps them (nothing is sent)
        conversation=row.conversation,
        approver=None,
        asker=asker,
        tags=call_tags(call_id=row.id, turn_id=row.turn_id),
        resumes=task_id,
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
        definition_hash: str | None = None,
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
            definition_hash=definition_hash,
            # Taken here, in the call's own task: a handshake-era server's question comes on another one.
            clock=current_turn_clock(),
        )

    async def refuse(
        self, name: str, arguments: Mapping[str, Any] | None, code: str, message: str, *, conversation: str | None
    ) -> CallResult:
        """A call of the turn refused before it reached the host (the organization's limit, a tool no longer
        offered): recorded as the host records its own refusals, so the turn's trace shows it; nothing is sent."""
        host = (await self._svc.hosts.current(self._org_id)).host
        request = CallRequest(name, dict(arguments or {}), conversation or host.session.id)
        request.tags = self._tags
        return await refused(host.view, host.session, request, code, message)
