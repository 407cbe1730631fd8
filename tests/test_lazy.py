"""A lazy host starts a server only when a call needs it, offers what it listed last time meanwhile, and runs a
call only against the live definition it offered; `mcpyard call`, which offers nothing, waits for the owner of its
tool alone and runs the tool as defined now, policy and pins applying to it (CONN-3, CAT-2, CALL-1, CLI-3, POL-4,
POL-5).

Real server processes and `mcpyard` runs: when a server's process starts is the subject.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpyard import MemoryListings
from tests._cli import run_mcpyard
from tests._processes import wait_dead, wait_for_pid
from tests.conftest import SERVERS, Home, fixture_server

pytestmark = pytest.mark.anyio


def named(home: Home, label: str, *tools: str, **env: str) -> dict[str, Any]:
    """A `named.py` server that writes its pid to `<label>.started` once it runs."""
    return {
        **fixture_server("named", *tools),
        "env": {"NAMED_STARTED_FILE": str(home.root / f"{label}.started"), **env},
    }


def started(home: Home, label: str) -> bool:
    return (home.root / f"{label}.started").exists()


def open_lazy(home: Home, config: Path, **options: Any) -> Any:
    return home.open(config, mode="auto", lazy=True, **options)


async def test_conn3_a_lazy_host_starts_only_the_server_a_call_needs(home: Home) -> None:
    config = home.write_config({"a": named(home, "a", "ping"), "b": named(home, "b", "pong")})
    async with open_lazy(home, config) as host:
        assert not started(home, "a")
        assert not started(home, "b")
        assert {s.id: s.state for s in host.status().servers} == {"a": "stopped", "b": "stopped"}
        assert "not started yet" in (host.status().servers[0].reason or "")
        result = await host.call("a__ping", {})
        assert result.ok, result.error
        assert started(home, "a")
        assert not started(home, "b"), "a call to one server's tool never starts another"
        assert {s.id: s.state for s in host.status().servers} == {"a": "connected", "b": "stopped"}
        await host.start()
        assert started(home, "b")
        assert all(s.state == "connected" for s in host.status().servers)


async def test_cat2_a_lazy_host_offers_the_listing_kept_from_the_last_run_and_calls_only_the_live_tool(
    home: Home,
) -> None:
    description = home.root / "description.txt"
    description.write_text("First definition.", encoding="utf-8")
    entry = named(home, "a", "ping", NAMED_DESCRIPTION_FILE=str(description))
    config = home.write_config({"a": entry})
    async with open_lazy(home, config) as host:
        assert host.server_tools() == [], "never listed before: nothing to offer until it starts"
        assert (await host.call("a__ping", {})).ok
    (home.root / "a.started").unlink()
    async with open_lazy(home, config) as host:
        [offered] = host.server_tools()
        assert offered.name == "a__ping"
        assert offered.description == "First definition."
        assert not started(home, "a"), "offered from the kept listing, before the server runs"
        assert (await host.call("a__ping", {})).ok
    description.write_text("Second definition: do something else.", encoding="utf-8")
    async with open_lazy(home, config) as host:
        [offered] = host.server_tools()
        assert offered.description == "First definition."
        refused = await host.call("a__ping", {})
        assert refused.error is not None
        assert refused.error["code"] == "tool_changed", refused.error
        [live] = host.server_tools()
        assert live.description == "Second definition: do something else."
        assert (await host.call("a__ping", {})).ok, "once offered as it is now, it runs"


async def test_cat2_a_lazy_host_given_listings_of_its_own_offers_what_they_hold_and_writes_no_file(home: Home) -> None:
    """A program that keeps listings itself (the organization service, for all its replicas) gives them to the host:
    a server not started is offered with what they hold, again each time the program replaces them."""
    config = home.write_config({"a": named(home, "a", "ping")})
    listings = MemoryListings()
    async with open_lazy(home, config, listings=listings) as host:
        assert host.server_tools() == []
        assert (await host.call("a__ping", {})).ok
        spec = host.view.specs["a"]
    (home.root / "a.started").unlink()
    kept = listings.get(spec)
    assert kept is not None
    assert [tool["name"] for tool in kept] == ["ping"], "kept as it was listed"
    assert list(home.data_home.rglob("*listing*")) == [], "nothing on disk"

    async with open_lazy(home, config, listings=listings) as host:
        [offered] = host.server_tools()
        assert offered.name == "a__ping"
        assert not started(home, "a")
        extra = {"name": "pong", "description": "Listed by another process.", "inputSchema": {"type": "object"}}
        assert listings.replace({"a": [*kept, extra]})
        assert sorted(tool.name for tool in host.server_tools()) == ["a__ping", "a__pong"]
        assert not started(home, "a")
        assert (await host.call("a__ping", {})).ok, "the live tool is the one offered"
    assert not listings.replace({"a": kept}), "the live listing is kept in place of the other process's"


async def test_cat2_on_a_lazy_host_the_callers_definition_hash_and_the_kept_listings_must_both_hold(
    home: Home,
) -> None:
    """A caller's `definition_hash` is never replaced by the kept listing's: each must be the live tool's."""
    config = home.write_config({"a": named(home, "a", "ping")})
    async with open_lazy(home, config) as host:
        assert (await host.call("a__ping", {})).ok
    async with open_lazy(home, config) as host:
        [offered] = host.server_tools()
        refused = await host.call("a__ping", {}, definition_hash="0" * 64)
        assert refused.error is not None, "a hash the caller was never offered does not run, kept listing or not"
        assert refused.error["code"] == "tool_changed", refused.error
    async with open_lazy(home, config) as host:
        assert (await host.call("a__ping", {}, definition_hash=offered.definition_hash)).ok


