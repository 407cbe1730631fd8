"""A server's question during a call, parked in the organization's inbox and waited for by the call (ORG-5, SEC-2).

The organization's hosts declare elicitation, and every call carries its own elicitor (`OrgElicitor`,
bound to the call's `Asker`: the call's, whichever era the server asks in). A member's call or a
teammate's turn parks the question as a row: the member who started it, an owner or an admin
answers it, on any process (`_answers.py`). The process that holds the open call reads the row
every half second (at once when the answer was given here), takes the answer, and erases what
was sealed in the row. A question not answered within `question_seconds` expires and the server
hears `cancel`; one whose call ended (the service stopped, the server gave up) expires too, and so
does one whose process stopped renewing it (`sweep_questions`). Visitors of a published
assistant and previews have no one to ask: their servers hear at once why they were not asked.
While a person answers, neither the call's clocks nor its turn's limit run (NET-2 bounds the rest).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from sqlalchemy import func, select, update

from mcpyard.agent import TurnClock
from mcpyard.connect import InputRelay
from mcpyard.elicitation import ElicitationAnswer, ElicitationRequest
from mcpyard.errors import ElicitationRefused
from mcpyard.org.services._question_form import form_json
from mcpyard.org.services._service import OrgService
from mcpyard.org.services._webhook_events import WaitingEvent, queue_event
from mcpyard.org.services._webhook_sending import WAKE_WEBHOOKS
from mcpyard.org.store import Question, RegisteredServer, TurnRow, new_id, utcnow

if TYPE_CHECKING:
    pass

__all__ = [
    "HOLD_SECONDS",
    "POLL_SECONDS",
    "Asker",
    "OrgElicitor",
    "answer_context",
    "no_one_to_ask",
    "sweep_questions",
    "until_done_or_asked",
]

T = TypeVar("T")
POLL_SECONDS = 0.5
"""How often the call reads its question (an answer given through another process is seen within this)."""
HOLD_SECONDS = 30.0
"""How far ahead the holding process renews its question; a question not renewed past that is swept as expired."""
NO_ONE = "there is no one here to answer a server's question"
STOPPED = "its call ended before it was answered (the service stopped, or the call was given up)"


@dataclass
class Asker:
    """Who answers the questions the servers of a call (or a turn's calls) ask, and who waits to hear one was asked."""

    org_id: str
    member_id: str | None
    """The member who started the call: they, owners and admins may answer."""
    turn_id: str | None = None
    call_id: str | None = None
    refusal: str | None = None
    """Set: no one is asked; every question is refused at once with this reason (visitors, previews)."""
    asked: anyio.Event = field(default_factory=anyio.Event)
    """Set once a question is parked: the request that started the call may answer now (202)."""
    settled: anyio.Event = field(default_factory=anyio.Event)
    """Set once a question is parked or the work `until_done_or_asked` runs has ended, whichever comes first."""
    question_ids: list[str] = field(default_factory=list)
    tasked: bool = False
    """Set once the call's server answered with a task this process keeps in the database (a long call)."""
    task_wait: float | None = None
    """A member's own call: how long its request waits for a long call's task to end before `settled` is set (the
    request answers 202 with the call's id). None: the request waits for the call's end (a turn's calls)."""
    task_answered: bool = False
    """Set with `settled` when the request answered 202 for a long call: its result is kept to be read later."""
    audience: str = field(default_factory=lambda: f"asker:{new_id()}")
    """Its calls' audience: a handshake-era question that could belong to another asker's call goes to neither."""

    @classmethod
    def refusing(cls, org_id: str, reason: str) -> Asker:
        return cls(org_id, None, refusal=reason)

    def relay(self) -> InputRelay:
        """What a call of this asker gives as `on_input`: its audience (its elicitor answers)."""
        return InputRelay(audience=self.audience, ask=None)


async def no_one_to_ask(request: ElicitationRequest) -> ElicitationAnswer:
    """The hosts' own elicitor (it declares elicitation to the servers): a call without an asker of its own."""
    del request
    raise ElicitationRefused(NO_ONE)


def answer_context(org_id: str, question_id: str) -> bytes:
    """What a sealed answer is bound to: its question's row (copied elsewhere, it does not open)."""
    return f"mcpyard question answer|{org_id}|{question_id}".encode()


class OrgElicitor:
    """The elicitor of one call: parks each question for its asker and waits for the answer (with `clock`, the call's
    turn's, paused meanwhile)."""

    def __init__(self, svc: OrgService, asker: Asker, clock: TurnClock | None = None) -> None:
        self._svc, self._asker, self._clock = svc, asker, clock

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        svc, asker = self._svc, self._asker
        if asker.refusal is not None or asker.member_id is None:
            raise ElicitationRefused(asker.refusal or NO_ONE)
        question_id = await _park(svc, asker, asker.member_id, request)
        asker.question_ids.append(question_id)
        asker.asked.set()
        asker.settled.set()
        try:
            with self._clock.paused() if self._clock is not None else contextlib.nullcontext():
                return await _answer_of(svc, asker.org_id, question_id)  # a turn's limit is not for a person
        finally:
            with anyio.CancelScope(shield=True):  # a stopping service still leaves the turn right
                await _turn_goes_on(svc, asker.turn_id)


async def _park(svc: OrgService, asker: Asker, member_id: str, request: ElicitationRequest) -> str:
    now = utcnow()
    async with svc.db.begin() as session:
        server_id = await session.scalar(
            select(RegisteredServer.id).where(
                RegisteredServer.org_id == asker.org_id,
                RegisteredServer.name == request.server,
                RegisteredServer.deleted_at.is_(None),
            )
        )
        question = Question(
            id=new_id(),
            org_id=asker.org_id,
            member_id=member_id,
            server_id=server_id,
            server=request.server,
            tool=request.tool,
            turn_id=asker.turn_id,
            call_id=asker.call_id,
            mode=request.mode,
            message=request.message,
            form=form_json(request.fields),
            url=request.url,
            site=request.site,
            status="pending",
            why="",
            expires_at=now + timedelta(seconds=svc.question_seconds),
            held_until=now + timedelta(seconds=HOLD_SECONDS),
        )
        session.add(question)
        if asker.turn_id is not None:
            await session.execute(
                update(TurnRow)
                .where(TurnRow.id == asker.turn_id, TurnRow.status == "running")
                .values(status="waiting_for_answer")
            )
        waiting = WaitingEvent(
            "question_waiting",
            asker.org_id,
            question.id,
            f"/inbox#question-{question.id}",
            server=request.server,
            tool=request.tool,
            member_id=member_id,
            message=request.message,
        )
        queued = await queue_event(session, waiting)
    if queued:
        svc.wakeups.wake(WAKE_WEBHOOKS)  # sent off the call's path, by this process's sender
    return question.id


async def _turn_goes_on(svc: OrgService, turn_id: str | None) -> None:
    """The turn runs again once none of its questions waits for an answer."""
    if turn_id is None:
        return
    async with svc.db.begin() as session:
        waiting = await session.scalar(
            select(func.count(Question.id)).where(Question.turn_id == turn_id, Question.status == "pending")
        )
        if not waiting:
            await session.execute(
                update(TurnRow)
                .where(TurnRow.id == turn_id, TurnRow.status == "waiting_for_answer")
                .values(status="running")
            )


async def _expire(svc: OrgService, question_id: str, why: str) -> bool:
    """`pending` → `expired`, unless an answer came first; whether it expired."""
    async with svc.db.begin() as session:
        expired = await session.scalar(
            update(Question)
            .where(Question.id == question_id, Question.status == "pending")
            .values(status="expired", why=why)
            .returning(Question.id)
        )
    return expired is not None


async def _answer_of(svc: OrgService, org_id: str, question_id: str) -> ElicitationAnswer:
    """Wait for the question to be answered or to expire; the answer as the server will get it."""
    renew_at = anyio.current_time() + HOLD_SECONDS / 3
    try:
        while True:
            async with svc.db.begin() as session:
                row = (
                    await session.execute(
                        select(Question.status, Question.expires_at).where(Question.id == question_id)
                    )
                ).one()
            status, expires_at = row
            if status != "pending":
                return await _take(svc, org_id, question_id, status)
            left = (expires_at - utcnow()).total_seconds()
            if left <= 0:
                minutes = svc.question_seconds / 60
                await _expire(svc, question_id, f"not answered within {minutes:g} minutes")
                continue  # an answer may have come first: read it
            if anyio.current_time() >= renew_at:
                renew_at = anyio.current_time() + HOLD_SECONDS / 3
                async with svc.db.begin() as session:
                    await session.execute(
                        update(Question)
                        .where(Question.id == question_id, Question.status == "pending")
                        .values(held_until=utcnow() + timedelta(seconds=HOLD_SECONDS))
                    )
            with anyio.move_on_after(min(POLL_SECONDS, left)):
                await svc.wakeups.event(question_id).wait()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await _expire(svc, question_id, STOPPED)
        raise
    finally:
        svc.wakeups.forget(question_id)


async def _take(svc: OrgService, org_id: str, question_id: str, status: str) -> ElicitationAnswer:
    """The decided answer; an accepted form's sealed content is opened here and erased from the row at once."""
    if status == "declined":
        return ElicitationAnswer.decline()
    if status != "accepted":
        return ElicitationAnswer.cancel()  # cancelled, or expired: the server hears `cancel`
    async with svc.db.begin() as session:
        row = (
            await session.execute(select(Question.key_id, Question.sealed_answer).where(Question.id == question_id))
        ).one()
        await session.execute(
            update(Question)
            .where(Question.id == question_id)
            .values(key_id=None, sealed_answer=None, delivered_at=utcnow())
        )
    key_id, sealed = row
    if key_id is None or sealed is None:
        return ElicitationAnswer.accept()
    text = svc.sealer.unseal(key_id, sealed, context=answer_context(org_id, question_id), what="an answer")
    content: dict[str, Any] = json.loads(text)
    return ElicitationAnswer.accept(content)


async def sweep_questions(svc: OrgService) -> int:
    """Expire the questions no process holds any more, or past their time; end turns left waiting on them."""
    now = utcnow()
    async with svc.db.begin() as session:
        swept = list(
            await session.execute(
                update(Question)
                .where(Question.status == "pending", (Question.held_until < now) | (Question.expires_at < now))
                .values(status="expired", why=STOPPED)
                .returning(Question.id, Question.turn_id)
            )
        )
        turns = {turn for _, turn in swept if turn is not None}
        if turns:
            await session.execute(
                update(TurnRow)
                .where(TurnRow.id.in_(turns), TurnRow.status == "waiting_for_answer")
                .values(
                    status="model_error",
                    error="the service stopped while this turn waited for an answer; send the message again",
                    state=None,
                    finished_at=now,
                )
            )
    return len(swept)


async def until_done_or_asked(
    svc: OrgService, asker: Asker, work: Callable[[], Awaitable[T]], what: str
) -> tuple[bool, T | None]:
    """Run `work` in the background with `asker` for its questions: `(True, its value)` when it ended first, or
    `(False, None)` once a question was parked first (the work goes on; its questions wait in the inbox).

    An error of the work reaches the caller when it ended first; afterwards it is one line in the log.
    """
    done = False
    outcome: list[T] = []
    failure: list[Exception] = []
    settled = asker.settled = anyio.Event()
    if asker.asked.is_set():
        settled.set()

    async def background() -> None:
        nonlocal done
        try:
            outcome.append(await work())
        except Exception as exc:
            failure.append(exc)
            if asker.asked.is_set():
                raise  # no one may be waiting for it any more: the log says it failed
        finally:
            done = True
            settled.set()

    svc.hosts.spawn(background, what)
    await settled.wait()
    if not done:
        return False, None
    if failure:
        raise failure[0]
    return True, outcome[0] if outcome else None
