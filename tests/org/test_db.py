"""The organization service's database: its URL, its engines, and one-line errors that hide passwords (ORG-9,
API-5, ERR-1)."""

from __future__ import annotations

import os
import socket
import sqlite3
import stat
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from sqlalchemy import func, select, text

from mcpyard.errors import ConfigError
from mcpyard.org.store._db import default_database_url, open_database, parse_database_url, resolve_database_url
from mcpyard.org.store._models import Member, Organization, new_id
from tests.org._postgres import TemporaryCluster

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("option", "environ", "expected"),
    [
        ("postgresql://a@h/db", {"MCPYARD_ORG_DATABASE": "sqlite:///x.db"}, "postgresql://a@h/db"),
        (None, {"MCPYARD_ORG_DATABASE": "sqlite:///x.db", "MCPYARD_DATA_HOME": "/d"}, "sqlite:///x.db"),
        (None, {"MCPYARD_ORG_DATABASE": "  ", "MCPYARD_DATA_HOME": "/d"}, "sqlite:////d/org.db"),
        (None, {"MCPYARD_DATA_HOME": "/d"}, "sqlite:////d/org.db"),
        ("", {"MCPYARD_DATA_HOME": "/d"}, "sqlite:////d/org.db"),
    ],
)
def test_api5_the_database_is_the_option_else_the_environment_else_sqlite_in_the_data_folder(
    option: str | None, environ: dict[str, str], expected: str
) -> None:
    assert resolve_database_url(option, environ) == expected
    assert default_database_url(Path("/d")) == "sqlite:////d/org.db"


