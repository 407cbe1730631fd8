"""GW-1, CALL-1: a gateway client's arguments that cannot be sent get an error result, never a broken session: the
JSON text a client writes may hold a lone surrogate (`"\\ud800"`) or NaN, which no downstream server can be sent;
the gateway's client and the downstream server's connection both go on.

`mcpyard serve` as a real process: the bytes a client writes on its pipe are the subject.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server
from tests.servers.http_runner import serve_http

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}


def call_line(request_id: int, name: str, arguments_json: str) -> bytes:
    """A `tools/call` line written by hand: `arguments_json` is JSON text, sent as it is."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{name}", "arguments": {arguments_json}}}}}\n'
    ).encode()


@asynccontextmanager
async def downstream(transport: str) -> AsyncIterator[dict[str, Any]]:
    """The entry of the fixture server `takes_json`, over stdio or streamable HTTP."""
    if transport == "stdio":
        yield fixture_server("takes_json")
        return
    async with serve_http("takes_json", "streamable-http") as url:
        yield {"url": url}


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
async def test_gw1_a_clients_unsendable_arguments_get_an_error_result_and_the_session_goes_on(
    home: Home, transport: str
) -> None:
    async with downstream(transport) as server:
        config = home.write_config({"j": server})
        arguments = ["serve", "--share-all", "--mcp-config", str(config), "--workspace", str(home.workspace)]
        command = mcpyard_command(home.environ, *arguments)
        lines = [
            json.dumps(INITIALIZE).encode() + b"\n",
            b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
            call_line(2, "j__echo", '{"text": "\\ud800"}'),
            call_line(3, "j__keep", '{"data": {"\\udc00": NaN}}'),
            call_line(4, "j__keep", '{"data": {"n": Infinity}}'),
            call_line(5, "j__echo", '{"text": "still here"}'),
            call_line(6, "j__kept_count", "{}"),
        ]
        answers: dict[int, Any] = {}
        async with await anyio.open_process(command, env=home.environ) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            reader = BufferedByteReceiveStream(process.stdout)
            with anyio.fail_after(60):
                await process.stdin.send(lines[0])
                answers[1] = json.loads(await reader.receive_until(b"\n", 1 << 20))
                for line in lines[1:]:
                    await process.stdin.send(line)
                while len(answers) < 6:
                    message = json.loads(await reader.receive_until(b"\n", 1 << 20))
                    if "id" in message:
                        answers[message["id"]] = message
                await process.stdin.aclose()
                await process.wait()
    assert answers[1]["result"]["serverInfo"]["name"] == "mcpyard"
    for request_id, problem in (
        (2, "arguments.text: holds a lone surrogate (U+D800), which cannot be sent as UTF-8"),
        (3, 'arguments.data["\\udc00"]: its key holds a lone surrogate (U+DC00)'),
        (4, "arguments.data.n: holds Infinity, which JSON has no number for"),
    ):
        result = answers[request_id]["result"]
        assert result["isError"] is True, result
        text = result["content"][0]["text"]
        assert "invalid_arguments" in text or "cannot be sent" in text, text
        assert problem in text, text
    assert answers[5]["result"].get("isError") is not True, answers[5]
    assert "still here" in answers[5]["result"]["content"][0]["text"]
    assert answers[6]["result"]["structuredContent"] == {"result": 0}, "nothing that could not be sent got through"
