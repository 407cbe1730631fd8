"""Answering a server's question from the inbox: once, by the member who started the call, an owner or an admin.

Answering is one conditional update (`pending` → `accepted`, `declined` or `cancelled`, while it has
not expired): of two people answering at the same moment, on any processes, one wins and the other
hears 409 `already_decided`. An accepted form's content is checked against the form first (422
naming each field and rule, never a value) and sealed into the row with the organization's key;
the call that asked opens it and erases it (`_questions.py`). No answer is ever shown back: a
question's JSON says how it ended, never what was typed (SEC-2).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.errors import Conflict, Invalid, ServiceError
from mcpyard.org._caller import Caller, not_found
from mcpyard.org.services._question_form import checked_answer, content_from_form, form_fields_of
from mcpyard.org.services._questions import answer_context
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._views import QuestionView
from mcpyard.org.store import Question, announce, utcnow

__all__ = [
    "QUESTION_STATES",
    "answer_from_page",
    "answer_question",
    "get_question",
    "list_questions",
    "question_json",
    "questions_of_turns",
]

QUESTION_STATES = ("pending", "accepted", "declined", "cancelled", "expired")
DONE = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


def question_json(question: Question) -> QuestionView:
    """A question as the API and the pages show it: what the server asks, who may answer, how it ended."""
    return {
        "id": question.id,
        "status": question.status,
        "server": question.server,
        "server_id": question.server_id,
        "tool": question.tool,
        "member_id": question.member_id,
        "turn_id": question.turn_id,
        "call_id": question.call_id,
        "mode": question.mode,
        "message": question.message,
        "fields": [{key: value for key, value in item.items() if key != "has_default"} for item in question.form],
        "url": question.url,
        "site": question.site,
        "asks_for_secrets": any(item.get("secret") for item in question.form),
        "why": question.why or None,
        "created_at": question.created_at.isoformat(),
        "expires_at": question.expires_at.isoformat(),
        "answered_by": question.answered_by,
        "answered_at": question.answered_at.isoformat() if question.answered_at else None,
        "result": question.result,
    }


def _visible(caller: Caller) -> Select[Question]:
    """The questions a caller sees: the member their own calls' ones; owners and admins every one."""
    query = select(Question).where(Question.org_id == caller.org_id)
    return query if caller.is_admin else query.where(Question.member_id == caller.member_id)


async def list_questions(
    svc: OrgService, caller: Caller, status: str | None, *, newest: int | None = None, decided: bool = False
) -> list[QuestionView]:
    """The inbox's questions, oldest first; with `newest`, only that many of the latest; with `decided`, only
    those no longer pending."""
    query = _visible(caller)
    if status is not None:
        query = query.where(Question.status == status)
    if decided:
        query = query.where(Question.status != "pending")
    if newest is not None:
        query = query.order_by(Question.created_at.desc(), Question.id.desc()).limit(newest)
    else:
        query = query.order_by(Question.created_at, Question.id)
    async with svc.db.begin() as session:
        rows = [question_json(question) for question in await session.scalars(query)]
    return rows[::-1] if newest is not None else rows


async def _question(session: AsyncSession, caller: Caller, question_id: str) -> Question:
    question = await session.scalar(_visible(caller).where(Question.id == question_id))
    if question is None:
        raise not_found("question")  # another member's question is not theirs to see or answer
    return question


async def get_question(svc: OrgService, caller: Caller, question_id: str) -> QuestionView:
    async with svc.db.begin() as session:
        return question_json(await _question(session, caller, question_id))


def _unfit(problems: list[str]) -> ServiceError:
    """422: the answer does not fit its question, naming each field and rule (never a value)."""
    message = "the answer does not fit the question: " + "; ".join(problems[:10])
    return Invalid("invalid_answer", message, details={"problems": problems})


async def answer_question(
    svc: OrgService, caller: Caller, question_id: str, action: object, content: object = None
) -> QuestionView:
    """Answer once: `accept` (with the form's content), `decline` or `cancel`; the question as it now stands."""
    async with svc.db.begin() as session:
        question = await _question(session, caller, question_id)
        chosen, answer, problems = checked_answer(question.mode, form_fields_of(question.form), action, content)
        if problems:
            raise _unfit(problems)
        values: dict[str, Any] = {"status": DONE[chosen], "answered_by": caller.member_id, "answered_at": utcnow()}
        if answer is not None:
            values["key_id"], values["sealed_answer"] = svc.sealer.seal(
                json.dumps(answer, separators=(",", ":")), context=answer_context(question.org_id, question.id)
            )
        claimed = await session.scalar(
            update(Question)
            .where(
                Question.id == question_id,
                Question.org_id == caller.org_id,
                Question.status == "pending",
                Question.expires_at > utcnow(),
            )
            .values(**values)
            .returning(Question.id)
        )
        if claimed is None:
            if question.status == "pending" and question.expires_at <= utcnow():
                raise Conflict("expired", "this question expired before it was answered")
            raise Conflict("already_decided", "this question was answered already, or it expired")
        await announce(session, caller.org_id, "question", question_id)  # the replica whose call waits hears it
    svc.wakeups.wake(question_id)  # the call waiting in this process hears it at once
    return await get_question(svc, caller, question_id)


async def answer_from_page(
    svc: OrgService, caller: Caller, question_id: str, action: str, values: Mapping[str, list[str]]
) -> QuestionView:
    """Answer from a page's form: each field's values as text, read against the question's form first."""
    content: dict[str, Any] | None = None
    if action == "accept":
        async with svc.db.begin() as session:
            question = await _question(session, caller, question_id)
        if question.mode == "form":
            content, problems = content_from_form(form_fields_of(question.form), values)
            if problems:
                raise _unfit(problems)
    return await answer_question(svc, caller, question_id, action, content)


async def questions_of_turns(
    session: AsyncSession, org_id: str, turn_ids: Collection[str]
) -> dict[str, list[QuestionView]]:
    """The questions each turn's calls asked, oldest first, by turn."""
    if not turn_ids:
        return {}
    rows = await session.scalars(
        select(Question)
        .where(Question.org_id == org_id, Question.turn_id.in_(tuple(turn_ids)))
        .order_by(Question.created_at, Question.id)
    )
    found: dict[str, list[QuestionView]] = {}
    for question in rows:
        if question.turn_id is not None:
            found.setdefault(question.turn_id, []).append(question_json(question))
    return found
