"""OBS-1 on the gateway: `/metrics` counts real calls, the probes answer, traces join the caller's, JSON logs.

`mcpyard serve --transport http` runs as a process in front of real servers; the metrics are read
with Prometheus' own text parser, the traces by a loopback OTLP receiver, the logs from its stderr.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpyard.secrets import FileSecretStore
from tests._otlp import otlp_receiver
from tests._scrape import samples, value
from tests.conftest import Home, fixture_server
from tests.servers.http_runner import GATEWAY_LISTENING, serve_http, serve_process

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def gateway(
    home: Home, config: str, *extra: str, env: dict[str, str] | None = None, stderr: bytearray | None = None
) -> AsyncIterator[str]:
    """`mcpyard serve --transport http --share-all` as a process; yields the base URL (no path)."""
    async with serve_process(
        lambda port: [
            sys.executable,
            "-m",
            "mcpyard",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            "--share-all",
            "--mcp-config",
            config,
            "--workspace",
            str(home.workspace),
            *extra,
        ],
        lambda port: f"http://127.0.0.1:{port}",
        env=lambda port: {**home.environ, **(env or {})},
        ready=GATEWAY_LISTENING,
        stderr=stderr,
    ) as base:
        yield base


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_obs1_metrics_move_with_real_calls_and_the_probes_answer(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}, mode="auto"))
    async with gateway(home, config) as base, httpx2.AsyncClient() as http:
        assert (await http.get(f"{base}/healthz")).json() == {"status": "ok"}
        ready = (await http.get(f"{base}/readyz")).json()
        assert ready == {"status": "ready", "servers": 1, "connected": 1}
        assert (await http.post(f"{base}/metrics")).status_code == 405

        before = samples((await http.get(f"{base}/metrics")).text)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            for a in range(3):
                await client.call_tool("basic__add", {"a": a, "b": 2})
            await client.call_tool("basic__add", {"a": 0, "b": 2})  # given again from the cache
            refused = await client.call_tool("basic__add", {"a": "one", "b": 2})
            assert refused.is_error
        scraped = await http.get(f"{base}/metrics")
    assert scraped.headers["content-type"].startswith("text/plain")
    after = samples(scraped.text)
    ran = {"org": "", "server": "basic", "tool": "basic__add", "outcome": "ran"}
    assert value(after, "mcpyard_calls_total", **ran) - value(before, "mcpyard_calls_total", **ran) == 3
    assert value(after, "mcpyard_calls_total", **{**ran, "outcome": "cached"}) == 1
    assert value(after, "mcpyard_calls_total", **{**ran, "outcome": "refused"}) == 1
    timed = {"org": "", "server": "basic", "tool": "basic__add"}
    assert value(after, "mcpyard_call_duration_seconds_count", **timed) == 5
    assert value(after, "mcpyard_call_duration_seconds_bucket", **timed, le="+Inf") == 5
    assert value(after, "mcpyard_call_errors_total", org="", code="invalid_arguments") == 1
    assert value(after, "mcpyard_servers", org="", state="connected") == 1
    assert "one" not in scraped.text.replace("done", "")  # an argument's value is never a label


async def test_obs1_metrics_ask_for_the_gateways_token_and_the_probes_do_not(home: Home) -> None:
    FileSecretStore(home.data_home / "secrets.json").set("GW", "gateway-token-123456")
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with gateway(home, config, "--token-secret", "GW") as base, httpx2.AsyncClient() as http:
        assert (await http.get(f"{base}/metrics")).status_code == 401
        assert (await http.get(f"{base}/healthz")).status_code == 200
        assert (await http.get(f"{base}/readyz")).status_code == 200
        allowed = await http.get(f"{base}/metrics", headers={"Authorization": "Bearer gateway-token-123456"})
        assert allowed.status_code == 200
        assert "# TYPE mcpyard_calls_total counter" in allowed.text


async def test_obs1_a_call_is_a_span_in_the_callers_trace_and_upstream_joins_it(home: Home) -> None:
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    async with serve_http("echo_secrets") as upstream:
        config = str(home.write_config({"e": {"url": upstream}}, mode="auto"))
        with otlp_receiver() as receiver:
            async with gateway(home, config, env=receiver.environment()) as base:
                headers = {"traceparent": f"00-{trace_id}-{parent_id}-01"}
                async with (
                    httpx2.AsyncClient(headers=headers) as http,
                    Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
                ):
                    result = await client.call_tool("e__headers", {})
                    meta = await client.call_tool("e__trace_meta", {})
                call = receiver.wait_for("execute_tool e__headers")
    lines = text_of(result).splitlines()
    sent = re.fullmatch(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01", lines[lines.index("traceparent:") + 1])
    assert sent is not None
    assert call.trace_id == trace_id == sent.group(1)  # the caller's trace, carried on to the server
    in_meta = re.search(r"\n00-([0-9a-f]{32})-([0-9a-f]{16})-01\n", text_of(meta))
    assert in_meta is not None, meta.content
    assert in_meta.group(1) == trace_id  # in the request's `_meta` too
    assert call.service == "mcpyard-serve"
    assert call.attributes["mcpyard.server"] == "e"
    assert call.attributes["mcpyard.outcome"] == "ran"
    assert call.attributes["mcpyard.decision"] == "run"
    ancestors = []
    parent = receiver.by_id(call.parent_id)
    while parent is not None:
        ancestors.append(parent)
        parent = receiver.by_id(parent.parent_id)
    # The SDK's server span for the message is the call's parent, and the caller's span is its parent.
    assert ancestors, "the call's span has no parent from this request"
    assert ancestors[-1].parent_id == parent_id


async def test_obs1_json_logs_one_line_per_call_without_argument_values(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}, mode="auto"))
    stderr = bytearray()
    async with gateway(home, config, "--log-format", "json", stderr=stderr) as base, httpx2.AsyncClient() as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            await client.call_tool("basic__add", {"a": 40, "b": 123456789})
        lines = [json.loads(line) for line in stderr.decode().splitlines() if line.strip()]
    listening = next(line for line in lines if "gateway on http://" in line["message"])
    assert listening["level"] == "info"
    calls: list[dict[str, Any]] = [line for line in lines if line.get("event") == "call"]
    assert len(calls) == 1
    call = calls[0]
    assert {"time", "level", "logger", "message"} <= call.keys()
    assert call["server"] == "basic"
    assert call["tool"] == "basic__add"
    assert call["outcome"] == "ran"
    assert call["decision"] == "run"
    assert isinstance(call["duration_ms"], float)
    assert "123456789" not in stderr.decode()  # never an argument's value (nor the result, 123456829)
    assert "123456829" not in stderr.decode()
