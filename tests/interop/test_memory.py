"""npm's server-memory (a knowledge graph) through the Host and `mcpyard serve` (CONN-1, CAT-1, CALL-5, CALL-6, GW-1).

Its graph is a file named by `MEMORY_FILE_PATH`; each test gives it one in its own folder (left to
itself, it would write beside its own package in .tools).

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpyard import CallResult, Host
from tests.conftest import Home, body
from tests.gateway.test_serve import serve_params, text_of
from tests.interop.conftest import list_all, own_listing_meanwhile

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "memory"
CALL_SECONDS = 15

ADA = {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first published program"]}
ENGINE = {"name": "Analytical Engine", "entityType": "machine", "observations": ["designed by Babbage"]}
RELATION = {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"}


def server_entry(memory_server: Path, graph: Path) -> dict[str, Any]:
    return {"command": str(memory_server), "env": {"MEMORY_FILE_PATH": str(graph)}, "call_timeout_secs": 10}


async def call(host: Host, tool: str, arguments: Mapping[str, Any]) -> CallResult:
    with anyio.fail_after(CALL_SECONDS):
        return await host.call(f"{SERVER_ID}__{tool}", arguments)


async def test_conn1_cat1_call6_memory_server_has_every_tool_offered_and_reads_back_the_entities_it_created(
    home: Home, memory_server: Path, tmp_path: Path
) -> None:
    entry = server_entry(memory_server, tmp_path / "graph.jsonl")
    beside = server_entry(memory_server, tmp_path / "direct.jsonl")
    config = home.write_config({SERVER_ID: entry})
    # `auto`: this proves the server's calls, not the approval policy (POL-1).
    async with own_listing_meanwhile(beside) as listing, home.open(config, mode="auto") as host:
        direct = await listing.tools()
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        tools = {info.tool: info for info in host.server_tools()}
        assert sorted(tools) == sorted(direct), "the host does not offer exactly the tools the server lists"
        assert {"create_entities", "create_relations", "read_graph", "search_nodes"} <= tools.keys()
        for name, wire in direct.items():
            assert tools[name].name == f"{SERVER_ID}__{name}"
            assert tools[name].input_schema == wire["inputSchema"], name
            assert tools[name].annotations == wire.get("annotations", {}), name

        empty = await call(host, "read_graph", {})
        assert empty.ok, empty.error
        assert empty.structured == {"entities": [], "relations": []}

        created = await call(host, "create_entities", {"entities": [ADA, ENGINE]})
        assert created.ok, created.error
        assert created.structured == {"entities": [ADA, ENGINE]}
        related = await call(host, "create_relations", {"relations": [RELATION]})
        assert related.ok, related.error

        graph = await call(host, "read_graph", {})
        assert graph.ok, graph.error
        assert not graph.cached, "create_entities changed the server since the first read_graph (CALL-6)"
        assert graph.structured == {"entities": [ADA, ENGINE], "relations": [RELATION]}
        assert json.loads(body(graph)) == graph.structured

        again = await call(host, "read_graph", {})
        assert again.cached, "read_graph is read-only and idempotent: nothing changed since (CALL-6)"
        assert again.structured == graph.structured

        found = await call(host, "search_nodes", {"query": "Babbage"})
        assert found.ok, found.error
        assert isinstance(found.structured, dict)
        assert [entity["name"] for entity in found.structured["entities"]] == ["Analytical Engine"]
    saved = [json.loads(line) for line in (tmp_path / "graph.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {record["name"] for record in saved if record["type"] == "entity"} == {"Ada Lovelace", "Analytical Engine"}


async def test_gw1_memory_server_through_the_gateway_creates_entities_and_reads_the_graph(
    home: Home, memory_server: Path, tmp_path: Path
) -> None:
    beside = server_entry(memory_server, tmp_path / "direct.jsonl")
    config = str(home.write_config({SERVER_ID: server_entry(memory_server, tmp_path / "graph.jsonl")}))
    with anyio.fail_after(60):
        async with (
            own_listing_meanwhile(beside) as listing,
            Client(serve_params(home, config, "--share-all", "--mode", "auto")) as client,
        ):
            offered, direct = await list_all(client), await listing.tools()
            assert sorted(offered) == sorted([*(f"{SERVER_ID}__{name}" for name in direct), "read_result"])
            for name, wire in direct.items():
                assert offered[f"{SERVER_ID}__{name}"]["inputSchema"] == wire["inputSchema"], name
                assert offered[f"{SERVER_ID}__{name}"].get("annotations") == wire.get("annotations"), name

            created = await client.call_tool(f"{SERVER_ID}__create_entities", {"entities": [ADA]})
            assert not created.is_error, text_of(created)
            graph = await client.call_tool(f"{SERVER_ID}__read_graph", {})
            assert not graph.is_error, text_of(graph)
            assert graph.structured_content == {"entities": [ADA], "relations": []}
            assert text_of(graph).startswith("<mcp-result-"), "results are fenced as untrusted data"
            assert "wrote the first published program" in text_of(graph)
