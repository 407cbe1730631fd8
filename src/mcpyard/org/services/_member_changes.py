"""Changing a member's role and removing a member (offboarding), with the rules of who may do which (ORG-1).

Only owners grant or take the owner role; an admin changes and removes admins and members; anyone
may leave (remove themselves); the last owner can neither be demoted, nor removed, nor leave. The
rules are pure functions (`role_change_refusal`, `removal_refusal`); the changes apply them inside
one transaction that holds the organization's row (PostgreSQL: `FOR UPDATE`; SQLite's writers take
turns already), so two owners demoting each other at once cannot leave it without an owner.

Removal is soft: the member's row stays (`removed_at`), so audit rows, turns and approvals still
show who it was. In that same transaction its browser sessions end, its API tokens are revoked, the
approvals it started that still wait are declined (as due to its removal), the turns parked on them
end, and the questions its calls wait on are cancelled (their servers hear `cancel`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.errors import Conflict, Forbidden, Invalid, NotSignedIn, ServiceError
from mcpyard.org._caller import ADMINS, Caller, not_found
from mcpyard.org.services._auth import end_member_sessions
from mcpyard.org.services._call_results import result_json
from mcpyard.org.services._events import audit
from mcpyard.org.store import (
    ApiToken,
    Approval,
    Conversation,
    Member,
    Organization,
    Question,
    TurnRow,
    announce,
    is_role,
    note_change,
    utcnow,
)
from mcpyard.pipeline import CallResult

__all__ = ["Removal", "change_role", "removal_refusal", "remove_member", "role_change_refusal"]

Sessions = async_sessionmaker[AsyncSession]
REMOVED = "member_removed"
"""The refusal code of an approval declined because the member who started its call was removed."""


def _owner_only() -> ServiceError:
    return Forbidden("forbidden", "only an owner grants or takes the owner role")


def _last_owner(doing: str) -> ServiceError:
    return Conflict("last_owner", f"the organization's last owner cannot {doing}: make another member owner first")


def role_change_refusal(actor_role: str, target_role: str, new_role: str, *, owners: int) -> ServiceError | None:
    """Why a member of role `actor_role` may not give `new_role` to a member of `target_role` (None: they may);
    `owners` is how many owners the organization has now."""
    if actor_role not in ADMINS:
        return Forbidden("forbidden", f"changing a role needs the role owner or admin; you are {actor_role}")
    if actor_role != "owner" and "owner" in (target_role, new_role):
        return _owner_only()
    if target_role == "owner" and new_role != "owner" and owners <= 1:
        return _last_owner("be demoted")
    return None


def removal_refusal(actor_role: str, target_role: str, *, itself: bool, owners: int) -> ServiceError | None:
    """Why a member of role `actor_role` may not remove a member of `target_role` (`itself`: leave); None: they
    may."""
    if not itself and actor_role not in ADMINS:
        return Forbidden("forbidden", f"removing another member needs the role owner or admin; you are {actor_role}")
    if not itself and target_role == "owner" and actor_role != "owner":
        return Forbidden("forbidden", "only an owner removes an owner")
    if target_role == "owner" and owners <= 1:
        return _last_owner("leave" if itself else "be removed")
    return None


@dataclass(frozen=True, slots=True)
class Removal:
    """What removing a member ended, for the caller to tell the calls waiting in this process."""

    member_id: str
    email: str
    questions: list[str]
    """The questions cancelled: a call waiting on one here is woken at once (other processes read it shortly)."""


async def _actor_and_target(session: AsyncSession, caller: Caller, member_id: str) -> tuple[Member, Member, int]:
    """The caller's and the target's rows as they are now, and the organization's owner count, under its lock."""
    await session.execute(select(Organization.id).where(Organization.id == caller.org_id).with_for_update())
    live = (Member.org_id == caller.org_id, Member.removed_at.is_(None))
    actor = await session.scalar(select(Member).where(Member.id == caller.member_id, *live))
    if actor is None:
        raise NotSignedIn("unauthorized", "your membership ended")
    target = await session.scalar(select(Member).where(Member.id == member_id, *live))
    if target is None:
        raise not_found("member")
    owners = await session.scalar(select(func.count(Member.id)).where(Member.role == "owner", *live))
    return actor, target, int(owners or 0)


