"""How a turn is shown: its calls' statuses, the turn as the API answers it, and its trace from the call records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired

from sqlalchemy import select

from mcpyard.agent import PARKED, Turn
from mcpyard.model import ToolCall
from mcpyard.org.services import OrgService
from mcpyard.org.store import CallRow, Conversation, RegisteredServer, TaskCall, TurnRow, utcnow
from mcpyard.org.turns._views import TraceStepView, TurnCallStatus, TurnCallView, TurnView
from mcpyard.pipeline import CallResult, FencedResults

__all__ = ["StoredCall", "call_status", "fenced_in", "merged_calls", "turn_json", "turn_trace"]

_SHOWN: tuple[Literal["error", "handle", "approval_id"], ...] = ("error", "handle", "approval_id")
"""What a turn shows of a call beside its tool and status, when it has it."""
_KEPT: tuple[Literal["error", "handle", "approval_id", "fenced"], ...] = (*_SHOWN, "fenced")
FAILED = frozenset({"tool_error", "timeout", "connection_lost", "response_too_large", "interrupted"})
"""Codes of a call that was sent and ended in an error (the rest were refused: nothing was sent)."""


class StoredCall(TurnCallView):
    """A call as its turn's row keeps it: with the model's id for it, and its result as the model read it when the
    service fenced it (to show the reply that quotes it once the conversation keeps the result no more); the turn's
    JSON leaves both out."""

    id: str
    fenced: NotRequired[str]


def call_status(result: CallResult) -> TurnCallStatus:
    """How a call of a turn ended, as the API says it: `ran`, `cached`, `failed`, `refused`, `waiting_for_approval`."""
    if result.ok:
        return "cached" if result.cached else "ran"
    code = result.error["code"] if result.error else ""
    if code == PARKED:
        return "waiting_for_approval"
    return "failed" if code in FAILED or result.content else "refused"


def _stored_call(item: Mapping[str, Any]) -> StoredCall:
    """A call read back from its turn's row, as the row keeps it."""
    stored: StoredCall = {"id": item["id"], "tool": item["tool"], "status": item["status"]}
    for key in _KEPT:
        if isinstance(value := item.get(key), str):
            stored[key] = value
    return stored


def _call_json(call: ToolCall, result: CallResult | None, approval_id: str | None = None) -> StoredCall:
    item: StoredCall = {"id": call.id, "tool": call.model_name, "status": "waiting_for_approval"}
    if result is not None:
        if FencedResults.of((result.text,)).bodies:  # the service fenced it: a reply may quote it
            item["fenced"] = result.text
        item["status"] = call_status(result)
        if result.error is not None:
            item["error"] = result.error["code"]
        if result.handle is not None:
            item["handle"] = result.handle
    if approval_id is not None:
        item["approval_id"] = approval_id
    return item


def _shown_call(item: Mapping[str, Any]) -> TurnCallView:
    """A call read back from its turn's row, as the turn shows it: all but the model's id for it and its result."""
    shown: TurnCallView = {"tool": item["tool"], "status": item["status"]}
    for key in _SHOWN:
        if isinstance(value := item.get(key), str):
            shown[key] = value
    return shown


def merged_calls(before: Sequence[Mapping[str, Any]], turn: Turn) -> list[StoredCall]:
    """The turn's calls so far: earlier ones kept (a waiting one replaced by its result), new ones appended."""
    calls: dict[str, StoredCall] = {item["id"]: _stored_call(item) for item in before}
    order = [item["id"] for item in before]
    for call, result in turn.results:
        approval = calls[call.id].get("approval_id") if call.id in calls else None
        if call.id not in calls:
            order.append(call.id)
        calls[call.id] = _call_json(call, result, approval)
    for call, approval_id in turn.state.waiting.values():
        if call.id not in calls:
            order.append(call.id)
        calls[call.id] = _call_json(call, None, approval_id)
    return [calls[call_id] for call_id in order]


def turn_json(row: TurnRow) -> TurnView:
    return {
        "id": row.id,
        "conversation_id": row.conversation_id,
        "status": row.status,
        "message": row.message,
        "reply": row.reply,
        "calls": [_shown_call(item) for item in row.calls],
        "error": row.error,
        "created_at": row.created_at.isoformat(),
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
    }


async def turn_trace(svc: OrgService, row: TurnRow) -> list[TraceStepView]:
    """Every call the turn made, from the pipeline's records: server, tool, redacted arguments, status, summary; then
    its long calls still running (a server's task not ended yet), with their latest status as the summary."""
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
        steps: list[TraceStepView] = [
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
        running = await session.scalars(
            select(TaskCall)
            .where(TaskCall.turn_id == row.id, TaskCall.org_id == row.org_id, TaskCall.status == "running")
            .order_by(TaskCall.created_at)
        )
        now = utcnow()
        steps += [
            {
                "server": task.server,
                "tool": task.tool,
                "arguments": task.arguments,
                "status": "running",
                "error": None,
                "summary": task.message,
                "duration_ms": round((now - task.created_at).total_seconds() * 1000, 1),
                "at": task.created_at.isoformat(),
            }
            for task in running
        ]
        return steps


async def fenced_in(svc: OrgService, org_id: str, conversation_id: str) -> FencedResults:
    """What the service fenced in a conversation (its calls' results as the model read them): a reply's fence is
    shown as a server's result only when it is one of these (CALL-7). For a caller already allowed to read it.

    Read from the conversation's messages and from its turns' calls, which keep them past the messages the
    conversation keeps for its model."""
    async with svc.db.begin() as session:
        messages = await session.scalar(
            select(Conversation.messages).where(Conversation.id == conversation_id, Conversation.org_id == org_id)
        )
        calls = await session.scalars(
            select(TurnRow.calls).where(TurnRow.conversation_id == conversation_id, TurnRow.org_id == org_id)
        )
        kept = [item.get("fenced") for listed in calls for item in listed or () if isinstance(item, dict)]
    texts = [item.get("text") for item in messages or () if isinstance(item, dict) and item.get("role") == "tool"]
    return FencedResults.of(text for text in dict.fromkeys([*texts, *kept]) if isinstance(text, str))
