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
from typing import Any, Protocol

import anyio
from sqlalchemy import update

from mcpyard.agent import HostFacade, SearchedSelection, TurnHost, TurnState, resume_turn, run_turn
from mcpyard.config import ToolSearchSettings
from mcpyard.errors import ServiceError
from mcpyard.model import (
    ErrorEvent,
    Event,
    Message,
    Model,
    ModelTools,
    messages_from_json,
    messages_to_json,
    tool_name,
)
from mcpyard.ops import count_turn
from mcpyard.org.hosts import OrgHost
from mcpyard.org.services import LimitReached, OrgService, TurnCalls, holding
from mcpyard.org.store import Conversation, TurnRow, utcnow
from mcpyard.org.turns._turn_json import merged_calls
from mcpyard.org.turns._turn_offer import Offer
from mcpyard.pipeline import READ_RESULT, READ_RESULT_TOOL, CallResult, over_budget
from mcpyard.policy import Approver

__all__ = ["MAX_MESSAGE", "drive_turn", "end_failed", "ends_if_it_fails"]

MAX_MESSAGE = 20_000
"""The longest message a turn takes, in characters."""
MAX_HISTORY = 200
"""Messages a conversation keeps; older ones are left out of the next turn."""


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
    selection = {*offer.names, READ_RESULT}
    tools: ModelTools | None = opened.host.tools_for_model(model.tool_format).only(selection)
    errors: list[str] = []

    async def note(event: Event) -> None:
        if isinstance(event, ErrorEvent):
            errors.append(event.message)

    calls = TurnCalls(opened.host, svc, offer.asker, row.id, row.org_id)
    host: TurnHost = calls
    if offer.charge is not None:
        host = _Counted(host, offer.charge, calls.refuse)
    if offer.still_offered is not None:
        host = _StillOffered(host, offer.still_offered, calls.refuse)
    searched: SearchedSelection | None = None
    if tools is not None and offer.tool_search is not None and _past_budget(tools, offer.tool_search):
        # Offered `find_tools` over what this turn may use, and what its conversation found so far (MOD-4).
        definitions = {tool_name(tool): tool for tool in opened.host.tools_for_model("mcp").only(selection)}
        searched = SearchedSelection(host, tools, definitions, conversation.found_tools or ())
        host, tools = searched, None  # the loop asks the host before each reply: what was found joins the list
    try:
        if resume is None:
            history = messages_from_json(conversation.messages)[-MAX_HISTORY:]
            system = [Message.system(offer.instructions)] if offer.instructions.strip() else []
            messages = [*system, *history, Message.user(row.message)]
            turn = await run_turn(
                host,
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
                host,
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
        close = getattr(model, "close", None)
        if close is not None and svc.models is None:  # the organization's endpoint: a client made for this turn
            await close()
    parked = turn.status == "parked"
    async with svc.db.begin() as session:
        stored = [m for m in turn.messages if m.role != "system"]
        kept: dict[str, Any] = {"messages": messages_to_json(stored)}
        if searched is not None:
            kept["found_tools"] = searched.found
        await session.execute(update(Conversation).where(Conversation.id == conversation.id).values(**kept))
        values: dict[str, Any] = {
            "status": "waiting_for_approval" if parked else turn.status,
            "reply": turn.reply,
            "calls": merged_calls(row.calls, turn),
            "state": turn.state.to_json() if parked else None,
            "finished_at": None if parked else utcnow(),
            "error": errors[-1] if errors else None,
        }
        await session.execute(update(TurnRow).where(TurnRow.id == row.id).values(**values))
        count_turn(values["status"], org=row.org_id)
        fresh = await session.get(TurnRow, row.id, populate_existing=True)
        assert fresh is not None
        return fresh


def _past_budget(tools: ModelTools, settings: ToolSearchSettings) -> bool:
    return over_budget([tool for tool in tools if tools.catalog_name(tool_name(tool)) != READ_RESULT], settings)


class _Refuse(Protocol):
    """Refuses a call of the turn before it reaches the host, recording the refusal (`TurnCalls.refuse`)."""

    def __call__(
        self, name: str, arguments: Mapping[str, Any] | None, code: str, message: str, *, conversation: str | None
    ) -> Awaitable[CallResult]: ...


class _StillOffered(HostFacade):
    """A turn's host that refuses a call to a tool its teammate may no longer use (checked again before each call,
    ORG-5): nothing is sent; `read_result` reads only what this conversation's calls returned already."""

    def __init__(self, host: TurnHost, offered: Callable[[], Awaitable[Collection[str]]], refuse: _Refuse) -> None:
        super().__init__(host)
        self._offered = offered
        self._refuse = refuse

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
        definition_hash: str | None = None,
    ) -> CallResult:
        if name != READ_RESULT_TOOL["name"] and name not in await self._offered():
            why = f"{name}: this teammate may no longer use this tool (its servers changed or it was deleted)"
            why += "; nothing was sent"
            return await self._refuse(name, arguments, "no_access", why, conversation=conversation)
        return await self._host.call(
            name, arguments, conversation=conversation, approver=approver, definition_hash=definition_hash
        )


class _Counted(HostFacade):
    """A turn's host that counts each call against the organization's limits before it runs (ORG-11): a call over a
    limit is not sent, and the model reads why and when the limit resets as the call's error."""

    def __init__(self, host: TurnHost, charge: Callable[[], Awaitable[None]], refuse: _Refuse) -> None:
        super().__init__(host)
        self._charge = charge
        self._refuse = refuse

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
        definition_hash: str | None = None,
    ) -> CallResult:
        if name != READ_RESULT_TOOL["name"]:
            try:
                await self._charge()
            except LimitReached as exc:
                return await self._refuse(name, arguments, exc.code, exc.message, conversation=conversation)
        return await self._host.call(
            name, arguments, conversation=conversation, approver=approver, definition_hash=definition_hash
        )


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
    """Around a turn that runs: if it fails or is stopped (cancelled), it ends saying why, never left `running`; while
    it runs, this process holds it (a replica that dies leaves it to the sweep, which ends it `interrupted`)."""
    try:
        async with holding(svc, TurnRow, turn_id):
            yield
    except BaseException as exc:
        with anyio.CancelScope(shield=True):  # a stopping service still writes how the turn ended
            await end_failed(svc, turn_id, exc)
        raise
