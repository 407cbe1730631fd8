"""What every service function of the organization service works with: the database, hosts, sealing, the guard."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mcpyard.org._hosts import OrgHosts
from mcpyard.org._models import Credential

__all__ = ["CredentialSealer", "OrgService", "UrlCheck"]

UrlCheck = Callable[[str], Awaitable[str]]
"""The URL as it will be stored (normalized), or a `ServiceError` `url_refused` when the outbound guard would not
connect to it (NET-1)."""


class CredentialSealer(Protocol):
    """Seals a credential's secret into its row, and opens it again to connect (ORG-2)."""

    def seal_credential(self, credential: Credential, secret: str) -> None: ...

    def unseal_credential(self, credential: Credential) -> str: ...


@dataclass(frozen=True, slots=True)
class OrgService:
    """The service's parts, built once at start and passed to every service function."""

    db: async_sessionmaker[AsyncSession]
    hosts: OrgHosts
    sealer: CredentialSealer
    check_url: UrlCheck
