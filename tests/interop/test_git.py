"""PyPI's mcp-server-git on a scratch repository, through the Host and `mcpyard serve` (CONN-1, CAT-1, CALL-6, GW-1).

The server is held to one repository (`--repository`), made with `git init` in the test's own folder.

The official reference servers run as real processes, as people run them: interoperability is the
subject.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpyard import CallResult, Host
from tests.conftest import Home, body
from tests.gateway.test_serve import serve_params, text_of
from tests.interop.conftest import list_all, own_listing_meanwhile

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SERVER_ID = "git"
CALL_SECONDS = 15


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A new repository with one untracked file; commits in it need no global git config."""
    path = tmp_path.resolve() / "scratch"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch", "main")
    git(path, "config", "user.name", "Interop Test")
    git(path, "config", "user.email", "interop@example.invalid")
    (path / "README.md").write_text("scratch repository\n", encoding="utf-8")
    return path


def server_entry(git_server: Path, repo: Path) -> dict[str, Any]:
    return {"command": str(git_server), "args": ["--repository", str(repo)], "call_timeout_secs": 10}


async def call(host: Host, tool: str, arguments: Mapping[str, Any]) -> CallResult:
    with anyio.fail_after(CALL_SECONDS):
        return await host.call(f"{SERVER_ID}__{tool}", arguments)


async def test_conn1_cat1_call6_git_server_has_every_tool_offered_and_shows_status_and_log_around_a_commit(
    home: Home, git_server: Path, repo: Path
) -> None:
    entry = server_entry(git_server, repo)
    config = home.write_config({SERVER_ID: entry})
    # `auto`: this proves the server's calls, not the approval policy (POL-1).
    async with own_listing_meanwhile(entry) as listing, home.open(config, mode="auto") as host:
        direct = await listing.tools()
        [status] = host.status().servers
        assert status.state == "connected", status.reason
        tools = {info.tool: info for info in host.server_tools()}
        assert sorted(tools) == sorted(direct), "the host does not offer exactly the tools the server lists"
        assert {"git_status", "git_add", "git_commit", "git_log", "git_diff"} <= tools.keys()
        for name, wire in direct.items():
            assert tools[name].name == f"{SERVER_ID}__{name}"
            assert tools[name].input_schema == wire["inputSchema"], name
            assert tools[name].annotations == wire.get("annotations", {}), name

        where = {"repo_path": str(repo)}
        before = await call(host, "git_status", where)
        assert before.ok, before.error
        assert "Untracked files" in body(before)
        assert "README.md" in body(before)

        added = await call(host, "git_add", {**where, "files": ["README.md"]})
        assert added.ok, added.error
        committed = await call(host, "git_commit", {**where, "message": "First commit, through mcpyard"})
        assert committed.ok, committed.error
        head = git(repo, "rev-parse", "HEAD").strip()
        assert f"Changes committed successfully with hash {head}" in body(committed)

        after = await call(host, "git_status", where)
        assert after.ok, after.error
        assert not after.cached, "git_add and git_commit changed the server since the first git_status (CALL-6)"
        assert "nothing to commit, working tree clean" in body(after)

        log = await call(host, "git_log", where)
        assert log.ok, log.error
        assert f"Commit: {head}" in body(log)
        assert "Author: Interop Test" in body(log)
        assert "Message: First commit, through mcpyard" in body(log)

        elsewhere = await call(host, "git_status", {"repo_path": str(home.workspace)})
        assert not elsewhere.ok
        assert elsewhere.error is not None
        assert "is outside the allowed repository" in elsewhere.error["message"]
        assert "\n" not in elsewhere.error["message"]


async def test_gw1_git_server_through_the_gateway_shows_status_and_log_of_a_scratch_repository(
    home: Home, git_server: Path, repo: Path
) -> None:
    git(repo, "add", "README.md")
    git(repo, "commit", "--quiet", "--message", "Committed before the gateway started")
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("changed since\n", encoding="utf-8")
    entry = server_entry(git_server, repo)
    config = str(home.write_config({SERVER_ID: entry}))
    with anyio.fail_after(60):
        async with (
            own_listing_meanwhile(entry) as listing,
            Client(serve_params(home, config, "--share-all")) as client,
        ):
            offered, direct = await list_all(client), await listing.tools()
            assert sorted(offered) == sorted([*(f"{SERVER_ID}__{name}" for name in direct), "read_result"])
            for name, wire in direct.items():
                assert offered[f"{SERVER_ID}__{name}"]["inputSchema"] == wire["inputSchema"], name
                assert offered[f"{SERVER_ID}__{name}"].get("annotations") == wire.get("annotations"), name

            # Read-only tools: they run in the default mode, with no one to ask.
            status = await client.call_tool(f"{SERVER_ID}__git_status", {"repo_path": str(repo)})
            assert not status.is_error, text_of(status)
            assert "modified:   README.md" in text_of(status)
            log = await client.call_tool(f"{SERVER_ID}__git_log", {"repo_path": str(repo)})
            assert not log.is_error, text_of(log)
            assert f"Commit: {head}" in text_of(log)
            assert "Message: Committed before the gateway started" in text_of(log)
            diff = await client.call_tool(f"{SERVER_ID}__git_diff_unstaged", {"repo_path": str(repo)})
            assert not diff.is_error, text_of(diff)
            assert "+changed since" in text_of(diff)
