"""One Alembic history for SQLite and PostgreSQL: up, down and up again, matching the models, refusing a
database it does not know (ORG-9)."""

from __future__ import annotations

import anyio
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from mcpyard.errors import ConfigError
from mcpyard.org._db import Database, open_database
from mcpyard.org._migrate import check_schema, downgrade, head_revision, migrate, schema_revision, upgrade
from mcpyard.org._models import Base

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
