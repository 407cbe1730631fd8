"""How a URL is shown to people: nothing that may carry a secret, in any encoding (SEC-2)."""

from __future__ import annotations

import pytest

from mcpyard.config import shown_url

SHOWN = [
    ("https://mcp.example.com/v1/mcp", "https://mcp.example.com/v1/mcp"),
    ("https://h.example/mcp/sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234/sse", "https://h.example/mcp/…/sse"),
    ("https://h.example/mcp/sk%2Dproj%2DABCDEFGHIJKLMNOPQRSTUVWX1234/sse", "https://h.example/mcp/…/sse"),
    ("https://actions.example/mcp/a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6/sse", "https://actions.example/mcp/…/sse"),
    ("https://h.example/s/123e4567-e89b-12d3-a456-426614174000/mcp", "https://h.example/s/…/mcp"),
    ("https://h.example/servers/my-awesome-server-v2-production/mcp", None),
    ("https://h.example/api/2025-06-18/mcp", None),
    ("http://[::1]:8080/mcp", None),
    ("https://alice:hunter2@h.example/mcp?api_key=s3cr3t#x", "https://…@h.example/mcp?…"),
    # A password holding `/` or `#` cuts the authority short: what follows could be the rest of it.
    ("https://alice:s3cr/et99@h.example/mcp", "(not a valid URL)"),
    ("https://alice:1234/et99@h.example/mcp", "https://…"),
    ("https://alice:pa#ss@h.example/mcp", "(not a valid URL)"),
]


@pytest.mark.parametrize(("url", "shown"), SHOWN)
def test_sec2_a_url_is_shown_without_what_may_carry_a_secret(url: str, shown: str | None) -> None:
    assert shown_url(url) == (shown or url)
    for secret in ("hunter2", "s3cr3t", "et99", "ABCDEFGHIJKLMNOP", "a1b2c3d4e5f6", "pa#ss", "alice"):
        assert secret not in shown_url(url, marked=False)
