"""Long results of an organization's calls, kept by handle in the database so any replica reads them (ORG-9, CALL-4).

A handle reads only in the conversation that made it (a member's conversation never reaches
another member's). The organization's results are bounded in count and in bytes: keeping one
more lets the least recently read ones go first. A window is cut by the database, so reading a
slice never brings the whole text over.
"""

from __future__ import annotations

import re
import secrets

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org.store import StoredResult, utcnow
from mcpyard.pipeline import Window

__all__ = ["ORG_RESULTS", "ORG_RESULT_BYTES", "OrgResults"]

ORG_RESULT_BYTES = 256 * 1024 * 1024
"""The UTF-8 bytes one organization's stored results may take together."""
ORG_RESULTS = 10_000
"""The most results one organization keeps."""
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""What neither engine stores in text: NUL and lone surrogates (each becomes U+FFFD, so offsets stay the same)."""


class OrgResults:
    """The `Results` of one organization's host: in the database, least recently read out first."""

    def __init__(
        self,
        db: async_sessionmaker[AsyncSession],
        org_id: str,
        *,
        max_bytes: int = ORG_RESULT_BYTES,
        max_results: int = ORG_RESULTS,
    ) -> None:
        self._db, self._org_id = db, org_id
        self._max_bytes, self._max_results = max_bytes, max_results

    async def keep(self, conversation: str, text: str, *, server: str) -> tuple[str, int]:
        text = _UNSTORABLE.sub("\ufffd", text)
        encoded = text.encode("utf-8", "surrogatepass")
        if len(encoded) > self._max_bytes:  # larger than the whole store: what fits, cut between characters
            text = encoded[: self._max_bytes].decode("utf-8", "ignore")
            encoded = text.encode("utf-8", "surrogatepass")
        handle = "r_" + secrets.token_hex(16)
        now = utcnow()
        async with self._db.begin() as session:
            session.add(
                StoredResult(
                    handle=handle,
                    org_id=self._org_id,
                    conversation=conversation,
                    server=server,
                    text=text,
                    size=len(encoded),
                    created_at=now,
                    last_used_at=now,
                )
            )
            await session.flush()
            await self._make_room(session, handle)
        return handle, len(text)

    async def _make_room(self, session: AsyncSession, kept: str) -> None:
        """Let the least recently read results go until the organization's are within both bounds."""
        mine = StoredResult.org_id == self._org_id
        count, total = (
            await session.execute(select(func.count(), func.coalesce(func.sum(StoredResult.size), 0)).where(mine))
        ).one()
        if count <= self._max_results and total <= self._max_bytes:
            return
        oldest = await session.execute(
            select(StoredResult.handle, StoredResult.size)
            .where(mine, StoredResult.handle != kept)
            .order_by(StoredResult.last_used_at, StoredResult.handle)
        )
        going: list[str] = []
        for handle, size in oldest:
            if count <= self._max_results and total <= self._max_bytes:
                break
            going.append(handle)
            count, total = count - 1, total - size
        if going:
            await session.execute(delete(StoredResult).where(mine, StoredResult.handle.in_(going)))

    async def window(self, conversation: str, handle: str, offset: int, length: int) -> tuple[str, Window] | None:
        mine = (
            StoredResult.handle == handle,
            StoredResult.org_id == self._org_id,
            StoredResult.conversation == conversation,
        )
        async with self._db.begin() as session:
            total = await session.scalar(select(func.length(StoredResult.text)).where(*mine))
            if total is None:
                return None
            start = max(0, min(offset, total))
            found = (
                await session.execute(
                    select(StoredResult.server, func.substr(StoredResult.text, start + 1, max(0, length))).where(*mine)
                )
            ).one()
            await session.execute(update(StoredResult).where(*mine).values(last_used_at=utcnow()))
        server, text = found
        return server, Window(text or "", start, int(total))
