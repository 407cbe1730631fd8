"""Which URLs are one origin, the unit a server's credential is bound to (ORG-2, THREATS: organization service)."""

from __future__ import annotations

import pytest

from mcpyard.org.keys._origin import origin_of, same_origin


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("HTTPS://Example.COM:443/x", "https://example.com/y"),
        ("https://example.com", "https://example.com:443/mcp?a=1#f"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/other"),
        ("http://[::1]:80/", "http://[::1]/mcp"),
        ("https://bücher.example/mcp", "https://xn--bcher-kva.example/"),
    ],
)
def test_org2_the_same_origin_spelled_otherwise_is_the_same_origin(first: str, second: str) -> None:
    assert same_origin(first, second)
    assert same_origin(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://example.com/mcp", "http://example.com/mcp"),
        ("https://example.com/mcp", "https://example.com:8443/mcp"),
        ("https://example.com/mcp", "https://api.example.com/mcp"),
        ("https://example.com/mcp", "https://example.com.evil.test/mcp"),
        ("https://example.com/mcp", "https://example.com./mcp"),
        ("https://bucher.example/", "https://bücher.example/"),
        ("http://127.0.0.1:8000/mcp", "http://127.1:8000/mcp"),
        ("http://127.0.0.1:8000/mcp", "http://localhost:8000/mcp"),
        ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/mcp"),
        ("http://[::1]/", "http://[::ffff:127.0.0.1]/"),
        ("https://example.com/", "not a url"),
        ("not a url", "not a url"),
        ("ftp://example.com/", "ftp://example.com/"),
    ],
)
def test_org2_another_scheme_host_or_port_or_a_host_spelled_otherwise_is_another_origin(
    first: str, second: str
) -> None:
    assert not same_origin(first, second)
    assert not same_origin(second, first)


def test_org2_an_origin_is_scheme_host_and_port_normalised() -> None:
    assert origin_of("HTTPS://Example.COM/x") == "https://example.com:443"
    assert origin_of("http://[::1]:8080/") == "http://[::1]:8080"
    assert origin_of("mailto:someone@example.com") is None
