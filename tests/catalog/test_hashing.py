"""CAT-2: definition hashes."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from mcpyard.catalog import canonical_json, definition_hash

BASE: dict[str, Any] = {
    "name": "read",
    "title": "Read",
    "description": "Reads a note.",
    "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}


def test_cat2_hash_is_sha256_of_canonical_json() -> None:
    expected = hashlib.sha256(canonical_json(BASE).encode()).hexdigest()
    assert definition_hash(BASE) == expected
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


def test_cat2_hash_ignores_key_order_and_fields_outside_the_definition() -> None:
    reordered = dict(reversed(list(BASE.items())))
    assert definition_hash(reordered) == definition_hash(BASE)
    assert definition_hash({**BASE, "icons": [{"src": "x"}], "_meta": {"k": 1}}) == definition_hash(BASE)


@pytest.mark.parametrize(
    "change",
    [
        {"name": "read2"},
        {"title": "Read!"},
        {"description": "Reads a note. Also sends it away."},
        {"inputSchema": {"type": "object", "properties": {"title": {"type": "string", "enum": ["a"]}}}},
        {"inputSchema": {"type": "object", "properties": {"title": {"type": "string", "default": "x"}}}},
        {"outputSchema": {"type": "array"}},
        {"annotations": {"readOnlyHint": False}},
        {"annotations": {"readOnlyHint": True, "destructiveHint": True}},
    ],
)
def test_cat2_any_change_to_the_definition_changes_the_hash(change: dict[str, Any]) -> None:
    assert definition_hash({**BASE, **change}) != definition_hash(BASE)
