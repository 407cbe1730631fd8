"""Turns in the organization: a model drives the registered servers' tools through the pipeline (ORG-4, ORG-5, ORG-7).

A turn is `run_turn` (mcpyard.model) on the organization's host, offered only the tools a teammate or an
assistant may use, every call going through the same pipeline as `POST /api/v1/calls` (policies bound
to hashes, approvals, caps, fence, redaction, the record, which carries the turn's id: its trace). An
ask-first call parks the turn: the call waits in the inbox with its exact arguments, the turn's state
is stored, and when the approval is decided (on any process) the turn goes on from there with the
result or the refusal. The model is the organization's (an OpenAI-compatible endpoint set with
`PUT /api/v1/model`, its key sealed like a server's token), or the one the service was started with
(`OrgSettings.models`: the demo's scripted model).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.model import (
    ErrorEvent,
    Event,
    Message,
    Model,
    ToolCall,
    TurnLimits,
    TurnState,
    messages_from_json,
    messages_to_json,
)
from mcpyard.model._loop import PARKED, Turn, resume_turn, run_turn
from mcpyard.org._caller import Caller, ServiceError
from mcpyard.org._hosts import TURN_ID, OrgHost, model_name
from mcpyard.org._inbox import Inbox
from mcpyard.org._models import (
    Approval,
    CallRow,
    Conversation,
    ModelSetting,
    Policy,
    RegisteredServer,
    Tool,
    TurnRow,
    utcnow,
)
from mcpyard.org._seal import model_key_context
from mcpyard.org._service import OrgService
from mcpyard.pipeline import READ_RESULT_TOOL, CallResult
from mcpyard.policy import Answer, ApprovalCard, Approver

__all__ = [
    "MAX_MESSAGE",
    "Offer",
    "OfferFor",
    "TurnInbox",
    "call_status",
    "continue_after_decision",
    "drive_turn",
    "end_failed",
    "ends_if_it_fails",
    "limits",
    "model_for",
    "offered_names",
    "turn_json",
    "turn_trace",
]

MAX_MESSAGE = 20_000
"""The longest message a turn takes, in characters."""
TURN_SECONDS = 300.0
MODEL_REQUEST_SECS = 120.0
"""One request to the organization's model, each phase (connect, write, read between bytes)."""
"""A whole turn, model requests and calls (each call has its own 30 s too, NET-2)."""
MAX_HISTORY = 200
"""Messages a conversation keeps; older ones are left out of the next turn."""
FAILED = frozenset({"tool_error", "timeout", "connection_lost", "response_too_large", "interrupted"})
"""Codes of a call that was sent and ended in an error (the rest were refused: nothing was sent)."""


def call_status(result: CallResult) -> str:
    """How a call of a turn ended, as the API says it: `ran`, `cached`, `failed`, `refused`, `waiting_for_approval`."""
    if result.ok:
        return "cached" if result.cached else "ran"
    code = result.error["code"] if result.error else ""
    if code == PARKED:
        return "waiting_for_approval"
    return "failed" if code in FAILED or result.content else "refused"


async def model_for(svc: OrgService, org_id: str, name: str | None) -> Model:
    """The model a turn talks to: the service's own when it has one, else the organization's endpoint."""
    if svc.models is not None:
        return svc.models(org_id, name)
    async with svc.db.begin() as session:
        setting = await session.scalar(select(ModelSetting).where(ModelSetting.org_id == org_id))
    if setting is None:
        raise ServiceError(
            409, "no_model", "the organization has no model yet: an owner or admin sets it with PUT /api/v1/model"
        )
    await svc.check_url(setting.base_url)  # checked again at turn time: the address must still be allowed (NET-1)
    key = None
    if setting.sealed_key is not None and setting.key_id is not None:
        key = svc.sealer.unseal(
            setting.key_id, setting.sealed_key, context=model_key_context(setting), what="the model's key"
        )
    from mcpyard.model import OpenAIModel

    # Every request goes through the outbound guard: resolved once per connection, refused for a private address,
    # connected to the address checked, no redirects, no ambient proxy (NET-1); answers capped at 1 MiB (NET-2).
    http = svc.guard.http_client(timeout=httpx2.Timeout(MODEL_REQUEST_SECS)) if svc.guard is not None else None
    return OpenAIModel(
        base_url=setting.base_url, model=name or setting.model, api_key=key, stream=False, http_client=http
    )


