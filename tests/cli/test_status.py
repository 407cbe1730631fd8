"""`mcpyard status`: every state at once, and sources named in words (CLI-1, CFG-1, API-2, CONN-3)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests._cli import run_mcpyard, run_mcpyard_in_thread
from tests.conftest import Home, fixture_server
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

SILENT_TIMEOUT = 3


async def test_api2_status_json_gives_every_state_and_reason(home: Home) -> None:
    (home.workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj1": {"command": "echo"}, "proj2": {"url": "https://example.invalid/mcp"}}})
    )
    async with (
        serve_http_in_process("basic", "streamable-http") as http_url,
        serve_http_in_process("basic", "sse") as sse_url,
    ):
        servers: dict[str, dict[str, Any]] = {
            "alpha": fixture_server("basic"),
            "beta": fixture_server("basic"),
            "remote_http": {"url": http_url},
            # No transport given: the streamable POST is refused, so mcpyard falls back to SSE (CONN-1).
            "remote_sse": {"url": sse_url},
            "missing": {"command": "/nonexistent/mcp-server-xyz"},
            "crasher": fixture_server("exits_at_once"),
            "silent": {**fixture_server("never_answers"), "connect_timeout_secs": SILENT_TIMEOUT},
            "twin_low": {**fixture_server("basic"), "name": "twin"},
            "twin_high": {**fixture_server("basic"), "name": "twin"},
            "empty": {},
        }
        config = home.write_config(servers)
        started = time.monotonic()
        done = await run_mcpyard_in_thread(
            home, "status", "--json", "--mcp-config", str(config), "--workspace", str(home.workspace)
        )
        elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    assert set(page) >= {"session_id", "mode", "workspace", "warnings", "servers"}
    assert page["mode"] == "ask"
    by_id = {server["id"]: server for server in page["servers"]}

    for healthy in ("alpha", "beta", "remote_http", "remote_sse", "twin_high"):
        assert by_id[healthy]["state"] == "connected", (healthy, by_id[healthy]["reason"])
        assert by_id[healthy]["protocol_version"]
        assert by_id[healthy]["tools"]
    assert by_id["alpha"]["transport"] == "stdio"
    assert by_id["remote_http"]["transport"] == "streamable_http"
    assert by_id["remote_sse"]["transport"] == "sse"
    tool = by_id["alpha"]["tools"][0]
    assert set(tool) >= {"name", "tool", "annotations", "definition_hash"}
    assert tool["name"].startswith("alpha__")

    assert by_id["missing"]["state"] == "failed"
    assert "command not found" in by_id["missing"]["reason"]
    assert by_id["crasher"]["state"] == "failed"
    assert "code 3" in by_id["crasher"]["reason"]
    assert "cannot open database" in by_id["crasher"]["reason"]
    assert by_id["silent"]["state"] == "failed"
    assert f"within {SILENT_TIMEOUT} s" in by_id["silent"]["reason"]
    assert by_id["twin_low"]["state"] == "shadowed"
    assert "twin_high" in by_id["twin_low"]["reason"]
    assert by_id["empty"]["state"] == "skipped"
    assert by_id["empty"]["reason"]
    for project in ("proj1", "proj2"):
        assert by_id[project]["state"] == "untrusted"
        assert by_id[project]["source"] == "project"
    assert any("mcpyard trust" in warning for warning in page["warnings"])
    # Servers connect concurrently: the whole page takes about the slowest connect timeout.
    assert elapsed < SILENT_TIMEOUT + 15


def test_api2_status_exits_2_with_one_line_when_the_config_cannot_be_read(home: Home) -> None:
    config = home.root / "bad.json"
    config.write_text('{"servers": [], "mcpServers": {}}')
    done = run_mcpyard(home, "status", "--json", "--mcp-config", str(config), "--workspace", str(home.workspace))
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert "bad.json" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["status", "--nope"],
        ["call"],
        ["call", "x", "--args", "{not json"],
        ["call", "x", "--args", "[1]"],
        ["frobnicate"],
    ],
)
def test_cli2_usage_errors_are_one_line_and_exit_2(home: Home, args: list[str]) -> None:
    done = run_mcpyard(home, *args, "--workspace", str(home.workspace))
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("mcpyard: error:")
    assert len(done.stderr.strip().splitlines()) == 1


def test_cli1_the_status_page_names_each_source_in_words_and_the_json_keeps_its_kind(home: Home) -> None:
    home.config_home.mkdir()
    (home.config_home / "config.toml").write_text(
        "[mcp.mcpServers.mine]\n"
        'command = "echo"\n'
        "enabled = false\n"
        "\n"
        "[mcp.mcpServers.low]\n"
        'command = "/nonexistent/mcp-low"\n'
        'name = "twin"\n'
    )
    (home.workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": {"command": "echo", "enabled": False}}})
    )
    config = home.write_config(
        {"given": {"command": "echo", "enabled": False}, "high": {"command": "/nonexistent/mcp-high", "name": "twin"}}
    )
    options = ("--mcp-config", str(config), "--workspace", str(home.workspace), "--trust")

    page = run_mcpyard(home, "status", *options)
    assert page.returncode == 0, page.stderr
    assert "* given [--mcp-config file] disabled" in page.stdout
    assert "* mine [user config] disabled" in page.stdout
    assert "* proj [project file] disabled" in page.stdout
    assert f"shadowed by server 'high' from the --mcp-config file {config}: " in page.stdout
    assert "[flag]" not in page.stdout
    assert "flag config" not in page.stdout

    listed = json.loads(run_mcpyard(home, "status", *options, "--json").stdout)
    sources = {server["id"]: server["source"] for server in listed["servers"]}
    assert sources == {"given": "flag", "high": "flag", "mine": "user", "low": "user", "proj": "project"}

    doctor = run_mcpyard(home, "doctor", "mine", *options)
    assert doctor.returncode == 0, doctor.stderr
    assert "source: user config\n" in doctor.stdout
    assert json.loads(run_mcpyard(home, "doctor", "mine", *options, "--json").stdout)["source"] == "user"


def test_err1_conn3_status_names_refused_tools_and_a_server_whose_listing_cannot_be_read(home: Home) -> None:
    """A listing nested 100,000 deep fails its server at once; a tool whose schema passes a bound is refused."""
    connect_timeout = 30
    config = home.write_config(
        {
            "deep": {**fixture_server("deep_listing"), "connect_timeout_secs": connect_timeout},
            "hs": fixture_server("hostile_schemas"),
            "plain": fixture_server("basic"),
        }
    )
    options = ("--mcp-config", str(config), "--workspace", str(home.workspace))
    started = time.monotonic()
    done = run_mcpyard(home, "status", "--json", *options)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < connect_timeout / 2, "the unreadable listing did not wait out the connect timeout"
    page = json.loads(done.stdout)
    by_id = {server["id"]: server for server in page["servers"]}
    assert by_id["deep"]["state"] == "failed"
    assert "nested too deeply" in by_id["deep"]["reason"]
    assert by_id["plain"]["state"] == "connected"
    hostile = by_id["hs"]
    assert hostile["state"] == "connected"
    refused = {tool["tool"]: tool for tool in hostile["refused_tools"]}
    assert set(refused) == {"exponential", "too_deep", "remote_ref", "bad_output"}
    assert refused["exponential"]["name"] == "hs__exponential"
    assert "expands to more than" in refused["exponential"]["reason"]
    assert "hs__exponential" not in {tool["name"] for tool in hostile["tools"]}
    assert "hs__echo" in {tool["name"] for tool in hostile["tools"]}
    assert any("'exponential' is not offered" in warning for warning in page["warnings"])

    human = run_mcpyard(home, "status", *options)
    assert "hs__exponential  (not offered: its input schema is refused: it expands" in human.stdout


@pytest.mark.parametrize("as_json", [False, True])
async def test_cli2_conn1_doctor_names_the_transport_a_url_alone_connected_with(home: Home, as_json: bool) -> None:
    """A URL with no `transport` that speaks only SSE: `doctor` says `sse` as `status` does, not what it tried first."""
    async with serve_http_in_process("basic", "sse") as sse_url:
        config = home.write_config({"old": {"url": sse_url}})
        done = await run_mcpyard_in_thread(
            home, "doctor", "old", *(["--json"] if as_json else []), "--mcp-config", str(config)
        )
    assert done.returncode == 0, done.stderr
    if as_json:
        report = json.loads(done.stdout)
        assert (report["state"], report["transport"]) == ("connected", "sse")
    else:
        assert "transport: sse\n" in done.stdout
        assert "streamable_http" not in done.stdout
