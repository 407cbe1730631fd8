"""GW-1 over stdio: the front on the event loop, a flood refused clearly (ERR-1), files and terminals read aside.

`mcpyard serve` as a real process: its standard input and output are the subject.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import mcp_types as types
import pytest

from mcpyard.gateway._stdio import MAX_LINE_BYTES
from tests._forkserver import mcpyard_command
from tests.conftest import Home, fixture_server

INITIALIZE = types.JSONRPCRequest(
    jsonrpc="2.0",
    id=1,
    method="initialize",
    params={
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
).model_dump_json(by_alias=True, exclude_none=True)


def serve_command(home: Home) -> list[str]:
    config = home.write_config({"basic": fixture_server("basic")})
    return mcpyard_command(home.environ, "serve", "--mcp-config", str(config), "--workspace", str(home.workspace))


@pytest.mark.parametrize("given", ["pipe", "file"])
def test_err1_a_client_message_over_the_limit_ends_the_connection_with_a_clear_error(
    home: Home, tmp_path: Path, given: str
) -> None:
    """On a pipe the event loop reads it; a file (or a terminal) is read aside: the same limit either way."""
    flood = tmp_path / "flood.jsonl"
    flood.write_bytes(
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * MAX_LINE_BYTES + b'"}}\n'
    )
    with flood.open("rb") as stdin:
        done = subprocess.run(
            serve_command(home),
            stdin=stdin if given == "file" else None,
            input=flood.read_bytes() if given == "pipe" else None,
            capture_output=True,
            env=home.environ,
            timeout=60,
            check=False,
        )
    stderr = done.stderr.decode()
    assert f"a client message was over {MAX_LINE_BYTES} bytes" in stderr
    assert "Traceback" not in stderr
    assert done.returncode == 0


def test_standard_input_from_a_file_is_served_too(home: Home, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(INITIALIZE + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            serve_command(home),
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=home.environ,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    first = json.loads(answers.read_text(encoding="utf-8").splitlines()[0])
    assert first["id"] == 1
    assert first["result"]["serverInfo"]["name"] == "mcpyard"


def test_an_answer_still_being_written_when_the_client_closes_its_input_arrives_whole(home: Home) -> None:
    config = home.write_config({"basic": fixture_server("basic", "--many-tools", "2000")})
    arguments = ["serve", "--share-all", "--mcp-config", str(config), "--workspace", str(home.workspace)]
    command = mcpyard_command(home.environ, *arguments)
    initialized = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
    listing = types.JSONRPCRequest(jsonrpc="2.0", id=2, method="tools/list")
    lines = [INITIALIZE, *(m.model_dump_json(by_alias=True, exclude_none=True) for m in (initialized, listing))]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=home.environ
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("".join(line + "\n" for line in lines).encode())
        process.stdin.flush()
        first = json.loads(process.stdout.readline())
        assert first["id"] == 1
        # The listing (far more than a pipe holds) is being written, and nobody reads on: stop now.
        start = process.stdout.read(1000)
        process.stdin.close()
        answers = [json.loads(line) for line in (start + process.stdout.read()).splitlines()]
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    listed = next(answer for answer in answers if answer.get("id") == 2)
    assert len(listed["result"]["tools"]) > 2000
