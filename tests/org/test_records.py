"""Call records are written in groups and each call waits for its own, on SQLite and PostgreSQL (ORG-7, ORG-9)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sqlalchemy import func, select

from mcpyard.org.hosts._records import MAX_GROUP, RecordWriter
from mcpyard.org.services._people import create_organization
from mcpyard.org.store._db import Database
from mcpyard.org.store._models import CallRow, new_id, utcnow

pytestmark = pytest.mark.anyio


async def _org(db: Database) -> str:
    async with db.sessions.begin() as session:
        org, _ = await create_organization(
            session, name="acme", owner_email="o@acme.test", owner_password="pw pw pw pw"
        )
        return org.id


def _row(org_id: str, n: int, **values: Any) -> dict[str, Any]:
    return {
        "id": new_id(),
        "org_id": org_id,
        "member_id": None,
        "conversation": "m:default",
        "server_id": None,
        "tool": f"tools__t{n}",
        "arguments": {"n": n},
        "decision": "run",
        "why": "",
        "status": "ok",
        "error_code": None,
        "duration_ms": 1.0,
        "result_bytes": 0,
        "summary": "",
        "approval_id": None,
        "turn_id": None,
        "started_at": utcnow(),
        **values,
    }


async def _count(db: Database) -> int:
    async with db.sessions.begin() as session:
        return int(await session.scalar(select(func.count()).select_from(CallRow)) or 0)


async def test_org7_records_written_behind_are_all_kept_by_flush_and_when_the_writer_stops(database: Database) -> None:
    org_id = await _org(database)
    writer = RecordWriter(database.sessions)
    calls = MAX_GROUP + 100  # more than one group holds
    async with writer.running():
        async with anyio.create_task_group() as tg:
            for n in range(calls):
                tg.start_soon(writer.write, _row(org_id, n))
        await writer.flush()
        assert await _count(database) == calls, "flush returns once every record queued before it is kept"
        for n in range(calls, calls + 50):
            await writer.write(_row(org_id, n))
    assert await _count(database) == calls + 50, "a writer that stops writes everything queued first"


async def test_org7_without_the_writer_running_a_record_is_kept_before_write_returns(database: Database) -> None:
    org_id = await _org(database)
    writer = RecordWriter(database.sessions)
    await writer.write(_row(org_id, 0))
    assert await _count(database) == 1


async def test_org7_a_group_the_database_refuses_is_logged_without_its_values_and_later_ones_are_kept(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    org_id = await _org(database)
    writer = RecordWriter(database.sessions)
    secret_looking = "value-that-must-not-reach-the-log"
    async with writer.running():
        await writer.write(_row(org_id, 1, status=None, summary=secret_looking))  # a column that must hold a value
        await writer.flush()
        await writer.write(_row(org_id, 2))
        await writer.flush()
    async with database.sessions.begin() as session:
        tools = set(await session.scalars(select(CallRow.tool)))
    assert tools == {"tools__t2"}
    [logged] = [record for record in caplog.records if record.name == "mcpyard.org"]
    assert "1 call records could not be written" in logged.getMessage()
    assert secret_looking not in caplog.text