async def test_conn3_a_lazy_hosts_call_to_a_server_that_cannot_start_says_why_within_its_timeout(home: Home) -> None:
    hung = {**fixture_server("never_answers"), "connect_timeout_secs": 1}
    config = home.write_config({"hung": hung, "a": named(home, "a", "ping")})
    async with open_lazy(home, config) as host:
        result = await host.call("hung__anything", {})
        assert result.error is not None
        assert result.error["code"] == "server_unavailable"
        assert "hung" in result.error["message"]
        assert not started(home, "a")


def test_conn3_mcpyard_call_waits_only_for_the_server_that_owns_the_tool(home: Home) -> None:
    pid_file = home.root / "hung.pid"
    hung = {
        "command": "sh",
        "args": ["-c", f"echo $$ > {pid_file}; exec {sys.executable} {SERVERS / 'never_answers.py'}"],
    }
    servers = {"hung": hung, "slow": named(home, "slow", "x"), "a": named(home, "a", "ping")}
    config = home.write_config(servers, mode="auto")
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpyard", "call", "a__ping", "--json", "--mcp-config", str(config)],
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=60,
        check=False,
    )
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert not pid_file.exists(), "the hung server was never started"
    assert not started(home, "slow")
    assert took < 20, f"took {took:.1f} s: it waited for a server the call does not need"


async def test_conn5_a_lazy_host_stops_what_it_started(home: Home) -> None:
    config = home.write_config({"a": named(home, "a", "ping")})
    async with open_lazy(home, config) as host:
        await host.call("a__ping", {})
        pid = await wait_for_pid(home.root / "a.started")
        os.kill(pid, 0)  # running while the host is open
    await wait_dead(pid)


@pytest.mark.long
def test_cli3_status_on_a_terminal_shows_the_servers_coming_up(home: Home) -> None:
    # Long enough for `a` to come up first on a loaded machine (its own start takes seconds there).
    hung = {**fixture_server("never_answers"), "connect_timeout_secs": 10}
    config = home.write_config({"hung": hung, "a": named(home, "a", "ping")})
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpyard", "status", "--mcp-config", str(config)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**home.environ, "TERM": "xterm", "COLUMNS": "200"},
        cwd=home.workspace,
    )
    os.close(follower)
    seen = b""
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    text = seen.decode(errors="replace")
    assert "1 of 2 MCP servers settled; waiting for hung" in text, text[-2000:]


# ----------------------------------------------------------------- `mcpyard call`: no listing offered


def call_ping(home: Home, config: Path) -> dict[str, Any]:
    """`mcpyard call a__ping --json`: its `CallResult` as JSON."""
    done = run_mcpyard(home, "call", "a__ping", "--json", "--mcp-config", str(config))
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def changing_server(home: Home, **settings: Any) -> tuple[Path, Path]:
    """A config whose `a__ping` takes its description from a file; (the config, the file)."""
    description = home.root / "description.txt"
    description.write_text("First definition.", encoding="utf-8")
    entry = named(home, "a", "ping", NAMED_DESCRIPTION_FILE=str(description))
    return home.write_config({"a": entry}, mode="auto", **settings), description


