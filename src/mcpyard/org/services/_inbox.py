"""The approval inbox: an ask-first call is parked with its saved arguments and runs once, when the member who asked,
an owner or an admin approves it (ORG-5, APR-1, APR-2, NET-2).

Approving is one conditional update in the database (`pending` → `running`): of two people
approving at the same moment, on two processes, one claims it and the other is told it was
decided already. Inside that same transaction the tool's policy, definition hash and server
are checked again; the saved arguments then run through the whole pipeline once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.agent import ParkCall
from mcpyard.errors import Conflict
from mcpyard.ops import log_event
from mcpyard.org._caller import Caller, not_found
from mcpyard.org.hosts import call_tags
from mcpyard.org.rules import Reason
from mcpyard.org.services._call_results import Outcome, keep_connection_state, result_json
from mcpyard.org.services._calls import org_call
from mcpyard.org.services._leases import held_until, holding
from mcpyard.org.services._questions import Asker, until_done_or_asked
from mcpyard.org.services._service import OrgService, approval_key
from mcpyard.org.services._views import ApprovalView, ApprovedBody, CallResultView, PendingRef
from mcpyard.org.services._webhook_events import WaitingEvent, queue_event
from mcpyard.org.services._webhook_sending import WAKE_WEBHOOKS
from mcpyard.org.store import (
    Approval,
    Conversation,
    Policy,
    RegisteredServer,
    Teammate,
    TeammateServer,
    Tool,
    TurnRow,
    announce,
    new_id,
    utcnow,
    why_not_now,
)
from mcpyard.pipeline import CallResult
from mcpyard.policy import Answer, ApprovalCard, Declined

__all__ = ["Inbox", "approval_json", "approve", "decline", "list_approvals"]


class Inbox:
    """The approver of one member's call: parks it with its exact arguments, to be approved later."""

    def __init__(
        self,
        svc: OrgService,
        caller: Caller,
        name: str,
        arguments: dict[str, Any],
        conversation: str,
        *,
        turn: tuple[str, str] | None = None,
        client: str | None = None,
    ) -> None:
        self._svc, self._caller, self._name = svc, caller, name
        self._client = client
        """The MCP client asking, when one is (the inbox names it)."""
        self._arguments, self._conversation = arguments, conversation
        self._turn = turn
        """The turn and the model's call id, when a teammate's turn asks for the call."""
        self.approval_id: str | None = None

    async def __call__(self, card: ApprovalCard) -> Answer:
        async with self._svc.db.begin() as session:
            tool = await session.scalar(
                select(Tool)
                .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
                .where(
                    Tool.org_id == self._caller.org_id,
                    RegisteredServer.name == card.server,
                    RegisteredServer.deleted_at.is_(None),
                    Tool.name == card.server_tool,
                )
            )
            if tool is None:
                raise Declined("tool_removed", f"{card.tool} is not a tool of this organization any more")
            approval = Approval(
                id=new_id(),
                org_id=self._caller.org_id,
                member_id=self._caller.member_id,
                tool_id=tool.id,
                tool_name=self._name,
                definition_hash=tool.definition_hash,
                conversation=self._conversation,
                arguments=self._arguments,
                arguments_preview=card.arguments_preview,
                reason=card.reason,
                turn_id=self._turn[0] if self._turn else None,
                tool_call_id=self._turn[1] if self._turn else None,
                client=self._client,
            )
            session.add(approval)
            waiting = WaitingEvent(
                "approval_waiting",
                self._caller.org_id,
                approval.id,
                f"/inbox#approval-{approval.id}",
                server=card.server,
                tool=self._name,
                member_id=self._caller.member_id,
                arguments=card.arguments_preview,
            )
            queued = await queue_event(session, waiting)
        self.approval_id = approval.id
        if queued:
            self._svc.wakeups.wake(WAKE_WEBHOOKS)  # sent off this request's path, by this process's sender
        raise ParkCall(approval.id)  # the call waits in the inbox: not refused, not run


async def _once(card: ApprovalCard) -> Answer:
    del card  # claimed and checked again already: this is the one run
    return "once"


