"""The organization service's database: which URL, the async engine for SQLite or PostgreSQL, sessions (ORG-9).

A URL is given as `--database URL`, else `MCPYARD_ORG_DATABASE`, else it is the SQLite file
`org.db` in the data folder (API-5). `sqlite:///PATH` and `postgresql://…` are accepted as
written and run through the async drivers (aiosqlite, psycopg 3). Every problem with a URL or
a database becomes one `ConfigError` line that never shows the URL's password.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from sqlalchemy import Executable, Row, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool

from mcpyard._paths import data_home
from mcpyard.errors import ConfigError

__all__ = [
    "DATABASE_ENV",
    "DATABASE_FILE",
    "Database",
    "database_error",
    "default_database_url",
    "describe_url",
    "open_database",
    "parse_database_url",
    "read_one",
    "reading",
    "resolve_database_url",
    "transaction",
]

DATABASE_ENV = "MCPYARD_ORG_DATABASE"
DATABASE_FILE = "org.db"

BUSY_TIMEOUT_MS = 10_000
"""How long a SQLite writer waits for another one before it gives up (never forever: ERR-1)."""
WAL_RETRY_SECS = 0.02
"""How soon a connection opening a new SQLite file looks again at its mode when another was setting it."""
CONNECT_TIMEOUT_S = 10
"""How long connecting to PostgreSQL may take before it is reported unreachable."""
POOL_SIZE = 10
"""PostgreSQL connections a replica keeps open for its requests (a request takes one for each of its short
transactions): enough for its concurrent requests, so none pays for a new connection."""
POOL_OVERFLOW = 20
"""Connections a replica opens beyond those at a peak (closed again after): three replicas stay within
PostgreSQL's default of 100 connections."""

READS_ONLY = "mcpyard_reads_only"
"""An execution option for a connection that only reads: on SQLite its transactions do not wait for the write lock."""
ONE_STATEMENT = "mcpyard_one_statement"
"""An execution option for a connection that runs one statement that only reads: on SQLite no transaction is begun
(one statement reads one snapshot by itself; `read_one`)."""

_SQLITE = {"sqlite", "sqlite+aiosqlite", "sqlite+pysqlite"}
_POSTGRESQL = {"postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg_async", "postgresql+asyncpg"}
_FORMS = "use sqlite:///PATH or postgresql://USER:PASSWORD@HOST:PORT/DATABASE"


def default_database_url(data_folder: Path) -> str:
    """The zero set-up database: the SQLite file `org.db` in the data folder."""
    return f"sqlite:///{data_folder / DATABASE_FILE}"


def resolve_database_url(option: str | None, environ: Mapping[str, str]) -> str:
    """The URL to use: the `--database` option, else `MCPYARD_ORG_DATABASE`, else SQLite in the data folder (API-5)."""
    if option:
        return option
    from_env = environ.get(DATABASE_ENV, "").strip()
    if from_env:
        return from_env
    return default_database_url(data_home(environ))


def parse_database_url(text: str | URL) -> URL:
    """The URL, with the async driver mcpyard runs it through.

    Raises:
        ConfigError: it is not a SQLite or PostgreSQL URL mcpyard can use; the message hides any password.
    """
    if isinstance(text, URL):
        url = text
    else:
        try:
            url = make_url(text.strip())
        except (ArgumentError, ValueError):
            raise ConfigError(f"the database URL {_scrub_text(text)!r} cannot be read: {_FORMS}") from None
    name = url.drivername
    if name in _SQLITE:
        if url.host or url.port or url.username:
            raise ConfigError(f"the SQLite URL {describe_url(url)} names a host; use sqlite:///PATH (three slashes)")
        return url.set(drivername="sqlite+aiosqlite")
    if name in _POSTGRESQL:
        if name == "postgresql+asyncpg":
            raise ConfigError("mcpyard connects to PostgreSQL with psycopg 3: write the URL as postgresql://…")
        if not url.database:
            raise ConfigError(f"the PostgreSQL URL {describe_url(url)} names no database; add /DATABASE at its end")
        return url.set(drivername="postgresql+psycopg")
    raise ConfigError(f"mcpyard cannot use the database URL {describe_url(url)}: {_FORMS}")


