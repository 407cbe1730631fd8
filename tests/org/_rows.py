"""Rows the storage tests need: an organization with a registered server and its sealed token."""

from __future__ import annotations

from mcpyard.org.keys._seal import Sealer
from mcpyard.org.store._db import Database
from mcpyard.org.store._models import Credential, Organization, RegisteredServer, new_id


async def server_with_token(db: Database, sealer: Sealer, token: str, *, org: str | None = None) -> Credential:
    """A new organization (or `org`) with one server whose bearer token is sealed; the credential row."""
    async with db.sessions.begin() as session:
        if org is None:
            organization = Organization(id=new_id(), name=f"org-{new_id()}")
            session.add(organization)
            org = organization.id
        server = RegisteredServer(id=new_id(), org_id=org, name=f"s{new_id()[:8]}", url="https://mcp.example/")
        session.add(server)
        await session.flush()
        credential = Credential(org_id=org, server_id=server.id, kind="bearer")
        sealer.seal_credential(credential, token)
        session.add(credential)
    return credential


async def credentials(db: Database) -> list[Credential]:
    """Every credential row, as stored now."""
    from sqlalchemy import select

    async with db.sessions.begin() as session:
        return list(await session.scalars(select(Credential).order_by(Credential.id)))


async def stored_texts(db: Database) -> list[tuple[str, str]]:
    """Every value of every row of every table the database holds (reflected, so no table is left out), as
    `(table.column, text)`: strings as they are, JSON values as each string in them (keys too), bytes as Latin-1."""
    from sqlalchemy import MetaData, select

    def texts(value: object) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, bytes | bytearray | memoryview):
            return [bytes(value).decode("latin-1")]
        if isinstance(value, dict):
            return [text for key, item in value.items() for text in (*texts(key), *texts(item))]
        if isinstance(value, list | tuple):
            return [text for item in value for text in texts(item)]
        return [] if value is None else [str(value)]

    metadata = MetaData()
    found: list[tuple[str, str]] = []
    async with db.engine.connect() as connection:
        await connection.run_sync(metadata.reflect)
        for table in metadata.sorted_tables:
            for row in (await connection.execute(select(table))).mappings():
                found += [(f"{table.name}.{column}", text) for column, value in row.items() for text in texts(value)]
    return found
