"""API tokens are random (256 bits), recognisable, and kept only as SHA-256 hashes (ORG-1)."""

from __future__ import annotations

import hashlib

import pytest

from mcpyard.org.keys._tokens import looks_like_token, new_token, token_hash


def test_org1_a_token_is_myd_and_256_random_bits_and_never_repeats() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    for token in tokens:
        assert token.startswith("myd_")
        assert len(token) == 4 + 43
        assert looks_like_token(token)


def test_org1_the_database_keeps_the_tokens_sha256() -> None:
    token = new_token()
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    assert len(token_hash(token)) == 64


@pytest.mark.parametrize(
    "text",
    ["", "myd_", "myd_" + "a" * 42, "myd_" + "a" * 44, "xyz_" + "a" * 43, "myd_" + "a" * 42 + "!", " myd_" + "a" * 43],
)
def test_org1_anything_shaped_otherwise_is_not_a_token(text: str) -> None:
    assert not looks_like_token(text)
