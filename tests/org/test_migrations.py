"""One Alembic history for SQLite and PostgreSQL: up, down and up again, matching the models, refusing a
database it does not know (ORG-9)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import CheckConstraint, inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from mcpyard.errors import ConfigError
from mcpyard.org.store._db import Database, open_database
from mcpyard.org.store._migrate import check_schema, downgrade, head_revision, migrate, schema_revision, upgrade
from mcpyard.org.store._models import Base

pytestmark = [pytest.mark.anyio, pytest.mark.empty_database]
"""Migrations from zero: every test here starts from an empty database."""


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True, "compare_server_default": True})
    return list(compare_metadata(context, Base.metadata))


async def _table_names(db: Database) -> set[str]:
    async with db.engine.connect() as connection:
        return await connection.run_sync(_tables)


async def test_org9_the_migrations_go_up_down_and_up_again_on_both_engines(database_url: str) -> None:
    models = set(Base.metadata.tables)
    async with open_database(database_url) as db:
        assert await schema_revision(db) is None
        assert await upgrade(db) == head_revision()
        assert await _table_names(db) == models | {"alembic_version"}
        assert await downgrade(db) is None
        assert await _table_names(db) <= {"alembic_version"}
        assert await upgrade(db) == head_revision()
        assert await _table_names(db) == models | {"alembic_version"}
        assert await check_schema(db) == head_revision()


async def test_org9_the_models_match_the_migrations_on_both_engines(database: Database) -> None:
    async with database.engine.connect() as connection:
        assert await connection.run_sync(_differences) == []


async def test_org9_migrate_opens_the_database_and_is_idempotent(database_url: str) -> None:
    assert await migrate(database_url) == head_revision()
    assert await migrate(database_url) == head_revision()


async def test_org9_replicas_migrating_at_once_migrate_once(database_url: str) -> None:
    reached: list[str] = []

    async def one() -> None:
        reached.append(await migrate(database_url))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(one)
    assert reached == [head_revision()] * 3


async def test_org9_replicas_opening_a_new_sqlite_file_at_once_all_open_it(tmp_path: Path) -> None:
    """Each sets the new file's journal mode; SQLite may refuse one of them at once ("database is locked") instead
    of letting two wait for each other: that one looks again. Many new files, as the refusal is rare."""
    failed: list[str] = []

    async def open_one(url: str) -> None:
        try:
            async with open_database(url):
                pass
        except ConfigError as exc:
            failed.append(str(exc))

    with anyio.fail_after(60):
        for index in range(100):
            url = f"sqlite+aiosqlite:///{tmp_path}/org-{index}.db"
            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(open_one, url)
    assert failed == []


async def test_org9_a_replica_starting_while_another_holds_the_sqlite_write_lock_opens_and_reads_at_once(
    tmp_path: Path,
) -> None:
    """Opening the database and reading its revision only read: they do not queue behind a writer (a replica
    migrating a large file may hold the lock for minutes), and migrating waits for it instead of failing."""
    url = f"sqlite:///{tmp_path / 'org.db'}"
    await migrate(url)
    writer = sqlite3.connect(tmp_path / "org.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        with anyio.fail_after(5):  # a writer waits ten seconds before it gives up
            async with open_database(url) as db:
                assert await check_schema(db) == head_revision()

        reached: list[str] = []

        async def migrating() -> None:
            reached.append(await migrate(url))

        async with anyio.create_task_group() as group:
            group.start_soon(migrating)
            await anyio.wait_all_tasks_blocked()  # the migration is under way, behind the writer
            writer.execute("COMMIT")
        assert reached == [head_revision()]
    finally:
        writer.close()


async def test_org9_a_database_never_set_up_or_migrated_by_a_newer_mcpyard_is_refused_with_what_to_do(
    database_url: str,
) -> None:
    async with open_database(database_url) as db:
        with pytest.raises(ConfigError, match=r"run `mcpyard org init` first"):
            await check_schema(db)
        await upgrade(db)
        async with db.engine.begin() as connection:
            await connection.execute(text("UPDATE alembic_version SET version_num = 'f00dcafe'"))
        with pytest.raises(ConfigError, match="a newer mcpyard migrated it; upgrade mcpyard"):
            await check_schema(db)
        with pytest.raises(ConfigError, match="a newer mcpyard migrated it"):
            await upgrade(db)


async def test_org9_revision_0005_adds_sessions_and_soft_removal_keeping_members_and_goes_back(
    database_url: str,
) -> None:
    """Up from 0004 with a member in it: the member stays, not removed, and sessions have their table; down again,
    the table and the column go and the member is still there."""
    async with open_database(database_url) as db:
        assert await upgrade(db, "0004") == "0004"
        async with db.engine.begin() as connection:
            await connection.execute(
                text("INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'acme', CURRENT_TIMESTAMP)")
            )
            await connection.execute(
                text(
                    "INSERT INTO members (id, org_id, email, role, password_hash, failed_logins, created_at)"
                    " VALUES ('m1', 'o1', 'a@acme.test', 'owner', 'x', 0, CURRENT_TIMESTAMP)"
                )
            )
        assert await upgrade(db) == head_revision()
        assert "browser_sessions" in await _table_names(db)
        async with db.engine.connect() as connection:
            removed = await connection.scalar(text("SELECT removed_at FROM members WHERE id = 'm1'"))
        assert removed is None
        assert await downgrade(db, "0004") == "0004"
        assert "browser_sessions" not in await _table_names(db)
        async with db.engine.connect() as connection:
            columns = await connection.run_sync(lambda sync: {c["name"] for c in inspect(sync).get_columns("members")})
            assert await connection.scalar(text("SELECT email FROM members WHERE id = 'm1'")) == "a@acme.test"
        assert "removed_at" not in columns


def _checks(connection: Connection) -> dict[str, set[str]]:
    found = inspect(connection)
    return {table: {check["name"] or "" for check in found.get_check_constraints(table)} for table in CHECKED}


CHECKED = ("tools", "policies", "approvals", "turns", "questions", "members")


async def test_org9_revision_0007_checks_the_states_derives_changed_from_the_hashes_and_goes_back(
    database_url: str,
) -> None:
    """Up from 0006: a tool stored `changed` is `active` (its hashes say it changed) and keeps its policy (SQLite
    copies the table: the rows that refer to it stay), the database refuses a state,
    a policy, a status or a role that is none of the allowed ones, and the models name the same checks; down
    again, the tool is `changed` once more and the checks are gone."""
    async with open_database(database_url) as db:
        assert await upgrade(db, "0006") == "0006"
        async with db.engine.begin() as connection:
            for insert in (
                "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'acme', CURRENT_TIMESTAMP)",
                "INSERT INTO servers (id, org_id, name, url, state, created_at)"
                " VALUES ('s1', 'o1', 'notes', 'http://127.0.0.1:9/mcp', 'connected', CURRENT_TIMESTAMP)",
                "INSERT INTO tools (id, org_id, server_id, name, definition, definition_hash, state, first_seen_at,"
                " updated_at) VALUES ('t1', 'o1', 's1', 'add', '{}', 'live', 'changed', CURRENT_TIMESTAMP,"
                " CURRENT_TIMESTAMP)",
                "INSERT INTO policies (id, org_id, tool_id, policy, reviewed_hash, reviewed_definition, set_at)"
                " VALUES ('p1', 'o1', 't1', 'run_freely', 'reviewed', '{}', CURRENT_TIMESTAMP)",
            ):
                await connection.execute(text(insert))
        assert await upgrade(db) == head_revision()
        async with db.engine.connect() as connection:
            assert await connection.scalar(text("SELECT state FROM tools WHERE id = 't1'")) == "active"
            assert (
                await connection.scalar(text("SELECT reviewed_hash FROM policies WHERE tool_id = 't1'")) == "reviewed"
            )
            assert await connection.run_sync(_checks) == {
                table: {f"ck_{table}_{column}"}
                for table, column in (
                    ("tools", "state"),
                    ("policies", "policy"),
                    ("approvals", "status"),
                    ("turns", "status"),
                    ("questions", "status"),
                    ("members", "role"),
                )
            }
        models = {
            table: {
                str(check.name)
                for check in Base.metadata.tables[table].constraints
                if isinstance(check, CheckConstraint)
            }
            for table in CHECKED
        }
        async with db.engine.connect() as connection:
            assert models == await connection.run_sync(_checks)
        for refused in (
            "UPDATE tools SET state = 'changed' WHERE id = 't1'",
            "UPDATE policies SET policy = 'sometimes' WHERE id = 'p1'",
            "INSERT INTO members (id, org_id, email, role, password_hash, failed_logins, created_at)"
            " VALUES ('m1', 'o1', 'a@acme.test', 'root', 'x', 0, CURRENT_TIMESTAMP)",
        ):
            with pytest.raises(IntegrityError):
                async with db.engine.begin() as connection:
                    await connection.execute(text(refused))
        assert await downgrade(db, "0006") == "0006"
        async with db.engine.begin() as connection:
            assert await connection.scalar(text("SELECT state FROM tools WHERE id = 't1'")) == "changed"
            assert await connection.scalar(text("SELECT count(*) FROM policies")) == 1
            assert await connection.run_sync(_checks) == {table: set() for table in CHECKED}
            await connection.execute(text("UPDATE policies SET policy = 'sometimes' WHERE id = 'p1'"))