async def change_role(db: Sessions, caller: Caller, member_id: str, role: object) -> Member:
    """Give the member `member_id` the role `role`; the member as it now is (an unchanged role writes nothing).

    Raises:
        ServiceError: 422 for a role that is not one, 404 for no such member here, 403 or 409 (`last_owner`) for
            a change the rules refuse.
    """
    if not is_role(role):
        raise Invalid("invalid_role", "`role` must be owner, admin or member")
    async with db.begin() as session:
        actor, target, owners = await _actor_and_target(session, caller, member_id)
        refusal = role_change_refusal(actor.role, target.role, role, owners=owners)
        if refusal is not None:
            raise refusal
        if target.role != role:
            audit(
                session,
                caller.org_id,
                caller.email,
                "member.role_changed",
                target.id,
                old={"email": target.email, "role": target.role},
                new={"email": target.email, "role": role},
            )
            target.role = role
    return target


async def remove_member(db: Sessions, caller: Caller, member_id: str) -> Removal:
    """Remove the member `member_id` (the caller itself: leave), ending at once all it could still do or wait on.

    Raises:
        ServiceError: 404 for no such member here, 403 or 409 (`last_owner`) for a removal the rules refuse.
    """
    now = utcnow()
    async with db.begin() as session:
        actor, target, owners = await _actor_and_target(session, caller, member_id)
        refusal = removal_refusal(actor.role, target.role, itself=actor.id == target.id, owners=owners)
        if refusal is not None:
            raise refusal
        target.removed_at = now
        await end_member_sessions(session, target.id, now=now)
        revoked = await session.execute(
            update(ApiToken)
            .where(ApiToken.member_id == target.id, ApiToken.revoked_at.is_(None))
            .values(revoked_at=now)
            .returning(ApiToken.id)
        )
        tokens = len(list(revoked))
        refused = CallResult.refusal(REMOVED, f"{target.email} was removed from the organization; nothing was sent")
        declined = list(
            await session.execute(
                update(Approval)
                .where(Approval.member_id == target.id, Approval.status == "pending")
                .values(status="declined", decided_by=caller.member_id, decided_at=now)
                .values(result=result_json(refused, None))
                .returning(Approval.id, Approval.turn_id)
            )
        )
        parked = {turn for _, turn in declined if turn is not None}
        cancelled = list(
            await session.execute(
                update(Question)
                .where(Question.member_id == target.id, Question.status == "pending")
                .values(status="cancelled", why="the member whose call asked was removed", answered_at=now)
                .returning(Question.id)
            )
        )
        if parked:
            owned = select(Conversation.id).where(Conversation.member_id == target.id)
            await session.execute(
                update(TurnRow)
                .where(
                    TurnRow.id.in_(parked),
                    TurnRow.status == "waiting_for_approval",
                    TurnRow.conversation_id.in_(owned),
                )
                .values(
                    status="model_error",
                    error=f"{target.email} was removed from the organization while this turn waited",
                    state=None,
                    finished_at=now,
                )
            )
        audit(
            session,
            caller.org_id,
            caller.email,
            "member.removed",
            target.id,
            old={"email": target.email, "role": target.role},
            new={
                "tokens_revoked": tokens,
                "approvals_declined": [approval for approval, _ in declined],
                "questions_cancelled": [question for (question,) in cancelled],
            },
        )
        await note_change(session, caller.org_id)
        for (question,) in cancelled:  # a call waiting on one, on any replica, hears that it ended
            await announce(session, caller.org_id, "question", question)
    return Removal(target.id, target.email, [question for (question,) in cancelled])
