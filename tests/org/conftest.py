"""Storage fixtures: a real PostgreSQL cluster for the session, and `database_url` on SQLite and PostgreSQL (ORG-9).

Every storage test takes `database_url` and so runs twice, each time on a database of its own:
a new SQLite file, or a new database created on the session's cluster. PostgreSQL is never
skipped: without its binaries the tests fail and say to run scripts/check.

The database comes migrated to the newest revision: each engine's migrations run once a session,
into a template that every test's database is copied from (SQLite: the file; PostgreSQL:
`CREATE DATABASE … TEMPLATE`). A test about migrating, or about what a command does to a database
never set up, asks for an empty one with `@pytest.mark.empty_database`.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest

from mcpyard.org.store._db import Database, open_database
from mcpyard.org.store._migrate import upgrade
from tests.conftest import Home
from tests.org._flows import TOKEN
from tests.org._postgres import NotAvailable, TemporaryCluster
from tests.org._served import serving
from tests.servers import org_tools


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


TEMPLATE = "mcpyard_migrated"
"""The PostgreSQL database every test's database is copied from (migrated once a session, then never opened)."""


async def _migrate(url: str) -> None:
    async with open_database(url) as db:
        await upgrade(db)


def _migrated(url: str) -> None:
    """Migrate `url` on an event loop of its own, in a thread of its own.

    A session fixture may first be made while a package holds the tests' event loop between its
    tests (tests/org/web keeps one for its browser), and `anyio.run` refuses to run on that thread.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(anyio.run, _migrate, url).result()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the newest revision, made once a session."""
    path = tmp_path_factory.mktemp("template") / "org.db"
    _migrated(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_template(postgres_cluster: TemporaryCluster) -> str:
    """The name of a database on the session's cluster migrated to the newest revision, made once a session."""
    import psycopg

    with psycopg.connect(postgres_cluster.dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{TEMPLATE}"')
    _migrated(postgres_cluster.url(TEMPLATE))
    return TEMPLATE


def _fresh_postgres_database(cluster: TemporaryCluster, name: str, template: str | None = None) -> Iterator[str]:
    import psycopg

    with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    try:
        yield cluster.url(name)
    finally:
        with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_counter = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to a database of its own, on SQLite and then on PostgreSQL: migrated, or empty for a test marked
    `empty_database`."""
    empty = request.node.get_closest_marker("empty_database") is not None
    if request.param == "sqlite":
        path = tmp_path / "org.db"
        if not empty:
            shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    cluster: TemporaryCluster = request.getfixturevalue("postgres_cluster")
    template = None if empty else request.getfixturevalue("postgres_template")
    yield from _fresh_postgres_database(cluster, f"test_{next(_counter)}", template)


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """An open database, migrated to the newest revision (`database_url`'s, unless the test wants it empty)."""
    async with open_database(database_url) as db:
        await upgrade(db)
        yield db


@pytest.fixture
def definitions(home: Home) -> Path:
    return home.root / "definitions.json"


@pytest.fixture
async def upstream(definitions: Path) -> AsyncIterator[str]:
    """The fixture server `org_tools` over streamable HTTP, asking for `TOKEN`, its definitions read from a file.

    Served by uvicorn in this process, on a real 127.0.0.1 port: these tests are about the service, which
    reaches it over real HTTP, not about the server's process (tests/connect/ and tests/interop/ are).
    """
    app = org_tools.RequireToken(org_tools.build_server(definitions).streamable_http_app(host="127.0.0.1"), TOKEN)
    async with serving(app, stop_seconds=0) as origin:
        yield f"{origin}/mcp"