def describe_url(url: URL | str) -> str:
    """The URL as it may be shown: any password (in its user part or its query) is `***`."""
    if isinstance(url, str):
        try:
            url = make_url(url)
        except (ArgumentError, ValueError):
            return _scrub_text(str(url))
    if "password" in url.query:
        url = url.update_query_dict({"password": "***"})
    return url.render_as_string(hide_password=True)


def _scrub_text(text: str) -> str:
    """A URL we could not parse, with whatever stands between `://` and the last `@` hidden."""
    head, sep, rest = text.partition("://")
    if not sep or "@" not in rest:
        return text
    return f"{head}://***@{rest.rpartition('@')[2]}"


def database_error(exc: BaseException, url: URL, *, doing: str = "open") -> ConfigError:
    """One readable line for a database that cannot be used; never its password, never a traceback (ERR-1)."""
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    detail = lines[0] if lines else type(original).__name__
    passwords = [str(url.password)] if url.password else []
    passwords += [str(v) for v in ([url.query["password"]] if "password" in url.query else []) if v]
    for password in passwords:
        for form in {password, quote(password, safe=""), quote_plus(password)}:
            detail = detail.replace(form, "***")
    where = describe_url(url)
    if url.get_backend_name() == "sqlite":
        hint = "check that the folder exists and is writable"
    else:
        hint = "check that PostgreSQL runs there and the user, password and database are right"
    return ConfigError(f"cannot {doing} the database {where}: {detail[:300]} ({hint})")


@dataclass(frozen=True, slots=True)
class Database:
    """An open database: its URL (with the async driver), its engine and a session factory.

    Sessions never begin a transaction on their own: use `async with db.sessions.begin() as session`.
    """

    url: URL
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    def __repr__(self) -> str:
        return f"Database({describe_url(self.url)})"


def create_engine(url: URL) -> AsyncEngine:
    """An async engine for a parsed URL: SQLite with WAL, foreign keys and a busy timeout; PostgreSQL via psycopg."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    options: dict[str, Any] = {
        "pool_pre_ping": True,
        "pool_size": POOL_SIZE,
        "max_overflow": POOL_OVERFLOW,
        "connect_args": {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "mcpyard-org"},
    }
    return create_async_engine(url, **options)


def _sqlite_engine(url: URL) -> AsyncEngine:
    memory = url.database in (None, "", ":memory:")
    options: dict[str, Any] = {"connect_args": {"timeout": BUSY_TIMEOUT_MS / 1000}}
    if memory:
        options["poolclass"] = StaticPool
    engine = create_async_engine(url, **options)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy, not the sqlite3 module, says when a transaction begins (below): DDL is
        # then transactional too, so a migration is applied whole or not at all.
        dbapi_connection.isolation_level = None
        _stop_once(dbapi_connection.driver_connection)
        cursor = dbapi_connection.cursor()
        try:
            if not memory:
                _use_wal(cursor)
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        # IMMEDIATE: a transaction takes the write lock when it starts, waiting up to the busy
        # timeout. A deferred one that reads and then writes would fail at once with "database
        # is locked" if another writer came in between. One marked as only reading waits for no one.
        options = connection.get_execution_options()
        if options.get(ONE_STATEMENT, False):
            return
        connection.exec_driver_sql("BEGIN" if options.get(READS_ONLY, False) else "BEGIN IMMEDIATE")

    return engine


def _use_wal(cursor: Any) -> None:
    """Put the database file in WAL mode, unless it is already.

    Asked first: setting the mode takes the write lock even when it is WAL already, and another
    replica may hold that lock for as long as its migration takes. Replicas opening a new file at
    once all set it: SQLite may then tell one "database is locked" without waiting (its way out of
    two connections each waiting for the other), so that one looks again until the mode is set,
    for as long as the busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        cursor.execute("PRAGMA journal_mode")
        if str(cursor.fetchone()[0]).lower() == "wal":
            return
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(WAL_RETRY_SECS)  # in the connection's own thread, while it opens


