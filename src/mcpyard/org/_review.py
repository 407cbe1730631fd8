"""Assistants that need a person's review: a deleted server marks every selection that used it (ORG-8)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from mcpyard.org._events import raise_alert
from mcpyard.org._models import Assistant, Publication, Tool

__all__ = ["PUBLICATION_ALERT", "mark_for_review"]

PUBLICATION_ALERT = "publication"


async def mark_for_review(session: AsyncSession, org_id: str, server_id: str, server_name: str) -> list[str]:
    """Mark each assistant whose selection or publication uses the server as needing review; their ids."""
    tool_ids = set(await session.scalars(select(Tool.id).where(Tool.server_id == server_id)))
    marked: list[str] = []
    for assistant in await session.scalars(select(Assistant).where(Assistant.org_id == org_id)):
        published = await session.scalar(
            select(Publication)
            .where(Publication.assistant_id == assistant.id)
            .order_by(Publication.published_at.desc())
            .limit(1)
        )
        uses = bool(tool_ids & set(assistant.tool_ids)) or (
            published is not None and any(item.get("server_id") == server_id for item in published.tools)
        )
        if not uses:
            continue
        why = f"the server {server_name!r} was deleted: review the selection and publish again"
        assistant.needs_review, assistant.review_reason = True, why
        await raise_alert(session, org_id, PUBLICATION_ALERT, f"{assistant.name}: {why}", assistant_id=assistant.id)
        marked.append(assistant.id)
    return marked
