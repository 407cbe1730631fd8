"""Storage fixtures: a real PostgreSQL cluster for the session, and `database_url` on SQLite and PostgreSQL (ORG-9).

Every storage test takes `database_url` and so runs twice, each time on a database of its own:
a new SQLite file, or a new database created on the session's cluster. PostgreSQL is never
skipped: without its binaries the tests fail and say to run scripts/check.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcpyard.org._db import Database, open_database
from mcpyard.org._migrate import upgrade
from tests.conftest import Home
from tests.org._flows import TOKEN
from tests.org._postgres import NotAvailable, TemporaryCluster
from tests.servers.http_runner import serve_http


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[TemporaryCluster]:
    """One throwaway cluster for the whole session, stopped and removed at its end."""
    try:
        cluster = TemporaryCluster.start()
    except NotAvailable as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()
        cluster.remove()


def _fresh_postgres_database(cluster: TemporaryCluster, name: str) -> Iterator[str]:
    import psycopg

    with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield cluster.url(name)
    finally:
        with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_counter = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database of its own, on SQLite and then on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'org.db'}"
        return
    cluster: TemporaryCluster = request.getfixturevalue("postgres_cluster")
    yield from _fresh_postgres_database(cluster, f"test_{next(_counter)}")


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """An open database, migrated to the newest revision."""
    async with open_database(database_url) as db:
        await upgrade(db)
        yield db


@pytest.fixture
def definitions(home: Home) -> Path:
    return home.root / "definitions.json"


@pytest.fixture
async def upstream(definitions: Path) -> AsyncIterator[str]:
    """The fixture server `org_tools` over streamable HTTP, asking for `TOKEN`, its definitions read from a file."""
    args = ["--token", TOKEN, "--definitions", str(definitions)]
    async with serve_http("org_tools", "streamable-http", args) as url:
        yield url
