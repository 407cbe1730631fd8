"""Migrating the organization service's database with its Alembic history, configured in code (ORG-9)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from mcpyard.errors import ConfigError
from mcpyard.org.store._db import BUSY_TIMEOUT_MS, READS_ONLY, Database, database_error, open_database

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import URL, Connection

__all__ = ["MIGRATIONS", "check_schema", "downgrade", "head_revision", "migrate", "schema_revision", "upgrade"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"

# Replicas that start together on one PostgreSQL migrate one at a time (ORG-9): any number, held
# for the migrating transaction only. SQLite's write lock does the same for a file.
_MIGRATION_LOCK = 0x6D637079_6F726701
MIGRATION_WAIT_MS = 300_000
"""How long a replica waits for another one's migration of the same SQLite file (PostgreSQL's lock waits as long):
a migration copies tables and may take minutes on a large database, while a request's writer waits ten seconds."""


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    """The newest revision this mcpyard ships."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships its history
        raise RuntimeError("mcpyard's migrations are missing")
    return head


def _run(connection: Connection, action: str, revision: str) -> None:
    from alembic import command

    config = _config()
    config.attributes["connection"] = connection
    if action == "upgrade":
        command.upgrade(config, revision)
    else:
        command.downgrade(config, revision)


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _sqlite_migrating(connection: Connection, migrating: bool) -> None:
    """Foreign keys off and a long wait for the write lock while migrating; as a request needs them after."""
    driver = connection.connection.dbapi_connection  # the driver's own: no transaction begins for it
    assert driver is not None  # a connection just checked out of the pool
    cursor = driver.cursor()
    try:
        cursor.execute(f"PRAGMA foreign_keys={'OFF' if migrating else 'ON'}")
        cursor.execute(f"PRAGMA busy_timeout={MIGRATION_WAIT_MS if migrating else BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


async def schema_revision(db: Database) -> str | None:
    """The revision the database is at; None when it has never been migrated.

    Raises:
        ConfigError: the database cannot be read.
    """
    try:
        async with db.engine.connect() as connection:
            await connection.execution_options(**{READS_ONLY: True})
            return await connection.run_sync(_current)
    except SQLAlchemyError as exc:
        raise database_error(exc, db.url, doing="read") from None


async def _apply(db: Database, action: str, revision: str) -> str | None:
    known = _known_revisions()
    try:
        async with db.engine.connect() as connection:
            if db.is_sqlite:
                # SQLite alters a table by copying it and dropping the old one, which with foreign keys on
                # would delete the rows that refer to it (ON DELETE CASCADE): they are off while it migrates
                # (outside a transaction, where SQLite heeds the pragma), and checked before it commits.
                # Another replica migrating the same file holds the write lock for as long as it takes.
                await connection.run_sync(_sqlite_migrating, True)
            try:
                async with connection.begin():
                    if not db.is_sqlite:
                        await connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
                    current = await connection.run_sync(_current)
                    if current is not None and current not in known:
                        raise _newer(db, current)
                    await connection.run_sync(_run, action, revision)
                    if db.is_sqlite and (
                        broken := (await connection.execute(text("PRAGMA foreign_key_check"))).first()
                    ):
                        where = db.url.render_as_string(hide_password=True)
                        raise ConfigError(
                            f"migrating the database {where} would leave rows of {broken[0]} referring to nothing:"
                            " it was not migrated; restore it from a backup or report this"
                        )
                    return await connection.run_sync(_current)
            finally:
                if db.is_sqlite:
                    await connection.run_sync(_sqlite_migrating, False)
    except SQLAlchemyError as exc:
        raise database_error(exc, db.url, doing="migrate") from None


async def upgrade(db: Database, revision: str = "head") -> str | None:
    """Upgrade an open database to `revision` (the newest by default), in one transaction; the revision reached.

    Raises:
        ConfigError: the database cannot be migrated, or a newer mcpyard migrated it.
    """
    return await _apply(db, "upgrade", revision)


async def downgrade(db: Database, revision: str = "base") -> str | None:
    """Downgrade an open database to `revision` (`base`: no tables left), in one transaction; the revision reached.

    Raises:
        ConfigError: the database cannot be migrated, or a newer mcpyard migrated it.
    """
    return await _apply(db, "downgrade", revision)


async def migrate(url: str | URL) -> str:
    """Open the database at `url` and upgrade it to the newest revision; that revision.

    Raises:
        ConfigError: the URL is unusable, the database unreachable, or a newer mcpyard migrated it.
    """
    async with open_database(url) as db:
        reached = await upgrade(db)
    return reached or head_revision()


async def check_schema(db: Database) -> str:
    """The database's revision, when it is the one this mcpyard needs.

    Raises:
        ConfigError: it was never set up, is older (run `mcpyard org migrate`) or newer than this mcpyard.
    """
    current = await schema_revision(db)
    head = head_revision()
    if current == head:
        return current
    where = db.url.render_as_string(hide_password=True)
    if current is None:
        raise ConfigError(f"the database {where} holds no organization yet: run `mcpyard org init` first")
    if current in _known_revisions():
        raise ConfigError(
            f"the database {where} is at revision {current}, older than {head}: run `mcpyard org migrate`"
        )
    raise _newer(db, current)


def _known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}


def _newer(db: Database, current: str) -> ConfigError:
    where = db.url.render_as_string(hide_password=True)
    return ConfigError(
        f"the database {where} is at revision {current}, which this mcpyard does not know: "
        "a newer mcpyard migrated it; upgrade mcpyard"
    )
