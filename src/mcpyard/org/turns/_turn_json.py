"""How a turn is shown: its calls' statuses, the turn as the API answers it, and its trace from the call records."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from mcpyard.agent import PARKED, Turn
from mcpyard.model import ToolCall
from mcpyard.org.services import OrgService
from mcpyard.org.store import CallRow, RegisteredServer, TurnRow
from mcpyard.pipeline import CallResult

__all__ = ["call_status", "merged_calls", "turn_json", "turn_trace"]

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


def merged_calls(before: list[dict[str, Any]], turn: Turn) -> list[dict[str, Any]]:
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
