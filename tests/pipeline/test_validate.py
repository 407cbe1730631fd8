"""Arguments checked against the input schema; the quick check never takes what the full validator refuses (CALL-1).

Every other check has a hard budget, bounded regular expressions and `$ref`s that never leave the schema.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcpyard.catalog import CatalogEntry
from mcpyard.errors import CallError
from mcpyard.pipeline import VALIDATION_BUDGET_SECS, quick_check, validate_arguments

# What the SDK's FastMCP-style servers send for `def tool(key: str, count: int = 3, tags: list[str] | None = None)`.
TYPICAL = {
    "type": "object",
    "title": "toolArguments",
    "properties": {
        "key": {"type": "string", "title": "Key"},
        "count": {"type": "integer", "default": 3, "minimum": 0},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
        "mode": {"enum": ["fast", "slow"]},
    },
    "required": ["key"],
    "additionalProperties": False,
}


def entry(schema: dict[str, Any]) -> CatalogEntry:
    return CatalogEntry(
        name="s__t",
        server="s",
        tool="t",
        description="",
        title=None,
        input_schema=schema,
        output_schema=None,
        annotations={},
        definition_hash=str(hash(repr(schema))),
        wire={"name": "t", "inputSchema": schema},
    )


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [
        ({"key": "k"}, True),
        ({"key": "k", "count": 0, "tags": ["a"], "mode": "fast"}, True),
        ({"key": "k", "tags": None}, True),
        ({"key": "k", "count": 2.0}, True),
        ({}, False),
        ({"key": 1}, False),
        ({"key": "k", "count": -1}, False),
        ({"key": "k", "count": True}, False),
        ({"key": "k", "count": 1.5}, False),
        ({"key": "k", "tags": [1]}, False),
        ({"key": "k", "mode": "other"}, False),
        ({"key": "k", "extra": 1}, False),
    ],
)
def test_call1_a_typical_schema_is_checked_quickly_and_exactly(arguments: dict[str, Any], valid: bool) -> None:
    quick = quick_check(TYPICAL)
    assert quick is not None, "a typical tool's schema takes the quick path"
    assert Draft202012Validator(TYPICAL).is_valid(arguments) is valid
    if valid:
        assert quick(arguments), "a valid call never pays for the full validator"
        validate_arguments(entry(TYPICAL), arguments)
    else:
        assert not quick(arguments)
        with pytest.raises(CallError) as raised:
            validate_arguments(entry(TYPICAL), arguments)
        assert raised.value.code == "invalid_arguments"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}},
        {"oneOf": [{"type": "object"}]},
        {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": True}}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": ["object", {"type": "string"}]},
        {"type": "object", "properties": {"a": {"items": [{"type": "string"}]}}},
    ],
)
def test_call1_a_schema_with_keywords_the_quick_check_does_not_know_uses_the_full_validator(
    schema: dict[str, Any],
) -> None:
    assert quick_check(schema) is None


LEAF_KEYWORDS: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
        | st.lists(st.sampled_from(["string", "integer", "number", "null"]), min_size=1, max_size=3),
        "enum": st.lists(
            st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3), st.text(max_size=2))
        ),
        "const": st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=2)),
        "minimum": st.integers(-5, 5) | st.floats(-5, 5),
        "maximum": st.integers(-5, 5),
        "exclusiveMinimum": st.integers(-5, 5),
        "exclusiveMaximum": st.floats(-5, 5),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "title": st.text(max_size=3),
        "format": st.sampled_from(["uri", "date-time", "email"]),
    },
)


def schemas() -> st.SearchStrategy[Any]:
    return st.recursive(
        LEAF_KEYWORDS | st.booleans(),
        lambda inner: st.fixed_dictionaries(
            {},
            optional={
                "type": st.just("object"),
                "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
                "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True),
                "additionalProperties": st.booleans() | inner,
                "items": inner,
                "anyOf": st.lists(inner, min_size=1, max_size=3),
            },
        ),
        max_leaves=8,
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-6, 6) | st.floats(allow_nan=True) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=600, deadline=None)
@given(schema=schemas(), value=JSON_VALUES)
def test_call1_the_quick_check_never_accepts_what_the_full_validator_refuses(schema: Any, value: Any) -> None:
    quick = quick_check(schema)
    if quick is not None and quick(value):
        assert Draft202012Validator(schema).is_valid(value), (schema, value)


# ----------------------------------------------------------------- bounded checks (THREATS, Robustness)

CATASTROPHIC = "^(a|aa)+$"
BACKTRACKS = "a" * 40 + "!"


def test_call1_a_network_ref_is_never_fetched() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        schema = {"type": "object", "properties": {"a": {"$ref": f"http://127.0.0.1:{port}/schema.json"}}}
        with pytest.raises(CallError) as raised:
            validate_arguments(entry(schema), {"a": 1})
        assert raised.value.code == "invalid_schema"
        assert "points outside the schema" in raised.value.message
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected


def test_call1_a_schema_declaring_its_draft_stays_bounded_through_a_ref_to_its_root() -> None:
    """jsonschema picks its own class again for a subschema with `$schema`: the root's is dropped first."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"x": {"$ref": "#"}, "s": {"type": "string", "pattern": CATASTROPHIC}},
    }
    started = time.monotonic()
    with pytest.raises(CallError) as raised:
        validate_arguments(entry(schema), {"x": {"x": {"s": BACKTRACKS}}})
    assert raised.value.code == "validation_timeout"
    assert time.monotonic() - started < VALIDATION_BUDGET_SECS


@pytest.mark.parametrize(
    ("arguments", "valid"),
    [({"xa": "s"}, True), ({}, True), ({"xa": 1}, False), ({"y": "s"}, False), ({"xa": "s", "name": 1}, True)],
)
def test_call1_pattern_properties_and_additional_properties_keep_their_meaning_when_bounded(
    arguments: dict[str, Any], valid: bool
) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "integer"}},
        "patternProperties": {"^x": {"type": "string"}},
        "additionalProperties": False,
    }
    assert Draft202012Validator(schema).is_valid(arguments) is valid
    if valid:
        validate_arguments(entry(schema), arguments)
        return
    with pytest.raises(CallError) as raised:
        validate_arguments(entry(schema), arguments)
    assert raised.value.code == "invalid_arguments"


def test_call1_a_check_past_its_budget_is_refused_naming_the_budget() -> None:
    branches = {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}
    schema = {"type": "object", "properties": {"x": branches, "end": {"type": "string"}}}
    value: dict[str, Any] = {"end": 1}
    for _ in range(60):
        value = {"x": value, "end": "e"}
    # This thread's CPU time, not wall time (a loaded machine stretches the wall clock). Unchecked, the 2^60
    # paths would run for hours; stopped at its budget the check costs well under a second alone, and a few
    # late in a long run whose heap makes every collection dearer: ten seconds is far from both.
    started = time.thread_time()
    with pytest.raises(CallError) as raised:
        validate_arguments(entry(schema), value, budget_secs=0.2)
    assert raised.value.code == "validation_timeout"
    assert "longer than 0.2 s" in raised.value.message
    assert time.thread_time() - started < 10.0
