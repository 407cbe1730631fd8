"""An organization as its host runs it, read from the database in one transaction: servers, policies, alerts and
what each server listed (ORG-9).

What is read carries the organization's change counter as it was when the reading began, so
a change that commits meanwhile is read again at the next call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.catalog import definition_hash
from mcpyard.config import HostSettings, LoadedConfig, ToolSearchSettings
from mcpyard.org.hosts._policies import Reviewed
from mcpyard.org.hosts._server_spec import SOURCE, bound_credential, server_spec, unsealed_oauth
from mcpyard.org.store import Alert, Credential, Policy, RegisteredServer, Tool, revision_of

__all__ = ["CredentialOpener", "Loaded", "load_organization"]


class CredentialOpener(Protocol):
    """Unseals a registered server's stored credential (only to connect; never kept beyond the host's spec)."""

    def unseal_credential(self, credential: Credential) -> str: ...


@dataclass(frozen=True, slots=True)
class Loaded:
    """One organization as the database holds it, at one change count."""

    revision: int
    config: LoadedConfig
    """Every server not deleted, as the host runs it (credentials unsealed in memory)."""
    reviewed: Mapping[tuple[str, str], Reviewed]
    """(server name, tool) → its policy and hashes."""
    ids: Mapping[str, str]
    """Server name (the host's id for it) → its id in the database."""
    refreshed: Mapping[str, datetime | None]
    """Server name → when its tools were last listed into the database (by any replica)."""
    alerted: frozenset[str]
    """Names of servers with an open connection alert."""
    listings: Mapping[str, tuple[Mapping[str, Any], ...]]
    """Server name → the tools it listed, each as the server sent it: what a replica that has not started the
    server offers (a tool kept redacted, which no longer hashes to what the server sent, is left out)."""


async def load_organization(db: async_sessionmaker[AsyncSession], credentials: CredentialOpener, org_id: str) -> Loaded:
    """The organization as the database holds it now."""
    async with db.begin() as session:
        revision = await revision_of(session, org_id)  # first: a change committing meanwhile is read again later
        servers = (
            await session.scalars(
                select(RegisteredServer)
                .where(RegisteredServer.org_id == org_id, RegisteredServer.deleted_at.is_(None))
                .order_by(RegisteredServer.created_at)
            )
        ).all()
        credentials_of = {
            c.server_id: c for c in (await session.scalars(select(Credential).where(Credential.org_id == org_id)))
        }
        rows = (
            await session.execute(
                select(
                    RegisteredServer.name,
                    Tool.name,
                    Tool.state,
                    Tool.definition_hash,
                    Policy.policy,
                    Policy.reviewed_hash,
                    Tool.definition,
                )
                .join(Policy, Policy.tool_id == Tool.id)
                .join(RegisteredServer, RegisteredServer.id == Tool.server_id)
                .where(Tool.org_id == org_id, RegisteredServer.deleted_at.is_(None))
            )
        ).all()
        alerted = await session.scalars(
            select(Alert.server_id).where(
                Alert.org_id == org_id, Alert.kind == "connection", Alert.cleared_at.is_(None)
            )
        )
        alerted_ids = {server for server in alerted if server is not None}
    specs = []
    for position, server in enumerate(servers):
        credential = bound_credential(server, credentials_of.get(server.id))
        secret = credentials.unseal_credential(credential) if credential is not None else None
        if credential is not None and secret is not None and credential.kind == "client_credentials":
            specs.append(server_spec(server, position, None, unsealed_oauth(secret)))
        else:
            specs.append(server_spec(server, position, secret))
    # A turn searches only what its teammate may use (`agent.SearchedSelection`), never the whole organization.
    settings = HostSettings(mode="ask", tool_search=ToolSearchSettings(mode="off"))
    config = LoadedConfig(servers=tuple(specs), settings=settings, warnings=(), sources=(("flag", SOURCE),))
    reviewed = {
        (server, tool): Reviewed(policy, reviewed_hash, stored_hash, listed=state != "removed")
        for server, tool, state, stored_hash, policy, reviewed_hash, _ in rows
    }
    listings: dict[str, list[Mapping[str, Any]]] = {server.name: [] for server in servers}
    for server, _, state, stored_hash, _, _, definition in sorted(rows, key=lambda row: (row[0], row[1])):
        if state != "removed" and definition_hash(definition) == stored_hash:
            listings[server].append(definition)
    return Loaded(
        revision=revision,
        config=config,
        reviewed=reviewed,
        ids={server.name: server.id for server in servers},
        refreshed={server.name: server.refreshed_at for server in servers},
        alerted=frozenset(server.name for server in servers if server.id in alerted_ids),
        listings={server: tuple(tools) for server, tools in listings.items() if tools},
    )
