"""A member's own call (`POST /api/v1/calls`) and the windows of stored results (API-6, CALL-4, ORG-5, ORG-7).

A call runs through the organization's host with the whole pipeline; an ask-first call is parked
in the inbox with its exact arguments (`Inbox`), to run once when approved.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Invalid
from mcpyard.org._caller import Caller, not_found
from mcpyard.org._words import quoted
from mcpyard.org.hosts import OrgHost, call_tags, conversation_key
from mcpyard.org.services._call_results import Outcome, keep_connection_state, result_json
from mcpyard.org.services._calls import org_call
from mcpyard.org.services._inbox import Inbox
from mcpyard.org.services._limits import caller_subjects, charge
from mcpyard.org.services._questions import Asker, until_done_or_asked
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._task_calls import mark_given
from mcpyard.org.services._task_keeper import TASK_WAIT_SECONDS
from mcpyard.org.services._views import CallBody, CallResultView
from mcpyard.org.store import Question, RegisteredServer, new_id
from mcpyard.pipeline import READ_RESULT, CallResult

__all__ = ["MAX_CONVERSATION", "MAX_TOOL_NAME", "call_tool", "checked_conversation", "read_result"]

MAX_CONVERSATION = 40
"""A conversation's name is kept with the member's id (`conversation_key`) in 64 characters."""
MAX_TOOL_NAME = 256
"""The longest tool name a call may give: what a call's record keeps."""


def checked_conversation(conversation: object) -> str | None:
    """A call's conversation as given (None: the member's default one), or 422 when it cannot be one."""
    if conversation is not None and (not isinstance(conversation, str) or len(conversation) > MAX_CONVERSATION):
        raise Invalid("invalid_request", f"`conversation` must be a string of at most {MAX_CONVERSATION} characters")
    return conversation


async def _deleted_owner(session: AsyncSession, org_id: str, name: str) -> str | None:
    servers = await session.scalars(
        select(RegisteredServer).where(RegisteredServer.org_id == org_id, RegisteredServer.deleted_at.is_not(None))
    )
    return next((server.name for server in servers if name.startswith(f"{server.name}__")), None)


async def call_tool(
    svc: OrgService,
    caller: Caller,
    name: object,
    arguments: object,
    conversation: object = None,
    *,
    respond_async: bool = False,
) -> Outcome[CallBody]:
    """Run a tool for a member: the `CallResult` (refusals too), or, still going on, the parked approval, the
    question its server asked (the call goes on once it is answered; its result then comes with the question), or
    a long call: its server answered with a task that did not end within `TASK_WAIT_SECONDS` (at once with
    `respond_async`); its result is read once with `read_task_call`.

    `arguments` must be a JSON object (a request that leaves them out gives `{}`), `conversation` a short name.

    Raises:
        LimitReached: the member or the token used up a limit of the organization (429); nothing ran.
    """
    if not isinstance(name, str) or not name or len(name) > MAX_TOOL_NAME:
        raise Invalid("invalid_request", f"give `tool`, the tool's name as the model sees it (at most {MAX_TOOL_NAME})")
    if not isinstance(arguments, dict):
        raise Invalid("invalid_arguments", "`arguments` must be a JSON object (or left out: none)")
    conversation = checked_conversation(conversation)
    if name != READ_RESULT:  # counted before anything runs; over a limit, 429 and nothing is sent (ORG-11)
        await charge(svc, caller.org_id, caller_subjects(caller), revision=caller.revision)
    opened = await svc.hosts.current(caller.org_id, seen=caller.revision)
    key = conversation_key(caller.member_id, conversation)
    inbox = Inbox(svc, caller, name, arguments, key)
    call_id = new_id()
    asker = Asker(caller.org_id, caller.member_id, call_id=call_id)
    asker.task_wait = 0.0 if respond_async else TASK_WAIT_SECONDS

    async def run() -> Outcome[CallResultView]:
        result = await org_call(
            svc,
            opened.host,
            name,
            arguments,
            conversation=key,
            approver=inbox,
            asker=asker,
            tags=call_tags(call_id=call_id),
        )
        answer = await _answer(svc, caller, opened, name, result, call_id)
        if asker.question_ids:  # whoever answered its questions reads the result with them
            async with svc.db.begin() as session:
                await session.execute(update(Question).where(Question.call_id == call_id).values(result=answer.body))
        return answer

    ended, answer = await until_done_or_asked(svc, asker, run, "a call waiting for an answer")
    if not ended and asker.question_ids:
        return Outcome(
            {"call_id": call_id, "question": {"id": asker.question_ids[0], "status": "pending"}}, waiting=True
        )
    if not ended:  # a long call: its task goes on (on whichever replica holds it); its result is read once
        return Outcome({"call_id": call_id, "task": {"id": call_id, "status": "running"}}, waiting=True)
    if asker.tasked:  # its result is in this answer: not kept for another read
        await mark_given(svc, call_id)
    if inbox.approval_id is not None:
        return Outcome({"approval": {"id": inbox.approval_id, "status": "pending"}}, waiting=True)
    if answer is None:
        raise RuntimeError("the call ended without an answer")
    return answer


async def _answer(
    svc: OrgService, caller: Caller, opened: OrgHost, name: str, result: CallResult, call_id: str
) -> Outcome[CallResultView]:
    if result.error is not None and result.error["code"] in ("unknown_tool", "server_unavailable"):
        async with svc.db.begin() as session:
            if (deleted := await _deleted_owner(session, caller.org_id, name)) is not None:
                message = f"{name}: server {quoted(deleted)} was deleted, so its tools cannot run"
                refused = CallResult.refusal("server_deleted", message, tool=name)
                return Outcome(result_json(refused, call_id))
    await keep_connection_state(svc, opened, caller.org_id, result)
    return Outcome(result_json(result, call_id))


async def read_result(
    svc: OrgService, caller: Caller, handle: str, offset: int, length: int | None, conversation: str | None
) -> CallResultView:
    """A window of a stored result, only within the member's conversation that made it (CALL-4, ORG-7)."""
    opened = await svc.hosts.get(caller.org_id)  # results are read from the database: any replica's
    arguments: dict[str, Any] = {"handle": handle, "offset": offset}
    if length is not None:
        arguments["length"] = length
    result = await opened.host.call(
        "read_result", arguments, conversation=conversation_key(caller.member_id, conversation)
    )
    if result.error is not None and result.error["code"] == "unknown_handle":
        raise not_found("stored result")
    return result_json(result, None)
