"""Selections that use a server: what deleting it would affect, and the assistants it marks for review (ORG-8)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org._words import quoted, text_of
from mcpyard.org.services._events import raise_alert
from mcpyard.org.services._views import SelectionView
from mcpyard.org.store import Assistant, Publication, Teammate, TeammateServer, Tool

__all__ = ["PUBLICATION_ALERT", "assistants_using", "mark_for_review", "selections_using"]

PUBLICATION_ALERT = "publication"


async def assistants_using(session: AsyncSession, org_id: str, server_id: str) -> list[Assistant]:
    """The assistants whose selection, or latest publication, holds one of the server's tools."""
    tool_ids = set(await session.scalars(select(Tool.id).where(Tool.server_id == server_id)))
    using: list[Assistant] = []
    for assistant in await session.scalars(select(Assistant).where(Assistant.org_id == org_id)):
        published = await session.scalar(
            select(Publication)
            .where(Publication.assistant_id == assistant.id)
            .order_by(Publication.published_at.desc())
            .limit(1)
        )
        if bool(tool_ids & set(assistant.tool_ids)) or (
            published is not None and any(item.get("server_id") == server_id for item in published.tools)
        ):
            using.append(assistant)
    return using


async def selections_using(session: AsyncSession, org_id: str, server_id: str) -> list[SelectionView]:
    """Every assistant using the server and every teammate allowed it, as `{kind, id, name}`, by kind then name."""
    teammates = await session.scalars(
        select(Teammate)
        .join(TeammateServer, TeammateServer.teammate_id == Teammate.id)
        .where(Teammate.org_id == org_id, TeammateServer.server_id == server_id, Teammate.deleted_at.is_(None))
    )
    found: list[SelectionView] = [
        *(
            SelectionView(kind="assistant", id=item.id, name=item.name)
            for item in await assistants_using(session, org_id, server_id)
        ),
        *(SelectionView(kind="teammate", id=item.id, name=item.name) for item in teammates),
    ]
    # Sorted here: the engines' collations order text differently, and the pages should not.
    return sorted(found, key=lambda item: (item["kind"], item["name"], item["id"]))


async def mark_for_review(session: AsyncSession, org_id: str, server_id: str, server_name: str) -> list[str]:
    """Mark each assistant whose selection or publication uses the server as needing review; their ids."""
    marked: list[str] = []
    for assistant in await assistants_using(session, org_id, server_id):
        why = f"the server {quoted(server_name)} was deleted: review the selection and publish again"
        assistant.needs_review, assistant.review_reason = True, why
        message = f"{text_of(assistant.name)}: {why}"
        await raise_alert(session, org_id, PUBLICATION_ALERT, message, assistant_id=assistant.id)
        marked.append(assistant.id)
    return marked
