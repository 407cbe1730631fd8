"""The Host against PyPI's mcp-server-time over stdio (CONN-1, CAT-1, CALL-1, CALL-5 structured content).

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpyard import CallResult, Host
from tests.conftest import Home

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "time"
CALL_SECONDS = 15


@asynccontextmanager
async def open_host(home: Home, time_server: Path) -> AsyncIterator[Host]:
    # A fixed local timezone keeps the server's answers independent of the machine's.
    entry = {"command": str(time_server), "args": ["--local-timezone", "UTC"], "call_timeout_secs": 10}
    config = home.write_config({SERVER_ID: entry})
    async with home.open(
        config,
        mode="auto",
    ) as host:
        yield host


async def call(host: Host, tool: str, arguments: Mapping[str, Any]) -> CallResult:
    with anyio.fail_after(CALL_SECONDS):
        return await host.call(f"{SERVER_ID}__{tool}", arguments)


async def test_conn1_cat1_call1_time_server_lists_its_tools_and_answers_in_the_asked_timezone(
    home: Home, time_server: Path
) -> None:
    async with open_host(home, time_server) as host:
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        assert status.transport == "stdio"
        assert status.protocol_version

        tools = {info.name: info for info in host.server_tools()}
        assert sorted(tools) == ["time__convert_time", "time__get_current_time"]
        assert {info.tool for info in tools.values()} == {"get_current_time", "convert_time"}
        assert all(info.server == SERVER_ID for info in tools.values())
        assert tools["time__get_current_time"].input_schema["required"] == ["timezone"]
        # `--local-timezone UTC` reached the server: its schema names UTC as the local zone.
        assert "'UTC' as local timezone" in json.dumps(tools["time__get_current_time"].input_schema)

        now = await call(host, "get_current_time", {"timezone": "Asia/Tokyo"})
        assert now.ok, now.error
        assert "Asia/Tokyo" in now.text
        assert isinstance(now.structured, dict)
        assert now.structured["timezone"] == "Asia/Tokyo"
        assert now.structured["datetime"].endswith("+09:00")
        assert now.structured["is_dst"] is False

        converted = await call(
            host, "convert_time", {"source_timezone": "UTC", "time": "12:30", "target_timezone": "Asia/Tokyo"}
        )
        assert converted.ok, converted.error
        assert "Asia/Tokyo" in converted.text
        assert isinstance(converted.structured, dict)
        assert converted.structured["source"]["timezone"] == "UTC"
        assert converted.structured["source"]["datetime"].endswith("T12:30:00+00:00")
        assert converted.structured["target"]["timezone"] == "Asia/Tokyo"
        assert converted.structured["target"]["datetime"].endswith("T21:30:00+09:00")
        assert converted.structured["time_difference"] == "+9.0h"


async def test_call_time_server_refusing_an_unknown_timezone_is_a_clean_tool_error(
    home: Home, time_server: Path
) -> None:
    async with open_host(home, time_server) as host:
        result = await call(host, "get_current_time", {"timezone": "Mars/Olympus"})
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "tool_error"
        assert "Mars/Olympus" in result.error["message"]
        [status] = host.status().servers
        assert status.state == "connected", "a tool error must not cost the connection"
