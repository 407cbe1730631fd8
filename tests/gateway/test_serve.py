"""`mcpyard serve` in front of real servers, driven by the SDK's own client (GW-1, GW-2, GW-3, GW-4, CALL-4).

Most tests run `mcpyard serve` as a process, the program's own front being the subject;
`in_process_gateway` serves from the test's process where it is not.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpyard import Host
from mcpyard.gateway import Gateway
from mcpyard.secrets import FileSecretStore
from tests._forkserver import mcpyard_command
from tests._processes import with_ctrl_c
from tests.conftest import Home, fixture_server
from tests.servers.http_runner import GATEWAY_LISTENING, free_port, serve_process

pytestmark = pytest.mark.anyio


def serve_params(home: Home, config: str, *extra: str) -> StdioServerParameters:
    """`mcpyard serve` over stdio, for the SDK's client to start (a fork of the worker's fork server)."""
    arguments = ["serve", "--mcp-config", config, "--workspace", str(home.workspace), *extra]
    command, *args = mcpyard_command(home.environ, *arguments)
    return StdioServerParameters(command=command, args=args, env=home.environ)


@asynccontextmanager
async def in_process_gateway(home: Home, servers: dict[str, dict[str, Any]]) -> AsyncIterator[tuple[Host, Gateway]]:
    """The gateway in this process (`Client(gateway.server)` talks to it), so a test can look inside."""
    config = home.write_config(servers, mode="auto")
    async with home.open(config, relay_input=True) as host, anyio.create_task_group() as tg:
        gateway = Gateway(host, share_all=True)
        await tg.start(gateway.run)
        yield host, gateway
        tg.cancel_scope.cancel()


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_gw1_stdio_gateway_offers_shared_tools_and_applies_the_pipeline(home: Home, mode: str) -> None:
    config = str(
        home.write_config(
            {"basic": {**fixture_server("basic"), "shared_tools": ["add", "echo"]}, "h": fixture_server("hostile")}
        )
    )
    async with Client(serve_params(home, config), mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"basic__add", "basic__echo", "read_result"}, (
            "only shared tools, readOnlyHint alone shares nothing"
        )
        result = await client.call_tool("basic__add", {"a": 2, "b": 3})
        assert not result.is_error
        assert "\n5\n" in text_of(result)
        assert text_of(result).startswith("<mcp-result-"), "results are fenced as untrusted data"
        refused = await client.call_tool("basic__add", {"a": "x"})
        assert refused.is_error
        assert "do not match its input schema" in text_of(refused)
        assert "a: 'x' is not of type 'integer'" in text_of(refused)
        assert "mcpyard gateway" in (client.instructions or "")
        assert "Instructions from MCP server basic" in (client.instructions or "")


async def test_gw2_calls_that_must_ask_are_refused_with_a_clear_error(home: Home) -> None:
    config = str(home.write_config({"h": fixture_server("hostile")}))
    async with Client(serve_params(home, config, "--share-all")) as client:
        result = await client.call_tool("h__bump", {})
        assert result.is_error
        assert "approval" in text_of(result)
        assert "h__destroy" in {tool.name for tool in (await client.list_tools()).tools}


async def test_gw3_downstream_list_changed_reaches_gateway_clients(home: Home) -> None:
    config = str(home.write_config({"dyn": fixture_server("list_changed")}, permissions={"allow": ["dyn__add_tool"]}))
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(serve_params(home, config, "--share-all"), mode="legacy", message_handler=on_message) as client:
        result = await client.call_tool("dyn__add_tool", {"name": "fresh"})
        assert not result.is_error, text_of(result)
        with anyio.fail_after(15):
            await changed.wait()
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "dyn__fresh" in names


@asynccontextmanager
async def http_gateway(home: Home, config: str, *extra: str) -> AsyncIterator[str]:
    def command(port: int) -> list[str]:
        arguments = ["serve", "--transport", "http", "--port", str(port), "--mcp-config", config]
        return mcpyard_command(home.environ, *arguments, "--workspace", str(home.workspace), *extra)

    async with serve_process(
        command,
        lambda port: f"http://127.0.0.1:{port}/mcp",
        env=lambda port: home.environ,
        ready=GATEWAY_LISTENING,
    ) as url:
        yield url


async def test_gw4_http_gateway_with_a_bearer_token_refuses_requests_without_it(home: Home) -> None:
    FileSecretStore(home.data_home / "secrets.json").set("GW", "gateway-token-123456")
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with http_gateway(home, config, "--share-all", "--token-secret", "GW") as url:
        async with httpx2.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
        headers = {"Authorization": "Bearer gateway-token-123456"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert "basic__add" in tools
            result = await client.call_tool("basic__add", {"a": 20, "b": 22})
            assert "\n42\n" in text_of(result)


async def test_gw4_serve_on_port_0_says_the_port_the_system_chose(home: Home) -> None:
    """GW-4: `--port 0` listens where the system says; the line announcing the gateway gives that address."""
    config = str(home.write_config({"basic": fixture_server("basic")}))
    command = mcpyard_command(home.environ, "serve", "--transport", "http", "--port", "0", "--mcp-config", config)
    async with await anyio.open_process([*command, "--share-all"], env=home.environ) as process:
        try:
            assert process.stderr is not None
            said = b""
            with anyio.fail_after(60):
                while GATEWAY_LISTENING.encode() not in said or not said.endswith(b"\n"):
                    said += await process.stderr.receive()
            found = re.search(r"mcpyard gateway on (http://127\.0\.0\.1:(\d+)/mcp)", said.decode())
            assert found is not None, said
            assert found[2] != "0"
            async with Client(streamable_http_client(found[1])) as client:
                assert "basic__add" in {tool.name for tool in (await client.list_tools()).tools}
        finally:
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):
                await process.wait()


def test_gw4_serve_refuses_a_missing_token_secret_in_one_line(home: Home) -> None:
    import subprocess

    config = str(home.write_config({"basic": fixture_server("basic")}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpyard",
            "serve",
            "--transport",
            "http",
            "--token-secret",
            "NOPE",
            "--mcp-config",
            config,
        ],
        capture_output=True,
        text=True,
        env=home.environ,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "NOPE" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


async def test_gw1_resources_and_prompts_pass_through_named_like_tools(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with Client(serve_params(home, config, "--share-all")) as client:
        resources = (await client.list_resources()).resources
        [note] = [r for r in resources if str(r.uri) == "note://welcome"]
        assert note.name == "basic__welcome"
        read = await client.read_resource("note://welcome")
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == "Welcome to the basic fixture."
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert "basic__greet" in prompts
        got = await client.get_prompt("basic__greet", {"name": "Ada"})
        [message] = got.messages
        assert isinstance(message.content, types.TextContent)
        assert "Ada" in message.content.text


async def test_gw1_no_prefix_offers_the_servers_own_names(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with Client(serve_params(home, config, "--share-all", "--no-prefix")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"add", "echo", "read_result"} <= names
        assert "basic__add" not in names
        assert "\n5\n" in text_of(await client.call_tool("add", {"a": 2, "b": 3}))
        assert "greet" in {p.name for p in (await client.list_prompts()).prompts}


async def test_gw1_downstream_progress_reaches_the_gateways_client(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with Client(serve_params(home, config, "--share-all")) as client:
        result = await client.call_tool(
            "basic__slow", {"seconds": 0.6, "progress_every": 0.2}, progress_callback=on_progress
        )
        assert not result.is_error, text_of(result)
    assert len(seen) >= 2


async def test_call4_read_result_works_across_a_gateway_clients_requests(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with Client(serve_params(home, config, "--share-all")) as client:
        cut = await client.call_tool("basic__big_text", {"chars": 200_000})
        match = re.search(r"read_result\(handle='(r_[0-9a-f]+)', offset=(\d+)", text_of(cut))
        assert match is not None, text_of(cut)[-300:]
        more = await client.call_tool(
            "read_result", {"handle": match.group(1), "offset": int(match.group(2)), "length": 100}
        )
        assert not more.is_error, text_of(more)
        assert "of 200000" in text_of(more)


async def give_up_on_a_running_call(client: Client) -> None:
    """Call `basic__slow` and give up on it once the server says it runs (its first progress)."""
    running = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        running.set()

    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await client.call_tool(
                "basic__slow", {"seconds": 30, "progress_every": 0.05}, progress_callback=on_progress
            )

        tg.start_soon(call)
        with anyio.fail_after(10):
            await running.wait()
        tg.cancel_scope.cancel()


async def cancellations_reach(client: Client, count: int) -> str:
    """The server's count of cancelled calls, once it is at least `count` (the server waits for it)."""
    with anyio.fail_after(10):
        return text_of(await client.call_tool("basic__cancellations", {"at_least": count}))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_gw1_a_client_that_cancels_a_call_cancels_it_at_the_server(home: Home, mode: str) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    async with Client(serve_params(home, config, "--share-all"), mode=mode) as client:
        await give_up_on_a_running_call(client)
        assert "\n1\n" in await cancellations_reach(client, 1)


