"""An ask-first call over MCP: parked in the inbox, its MCP request waits for a person's decision (ORG-10, ORG-5).

While it waits, the client hears every few seconds where to approve (a progress notification,
when it asked for progress), and once, when it declared URL elicitation, an invitation to open the
approval's page. Approved, the call runs once (in whichever request or replica approved it) and its
result is the MCP result; declined, an error result says so and who declined; not decided in time,
an error result says it still waits in the inbox. A client that goes away leaves the approval in
the inbox, to be decided there.
"""

from __future__ import annotations

import contextlib
import logging

import anyio
from sqlalchemy import select

from mcpyard.connect import InputRelay, ProgressFn
from mcpyard.org._caller import Caller
from mcpyard.org.services import OrgService, approval_key, result_from_json
from mcpyard.org.store import Approval, Member
from mcpyard.pipeline import CallResult

__all__ = ["PROGRESS_SECONDS", "wait_for_decision"]

PROGRESS_SECONDS = 5.0
"""How often a waiting client hears where to approve."""
POLL_SECONDS = 0.5
"""How soon a decision made through another replica is seen without an announcement (SQLite)."""
_log = logging.getLogger("mcpyard.org")


async def wait_for_decision(
    svc: OrgService,
    caller: Caller,
    approval_id: str,
    base_url: str,
    on_progress: ProgressFn | None,
    on_input: InputRelay | None,
) -> CallResult:
    """The parked call's result once it is decided, or an error result saying why there is none."""
    url = f"{base_url.rstrip('/')}/inbox#approval-{approval_id}"
    waiting = f"this call asks first: it waits for a person's approval in the inbox, {url}"
    started = anyio.current_time()
    async with anyio.create_task_group() as tg:
        if on_input is not None and on_input.ask is not None:
            tg.start_soon(_invite, on_input, url, waiting, approval_id)
        told = -PROGRESS_SECONDS
        try:
            while True:
                outcome = await _outcome(svc, caller, approval_id, url)
                if outcome is not None:
                    return outcome
                elapsed = anyio.current_time() - started
                if elapsed >= svc.approval_wait_seconds:
                    minutes = svc.approval_wait_seconds / 60
                    return CallResult.refusal(
                        "approval_pending",
                        f"not decided within {minutes:g} minutes: the call still waits in the inbox ({url}); "
                        "once it is approved there, it runs and its result is in the inbox",
                    )
                if on_progress is not None and elapsed - told >= PROGRESS_SECONDS:
                    told = elapsed
                    with contextlib.suppress(Exception):  # a client that stopped listening still gets its answer
                        await on_progress(elapsed, None, waiting)
                left = min(POLL_SECONDS, PROGRESS_SECONDS, svc.approval_wait_seconds - elapsed)
                with anyio.move_on_after(max(0.0, left)):
                    await svc.wakeups.event(approval_key(approval_id)).wait()
        finally:
            svc.wakeups.forget(approval_key(approval_id))
            tg.cancel_scope.cancel()
    raise AssertionError("unreachable: the loop returns")


async def _invite(on_input: InputRelay, url: str, message: str, approval_id: str) -> None:
    """Ask the client, once, to open the approval's page (URL elicitation); its answer decides nothing."""
    assert on_input.ask is not None
    params = {"mode": "url", "message": message, "url": url, "elicitationId": f"approval-{approval_id}"}
    try:
        await on_input.ask("elicitation/create", params)
    except Exception as exc:  # a client that declined or cannot take it: the progress messages still say where
        _log.debug("the client did not take the approval's link (%s)", type(exc).__name__)


async def _outcome(svc: OrgService, caller: Caller, approval_id: str, url: str) -> CallResult | None:
    """What the approval came to, or None while it is pending or its one run is under way."""
    async with svc.db.begin() as session:
        row = (
            await session.execute(
                select(Approval.status, Approval.result, Approval.tool_name, Member.email)
                .outerjoin(Member, Member.id == Approval.decided_by)
                .where(Approval.id == approval_id, Approval.org_id == caller.org_id)
            )
        ).first()
    if row is None:
        return CallResult.refusal("not_found", "the approval this call waited for is gone")
    status, result, tool, decider = row
    if status in ("done", "failed") and result is not None:
        return result_from_json(result)
    if status == "declined":
        who = decider or "a person"
        return CallResult.refusal("declined", f"{tool} was declined by {who} ({url}); nothing was sent", tool=tool)
    return None
