"""CALL-8 on the gateway as a service: a task it gave a client outlives a restart of `mcpyard serve --transport http`.

The gateway keeps each task in a private file of its data folder; started again on the same address, it answers
`tasks/get` and `tasks/cancel` for the last run's tasks and follows each one still running with the same server
task id, so the call is never sent twice and the server's task is not cancelled by the gateway going away (stopped
or killed); a server pointed elsewhere since is never asked for the task. A task file that is not the gateway's own
is refused with one warning, and the gateway serves.

The fixture server `tasks` over real HTTP in the test's process (a stdio server would stop with the gateway).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import mcp_types as types
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Home
from tests.gateway.test_operations import text_of
from tests.gateway.test_task_handles import CancelTask, KeepsHandles, TaskParams, get, handle_of, until
from tests.servers.http_runner import GATEWAY_LISTENING, free_port, listening_process
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _gateway(home: Home, config: str, port: int, stderr: bytearray) -> AsyncIterator[Process]:
    command = [sys.executable, "-m", "mcpyard", "serve", "--transport", "http", "--port", str(port), "--share-all"]
    command += ["--mcp-config", config, "--workspace", str(home.workspace), "--mode", "auto"]
    async with listening_process(
        command, port=port, env=home.environ, ready=GATEWAY_LISTENING, stderr=stderr
    ) as process:
        yield process


@asynccontextmanager
async def _client(port: int, keeper: KeepsHandles) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=60, trust_env=False) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), extensions=[keeper]) as c,
    ):
        yield c


async def _counts(port: int) -> tuple[dict[str, int], list[str]]:
    """How many tasks each tool made on the server, and which tasks were cancelled there."""
    async with _client(port, KeepsHandles()) as client:
        made = json.loads(text_of(await client.call_tool("t__made", {})).split("\n")[-2])
        cancelled = json.loads(text_of(await client.call_tool("t__cancelled", {})).split("\n")[-2])
    return made, cancelled


@pytest.mark.long
@pytest.mark.parametrize("how", ["stopped", "killed"])
async def test_call8_a_gateway_task_outlives_a_restart_and_is_never_sent_twice(home: Home, how: str) -> None:
    async with serve_http_in_process("tasks") as url:
        config = str(home.write_config({"t": {"url": url}}))
        port, stderr = free_port(), bytearray()
        keeper = KeepsHandles()
        async with _gateway(home, config, port, stderr) as first, _client(port, keeper) as client:
            task_id = await handle_of(client, keeper, "t__slow", {"seconds": 6})
            assert (await get(client, task_id)).status == "working"
            if how == "killed":
                first.kill()
            else:
                first.terminate()
            await first.wait()
        [kept] = list((home.data_home / "gateway").glob("tasks-*.json"))
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600, "the server's task ids are the gateway's to keep"
        async with _gateway(home, config, port, stderr), _client(port, KeepsHandles()) as again:
            done = await until(again, task_id, "completed")
            assert done.result is not None
            assert "slow done after 6 s" in json.dumps(done.result), "the same task, followed to its end"
            made, cancelled = await _counts(port)
        assert made.get("slow") == 1, "the call was sent once, never again after the restart"
        assert cancelled == [], "the gateway going away cancelled nothing on the server"
        assert "Traceback" not in stderr.decode(errors="replace")


async def test_call8_a_task_followed_after_a_restart_is_cancelled_on_the_server(home: Home) -> None:
    async with serve_http_in_process("tasks") as url:
        config = str(home.write_config({"t": {"url": url}}))
        port, stderr = free_port(), bytearray()
        keeper = KeepsHandles()
        async with _gateway(home, config, port, stderr), _client(port, keeper) as client:
            task_id = await handle_of(client, keeper, "t__forever", {})
        async with _gateway(home, config, port, stderr), _client(port, KeepsHandles()) as again:
            assert (await get(again, task_id)).status == "working"
            await again.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), types.EmptyResult)
            assert (await until(again, task_id, "cancelled")).status == "cancelled"
            _, cancelled = await _counts(port)
        assert len(cancelled) == 1, "the cancel reached the server's task"


@pytest.mark.long
async def test_call8_a_task_file_that_is_not_the_gateways_own_is_refused_and_the_gateway_serves(home: Home) -> None:
    async with serve_http_in_process("tasks") as url:
        config = str(home.write_config({"t": {"url": url}}))
        port, stderr = free_port(), bytearray()
        folder = home.data_home / "gateway"
        folder.mkdir(parents=True, exist_ok=True)
        hostile = json.dumps({"x": {"owner": 1}, "y": {"ended_at": float("nan")}}).encode()
        for content, mode in ((b"{not json", 0o600), (b"{}", 0o644), (hostile, 0o600), (b"[" * 100_000, 0o600)):
            path = folder / f"tasks-127.0.0.1-{port}.json"
            path.write_bytes(content)
            path.chmod(mode)
            keeper = KeepsHandles()
            async with _gateway(home, config, port, stderr), _client(port, keeper) as client:
                task_id = await handle_of(client, keeper, "t__quick", {})
                assert (await until(client, task_id, "completed")).status == "completed"
            path.unlink(missing_ok=True)
        said = stderr.decode(errors="replace")
        assert "Traceback" not in said
        assert said.count("the gateway's tasks of its last run are lost") == 3, said
        assert said.count("holds what is not a task of this version's") == 1, said


async def test_call8_a_gateway_task_whose_server_was_pointed_elsewhere_is_not_asked_for_there(home: Home) -> None:
    async with serve_http_in_process("tasks") as url, serve_http_in_process("tasks") as elsewhere:
        config = home.write_config({"t": {"url": url}})
        port, stderr = free_port(), bytearray()
        keeper = KeepsHandles()
        async with _gateway(home, str(config), port, stderr), _client(port, keeper) as client:
            task_id = await handle_of(client, keeper, "t__slow", {"seconds": 30})
        moved = home.write_config({"t": {"url": elsewhere}})
        async with _gateway(home, str(moved), port, stderr), _client(port, KeepsHandles()) as again:
            state = await until(again, task_id, "failed")
            polls = json.loads(text_of(await again.call_tool("t__polls", {})).split("\n")[-2])
        assert "its server changed since" in (state.status_message or "")
        assert polls["polls"] == 0, "the other address never heard of the task"