async def test_gw1_deny_rules_and_redaction_apply_through_the_gateway(home: Home) -> None:
    secret = "gateway-secret-4e1f9a"
    FileSecretStore(home.data_home / "secrets.json").set("TOKEN", secret)
    entry = {**fixture_server("echo_secrets"), "env": {"TOKEN": "${secret:TOKEN}"}}
    config = str(home.write_config({"echo": entry}, permissions={"deny": ["echo__structured"]}))
    async with Client(serve_params(home, config, "--share-all"), mode="legacy") as client:
        echoed = await client.call_tool("echo__env", {"name": "TOKEN"})
        assert not echoed.is_error, text_of(echoed)
        assert secret not in echoed.model_dump_json()
        assert "%TOKEN%" in text_of(echoed), "the value's place is marked with its name"
        denied = await client.call_tool("echo__structured", {"name": "TOKEN"})
        assert denied.is_error
        assert "deny" in text_of(denied), text_of(denied)


async def test_gw1_ctrl_c_stops_the_http_gateway_cleanly_with_a_client_connected(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    port = free_port()
    command = [sys.executable, "-m", "mcpyard", "serve", "--transport", "http", "--port", str(port)]
    command += ["--share-all", "--mcp-config", config, "--workspace", str(home.workspace)]
    process = await anyio.open_process(with_ctrl_c(command), env=home.environ)
    try:
        assert process.stderr is not None
        said = b""
        with anyio.fail_after(30):
            while GATEWAY_LISTENING.encode() not in said:
                said += await process.stderr.receive()
        # A handshake-era client keeps a standalone SSE stream open: it must not hold the stop.
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            assert not (await client.call_tool("basic__add", {"a": 1, "b": 2})).is_error
            process.send_signal(signal.SIGINT)
            process.send_signal(signal.SIGINT)  # a second Ctrl-C changes nothing
            with anyio.fail_after(15):
                code = await process.wait()
        with anyio.fail_after(5):
            async for chunk in process.stderr:
                said += chunk
        stderr = said.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()
    assert code == 130
    assert "interrupted; every server was stopped" in stderr
    assert "Traceback" not in stderr


def test_gw1_a_port_in_use_is_one_clear_line(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "mcpyard", "serve", "--transport", "http", "--port", str(port)]
        command += ["--mcp-config", config, "--workspace", str(home.workspace)]
        done = subprocess.run(command, capture_output=True, text=True, env=home.environ, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"mcpyard: error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another --port (or --host)"
    )


async def test_gw1_completion_offers_nothing_of_a_server_that_shares_nothing(home: Home) -> None:
    servers = {
        "conf": fixture_server("conformance_server"),
        "basic": {**fixture_server("basic"), "shared_tools": ["add"]},
    }
    config = str(home.write_config(servers))
    async with Client(serve_params(home, config), mode="legacy") as client:
        ref = types.PromptReference(type="ref/prompt", name="conf__test_prompt_with_arguments")
        with pytest.raises(MCPError, match="no prompt"):
            await client.complete(ref, {"name": "arg1", "value": "p"})
