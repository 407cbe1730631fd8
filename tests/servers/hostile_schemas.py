"""Fixture server whose tools' schemas try to stall the host that validates against them.

Run as `python tests/servers/hostile_schemas.py` (stdio). Built on the low-level Server so
each schema goes out exactly as written (and the server checks no arguments itself):

- `exponential`: `anyOf` over `$ref`s, two branches per level, 40 levels deep (2^40 paths);
- `too_deep`: an input schema nested 100 levels;
- `remote_ref`: a `$ref` to a network address;
- `bad_output`: an output schema with a catastrophic pattern (the SDK checks outputs with `re`);
- `catastrophic`: `text`, each of `texts` and the keys of `tags` must match `^(a|aa)+$`;
- `branching`: a recursive schema that checks `x` along two paths at every level;
- `echo`: a plain tool; `seen_calls`: how many calls (other than itself) reached the server.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

CATASTROPHIC = "^(a|aa)+$"
LEVELS = 40
DEPTH = 100


def exponential_schema(levels: int = LEVELS) -> dict[str, Any]:
    """Each level's `anyOf` refers twice to the next: 2^levels ways through, in a few hundred bytes."""
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]} for i in range(levels)
    }
    defs[f"l{levels}"] = {"type": "integer"}
    return {"type": "object", "properties": {"value": {"$ref": "#/$defs/l0"}}, "$defs": defs}


def deep_schema(depth: int = DEPTH) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return {"type": "object", "properties": {"value": schema}}


SCHEMAS: dict[str, dict[str, Any]] = {
    "exponential": exponential_schema(),
    "too_deep": deep_schema(),
    "remote_ref": {"type": "object", "properties": {"value": {"$ref": "http://127.0.0.1:9/schema.json"}}},
    "bad_output": {"type": "object", "properties": {}},
    "catastrophic": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "pattern": CATASTROPHIC},
            "texts": {"type": "array", "items": {"type": "string", "pattern": CATASTROPHIC}},
            "tags": {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "string"}}},
        },
    },
    "branching": {
        "type": "object",
        "properties": {"x": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}, "end": {"type": "string"}},
        "required": ["end"],
    },
    "echo": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "seen_calls": {"type": "object", "properties": {}},
}
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "bad_output": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
}


def build_server() -> Server[Any]:
    seen = 0

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(
            tools=[
                Tool(
                    name=name,
                    description=f"Hostile schema: {name}.",
                    input_schema=schema,
                    output_schema=OUTPUT_SCHEMAS.get(name),
                    annotations=ToolAnnotations(read_only_hint=True),
                )
                for name, schema in SCHEMAS.items()
            ]
        )

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        nonlocal seen
        if params.name == "seen_calls":
            return CallToolResult(content=[TextContent(text=str(seen))])
        seen += 1
        text = (params.arguments or {}).get("text")
        return CallToolResult(content=[TextContent(text=f"called {params.name} {text or ''}".strip())])

    return Server("hostile-schemas", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