async def offered_names(
    session: AsyncSession, org_id: str, *, server_ids: Collection[str] | None, policies: Collection[str]
) -> dict[str, tuple[str, str, str]]:
    """The tools that may be offered, by the name the model sees: (server id, tool, definition hash) of each active
    tool of a live server whose policy is one of `policies` for its current definition (`server_ids`: only those)."""
    query = (
        select(RegisteredServer.id, RegisteredServer.name, Tool.name, Tool.definition_hash)
        .join(Tool, Tool.server_id == RegisteredServer.id)
        .join(Policy, Policy.tool_id == Tool.id)
        .where(
            RegisteredServer.org_id == org_id,
            RegisteredServer.deleted_at.is_(None),
            Tool.state == "active",
            Policy.policy.in_(tuple(policies)),
            Policy.reviewed_hash == Tool.definition_hash,
        )
    )
    if server_ids is not None:
        query = query.where(RegisteredServer.id.in_(tuple(server_ids)))
    rows = (await session.execute(query)).all()
    return {model_name(server, tool): (server_id, tool, digest) for server_id, server, tool, digest in rows}


@dataclass(frozen=True, slots=True)
class Offer:
    """What one turn may use: the tools (model-facing names), its instructions and limits, who answers its cards."""

    names: Collection[str]
    instructions: str
    limits: TurnLimits
    approver: Approver | None
    """None: a card is never answered (a visitor's turn: an ask-first tool is never offered anyway)."""


class TurnInbox:
    """The approver of a member's turn: each call it must ask about is parked in the inbox with its exact arguments,
    and the turn with it (`CallApprover`)."""

    def __init__(self, svc: OrgService, caller: Caller, conversation: str, turn_id: str) -> None:
        self._svc, self._caller, self._conversation, self._turn_id = svc, caller, conversation, turn_id

    def for_call(self, call: ToolCall) -> Approver:
        return Inbox(
            self._svc, self._caller, call.name, dict(call.arguments), self._conversation, turn=(self._turn_id, call.id)
        )

    async def __call__(self, card: ApprovalCard) -> Answer:  # only reached for a call the loop did not name
        from mcpyard.policy import Declined

        raise Declined("denied", f"{card.tool}: no one can answer this card here")


def _call_json(call: ToolCall, result: CallResult | None, approval_id: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"id": call.id, "tool": call.model_name}
    if result is None:
        item["status"] = "waiting_for_approval"
    else:
        item["status"] = call_status(result)
        if result.error is not None:
            item["error"] = result.error["code"]
        if result.handle is not None:
            item["handle"] = result.handle
    if approval_id is not None:
        item["approval_id"] = approval_id
    return item


def _merged_calls(before: list[dict[str, Any]], turn: Turn) -> list[dict[str, Any]]:
    """The turn's calls so far: earlier ones kept (a waiting one replaced by its result), new ones appended."""
    calls = {item["id"]: dict(item) for item in before}
    order = [item["id"] for item in before]
    for call, result in turn.results:
        approval = calls.get(call.id, {}).get("approval_id")
        if call.id not in calls:
            order.append(call.id)
        calls[call.id] = _call_json(call, result, approval)
    for call, approval_id in turn.state.waiting.values():
        if call.id not in calls:
            order.append(call.id)
        calls[call.id] = _call_json(call, None, approval_id)
    return [calls[call_id] for call_id in order]


def turn_json(row: TurnRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "conversation_id": row.conversation_id,
        "status": row.status,
        "message": row.message,
        "reply": row.reply,
        "calls": [{key: value for key, value in item.items() if key != "id"} for item in row.calls],
        "error": row.error,
        "created_at": row.created_at.isoformat(),
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
    }


