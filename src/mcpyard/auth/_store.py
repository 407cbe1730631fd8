"""Registrations and tokens per server in `mcp-auth.json`, written atomically at 0600 (AUTH-3)."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

import anyio
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcpyard._atomic import read_private, write_atomic
from mcpyard.errors import ConfigError

__all__ = ["AUTH_FILE", "AuthStore", "Clock", "MemoryAuthStore", "ServerTokens"]

MAX_TOKENS_BYTES = 4 * 1024 * 1024
"""The most the sign-in file may hold: more than mcpyard ever writes there."""

AUTH_FILE = "mcp-auth.json"

Clock: TypeAlias = Callable[[], float]
"""Seconds since the epoch: `time.time` in production; tests pass one they set."""


class AuthStore:
    """The whole file: one object per server id. One writer at a time within a process.

    `clock` stamps when stored access tokens expire and judges whether they have (AUTH-3).
    """

    def __init__(self, path: Path, *, clock: Clock = time.time) -> None:
        self.path = path
        self.clock = clock
        self._lock = anyio.Lock()

    def read(self) -> dict[str, dict[str, Any]]:
        """Everything stored; refused unless the file is private (`read_private`).

        Raises:
            ConfigError: the file cannot be trusted or parsed.
        """
        raw = read_private(self.path, max_bytes=MAX_TOKENS_BYTES, what=f"the sign-in file {self.path}")
        if raw is None:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            raise ConfigError(f"{self.path} is not valid JSON; delete it and sign in again") from None
        return data if isinstance(data, dict) else {}

    async def update(self, server: str, **fields: Any) -> None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self.read)
            entry = dict(data.get(server) or {})
            entry.update(fields)
            data[server] = entry
            payload = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
            await anyio.to_thread.run_sync(lambda: write_atomic(self.path, payload, mode=0o600))

    def forget(self, server: str) -> bool:
        """Remove a server's registration and tokens (`mcpyard logout`)."""
        data = self.read()
        if data.pop(server, None) is None:
            return False
        write_atomic(self.path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode(), mode=0o600)
        return True


class MemoryAuthStore(AuthStore):
    """Registrations and tokens kept in memory only, for a program that writes no token file (the organization
    service: its access tokens die with the process, and the next start asks for new ones)."""

    def __init__(self, *, clock: Clock = time.time) -> None:
        super().__init__(Path("<memory>"), clock=clock)
        self._data: dict[str, dict[str, Any]] = {}

    def read(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self._data)

    async def update(self, server: str, **fields: Any) -> None:
        async with self._lock:
            entry = dict(self._data.get(server) or {})
            entry.update(copy.deepcopy(fields))
            self._data[server] = entry

    def forget(self, server: str) -> bool:
        return self._data.pop(server, None) is not None


class ServerTokens:
    """The SDK's `TokenStorage` for one server, backed by the shared file."""

    def __init__(self, store: AuthStore, server: str) -> None:
        self._store = store
        self._server = server

    async def _entry(self) -> dict[str, Any]:
        data = await anyio.to_thread.run_sync(self._store.read)
        entry = data.get(self._server)
        return entry if isinstance(entry, dict) else {}

    async def get_tokens(self) -> OAuthToken | None:
        tokens = (await self._entry()).get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = self._store.clock() + tokens.expires_in if tokens.expires_in else None
        await self._store.update(self._server, tokens=tokens.model_dump(mode="json"), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info = (await self._entry()).get("client_info")
        return OAuthClientInformationFull.model_validate(info) if isinstance(info, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._store.update(self._server, client_info=client_info.model_dump(mode="json", exclude_none=True))

    async def expires_at(self) -> float | None:
        value = (await self._entry()).get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    async def seconds_left(self) -> float | None:
        """How long the stored access token lives on by the store's clock (negative: expired), if known."""
        expires_at = await self.expires_at()
        return None if expires_at is None else expires_at - self._store.clock()

    async def redirect_port(self) -> int | None:
        value = (await self._entry()).get("redirect_port")
        return int(value) if isinstance(value, int) else None

    async def set_redirect_port(self, port: int) -> None:
        await self._store.update(self._server, redirect_port=port)
