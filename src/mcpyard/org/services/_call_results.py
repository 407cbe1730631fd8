"""A call's result as the organization's API answers it, and what a call says of its server's connection (ORG-8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mcpyard.org._words import text_of
from mcpyard.org.hosts import OrgHost
from mcpyard.org.services._discovery import CONNECTION_ALERT
from mcpyard.org.services._events import clear_alert, raise_alert
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import CallResultView
from mcpyard.pipeline import CallResult

__all__ = ["CODES", "Outcome", "keep_connection_state", "result_from_json", "result_json"]

Body_co = TypeVar("Body_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Outcome(Generic[Body_co]):
    """What a call, an approved run or a turn came to: the JSON the member reads, and whether it is still going on
    (parked for an approval, or waiting for the answer to a server's question; the API answers 202 then)."""

    body: Body_co
    waiting: bool = False


CODES = {"off": "policy_off", "removed": "tool_removed"}
"""The pipeline's refusal codes as the organization's API names them (API-6)."""
CONNECTION_FAILURES = frozenset({"server_unavailable", "connection_lost", "timeout"})


def result_json(result: CallResult, call_id: str | None) -> CallResultView:
    """The result as `CallResult.to_json` gives it, its refusal code as the API names it, and the call's id."""
    error = result.error
    if error is not None:
        error = {**error, "code": CODES.get(error["code"], error["code"])}
    return {
        "ok": result.ok,
        "text": result.text,
        "content": result.content,
        "structured": result.structured,
        "cached": result.cached,
        "handle": result.handle,
        "error": error,
        "tool": result.tool,
        "server": result.server,
        "call_id": call_id,
    }


async def keep_connection_state(svc: OrgService, opened: OrgHost, org_id: str, result: CallResult) -> None:
    """A call that could not reach its server raises that server's alert; the next that does clears it (ORG-8)."""
    name = result.server
    server_id = opened.ids.get(name) if name is not None else None
    if name is None or server_id is None:
        return
    failed = result.error is not None and result.error["code"] in CONNECTION_FAILURES
    if failed == (name in opened.alerted):
        return
    async with svc.db.begin() as session:
        if failed:
            said = result.error["message"] if result.error else "the call could not reach the server"
            # Stored, so redacted here too (THREATS: org service); the server's words, shown as text.
            message = text_of(opened.host.view.redactor.redact(said))
            await raise_alert(session, org_id, CONNECTION_ALERT, message, server_id=server_id)
            opened.alerted.add(name)
        else:
            await clear_alert(session, org_id, CONNECTION_ALERT, server_id=server_id)
            opened.alerted.discard(name)


def result_from_json(body: Mapping[str, Any]) -> CallResult:
    """A result kept as `result_json` wrote it (an approved run's), as the pipeline gave it."""
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