def test_cat2_mcpyard_call_runs_a_tool_whose_definition_changed_since_the_last_run_at_the_first_try(
    home: Home,
) -> None:
    """No one was offered the listing kept from the last run: the live definition decides, not `tool_changed`."""
    config, description = changing_server(home)
    assert call_ping(home, config)["ok"] is True  # the listing is kept from this run
    description.write_text("Second definition: do something else.", encoding="utf-8")
    result = call_ping(home, config)
    assert result["ok"] is True, result["error"]


def test_pol5_mcpyard_call_still_refuses_a_pinned_tool_whose_definition_changed(home: Home) -> None:
    """The live definition decides, and policy applies to it: a pin to the old one suspends the tool."""
    config, description = changing_server(home)
    assert call_ping(home, config)["ok"] is True
    pinned = run_mcpyard(home, "pin", "a__ping", "run_freely", "--mcp-config", str(config))
    assert pinned.returncode == 0, pinned.stderr
    description.write_text("Second definition: do something else.", encoding="utf-8")
    error = call_ping(home, config)["error"]
    assert error["code"] == "tool_changed"
    assert "changed since it was reviewed" in error["message"], "refused by the pin, not by the kept listing"


def test_pol4_mcpyard_call_still_refuses_a_denied_tool_whose_definition_changed(home: Home) -> None:
    config, description = changing_server(home, permissions={"deny": ["a__ping"]})
    assert call_ping(home, config)["error"]["code"] == "denied"
    description.write_text("Second definition: do something else.", encoding="utf-8")
    assert call_ping(home, config)["error"]["code"] == "denied"


def test_cat2_a_tool_removed_since_the_last_run_is_an_unknown_tool_its_server_no_longer_lists(home: Home) -> None:
    """Not "unavailable, its server is connected": the server was asked, the tool is gone (the same code next run)."""
    tools = home.root / "tools.txt"
    tools.write_text("ping pong", encoding="utf-8")
    config = home.write_config({"a": named(home, "a", NAMED_TOOLS_FILE=str(tools))}, mode="auto")
    assert call_ping(home, config)["ok"] is True  # the listing is kept from this run
    tools.write_text("pong", encoding="utf-8")
    first, second = call_ping(home, config)["error"], call_ping(home, config)["error"]
    assert (first["code"], second["code"]) == ("unknown_tool", "unknown_tool")
    assert "server 'a' no longer lists it" in first["message"]


class _Shell:
    """`mcpyard shell --json` reading lines as they are typed, its answers read a line at a time."""

    def __init__(self, home: Home, config: Path) -> None:
        command = [sys.executable, "-m", "mcpyard", "shell", "--json", "--mcp-config", str(config)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=home.environ, cwd=home.workspace
        )

    def answer(self, line: str) -> dict[str, Any]:
        """Type `line`; the shell's JSON answer to it."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, f"no answer to {line!r} within 60 s"
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer


def test_cat2_the_shell_runs_a_typed_call_on_the_live_definition_after_a_restart_from_the_kept_listing(
    home: Home,
) -> None:
    """A person typing in the shell was offered no listing, as in `mcpyard call`: no `tool_changed` once its server
    restarts (lazily, from the listing it kept) with a new definition."""
    tools = home.root / "tools.txt"
    tools.write_text("ping exit", encoding="utf-8")
    description = home.root / "description.txt"
    description.write_text("First definition.", encoding="utf-8")
    entry = named(home, "a", NAMED_TOOLS_FILE=str(tools), NAMED_DESCRIPTION_FILE=str(description))
    config = home.write_config({"a": entry}, mode="auto")
    shell = _Shell(home, config)
    with shell.process:
        assert shell.answer("call a__ping")["ok"] is True
        assert shell.answer("call a__exit")["ok"] is False  # the server ended
        end = time.monotonic() + 30
        while shell.answer("/mcp")["servers"][0]["state"] == "connected":
            assert time.monotonic() < end, "the server's end was never noticed"
        description.write_text("Second definition: do something else.", encoding="utf-8")
        shell.answer("/mcp reload")  # back as not started, with the listing it had
        result = shell.answer("call a__ping")
        assert result["ok"] is True, result["error"]
        shell.process.kill()
