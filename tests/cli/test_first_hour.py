"""What a new user meets in the first hour: one tool in full, the version, counted words, typos named, a failed
server's tools, a gateway that shares nothing (CLI-1, CLI-2, CFG-3, CALL-1, GW-1, GW-4, ERR-1).

`mcpyard serve` and Ctrl-C run as real processes: a gateway's standard streams and a signal are the subject."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import anyio
import pytest

from mcpyard._version import __version__
from tests._cli import run_mcpyard
from tests._processes import wait_dead, wait_for_pid, with_ctrl_c
from tests.conftest import Home, fixture_server


def test_cli2_tools_name_shows_one_tool_in_full(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    done = run_mcpyard(home, "tools", "basic__add", "--mcp-config", config)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("basic__add")
    assert "a (integer, required)" in text
    assert "b (integer, required)" in text
    assert "definition hash: " in text
    assert "hints: " in text
    as_json = json.loads(run_mcpyard(home, "tools", "basic__add", "--json", "--mcp-config", config).stdout)
    assert as_json["name"] == "basic__add"
    assert len(as_json["definition_hash"]) == 64
    missing = run_mcpyard(home, "tools", "basic__ad", "--mcp-config", config)
    assert missing.returncode == 2
    assert "did you mean basic__add" in missing.stderr


def test_cli2_version_prints_the_version(home: Home) -> None:
    done = run_mcpyard(home, "--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"mcpyard {__version__}"


def test_cli1_the_status_page_counts_one_tool_as_one_tool(home: Home) -> None:
    config = str(home.write_config({"one": fixture_server("named", "only")}))
    done = run_mcpyard(home, "status", "--mcp-config", config)
    assert "· 1 tool" in done.stdout
    assert "1 tools" not in done.stdout


def test_cfg3_an_unknown_key_of_the_shared_form_suggests_the_nearest_field(home: Home) -> None:
    config = str(home.write_config({"basic": {**fixture_server("basic"), "comand": "python"}}))
    done = run_mcpyard(home, "status", "--json", "--mcp-config", config)
    warnings = json.loads(done.stdout)["warnings"]
    assert any("'comand'" in w and "did you mean `command`" in w for w in warnings), warnings


@pytest.mark.parametrize(
    ("entry", "state"),
    [
        (fixture_server("exits_at_once"), "failed"),
        ({"args": ["nothing to run"]}, "skipped"),
    ],
)
def test_call1_calling_a_tool_of_a_server_that_is_not_up_says_so_and_why(
    home: Home, entry: dict[str, object], state: str
) -> None:
    config = str(home.write_config({"broken": entry}))
    done = run_mcpyard(home, "call", "broken__anything", "--json", "--mcp-config", config)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "server_unavailable", error
    assert f"server 'broken', which is {state}" in error["message"]


def test_err1_reasons_never_nest_parentheses(home: Home) -> None:
    config = str(home.write_config({"h": fixture_server("hostile")}))
    done = run_mcpyard(home, "call", "h__bump", "--json", "--mcp-config", config)
    message = json.loads(done.stdout)["error"]["message"]
    assert "((" not in message
    assert "))" not in message


def test_call1_a_tool_of_a_disabled_server_is_unknown_and_the_message_says_the_server_is_off(home: Home) -> None:
    config = str(home.write_config({"off": {**fixture_server("basic"), "enabled": False}}))
    error = json.loads(run_mcpyard(home, "call", "off__add", "--json", "--mcp-config", config).stdout)["error"]
    assert error["code"] == "unknown_tool"
    assert "server 'off', whose prefix it has, is disabled" in error["message"]


def _serve(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpyard", "serve", *args],
        input="",
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=90,
        check=False,
    )


def test_gw1_serve_warns_on_stderr_when_it_shares_nothing(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    nothing = _serve(home, "--mcp-config", config)
    assert nothing.returncode == 0, nothing.stderr
    assert "warning: it shares no tool" in nothing.stderr
    assert "--share-all" in nothing.stderr
    assert nothing.stdout == "", "standard output is the MCP stream: no warning goes there"
    shared = _serve(home, "--share-all", "--mcp-config", config)
    assert "shares no tool" not in shared.stderr


def test_gw4_serve_accepts_a_mode(home: Home) -> None:
    config = str(home.write_config({"basic": fixture_server("basic")}))
    assert _serve(home, "--mode", "read-only", "--share-all", "--mcp-config", config).returncode == 0
    bad = _serve(home, "--mode", "sometimes", "--mcp-config", config)
    assert bad.returncode == 2
    assert "unknown mode 'sometimes'" in bad.stderr


@pytest.mark.anyio
async def test_conn5_ctrl_c_during_a_call_ends_it_at_once_with_every_server_stopped(home: Home) -> None:
    """The measured time is in the closing note (about 0.3 to 0.55 s); the bound here only catches a long wait."""
    started = home.root / "slow.started"
    slow = {**fixture_server("basic"), "env": {"BASIC_SLOW_STARTED": str(started)}}
    config = home.write_config({"basic": slow, "other": fixture_server("basic")}, mode="auto")
    command = [sys.executable, "-m", "mcpyard", "call", "basic__slow", "--args", '{"seconds": 60}']
    command += ["--mcp-config", str(config)]
    cli = await anyio.open_process(with_ctrl_c(command), cwd=home.workspace, env=home.environ, stderr=subprocess.PIPE)
    async with cli:
        server = await wait_for_pid(started)
        cli.send_signal(signal.SIGINT)
        with anyio.fail_after(3):
            code = await cli.wait()
    assert code == 130
    await wait_dead(server)
