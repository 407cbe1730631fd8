"""`mcpyard trust --mcp-config FILE`: the workspace's own .mcp.json is trusted, others refused (CFG-6, API-4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home

PROJECT_SERVER = {"mcpServers": {"proj": {"command": "/nonexistent/mcp-proj"}}}


def mcpyard(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpyard", *args],
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=60,
        check=False,
    )


def project_state(home: Home) -> str:
    """The project server's state on the status page of the workspace, run without --trust."""
    done = mcpyard(home, "status", "--json")
    assert done.returncode == 0, done.stderr
    [server] = json.loads(done.stdout)["servers"]
    assert server["source"] == "project"
    return str(server["state"])


@pytest.fixture
def project(home: Home) -> Path:
    path = home.workspace / ".mcp.json"
    path.write_text(json.dumps(PROJECT_SERVER))
    return path


def test_cfg6_trust_refuses_a_file_given_with_mcp_config_in_one_line(home: Home, project: Path) -> None:
    mine = home.write_config({})
    done = mcpyard(home, "trust", "--mcp-config", str(mine))
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcpyard: error: a file given with --mcp-config needs no trust: ")
    assert str(mine) in line
    assert "always trusted" in line
    assert "--workspace DIR" in line
    assert project_state(home) == "untrusted", "nothing was recorded"


def test_cfg6_trust_given_another_workspaces_project_file_names_that_workspace(home: Home, project: Path) -> None:
    elsewhere = home.root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".mcp.json").write_text(json.dumps(PROJECT_SERVER))
    done = mcpyard(home, "trust", "--mcp-config", str(elsewhere / ".mcp.json"))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcpyard: error: a file given with --mcp-config needs no trust")
    assert f"run `mcpyard trust --workspace {elsewhere.resolve()}`" in line
    assert project_state(home) == "untrusted"


@pytest.mark.parametrize("relative", [True, False])
def test_cfg6_trust_given_the_workspaces_own_project_file_trusts_it(home: Home, project: Path, relative: bool) -> None:
    given = ".mcp.json" if relative else str(project)
    # --trust means nothing to `trust`: accepted and ignored.
    done = mcpyard(home, "trust", "--mcp-config", given, "--trust")
    assert done.returncode == 0, done.stderr
    assert "runs /nonexistent/mcp-proj" in done.stdout
    assert project_state(home) == "failed", "trusted: the server was started (and its command is missing)"
