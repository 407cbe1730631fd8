"""The in-memory token store: what the SDK keeps through `ServerTokens` stays in memory, per server, until forgotten
(AUTH-3; the organization service writes no token file)."""

from __future__ import annotations

import pytest
from mcp.shared.auth import OAuthToken

from mcpyard.auth import MemoryAuthStore, ServerTokens

pytestmark = pytest.mark.anyio


async def test_auth3_a_memory_store_keeps_tokens_per_server_hands_out_copies_and_forgets() -> None:
    store = MemoryAuthStore(clock=lambda: 1000.0)
    tokens = ServerTokens(store, "a")
    assert await tokens.get_tokens() is None
    await tokens.set_tokens(OAuthToken(access_token="at-memory-1", expires_in=60))
    stored = await tokens.get_tokens()
    assert stored is not None
    assert stored.access_token == "at-memory-1"
    assert await tokens.expires_at() == 1060.0
    assert await ServerTokens(store, "b").get_tokens() is None, "each server has its own"
    store.read()["a"]["tokens"]["access_token"] = "changed outside"
    assert (await tokens.get_tokens() or stored).access_token == "at-memory-1", "a read hands out a copy"
    assert store.forget("a") is True
    assert await tokens.get_tokens() is None
    assert store.forget("a") is False
