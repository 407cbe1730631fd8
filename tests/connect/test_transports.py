"""A stdio server's folder and program: a `cwd` that is not there is named, never taken for the command, and a whole
command line written into `command` is named as one (CONN-2, CONN-3).

Real files and real processes: the config is written as Claude Desktop writes it, the command is
the Python running these tests (it is there, so only the folder can be at fault).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PYTHON, SERVERS, Home

pytestmark = pytest.mark.anyio


def claude_desktop_file(home: Home, cwd: str) -> Path:
    """A claude_desktop_config.json with one server started in `cwd`, as Claude Desktop writes it."""
    path = home.root / "claude_desktop_config.json"
    entry = {"command": PYTHON, "args": [str(SERVERS / "basic.py")], "cwd": cwd}
    path.write_text(json.dumps({"mcpServers": {"notes": entry}}, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize("written", ["ABSOLUTE", "tools/notes"])
async def test_conn2_conn3_a_cwd_that_does_not_exist_is_named_not_the_command(home: Home, written: str) -> None:
    """CONN-2, CONN-3: the reason names the missing folder (relative ones as resolved in the workspace)."""
    missing = home.root / "gone" if written == "ABSOLUTE" else home.workspace / written
    async with home.open(claude_desktop_file(home, str(missing) if written == "ABSOLUTE" else written)) as host:
        [server] = host.status().servers
    assert server.state == "failed"
    assert server.reason is not None
    assert server.reason == (
        f"cwd: the folder {str(missing)!r} does not exist; create it or set `cwd` to the folder the server runs in"
    )


async def test_conn2_a_cwd_that_is_a_file_is_named_as_not_a_folder(home: Home) -> None:
    """CONN-2, CONN-3: a file where the folder should be is said to be one."""
    file = home.root / "notes.txt"
    file.write_text("not a folder\n", encoding="utf-8")
    async with home.open(claude_desktop_file(home, str(file))) as host:
        [server] = host.status().servers
    assert server.state == "failed"
    assert server.reason is not None
    assert server.reason == f"cwd: {str(file)!r} is a file, not a folder; set `cwd` to the folder the server runs in"


async def test_conn2_a_cwd_that_exists_starts_the_server_there(home: Home) -> None:
    """CONN-2: the check lets a real folder through, relative to the workspace."""
    (home.workspace / "tools").mkdir()
    async with home.open(claude_desktop_file(home, "tools")) as host:
        [server] = host.status().servers
        assert server.state == "connected", server.reason
        result = await host.call("notes__cwd", {})
    assert result.ok, result.error


@pytest.mark.parametrize("written", ["~/tools", "~"])
async def test_conn2_a_cwd_under_the_home_folder_written_with_a_tilde_is_that_folder(home: Home, written: str) -> None:
    """CONN-2: `"cwd": "~/tools"` is the folder `tools` in the home folder (as a shell reads it), not `~/tools` in
    the workspace."""
    user_home = home.root / "user-home"
    (user_home / "tools").mkdir(parents=True)
    environ = {**home.environ, "HOME": str(user_home)}
    async with home.open(claude_desktop_file(home, written), environ=environ) as host:
        [server] = host.status().servers
        assert server.state == "connected", server.reason
        result = await host.call("notes__cwd", {})
    assert result.ok, result.error
    assert str(user_home / written[2:]).rstrip("/") in result.text


async def test_conn2_a_whole_command_line_written_into_command_is_named_as_one(home: Home) -> None:
    """CONN-2: `"command": "python server.py"` (as typed in a terminal) says to split it, not only "not found"."""
    path = home.root / "claude_desktop_config.json"
    entry = {"command": f"{PYTHON} {SERVERS / 'basic.py'}"}
    path.write_text(json.dumps({"mcpServers": {"notes": entry}}), encoding="utf-8")
    async with home.open(path) as host:
        [server] = host.status().servers
    assert server.state == "failed"
    assert server.reason is not None
    assert "`command` holds the program and its arguments in one string" in server.reason
    assert "put the program alone in `command` and each argument in `args`" in server.reason


async def _reason_for(home: Home, command: str) -> str:
    """Why a Claude Desktop server running `command` failed to start."""
    path = home.root / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"notes": {"command": command}}}), encoding="utf-8")
    async with home.open(path) as host:
        [server] = host.status().servers
    assert server.reason is not None
    return server.reason


async def test_conn2_a_program_not_found_is_said_so_when_command_is_one_word(home: Home) -> None:
    reason = await _reason_for(home, "no-such-program-here")
    assert reason.startswith("command not found: 'no-such-program-here' (is it installed and on PATH?")


async def test_conn2_a_command_written_from_the_home_folder_with_a_tilde_says_to_write_home(home: Home) -> None:
    """CONN-2, ERR-1: no shell starts a server, so `~/bin/tool` is a folder named `~`: the message says so."""
    reason = await _reason_for(home, "~/bin/no-such-tool")
    assert "`~` is not your home folder in `command`" in reason
    assert "write ${HOME} in its place" in reason