async def turn_trace(svc: OrgService, row: TurnRow) -> list[dict[str, Any]]:
    """Every call the turn made, from the pipeline's records: server, tool, redacted arguments, status, summary."""
    await svc.hosts.records.flush()
    async with svc.db.begin() as session:
        records = await session.scalars(
            select(CallRow).where(CallRow.turn_id == row.id, CallRow.org_id == row.org_id).order_by(CallRow.started_at)
        )
        names = dict(
            (
                await session.execute(
                    select(RegisteredServer.id, RegisteredServer.name).where(RegisteredServer.org_id == row.org_id)
                )
            ).all()
        )
        return [
            {
                "server": names.get(record.server_id) if record.server_id else None,
                "tool": record.tool,
                "arguments": record.arguments,
                "status": "waiting_for_approval" if record.error_code == PARKED else record.status,
                "error": record.error_code,
                "summary": record.summary,
                "duration_ms": round(record.duration_ms, 1),
                "at": record.started_at.isoformat(),
            }
            for record in records
        ]


async def drive_turn(
    svc: OrgService,
    opened: OrgHost,
    model: Model,
    conversation: Conversation,
    row: TurnRow,
    offer: Offer,
    *,
    key: str,
    resume: tuple[TurnState, Mapping[str, CallResult]] | None = None,
) -> TurnRow:
    """Run (or go on with) one turn and store how it ended: the conversation's messages, the turn's calls, its state."""
    # A long result's rest is read by handle, in this conversation only (CALL-4, ORG-7).
    tools = opened.host.tools_for_model(model.tool_format).only({*offer.names, str(READ_RESULT_TOOL["name"])})
    errors: list[str] = []

    async def note(event: Event) -> None:
        if isinstance(event, ErrorEvent):
            errors.append(event.message)

    token = TURN_ID.set(row.id)
    try:
        if resume is None:
            history = messages_from_json(conversation.messages)[-MAX_HISTORY:]
            system = [Message.system(offer.instructions)] if offer.instructions.strip() else []
            messages = [*system, *history, Message.user(row.message)]
            turn = await run_turn(
                opened.host,
                model,
                messages,
                limits=offer.limits,
                approver=offer.approver,
                conversation=key,
                tools=tools,
                on_event=note,
            )
        else:
            state, decided = resume
            turn = await resume_turn(
                opened.host,
                model,
                state,
                decided,
                limits=offer.limits,
                approver=offer.approver,
                conversation=key,
                tools=tools,
                on_event=note,
            )
    finally:
        TURN_ID.reset(token)
        close = getattr(model, "close", None)
        if close is not None and svc.models is None:  # the organization's endpoint: a client made for this turn
            await close()
    parked = turn.status == "parked"
    async with svc.db.begin() as session:
        stored = [m for m in turn.messages if m.role != "system"]
        await session.execute(
            update(Conversation).where(Conversation.id == conversation.id).values(messages=messages_to_json(stored))
        )
        values: dict[str, Any] = {
            "status": "waiting_for_approval" if parked else turn.status,
            "reply": turn.reply,
            "calls": _merged_calls(row.calls, turn),
            "state": turn.state.to_json() if parked else None,
            "finished_at": None if parked else utcnow(),
            "error": errors[-1] if errors else None,
        }
        await session.execute(update(TurnRow).where(TurnRow.id == row.id).values(**values))
        fresh = await session.get(TurnRow, row.id, populate_existing=True)
        assert fresh is not None
        return fresh


async def end_failed(svc: OrgService, turn_id: str, exc: BaseException) -> None:
    """End a turn that could not run or go on, saying why: it is never left `running` (its conversation would wait)."""
    if isinstance(exc, ServiceError):
        why = exc.message
    elif isinstance(exc, Exception):
        why = f"the turn could not go on ({type(exc).__name__})"
    else:  # cancelled: the service is stopping (or the request was dropped) while the turn ran
        why = "the service stopped while this turn ran; send the message again"
    async with svc.db.begin() as session:
        await session.execute(
            update(TurnRow)
            .where(TurnRow.id == turn_id)
            .values(status="model_error", error=why, state=None, finished_at=utcnow())
        )