def _stop_once(connection: Any) -> None:
    """Make an aiosqlite connection's `stop()` answer every caller with its first stop.

    Its thread ends at the first stop, so a second one waits forever; and a connection whose
    statement is cancelled (a deadline, a client going away, shutting down) is stopped twice: once
    by SQLAlchemy terminating it, once by the graceful close SQLAlchemy shields and starts beside
    it. Without this, that close never ends and stopping the event loop hangs.
    """
    stop = connection.stop
    stopped: list[Any] = []

    def once() -> Any:
        if not stopped:
            stopped.append(stop())
        return stopped[0]

    connection.stop = once


def _prepare_sqlite_file(url: URL) -> None:
    """Create a missing database file readable by its owner only (it holds password and token hashes)."""
    if url.database in (None, "", ":memory:") or str(url.database).startswith("file:"):
        return
    path = Path(str(url.database)).expanduser()
    if not path.parent.is_dir():
        raise ConfigError(
            f"cannot open the database {describe_url(url)}: the folder {path.parent} does not exist (create it first)"
        )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise ConfigError(
            f"cannot create the database {describe_url(url)}: {exc.strerror or exc} (check that the folder is writable)"
        ) from None
    os.close(fd)


@asynccontextmanager
async def open_database(url: str | URL, *, check: bool = True) -> AsyncIterator[Database]:
    """Open the database at `url`; closed (every pooled connection) on exit.

    Args:
        url: a SQLite or PostgreSQL URL, as the user wrote it or already parsed.
        check: connect once before yielding, so an unreachable database is reported here.

    Raises:
        ConfigError: the URL is unusable or the database cannot be reached; the password is never shown.
    """
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "sqlite":
        _prepare_sqlite_file(parsed)
    engine = create_engine(parsed)
    try:
        if check:
            try:
                async with engine.connect() as connection:
                    await connection.execution_options(**{READS_ONLY: True})
                    await connection.exec_driver_sql("SELECT 1")
            except (SQLAlchemyError, OSError) as exc:
                raise database_error(exc, parsed) from None
        # No autobegin: every transaction is begun explicitly (`db.sessions.begin()`), so none is
        # left open by a read and committed, or lost, by accident (STYLE 15).
        sessions = async_sessionmaker(engine, expire_on_commit=False, autobegin=False)
        yield Database(parsed, engine, sessions)
    finally:
        await engine.dispose()


@asynccontextmanager
async def reading(sessions: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A transaction that only reads: on SQLite it neither waits for the write lock nor holds it, so a page
    polling for changes or a readiness probe never queues behind a writer (or makes one queue)."""
    async with sessions.begin() as session:
        await session.connection(execution_options={READS_ONLY: True})
        yield session


async def read_one(
    sessions: async_sessionmaker[AsyncSession], statement: Executable, params: Mapping[str, Any]
) -> Row[Any] | None:
    """The first row of one statement that only reads, run on a connection of its own outside any transaction.

    For the reads every request makes (who sends it): through SQLite's driver each step is a round trip to the
    connection's thread, and a transaction's `BEGIN` and `COMMIT` would double the cost of the statement.
    """
    engine: AsyncEngine = sessions.kw["bind"]
    async with engine.connect() as connection:
        reading_once = await connection.execution_options(**{READS_ONLY: True, ONE_STATEMENT: True})
        return (await reading_once.execute(statement, dict(params))).first()


@asynccontextmanager
async def transaction(session: AsyncSession) -> AsyncIterator[AsyncSession]:
    """The caller's transaction when one is open, else one of its own: committed on success, rolled back on error.

    Service functions run their work in it, so each is one transaction alone, and several
    called inside `async with session.begin()` are one together.
    """
    if session.in_transaction():
        yield session
        return
    async with session.begin():
        yield session
