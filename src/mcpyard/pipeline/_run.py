"""Running a call: the stages in SPEC order over one host view and session, then its record (CALL)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcpyard.catalog import clean_and_redact, clean_text
from mcpyard.connect import resumed_task, sendable_copy, sendable_problem
from mcpyard.errors import CallError
from mcpyard.ops import tracing
from mcpyard.pipeline._call import Call, CallRequest, Refusal
from mcpyard.pipeline._find import FIND_TOOLS, find_tools
from mcpyard.pipeline._record import CallRecord, CallStatus, FileRecord
from mcpyard.pipeline._resolve import resolve
from mcpyard.pipeline._result import CallResult
from mcpyard.pipeline._session import Session
from mcpyard.pipeline._shape import cut_to_bytes, fence
from mcpyard.pipeline._stages import (
    ask,
    check_sendable,
    decide_call,
    dispatch,
    look_up_cache,
    read_files,
    recheck,
    shape,
    validate,
)

if TYPE_CHECKING:
    from mcpyard import HostView

__all__ = ["READ_RESULT", "READ_RESULT_TOOL", "STAGES", "Session", "Stage", "read_result", "refused", "run"]

READ_RESULT = "read_result"
READ_RESULT_TOOL: Mapping[str, Any] = {
    "name": READ_RESULT,
    "description": (
        "Read more of a tool result that was cut: give the handle named in the cut mark, the character "
        "offset to start at, and how many characters to read. Reports the total length."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "The handle from the cut mark."},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "length": {"type": "integer", "minimum": 1, "default": 65536},
        },
        "required": ["handle"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}
SUMMARY_CHARS = 200

Stage = Callable[["HostView", "Session", Call], Awaitable[Call | Refusal]]
STAGES: tuple[Stage, ...] = (
    check_sendable,
    resolve,
    validate,
    decide_call,
    read_files,
    look_up_cache,
    ask,
    recheck,
    dispatch,
    shape,
)
"""Every call passes these, in this order, until one refuses it (CALL)."""
RESUMED_STAGES: tuple[Stage, ...] = (resolve, dispatch, shape)
"""A call made within `resuming_task(task_id)`: it follows a task an earlier call of the tool was answered with
(here or in another process), decided when it was sent, shaped now like any (CALL-8)."""


async def run(view: HostView, session: Session, request: CallRequest) -> CallResult:
    """One call through every stage until one refuses it, then its record; never raises for a call that failed.

    With tracing on, the call is a span (OBS-1): the requests it sends upstream carry it as their parent.
    """
    if not tracing.active():
        return await _run(view, session, request)
    with tracing.span(f"execute_tool {request.name}", {"gen_ai.operation.name": "execute_tool"}):
        return await _run(view, session, request)


async def _run(view: HostView, session: Session, request: CallRequest) -> CallResult:
    call = Call(request, started=time.time())
    if request.name in (READ_RESULT, FIND_TOOLS):
        built_in = read_result if request.name == READ_RESULT else find_tools
        checked = await check_sendable(view, session, call)
        found = checked if isinstance(checked, Refusal) else await built_in(view, session, request)
        return await _finish(view, session, call, found)
    outcome: Call | Refusal = call
    for stage in STAGES if resumed_task() is None else RESUMED_STAGES:
        try:
            outcome = await stage(view, session, call)
        except CallError as exc:  # a stage's helper that raised instead of returning its refusal
            outcome = Refusal(exc.code, exc.message)
        if isinstance(outcome, Refusal):
            break
    return await _finish(view, session, call, outcome)


async def refused(view: HostView, session: Session, request: CallRequest, code: str, message: str) -> CallResult:
    """A call its caller refused before any stage (an organization's limit, a tool it no longer offers): its refusal,
    recorded as the stages' own refusals are (history, trace, audit); nothing is sent."""
    call = Call(request, started=time.time())
    call.unsendable = sendable_problem(request.arguments) is not None  # the record keeps a copy that can be stored
    return await _finish(view, session, call, Refusal(code, message))


async def _finish(view: HostView, session: Session, call: Call, outcome: Call | Refusal | CallResult) -> CallResult:
    """The call's result, recorded (trace, audit)."""
    entry = call.entry
    server = entry.server if entry is not None else _owner(view, call.request.name)
    if isinstance(outcome, CallResult):
        result = outcome
    elif isinstance(outcome, Refusal):
        message = view.redactor.redact(outcome.message)
        result = CallResult.refusal(outcome.code, message, tool=call.request.name, server=server)
    elif call.result is not None:
        result = call.result
    else:
        raise RuntimeError("the call was not shaped: stages run in order")
    record = _record(view, call, outcome, result, server)
    if tracing.active():
        tracing.annotate_call(record)
    await session.recorder.record(record)
    return result


def _owner(view: HostView, name: str) -> str | None:
    known = view.known.get(name)
    return known[0] if known is not None else None


def _record(
    view: HostView, call: Call, outcome: Call | Refusal | CallResult, result: CallResult, server: str | None
) -> CallRecord:
    entry, decision = call.entry, call.decision
    status: CallStatus
    if isinstance(outcome, Refusal):
        status = "failed" if outcome.sent else "refused"
    elif result.cached:
        status = "cached"
    else:
        status = "ran" if result.ok else "failed"
    return CallRecord(
        started_at=call.started,
        conversation=call.request.conversation,
        server=server,
        tool=call.request.name,
        server_tool=entry.tool if entry is not None else None,
        # Arguments that cannot be sent cannot be stored either: the record keeps a copy that can.
        arguments=view.redactor.redact_json(
            sendable_copy(call.request.arguments) if call.unsendable else call.request.arguments
        ),
        files=tuple(FileRecord(f.path, f.size, f.sha256) for f in call.files.values()) if call.files else (),
        decision=decision.verdict if decision is not None else None,
        why=decision.reason if decision is not None and not isinstance(outcome, Refusal) else _why(result),
        answer=call.answer,
        status=status,
        error_code=result.error["code"] if result.error else None,
        duration_ms=(time.time() - call.started) * 1000,
        result_bytes=len(text) if (text := result.text).isascii() else len(text.encode("utf-8", "surrogatepass")),
        summary=_summary(view, result),
        tags=call.request.tags,
    )


def _why(result: CallResult) -> str:
    return result.error["message"][:SUMMARY_CHARS] if result.error else ""


def _summary(view: HostView, result: CallResult) -> str:
    """The start of what came back, redacted and cleaned, for a trace line."""
    if result.error is not None:
        text = result.error["message"]
    else:
        text = next((str(block.get("text", "")) for block in result.content if block.get("type") == "text"), "")
    redactor = view.redactor
    if not redactor:
        return clean_text(text[: SUMMARY_CHARS * 2])[:SUMMARY_CHARS]
    # Cleaned before redacting (a secret split by an invisible character is whole again), and
    # cut after: no part of a secret is left at the edge.
    return clean_and_redact(text[: SUMMARY_CHARS * 2 + redactor.longest], redactor.redact)[:SUMMARY_CHARS]


async def read_result(view: HostView, session: Session, request: CallRequest) -> CallResult | Refusal:
    """The built-in `read_result(handle, offset, length)`: a window of a stored result (CALL-4)."""
    arguments = request.arguments
    limit = view.settings.max_result_bytes
    handle = arguments.get("handle")
    offset = arguments.get("offset", 0)
    length = arguments.get("length", limit)
    if not isinstance(handle, str) or not isinstance(offset, int) or not isinstance(length, int):
        return Refusal("invalid_arguments", "read_result takes handle (string), offset and length (integers)")
    if offset < 0 or length < 1:
        return Refusal("invalid_arguments", "read_result: offset must be ≥ 0 and length ≥ 1")
    stored = await session.store.window(request.conversation, handle, offset, min(length, limit))
    if stored is None:
        return Refusal("unknown_handle", f"no stored result {handle!r} in this conversation")
    server, window = stored
    shown = cut_to_bytes(window.text, limit)  # the cap holds for windows too (CALL-4)
    end = window.offset + len(shown)
    more = f"; more from offset {end}" if end < window.total else "; that is the end"
    body = f"{shown}\n[read_result: characters {window.offset}–{end} of {window.total}{more}]"
    text = fence(body, server=server, marker=session.marker)
    return CallResult(ok=True, text=text, content=[{"type": "text", "text": shown}], tool=READ_RESULT, server=server)