def approval_json(approval: Approval) -> ApprovalView:
    return {
        "id": approval.id,
        "status": approval.status,
        "tool": approval.tool_name,
        "tool_id": approval.tool_id,
        "member_id": approval.member_id,
        "arguments": approval.arguments_preview,
        "reason": approval.reason,
        "conversation": approval.conversation.partition(":")[2],
        "created_at": approval.created_at.isoformat(),
        "decided_by": approval.decided_by,
        "decided_at": approval.decided_at.isoformat() if approval.decided_at else None,
        "result": approval.result,
        "client": approval.client,
    }


async def list_approvals(
    svc: OrgService, caller: Caller, status: str | None, *, newest: int | None = None, decided: bool = False
) -> list[ApprovalView]:
    """The inbox: a member sees the calls they asked for; owners and admins see every one.

    Oldest first; with `newest`, only that many of the latest (still oldest first); with `decided`, only those
    no longer pending.
    """
    query = select(Approval).where(Approval.org_id == caller.org_id)
    if status is not None:
        query = query.where(Approval.status == status)
    if decided:
        query = query.where(Approval.status != "pending")
    if not caller.is_admin:
        query = query.where(Approval.member_id == caller.member_id)
    if newest is not None:
        query = query.order_by(Approval.created_at.desc(), Approval.id.desc()).limit(newest)
    else:
        query = query.order_by(Approval.created_at)
    async with svc.db.begin() as session:
        rows = [approval_json(approval) for approval in await session.scalars(query)]
    return rows[::-1] if newest is not None else rows


async def _decidable(session: AsyncSession, caller: Caller, approval_id: str) -> Approval:
    approval = await session.scalar(
        select(Approval).where(Approval.id == approval_id, Approval.org_id == caller.org_id)
    )
    if approval is None or not (caller.is_admin or approval.member_id == caller.member_id):
        raise not_found("approval")  # another member's call is not theirs to see or decide
    return approval


async def _claim(
    session: AsyncSession, caller: Caller, approval_id: str, status: str, held: datetime | None = None
) -> Approval:
    """`pending` → `status`, in one conditional update: of two deciders, exactly one gets the row."""
    await _decidable(session, caller, approval_id)
    claimed = await session.scalar(
        update(Approval)
        .where(Approval.id == approval_id, Approval.org_id == caller.org_id, Approval.status == "pending")
        .values(
            status=status,
            decided_by=caller.member_id,
            decided_at=utcnow(),
            held_until=held,
        )
        .returning(Approval)
        .execution_options(synchronize_session=False)
    )
    if claimed is None:
        raise Conflict("already_decided", "this call was approved or declined already")
    log_event(
        "decision",
        f"approval {approval_id} {'declined' if status == 'declined' else 'approved'}",
        org=caller.org_id,
        approval_id=approval_id,
        decision="declined" if status == "declined" else "approved",
        decided_by=caller.member_id,
        member=claimed.member_id,
        tool_id=claimed.tool_id,
    )
    return claimed


_CALL_CODES: dict[Reason, str] = {
    "server_deleted": "server_deleted",
    "removed": "tool_removed",
    "changed": "tool_changed",
    "old_hash": "tool_changed",
    "off": "policy_off",
    "ask_first": "policy_off",  # never for an approved run: it asked, and was answered
}
"""The call's error code for each reason an approved call may not run (API-6)."""


async def _still_allowed(session: AsyncSession, approval: Approval) -> str | None:
    """Why the saved call may not run now (policy, definition, server checked again, APR-2), or None."""
    found = (
        await session.execute(
            select(Tool, Policy, RegisteredServer)
            .join(Policy, Policy.tool_id == Tool.id)
            .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
            .where(Tool.id == approval.tool_id, Tool.org_id == approval.org_id)
        )
    ).first()
    if found is None:
        return "tool_removed"
    tool, policy, server = found
    if (why := why_not_now(tool, policy, server, "approved_run", approval.definition_hash)) is not None:
        return _CALL_CODES[why]
    if approval.turn_id is not None and not await _teammate_may_use(session, approval.turn_id, server.id):
        return "no_access"
    return None