@pytest.mark.parametrize(
    ("written", "driver"),
    [
        ("sqlite:///org.db", "sqlite+aiosqlite"),
        ("sqlite+aiosqlite:////abs/org.db", "sqlite+aiosqlite"),
        ("postgresql://u:p@db.example:5432/org", "postgresql+psycopg"),
        ("postgres://u@db.example/org", "postgresql+psycopg"),
        ("postgresql+psycopg://u@db.example/org", "postgresql+psycopg"),
    ],
)
def test_org9_sqlite_and_postgresql_urls_run_through_the_async_drivers(written: str, driver: str) -> None:
    assert parse_database_url(written).drivername == driver


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("mysql://root:hunter2-secret@db/org", "sqlite:///PATH or postgresql://"),
        ("postgresql://root:hunter2-secret@db", "names no database"),
        ("postgresql+asyncpg://root:hunter2-secret@db/org", "psycopg"),
        ("sqlite://root:hunter2-secret@host/org.db", "three slashes"),
        ("not a url at all", "cannot be read"),
        ("postgresql://root:hunter2-secret@db:notaport/org", "cannot be read"),
        ("oracle://db/org?password=hunter2-secret", "cannot use the database URL"),
    ],
)
def test_err1_an_unusable_database_url_is_one_line_that_hides_its_password(written: str, says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_database_url(written)
    message = str(raised.value)
    assert says in message
    assert "hunter2-secret" not in message
    assert "\n" not in message


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_err1_an_unreachable_postgresql_is_reported_in_one_line_without_its_password() -> None:
    url = f"postgresql://mcpyard:hunter2-secret@127.0.0.1:{_closed_port()}/org"
    with anyio.fail_after(30), pytest.raises(ConfigError) as raised:
        async with open_database(url):
            pass
    message = str(raised.value)
    assert message.startswith("cannot open the database postgresql+psycopg://mcpyard:***@127.0.0.1")
    assert "hunter2-secret" not in message
    assert "\n" not in message


async def test_err1_a_wrong_postgresql_password_is_named_but_never_shown(postgres_cluster: TemporaryCluster) -> None:
    url = postgres_cluster.url().replace(postgres_cluster.password, "wrong-but-secret-password")
    with anyio.fail_after(30), pytest.raises(ConfigError) as raised:
        async with open_database(url):
            pass
    message = str(raised.value)
    assert "password authentication failed" in message
    assert "wrong-but-secret-password" not in message
    assert postgres_cluster.password not in message


async def test_err1_a_sqlite_file_in_a_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        async with open_database(f"sqlite:///{tmp_path / 'missing' / 'org.db'}"):
            pass


async def test_org9_sqlite_runs_with_wal_foreign_keys_and_a_busy_timeout_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "org.db"
    async with open_database(f"sqlite:///{path}") as db, db.engine.connect() as connection:
        assert (await connection.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
        assert (await connection.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
        assert (await connection.exec_driver_sql("PRAGMA busy_timeout")).scalar() == 10_000
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, "it holds password and token hashes"


async def test_org9_times_come_back_aware_in_utc_on_both_engines(database_url: str) -> None:
    from mcpyard.org.store._migrate import upgrade

    written = datetime(2030, 1, 2, 3, 4, 5, 600_000, tzinfo=UTC)
    async with open_database(database_url) as db:
        await upgrade(db)
        async with db.sessions.begin() as session:
            session.add(Organization(id="o1", name="acme", created_at=written.astimezone(timezone(timedelta(hours=2)))))
        async with db.sessions.begin() as session:
            [stored] = (await session.scalars(select(Organization))).all()
            assert stored.created_at == written
            assert stored.created_at.tzinfo == UTC
            assert stored.created_at.utcoffset() == timedelta(0)


async def test_org9_deleting_an_organization_deletes_what_belongs_to_it_on_both_engines(database_url: str) -> None:
    from mcpyard.org.store._migrate import upgrade

    async with open_database(database_url) as db:
        await upgrade(db)
        async with db.sessions.begin() as session:
            session.add(Organization(id="o1", name="acme"))
            await session.flush()
            session.add(Member(org_id="o1", email="a@example.com", role="owner", password_hash="x"))
        async with db.sessions.begin() as session:
            await session.execute(text("DELETE FROM organizations WHERE id = 'o1'"))
        async with db.sessions.begin() as session:
            assert await session.scalar(select(func.count()).select_from(Member)) == 0


async def test_org9_concurrent_sqlite_writers_wait_for_each_other_instead_of_failing(tmp_path: Path) -> None:
    from mcpyard.org.store._migrate import upgrade

    async with open_database(f"sqlite:///{tmp_path / 'org.db'}") as db:
        await upgrade(db)
        async with db.sessions.begin() as session:
            session.add(Organization(id="o1", name="n0"))

        async def bump() -> None:
            # Read, then write: in a deferred transaction a second writer fails with "database is locked".
            async with db.sessions.begin() as session:
                org = await session.get(Organization, "o1")
                assert org is not None
                await anyio.lowlevel.checkpoint()  # lets the other writers start meanwhile
                org.name = f"n{int(org.name[1:]) + 1}"

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for _ in range(8):
                    group.start_soon(bump)
        async with db.sessions.begin() as session:
            org = await session.get(Organization, "o1")
            assert org is not None
            assert org.name == "n8", "no update was lost"


def test_err1_a_sqlite_writer_cancelled_while_it_waits_for_the_lock_lets_its_event_loop_end(tmp_path: Path) -> None:
    """A deadline, a client going away or a shutdown cancels a transaction waiting for another writer; its
    connection is closed once that wait ends, and the event loop then ends too instead of waiting forever."""
    url = f"sqlite:///{tmp_path / 'org.db'}"
    writer = sqlite3.connect(tmp_path / "org.db", isolation_level=None, check_same_thread=False)
    outcome: list[str] = []

    async def waiting_writer() -> None:
        async with open_database(url) as db:
            writer.execute("BEGIN IMMEDIATE")
            with anyio.move_on_after(0.3) as waited:
                async with db.engine.begin() as connection:
                    await connection.execute(text("SELECT 1"))
            writer.execute("COMMIT")
            outcome.append("cancelled" if waited.cancelled_caught else "not cancelled")

    try:
        loop = threading.Thread(target=anyio.run, args=(waiting_writer,), daemon=True)
        loop.start()
        loop.join(timeout=30)  # the wait it was cancelled in ends within the busy timeout (10 s)
        assert not loop.is_alive(), "the event loop never ended"
        assert outcome == ["cancelled"]
    finally:
        writer.close()


def test_api5_no_id_starts_with_a_dash_so_a_command_line_never_reads_one_as_an_option() -> None:
    """One draw in 64 of URL-safe base64 starts with `-`; ten thousand draws would meet one about 156 times."""
    drawn = {new_id() for _ in range(10_000)}
    assert len(drawn) == 10_000
    assert not [value for value in drawn if value.startswith("-")]
    assert all(len(value) == 22 for value in drawn)
