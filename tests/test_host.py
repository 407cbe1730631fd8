"""The Host over real fixture servers: connect, name, call, reload, project trust.

CONN-1, CONN-2, CONN-4, CONN-6, CAT-1, CALL-1, CALL-2, CFG-6, CFG-7.

Real server processes: connecting, restarting, the server's environment and working folder are the
subject.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpyard import Host, StateError
from mcpyard._paths import trust_file
from mcpyard.config import TrustStore, read_project
from tests.conftest import PYTHON, SERVERS, Home, body, fixture_server
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def open_host(home: Home, servers: dict[str, dict[str, Any]], **settings: Any) -> AsyncIterator[Host]:
    config = home.write_config(servers, **settings)
    async with home.open(
        config,
    ) as host:
        yield host


async def test_conn1_stdio_server_connects_and_lists_prefixed_tools(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        status = host.status()
        [server] = status.servers
        assert server.state == "connected", server.reason
        assert server.protocol_version
        names = {tool.name for tool in host.tools()}
        assert {"basic__echo", "basic__add", "basic__slow"} <= names
        assert server.instructions_bytes == len(b"Basic fixture server.")


async def test_call1_call_runs_and_returns_the_text(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        result = await host.call("basic__add", {"a": 2, "b": 3})
        assert result.ok, result.error
        assert body(result) == "5"
        assert result.server == "basic"


async def test_call1_unknown_tool_is_refused_with_a_clear_error(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        result = await host.call("basic__nope", {})
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "unknown_tool"
        assert "basic__nope" in result.error["message"]


async def test_call1_arguments_not_matching_the_schema_are_refused_before_the_server(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        result = await host.call("basic__add", {"a": "two"})
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "invalid_arguments"
        assert "a:" in result.error["message"]
        assert "'b' is a required property" in result.error["message"]


async def test_call_tool_error_is_reported_as_not_ok(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        result = await host.call("basic__fail", {})
        assert not result.ok
        assert result.error is not None
        assert result.error["code"] == "tool_error"
        assert "always fails" in result.text


async def test_call2_timeout_cancels_the_call(home: Home) -> None:
    # 2 s: the calls after the slow one share its deadline, and a loaded machine can stall one for half a second.
    entry = {**fixture_server("basic"), "call_timeout_secs": 2}
    async with open_host(home, {"basic": entry}) as host:
        with anyio.fail_after(10):
            result = await host.call("basic__slow", {"seconds": 30})
        assert result.error is not None
        assert result.error["code"] == "timeout"
        # notifications/cancelled reached the server, which stopped the call and is still usable.
        with anyio.fail_after(5):
            assert body(await host.call("basic__cancellations", {"at_least": 1})) == "1"
        assert body(await host.call("basic__add", {"a": 1, "b": 1})) == "2"
        assert host.status().servers[0].note is None


async def test_call2_progress_restarts_the_clock(home: Home) -> None:
    entry = {**fixture_server("basic"), "call_timeout_secs": 0.6}
    async with open_host(home, {"basic": entry}) as host:
        seen: list[float] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(value)

        with anyio.fail_after(10):
            result = await host.call("basic__slow", {"seconds": 1.5, "progress_every": 0.2}, on_progress=progress)
        assert result.ok, result.error
        assert len(seen) >= 3


async def test_call2_a_stdio_server_ignoring_cancellation_is_killed_and_restarted(home: Home) -> None:
    entry = {**fixture_server("ignores_cancel"), "call_timeout_secs": 0.5}
    async with open_host(home, {"stubborn": entry}) as host:
        with anyio.fail_after(15):
            result = await host.call("stubborn__block", {"seconds": 20})
            assert result.error is not None
            assert result.error["code"] == "timeout"
            await host.wait_until(
                lambda h: h.status().servers[0].note is not None and h.status().servers[0].state == "connected"
            )
        server = host.status().servers[0]
        assert server.note is not None
        assert "restarted" in server.note
        assert (await host.call("stubborn__ok", {})).ok


async def test_conn4_a_stdio_server_that_exits_is_marked_stopped_and_its_tools_leave(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host:
        process = host.server("basic")
        assert process is not None
        assert process.pid is not None
        import os
        import signal

        os.kill(process.pid, signal.SIGTERM)
        with anyio.fail_after(10):
            await host.wait_until(lambda h: h.status().servers[0].state == "stopped")
        server = host.status().servers[0]
        assert server.reason is not None
        assert "killed by signal SIGTERM" in server.reason
        assert host.server_tools() == []
        result = await host.call("basic__add", {"a": 1, "b": 2})
        assert result.error is not None
        assert result.error["code"] == "server_unavailable"
        assert "stopped" in result.error["message"]


async def test_conn4_list_changed_refreshes_the_catalog(home: Home) -> None:
    async with open_host(home, {"dyn": fixture_server("list_changed")}, mode="auto") as host:
        result = await host.call("dyn__add_tool", {"name": "fresh"})
        assert result.ok, result.error
        with anyio.fail_after(10):
            await host.wait_until(lambda h: "dyn__fresh" in {tool.name for tool in h.tools()})


async def test_conn6_every_page_of_tools_is_listed(home: Home) -> None:
    async with open_host(home, {"paged": fixture_server("paged")}) as host:
        assert len([t for t in host.tools() if t.server == "paged"]) == 6


async def test_conn6_endless_paging_is_bounded(home: Home) -> None:
    async with open_host(home, {"paged": fixture_server("paged", "--endless")}) as host:
        status = host.status()
        assert status.servers[0].state == "connected"
        assert any("100 pages" in warning for warning in status.warnings)


async def test_conn6_a_new_era_tool_with_an_invalid_header_annotation_is_left_out_saying_why(home: Home) -> None:
    async with open_host(home, {"h": fixture_server("headers")}) as host:
        status = host.status()
        names = {tool.name for tool in host.tools()}
    assert status.servers[0].protocol_version == "2026-07-28"
    assert "h__echo" in names
    assert not names & {"h__by_region", "h__bad_token"}, "the protocol says a client must not call them"
    said = " ".join(status.warnings)
    assert "x-mcp-header annotations are invalid" in said
    assert "'by_region'" in said
    assert "'bad_token'" in said


async def test_call8_a_server_using_a_deprecated_feature_is_noted_once_and_goes_on_working(home: Home) -> None:
    """The HTTP+SSE transport (deprecated in 2025-03-26) and log messages (2026-07-28) still work, noted once each."""

    def noted(host: Host, what: str) -> list[str]:
        return [warning for warning in host.status().warnings if what in warning]

    async with serve_http_in_process("basic", "sse") as url:
        servers = {"old": {"url": url, "transport": "sse"}, "e": fixture_server("echo_secrets")}
        async with open_host(home, servers) as host:
            added = await host.call("old__add", {"a": 1, "b": 2})
            for _ in range(2):
                chatty = await host.call("e__chatty", {"name": "HOME"})
                assert chatty.ok, chatty.error
            with anyio.fail_after(10):
                await host.wait_until(lambda h: bool(noted(h, "sends log messages")))
            [sse] = noted(host, "HTTP+SSE transport")
            [logs] = noted(host, "sends log messages")
    assert added.ok, added.error
    assert sse.startswith("server 'old' ")
    assert "deprecated in 2025-03-26" in sse
    assert logs.startswith("server 'e' ")
    assert "it still works" in logs


@pytest.mark.parametrize("era", ["new", "handshake"])
async def test_call8_roots_go_to_the_servers_whose_entry_lists_them_noted_once_and_to_no_other(
    home: Home, era: str
) -> None:
    """Roots (deprecated in 2026-07-28) still work, in both eras, for a server whose entry lists them (relative
    folders from the workspace): it asks and is told them, noted once. A server without `roots` is not told any
    (a server that takes roots may let them replace the folders its arguments name)."""
    args = ["--handshake"] if era == "handshake" else []
    outside = home.root / "shared"
    async with serve_http_in_process("elicits", "streamable-http", args) as url:
        servers = {
            "local": {**fixture_server("elicits"), "roots": [".", str(outside)]},
            "remote": {"url": url, "roots": ["docs"]},
            "plain": fixture_server("elicits"),
        }
        async with open_host(home, servers) as host:
            local = [json.loads(body(await host.call("local__roots", {}))) for _ in range(2)]
            remote = json.loads(body(await host.call("remote__roots", {})))
            plain = body(await host.call("plain__roots", {}))
            noted = [warning for warning in host.status().warnings if "asks its client for roots" in warning]
    assert local == [[home.workspace.resolve().as_uri(), outside.resolve().as_uri()]] * 2
    assert remote == [(home.workspace / "docs").resolve().as_uri()]
    assert "roots not supported" in plain, "a server whose entry lists no roots is not told any"
    assert sorted(warning.split("'")[1] for warning in noted) == ["local", "remote"], "once per server"
    assert all("deprecated in 2026-07-28" in warning and "it still works" in warning for warning in noted)


async def test_conn2_server_gets_a_minimal_environment_and_the_workspace_as_cwd(home: Home) -> None:
    entry = {**fixture_server("basic"), "env": {"GIVEN": "yes"}}
    environ = {**home.environ, "PROBE_API_TOKEN": "parent-token-5d1e", "PROBE_PLAIN": "parent-plain"}
    async with home.open(home.write_config({"basic": entry}), environ=environ) as host:

        async def env(name: str) -> str:
            return body(await host.call("basic__env", {"name": name}))

        assert await env("GIVEN") == "yes"
        assert await env("PATH") == environ["PATH"], "PATH is part of the minimal base"
        assert await env("HOME") == environ["HOME"]
        assert await env("PROBE_API_TOKEN") == "", "a secret-looking variable of the parent is not passed on"
        assert await env("PROBE_PLAIN") == "", "nor is any other variable outside the base"
        assert await env("MCPYARD_DATA_HOME") == ""
        assert Path(body(await host.call("basic__cwd", {}))) == home.workspace.resolve()


async def test_conn2_certificate_and_proxy_locations_pass_unless_they_carry_a_credential(home: Home) -> None:
    environ = {
        **home.environ,
        "SSL_CERT_FILE": "/etc/ssl/certs/corp.pem",
        "NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/corp.pem",
        "HTTPS_PROXY": "http://proxy.corp.test:3128",
        "HTTP_PROXY": "http://alice:hunter2@proxy.corp.test:3128",
        "NO_PROXY": "localhost,127.0.0.1",
    }
    async with home.open(home.write_config({"basic": fixture_server("basic")}), environ=environ) as host:

        async def env(name: str) -> str:
            return body(await host.call("basic__env", {"name": name}))

        for name in ("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "HTTPS_PROXY", "NO_PROXY"):
            assert await env(name) == environ[name], name
        assert await env("HTTP_PROXY") == "", "a proxy address with a user and password stays behind"


async def test_conn2_a_failed_stdio_servers_reason_says_its_environment_was_minimal(home: Home) -> None:
    config = home.write_config(
        {"crasher": fixture_server("exits_at_once"), "all": {**fixture_server("exits_at_once"), "inherit_env": "*"}}
    )
    async with home.open(config) as host:
        reasons = {server.id: server.reason or "" for server in host.status().servers}
    assert "minimal environment" in reasons["crasher"]
    assert "inherit_env" in reasons["crasher"]
    assert "minimal environment" not in reasons["all"], "a server given the whole environment is not told otherwise"


async def test_cfg7_reload_keeps_unchanged_servers_and_applies_changes(home: Home) -> None:
    async with open_host(home, {"a": fixture_server("basic"), "b": fixture_server("basic")}) as host:
        first_a, first_b = host.server("a"), host.server("b")
        assert first_a is not None
        assert first_b is not None
        assert first_b.pid is not None
        home.write_config({"a": fixture_server("basic"), "c": fixture_server("basic", "--name", "c")})
        status = await host.reload()
        assert [s.id for s in status.servers] == ["a", "c"]
        kept = host.server("a")
        assert kept is not None
        assert kept.connected
        assert kept.pid == first_a.pid, "an unchanged server keeps its connection and process"
        assert host.server("b") is None
        with pytest.raises(ProcessLookupError):
            os.kill(first_b.pid, 0)  # a server that left was stopped
        assert {t.server for t in host.server_tools()} == {"a", "c"}


async def test_cfg7_reload_is_refused_while_a_call_is_in_flight(home: Home) -> None:
    async with open_host(home, {"basic": fixture_server("basic")}) as host, anyio.create_task_group() as tg:
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            running.set()

        async def slow_call() -> None:
            await host.call("basic__slow", {"seconds": 1, "progress_every": 0.05}, on_progress=on_progress)

        tg.start_soon(slow_call)
        with anyio.fail_after(10):
            await running.wait()  # the server says the call runs
        with pytest.raises(StateError, match="in flight"):
            await host.reload()


async def test_cfg7_reload_tries_a_failed_server_again(home: Home) -> None:
    script = home.root / "later.py"
    async with open_host(home, {"later": {"command": PYTHON, "args": [str(script)]}}) as host:
        assert host.status().servers[0].state == "failed"
        script.write_text((SERVERS / "basic.py").read_text())
        status = await host.reload()
        assert status.servers[0].state == "connected", status.servers[0].reason


async def test_cfg6_the_host_starts_the_project_servers_trust_covers_and_a_reload_sees_new_trust(home: Home) -> None:
    """CFG-6, CFG-7, API-1: per-server trust as recorded; `trust_project=True` trusts every one for that run."""
    store = TrustStore(trust_file(home.data_home))
    project = home.workspace / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {"a": fixture_server("basic")}}))

    def trust_now() -> None:
        found = read_project(home.workspace)
        assert found is not None
        store.trust(home.workspace, found.digests())

    trust_now()
    both = {"a": fixture_server("basic"), "b": fixture_server("basic", "--name", "b")}
    project.write_text(json.dumps({"mcpServers": both}))
    options: dict[str, Any] = {
        "workspace": home.workspace,
        "environ": home.environ,
        "config_home": home.config_home,
        "data_home": home.data_home,
    }
    async with Host.open(**options) as host:
        servers = {server.id: server for server in host.status().servers}
        assert (servers["a"].state, servers["b"].state) == ("connected", "untrusted")
        assert (servers["b"].reason or "").startswith("added since you trusted it")
        trust_now()
        status = await host.reload()
        assert {server.id: server.state for server in status.servers} == {"a": "connected", "b": "connected"}
    project.write_text(json.dumps({"mcpServers": {"c": fixture_server("basic", "--name", "c")}}))
    async with Host.open(**options, trust_project=True) as host:
        assert {server.id: server.state for server in host.status().servers} == {"c": "connected"}
    async with Host.open(**options) as host:
        assert {server.id: server.state for server in host.status().servers} == {"c": "untrusted"}