async def _teammate_may_use(session: AsyncSession, turn_id: str, server_id: str) -> bool:
    """Whether the teammate whose turn asked for the call may still use the server (ORG-5: access checked again):
    it is not deleted, and the server is still one of its own."""
    found = await session.scalar(
        select(TeammateServer.id)
        .join(Conversation, Conversation.teammate_id == TeammateServer.teammate_id)
        .join(Teammate, Teammate.id == TeammateServer.teammate_id)
        .join(TurnRow, TurnRow.conversation_id == Conversation.id)
        .where(TurnRow.id == turn_id, TeammateServer.server_id == server_id, Teammate.deleted_at.is_(None))
    )
    return found is not None


async def approve(svc: OrgService, caller: Caller, approval_id: str) -> Outcome[ApprovedBody]:
    """Claim the approval and run its saved arguments once: the `CallResult` of that one run, or, still going on,
    the question its server asked meanwhile (the run goes on once it is answered; its result is then the
    approval's). Once the run ended, a turn parked on the approval goes on (`OrgService.decided`)."""
    failed: CallResultView | None = None
    async with svc.db.begin() as session:
        approval = await _claim(session, caller, approval_id, "running", held_until(svc))
        problem = await _still_allowed(session, approval)
        if problem is not None:
            refused = CallResult.refusal(
                problem,
                f"{approval.tool_name} may no longer run ({problem}); nothing was sent",
                tool=approval.tool_name,
            )
            failed = result_json(refused, None)
            approval.status, approval.result = "failed", dict(failed)  # the column takes a plain dict
        saved = (approval.tool_name, dict(approval.arguments), approval.conversation, approval.definition_hash)
        turn_id, member_id = approval.turn_id, approval.member_id
    if failed is not None:
        await _decided(svc, caller, approval_id)
        return Outcome(failed)
    name, arguments, conversation, definition_hash = saved
    opened = await svc.hosts.current(caller.org_id)  # read after the claim: the run's own moment
    call_id = new_id()
    # Its server's questions go to whoever may decide the call: the member who asked for it, owners, admins.
    asker = Asker(caller.org_id, member_id, turn_id=turn_id, call_id=call_id)

    async def run() -> CallResultView:
        async with holding(svc, Approval, approval_id):  # a replica that dies now leaves it to the sweep
            result = await org_call(
                svc,
                opened.host,
                name,
                arguments,
                conversation=conversation,
                approver=_once,
                asker=asker,
                tags=call_tags(call_id=call_id, turn_id=turn_id),  # the run belongs to the turn's trace
                definition_hash=definition_hash,
            )
            body = result_json(result, call_id)
            async with svc.db.begin() as session:
                await session.execute(
                    update(Approval)
                    .where(Approval.id == approval_id)
                    .values(status="done" if result.ok else "failed", result=body, held_until=None)
                )
                await announce(session, caller.org_id, "approval", approval_id)  # an MCP request waits on it
            svc.wakeups.wake(approval_key(approval_id))
        await keep_connection_state(svc, opened, caller.org_id, result)
        await _decided(svc, caller, approval_id)
        return body

    ended, body = await until_done_or_asked(svc, asker, run, "an approved call waiting for an answer")
    if not ended or body is None:
        question = PendingRef(id=asker.question_ids[0], status="pending") if asker.question_ids else None
        return Outcome({"approval": {"id": approval_id, "status": "running"}, "question": question}, waiting=True)
    return Outcome(body)


async def decline(svc: OrgService, caller: Caller, approval_id: str) -> ApprovalView:
    """Leave the call refused: nothing is sent (409 when it was decided already); a turn parked on it goes on."""
    async with svc.db.begin() as session:
        approval = await _claim(session, caller, approval_id, "declined")
        declined = approval_json(approval)
        await announce(session, caller.org_id, "approval", approval_id)
    svc.wakeups.wake(approval_key(approval_id))
    await _decided(svc, caller, approval_id)
    return declined


async def _decided(svc: OrgService, caller: Caller, approval_id: str) -> None:
    if svc.decided is not None:
        await svc.decided(svc, caller.org_id, approval_id)
