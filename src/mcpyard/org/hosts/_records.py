"""Call records of an organization's calls, written behind the calls and in groups.

`OrgRecorder` turns a host's `CallRecord` into a row; the tags a call carries (`call_tags`) name
its id and its turn, and its conversation (`conversation_key`) names its member.

A call's answer does not wait for its record: the record joins a queue, and one writer task inserts
what gathered over `GATHER_SECS` in one transaction (a commit costs far more than a row: at 100
calls a second, one commit in 0.05 s instead of five).
Whoever reads records in this process calls `flush()` first and so sees every call answered before
it; when the service stops, the writer writes everything queued before it ends. The queue is
bounded: past `MAX_QUEUED` rows a call waits for the writer (the database is slower than the calls),
so memory stays bounded too. A group the database refuses is tried again, then reported on the
service's log by count and error type (never its values) and dropped, so one bad row cannot stop
every later one.

Without `running()` (a script, a test), `write` commits the record before it returns.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org.store import CallRow, new_id
from mcpyard.pipeline import CallRecord

__all__ = ["MAX_GROUP", "MAX_QUEUED", "OrgRecorder", "RecordWriter", "call_tags", "conversation_key", "member_of"]

MAX_GROUP = 500
"""Rows in one transaction at most."""
MAX_QUEUED = 5000
"""Rows waiting at most; past this, a call waits until the writer has caught up."""
GATHER_SECS = 0.05
"""How long the writer lets records gather before it writes them (unless someone flushes)."""
RETRY_DELAYS_SECS = (0.1, 0.5)
_log = logging.getLogger("mcpyard.org")


class RecordWriter:
    """Inserts call records (a dict of column values each) behind the calls, in groups."""

    def __init__(self, db: async_sessionmaker[AsyncSession]) -> None:
        self._db = db
        self._queued: list[dict[str, Any]] = []
        self._running = False
        self._wake = anyio.Event()
        self._now = anyio.Event()
        """Set by `flush` and at the end: write what is queued without waiting for more."""
        self._written = anyio.Event()
        """Set (and replaced) each time the writer finishes a group."""
        self._sent = 0
        self._done = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[RecordWriter]:
        """Write behind while the block runs; at its end, everything queued is written before it returns."""
        async with anyio.create_task_group() as tg:
            self._running = True
            tg.start_soon(self._write_behind)
            try:
                yield self
            finally:
                self._running = False
                self._now.set()
                self._wake.set()

    async def write(self, row: dict[str, Any]) -> None:
        """Queue one record (or, when not running, commit it now)."""
        if not self._running:
            await self._write_now(row)
            return
        self._queued.append(row)
        self._sent += 1
        self._wake.set()
        if len(self._queued) > MAX_QUEUED:
            await self.flush()

    async def flush(self) -> None:
        """Return once every record queued before this call is written (or given up on, and logged)."""
        goal = self._sent
        while self._done < goal and self._running:
            self._now.set()
            await self._written.wait()

    async def _write_behind(self) -> None:
        while True:
            await self._wake.wait()
            with anyio.move_on_after(GATHER_SECS):
                await self._now.wait()
            self._wake, self._now = anyio.Event(), anyio.Event()
            if not self._running:
                self._now.set()  # stopping: nothing more waits
            # What gathered, in groups; rows queued while they are written wait for the next round (or are
            # written now, when stopping or when someone is flushing).
            pending, self._queued = self._queued, []
            for start in range(0, len(pending), MAX_GROUP):
                group = pending[start : start + MAX_GROUP]
                with anyio.CancelScope(shield=True):  # a group is written whole, even while the service stops
                    await self._insert(group)
                self._done += len(group)
                written, self._written = self._written, anyio.Event()
                written.set()
            if self._queued:
                self._wake.set()
            elif not self._running:
                return

    async def _insert(self, group: list[dict[str, Any]]) -> None:
        for delay in (*RETRY_DELAYS_SECS, None):
            try:
                async with self._db.begin() as session:
                    await session.execute(insert(CallRow), group)
                return
            except Exception as exc:
                if delay is None:
                    # Rows hold arguments and summaries: the log names only how many and what went wrong.
                    _log.error(
                        "%d call records could not be written (%s); they are lost", len(group), type(exc).__name__
                    )
                    return
                await anyio.sleep(delay)

    async def _write_now(self, row: dict[str, Any]) -> None:
        with anyio.CancelScope(shield=True):  # a record is written whole, even for a call given up on
            async with self._db.begin() as session:
                await session.execute(insert(CallRow), [row])


def call_tags(*, call_id: str | None = None, turn_id: str | None = None) -> dict[str, str]:
    """What a call of the organization carries to its record (`Host.call(tags=...)`): the id its record takes, the
    id a member or an approval already knows it by; the turn whose trace it belongs to."""
    tags = {"call_id": call_id, "turn_id": turn_id}
    return {key: value for key, value in tags.items() if value is not None}


def conversation_key(member_id: str, conversation: str | None) -> str:
    """The host-level conversation of a member's call: result handles never cross members (CALL-4, ORG-7)."""
    return f"{member_id}:{conversation or 'default'}"


def member_of(conversation: str) -> str | None:
    """The member a host-level conversation belongs to."""
    member, sep, _ = conversation.partition(":")
    return member if sep else None


class OrgRecorder:
    """A `CallRecorder` that keeps each call of one organization as a row (the trace and the inbox read them)."""

    def __init__(self, writer: RecordWriter, org_id: str, ids: dict[str, str]) -> None:
        self._writer = writer
        self._org_id = org_id
        self._ids = ids
        """Server name (the host's id for it) → its id in the database."""

    async def record(self, record: CallRecord) -> None:
        await self._writer.write(
            {
                "id": record.tags.get("call_id") or new_id(),
                "org_id": self._org_id,
                "member_id": member_of(record.conversation),
                "conversation": record.conversation,
                "server_id": self._ids.get(record.server) if record.server is not None else None,
                "tool": record.tool,
                "arguments": dict(record.arguments),
                "decision": record.decision,
                "why": record.why,
                "status": record.status,
                "error_code": record.error_code,
                "duration_ms": record.duration_ms,
                "result_bytes": record.result_bytes,
                "summary": record.summary,
                "approval_id": None,
                "turn_id": record.tags.get("turn_id"),
                "client": record.tags.get("client"),
                "started_at": record.at,
            }
        )
