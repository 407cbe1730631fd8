"""MOD-1: the catalog in each model API's tool format, schemas normalized per provider, names in their limits."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from mcpyard.model import (
    ANTHROPIC,
    FORMATS,
    MAX_INLINE_DEPTH,
    NAME_LIMITS,
    OPENAI,
    ModelTools,
    Profile,
    SchemaLeftOut,
    ToolFormat,
    format_tool,
    format_tools,
    normalize_schema,
    provider_names,
)
from mcpyard.policy import MemoryPolicies
from tests.conftest import Home, fixture_server
from tests.servers.hostile_schemas import SCHEMAS

PROVIDERS = [pytest.param(OPENAI, id="openai"), pytest.param(ANTHROPIC, id="anthropic")]
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class Tool:
    name: str
    input_schema: Mapping[str, Any]
    description: str = "A tool."
    annotations: Mapping[str, Any] = field(default_factory=dict)
    title: str | None = None


def chain(levels: int) -> dict[str, Any]:
    """`$ref`s `levels` deep, one inside the next."""
    defs: dict[str, Any] = {
        f"d{i}": {"type": "object", "properties": {"next": {"$ref": f"#/$defs/d{i + 1}"}}} for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}}, "$defs": defs}


@pytest.mark.parametrize("profile", PROVIDERS)
@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(
            {"type": "object", "properties": {"p": {"$ref": "#/$defs/point"}}, "$defs": {"point": {"type": "integer"}}},
            {"type": "object", "properties": {"p": {"type": "integer"}}},
            id="local-ref-inlined-defs-dropped",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"p": {"$ref": "#/definitions/a~1b"}},
                "definitions": {"a/b": {"type": "null"}},
            },
            {"type": "object", "properties": {"p": {"type": "null"}}},
            id="pointer-escapes",
        ),
        pytest.param(
            {"type": "object", "properties": {"p": {"$ref": "#here"}, "q": {"$anchor": "here", "type": "boolean"}}},
            {"type": "object", "properties": {"p": {"type": "boolean"}, "q": {"type": "boolean"}}},
            id="anchor",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/s", "description": "mine"}},
                "$defs": {"s": {"type": "string", "description": "theirs"}},
            },
            {"type": "object", "properties": {"p": {"type": "string", "description": "mine"}}},
            id="words-beside-a-ref-win",
        ),
        pytest.param(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": "urn:x",
                "$comment": "c",
                "type": "object",
                "properties": {"$comment": {"type": "string"}, "definitions": {"type": "integer"}},
            },
            {"type": "object", "properties": {"$comment": {"type": "string"}, "definitions": {"type": "integer"}}},
            id="keywords-dropped-never-properties",
        ),
        pytest.param(
            {"type": "object", "properties": {"any": True, "none": False}},
            {"type": "object", "properties": {"any": {}, "none": {"not": {}}}},
            id="boolean-subschemas",
        ),
        pytest.param(
            {
                "anyOf": [
                    {"properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
                    {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                ]
            },
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b"]},
            id="top-level-anyOf-folded",
        ),
        pytest.param(
            {
                "allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {}}}],
                "not": {"required": ["c"]},
            },
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a"]},
            id="top-level-allOf-merged-not-dropped",
        ),
        pytest.param({}, {"type": "object", "properties": {}}, id="empty"),
        pytest.param(
            {"type": "object", "properties": {"e": {"enum": [{"$ref": "#/x"}], "default": {"$ref": "#/y"}}}},
            {"type": "object", "properties": {"e": {"enum": [{"$ref": "#/x"}], "default": {"$ref": "#/y"}}}},
            id="values-are-never-rewritten",
        ),
    ],
)
def test_mod1_schemas_are_normalized_for_each_provider(
    profile: Profile, schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert normalize_schema(schema, profile) == expected
    assert normalize_schema(schema, profile) is not schema


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        pytest.param(OPENAI, {"type": "array", "items": {}}, id="openai"),
        pytest.param(ANTHROPIC, {"type": "array", "contentEncoding": "base64"}, id="anthropic"),
    ],
)
def test_mod1_what_each_provider_refuses_goes_and_what_it_takes_stays(
    profile: Profile, expected: dict[str, Any]
) -> None:
    schema = {"type": "object", "properties": {"list": {"type": "array", "contentEncoding": "base64"}}}
    assert normalize_schema(schema, profile)["properties"]["list"] == expected


@pytest.mark.parametrize("profile", PROVIDERS)
@pytest.mark.parametrize(
    ("schema", "why"),
    [
        pytest.param({"type": "object", "properties": {"x": {"$ref": "#"}}}, "recursive", id="recursive-root"),
        pytest.param(
            {
                "type": "object",
                "properties": {"n": {"$ref": "#/$defs/node"}},
                "$defs": {"node": {"properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}},
            },
            "recursive",
            id="recursive-def",
        ),
        pytest.param(chain(MAX_INLINE_DEPTH + 1), f"more than {MAX_INLINE_DEPTH} $refs", id="too-deep"),
        pytest.param(
            {"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/s.json"}}},
            "never fetches",
            id="network",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"$ref": "other.json#/a"}}}, "points outside", id="relative-file"
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}, "does not resolve", id="dangling"
        ),
        pytest.param(SCHEMAS["branching"], "recursive", id="hostile-branching"),
    ],
)
def test_mod1_a_schema_that_cannot_be_inlined_is_left_out_with_why(
    profile: Profile, schema: dict[str, Any], why: str
) -> None:
    with pytest.raises(SchemaLeftOut) as left:
        normalize_schema(schema, profile)
    assert why in left.value.reason


def test_mod1_refs_within_the_depth_limit_are_inlined() -> None:
    inlined = normalize_schema(chain(MAX_INLINE_DEPTH - 1), OPENAI)
    assert "$defs" not in json.dumps(inlined)
    assert "$ref" not in json.dumps(inlined)


def test_mod1_each_format_has_its_api_shape() -> None:
    tool = Tool(
        "s__get",
        {"type": "object", "properties": {"q": {"type": "string"}}},
        title="Get",
        annotations={"readOnlyHint": True},
    )
    assert format_tool(tool, "openai") == {
        "type": "function",
        "function": {
            "name": "s__get",
            "description": "A tool.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    assert format_tool(tool, "anthropic") == {
        "name": "s__get",
        "description": "A tool.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    assert format_tool(tool, "mcp") == {
        "name": "s__get",
        "title": "Get",
        "description": "A tool.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    with pytest.raises(ValueError, match="unknown tool format"):
        format_tool(tool, "gemini")  # type: ignore[arg-type]  # the wrong value is the point


@pytest.mark.parametrize("fmt", FORMATS)
def test_mod1_names_stay_within_each_providers_limits_unique_and_stable(fmt: ToolFormat) -> None:
    limit = NAME_LIMITS[fmt]
    names = ["ok__name", "x" * 200, "x" * 199 + "y", "ünï code", "ünï_code", "a.b", "a_b"]
    given = provider_names(names, limit)
    assert given == provider_names(names, limit), "stable"
    assert len(set(given.values())) == len(names), "unique"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", name) and len(name) <= limit for name in given.values())
    assert given["ok__name"] == "ok__name"
    assert given["a_b"] == "a_b", "a valid name keeps itself; the name that was cleaned into it moves"
    tools = format_tools([Tool(name, {"type": "object"}) for name in names], fmt)
    assert {tools.catalog_name(tools.model_name(name)) for name in names} == set(names)


def test_mod1_left_out_tools_are_named_and_the_rest_are_kept() -> None:
    tools = format_tools([Tool("a__ok", {"type": "object"}), Tool("a__loop", SCHEMAS["branching"])], "openai")
    assert [t["function"]["name"] for t in tools] == ["a__ok"]
    assert list(tools.left_out) == ["a__loop"]
    assert "recursive" in tools.left_out["a__loop"]
    mcp = format_tools([Tool("a__ok", {"type": "object"}), Tool("a__loop", SCHEMAS["branching"])], "mcp")
    assert [t["name"] for t in mcp] == ["a__ok", "a__loop"], "MCP takes JSON Schema as it is"


def openai_valid(tool: dict[str, Any]) -> None:
    """What the Chat Completions API checks of a function tool."""
    assert set(tool) == {"type", "function"}
    assert tool["type"] == "function"
    function = tool["function"]
    assert set(function) == {"name", "description", "parameters"}
    assert NAME.fullmatch(function["name"])
    assert function["parameters"]["type"] == "object"
    assert_no_refs_or_missing_items(function["parameters"], openai=True)


def anthropic_valid(tool: dict[str, Any]) -> None:
    assert set(tool) == {"name", "description", "input_schema"}
    assert NAME.fullmatch(tool["name"])
    schema = tool["input_schema"]
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & set(schema), "no combinator at the top level"
    assert_no_refs_or_missing_items(schema, openai=False)


def assert_no_refs_or_missing_items(node: Any, *, openai: bool) -> None:
    """No `$ref` or `$defs` keyword is left anywhere (a property may bear any name); for OpenAI, every array has
    `items` and no `contentEncoding` is left."""
    if isinstance(node, list):
        for value in node:
            assert_no_refs_or_missing_items(value, openai=openai)
        return
    if not isinstance(node, dict):
        return
    assert "$ref" not in node
    assert "$defs" not in node
    if openai:
        assert "contentEncoding" not in node
        if node.get("type") == "array":
            assert "items" in node or "prefixItems" in node
    for key, value in node.items():
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            for subschema in value.values():
                assert_no_refs_or_missing_items(subschema, openai=openai)
        elif key not in ("enum", "const", "default", "examples"):
            assert_no_refs_or_missing_items(value, openai=openai)


CHECKS = {"openai": openai_valid, "anthropic": anthropic_valid}


async def formats_of(
    home: Home, servers: dict[str, dict[str, Any]]
) -> tuple[dict[ToolFormat, ModelTools], tuple[str, ...], list[str]]:
    config = home.write_config(servers)
    async with home.open(config) as host:
        formats = {fmt: host.tools_for_model(fmt) for fmt in FORMATS}
        return formats, host.status().warnings, [tool.name for tool in host.tools()]


@pytest.mark.anyio
async def test_mod1_the_hostile_servers_tools_in_every_format(home: Home) -> None:
    with anyio.fail_after(60):
        formats, warnings, catalog = await formats_of(
            home, {"h": fixture_server("hostile_schemas"), "f": fixture_server("hostile")}
        )
    for fmt, tools in formats.items():
        json.dumps(list(tools))  # JSON, as the API takes it
        offered = set(tools.names.values())
        if fmt == "mcp":
            assert offered == set(catalog)
            continue
        assert offered == set(catalog) - {"h__branching"}
        assert "recursive" in tools.left_out["h__branching"]
        assert any(f"'h__branching' is not offered to models in the {fmt} format" in w for w in warnings)
        for tool in tools:
            CHECKS[fmt](tool)
        schema = next(t for t in tools if tools.catalog_name(t.get("name") or t["function"]["name"]) == "f__echo_file")
        shaped = schema.get("input_schema") or schema["function"]["parameters"]
        data = shaped["properties"]["data"]
        assert "local file" in data["description"], "a file parameter takes a path (CAT-3)"
        assert not {"pattern", "format", "minLength", "maxLength", "contentEncoding", "contentMediaType"} & set(data)


@pytest.mark.anyio
async def test_mod1_tools_for_model_refuses_an_unknown_format(home: Home) -> None:
    config = home.write_config({})
    async with home.open(config) as host:
        with pytest.raises(ValueError, match="openai"):
            host.tools_for_model("gpt")  # type: ignore[arg-type]  # the wrong value is the point
        assert [t["function"]["name"] for t in host.tools_for_model("openai")] == ["read_result"]


@pytest.mark.anyio
async def test_mod1_the_tools_offered_follow_policies_and_a_callers_changes_stay_its_own(home: Home) -> None:
    policies = MemoryPolicies()
    config = home.write_config({"t": fixture_server("turns")})
    async with home.open(config, policies=policies) as host:
        first = host.tools_for_model("openai")
        assert "t__wipe" in first.names
        first.clear()
        first.names.clear()
        again = host.tools_for_model("anthropic"), host.tools_for_model("openai")
        assert all("t__wipe" in tools.names for tools in again), "a caller's changes never reach the next caller"
        wipe = next(tool for tool in host.tools() if tool.name == "t__wipe")
        policies.set("t", "wipe", "off", wipe.definition_hash)
        assert "t__wipe" not in host.tools_for_model("openai").names, "a tool turned off is offered no more (POL-5)"
        assert "t__lookup" in host.tools_for_model("openai").names