@contextlib.asynccontextmanager
async def ends_if_it_fails(svc: OrgService, turn_id: str) -> AsyncIterator[None]:
    """Around a turn that runs: if it fails or is stopped (cancelled), it ends saying why, never left `running`."""
    try:
        yield
    except BaseException as exc:
        with anyio.CancelScope(shield=True):  # a stopping service still writes how the turn ended
            await end_failed(svc, turn_id, exc)
        raise


def limits(max_calls: int = 20) -> TurnLimits:
    return TurnLimits(max_calls=max_calls, max_seconds=TURN_SECONDS)


def _result_from_json(body: Mapping[str, Any]) -> CallResult:
    return CallResult(
        ok=bool(body.get("ok")),
        text=str(body.get("text", "")),
        content=list(body.get("content") or []),
        structured=body.get("structured"),
        cached=bool(body.get("cached")),
        handle=body.get("handle"),
        error=body.get("error"),
        tool=body.get("tool"),
        server=body.get("server"),
    )


async def _decided(session: AsyncSession, turn_id: str, waiting: Collection[str]) -> dict[str, CallResult]:
    """The results of the turn's waiting calls that were decided: the approved run's, or the refusal."""
    approvals = await session.scalars(
        select(Approval).where(Approval.turn_id == turn_id, Approval.status.in_(("done", "failed", "declined")))
    )
    decided: dict[str, CallResult] = {}
    for approval in approvals:
        if approval.tool_call_id is None or approval.tool_call_id not in waiting:
            continue
        if approval.status == "declined" or approval.result is None:
            decided[approval.tool_call_id] = CallResult.refusal(
                "denied",
                f"{approval.tool_name}: a person declined this call; nothing was sent",
                tool=approval.tool_name,
            )
        else:
            decided[approval.tool_call_id] = _result_from_json(approval.result)
    return decided


OfferFor = Callable[[Conversation], Awaitable[tuple[Offer, str, str | None]]]
"""What a parked turn of this conversation may use when it goes on: the offer, the host conversation, the model."""


async def continue_after_decision(svc: OrgService, org_id: str, turn_id: str, offer_for: OfferFor) -> None:
    """Go on with a parked turn whose approvals were decided; exactly one process does (a claim on the turn's row).

    After it parks again it looks once more, so a decision that came in while it ran is never left waiting.
    """
    while True:
        async with svc.db.begin() as session:
            claimed = await session.scalar(
                update(TurnRow)
                .where(TurnRow.id == turn_id, TurnRow.org_id == org_id, TurnRow.status == "waiting_for_approval")
                .values(status="running")
                .returning(TurnRow)
                .execution_options(synchronize_session=False)
            )
            if claimed is None:
                return  # another process goes on with it, or it went on already
            state = TurnState.from_json(claimed.state or {})
            decided = await _decided(session, turn_id, state.waiting.keys())
            conversation = await session.get(Conversation, claimed.conversation_id)
            if not decided or conversation is None:
                claimed.status = "waiting_for_approval"
                return
        try:
            # Claimed, so no one else will go on with it: if it fails it ends here, saying why.
            async with ends_if_it_fails(svc, turn_id):
                offer, key, name = await offer_for(conversation)
                model = await model_for(svc, org_id, name)
                opened = await svc.hosts.get(org_id)
                row = await drive_turn(
                    svc, opened, model, conversation, claimed, offer, key=key, resume=(state, decided)
                )
        except ServiceError:
            return
        if row.status != "waiting_for_approval":
            return
        async with svc.db.begin() as session:
            again = await _decided(session, turn_id, TurnState.from_json(row.state or {}).waiting.keys())
        if not again:
            return
