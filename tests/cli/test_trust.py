"""`mcpyard trust` end to end: it shows what will run, asks, records exactly that (CFG-6, API-2, API-4).

Every run is on a real workspace, user config and data folder (MCPYARD_CONFIG_HOME,
MCPYARD_DATA_HOME); one that answers on a terminal is a real `python -m mcpyard` process on a
pseudo-terminal, since the terminal is the subject. A server whose command would create a
marker file shows whether anything was started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._cli import run_mcpyard
from tests.conftest import PYTHON, Home, fixture_server

PROJECT_SERVER = {"mcpServers": {"proj": {"command": "/nonexistent/mcp-proj"}}}
TOUCH = "import pathlib, sys; pathlib.Path(sys.argv[1]).touch()"


def in_a_process(home: Home, *args: str, stdin: int) -> subprocess.CompletedProcess[str]:
    """One run in a real process, a terminal's end as its standard input."""
    return subprocess.run(
        [sys.executable, "-m", "mcpyard", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=90,
        check=False,
    )


def on_a_terminal(home: Home, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`mcpyard trust` with a pseudo-terminal as stdin, the answer already typed on it."""
    leader, follower = os.openpty()
    try:
        os.write(leader, answer.encode())
        return in_a_process(home, "trust", *args, stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)


def status(home: Home, *args: str) -> dict[str, dict[str, Any]]:
    """The status page's servers by id (API-2), run without --trust unless given."""
    done = run_mcpyard(home, "status", "--json", "--workspace", str(home.workspace), *args)
    assert done.returncode == 0, done.stderr
    return {server["id"]: server for server in json.loads(done.stdout)["servers"]}


def project_state(home: Home) -> str:
    """The project server's state on the status page of the workspace, run without --trust."""
    [server] = status(home).values()
    assert server["source"] == "project"
    return str(server["state"])


def write_project(home: Home, servers: dict[str, dict[str, Any]]) -> Path:
    path = home.workspace / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def touching(marker: Path) -> dict[str, Any]:
    """A server entry whose process creates `marker` the moment it starts (then exits)."""
    return {"command": PYTHON, "args": ["-c", TOUCH, str(marker)]}


def touching_by_shell(marker: Path) -> dict[str, Any]:
    """The same by another program: another command, other args."""
    return {"command": "/bin/sh", "args": ["-c", 'touch "$0"', str(marker)]}


@pytest.fixture
def project(home: Home) -> Path:
    path = home.workspace / ".mcp.json"
    path.write_text(json.dumps(PROJECT_SERVER))
    return path


def test_cfg6_trust_refuses_a_file_given_with_mcp_config_in_one_line(home: Home, project: Path) -> None:
    mine = home.write_config({})
    done = run_mcpyard(home, "trust", "--mcp-config", str(mine))
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
    done = run_mcpyard(home, "trust", "--mcp-config", str(elsewhere / ".mcp.json"))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcpyard: error: a file given with --mcp-config needs no trust")
    assert f"run `mcpyard trust --workspace {elsewhere.resolve()}`" in line
    assert project_state(home) == "untrusted"


@pytest.mark.parametrize("relative", [True, False])
def test_cfg6_trust_given_the_workspaces_own_project_file_trusts_it(home: Home, project: Path, relative: bool) -> None:
    given = ".mcp.json" if relative else str(project)
    # --trust means nothing to `trust`: accepted and ignored.
    done = run_mcpyard(home, "trust", "--mcp-config", given, "--trust", "--yes")
    assert done.returncode == 0, done.stderr
    assert "runs /nonexistent/mcp-proj" in done.stdout
    assert project_state(home) == "failed", "trusted: the server was started (and its command is missing)"


def test_cfg6_without_a_terminal_or_yes_trust_shows_every_command_line_and_records_nothing(home: Home) -> None:
    marker = home.root / "started"
    write_project(
        home,
        {
            "local": {**touching(marker), "env": {"LEVEL": "${LOG_LEVEL:-info}"}, "cwd": "sub"},
            "remote": {"url": "https://mcp.acme.test/${TENANT}", "headers": {"X-Key": "${ACME_KEY}"}},
        },
    )
    done = run_mcpyard(home, "trust", "--workspace", str(home.workspace))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcpyard: error: nothing was recorded")
    assert "--yes" in line
    assert "terminal" in line
    assert f"  local: runs {PYTHON} -c '{TOUCH}' {marker} in sub" in done.stdout
    assert "reads ${LOG_LEVEL}" in done.stdout
    assert "sets env LEVEL" in done.stdout
    assert "  remote: connects to https://mcp.acme.test/${TENANT}" in done.stdout
    assert "reads ${ACME_KEY}, ${TENANT}" in done.stdout
    assert not (home.data_home / "trust.json").exists()
    assert {server["state"] for server in status(home).values()} == {"untrusted"}
    assert not marker.exists()


def test_cfg6_trust_json_without_a_terminal_shows_the_same_and_exits_2(home: Home, project: Path) -> None:
    done = run_mcpyard(home, "trust", "--json")
    assert done.returncode == 2
    shown = json.loads(done.stdout)
    assert shown["trusted"] is False
    assert shown["workspace"] == str(home.workspace.resolve())
    assert shown["servers"] == [
        {
            "id": "proj",
            "runs": "runs /nonexistent/mcp-proj",
            "reads": [],
            "env_names": [],
            "inherits": [],
            "enabled": True,
            "change": "new",
            "changed": [],
        }
    ]
    assert done.stderr.startswith("mcpyard: error: nothing was recorded")
    assert project_state(home) == "untrusted"


def test_cfg6_a_server_added_or_changed_after_trust_never_starts_until_trusted_again(home: Home) -> None:
    """CFG-6, API-2: unchanged servers start as before; a removed one goes; the others wait, with why."""
    changed_marker, added_marker = home.root / "changed-started", home.root / "added-started"
    write_project(
        home,
        {"keep": fixture_server("basic"), "edit": fixture_server("basic"), "gone": fixture_server("basic")},
    )
    done = run_mcpyard(home, "trust", "--yes", "--workspace", str(home.workspace))
    assert done.returncode == 0, done.stderr
    assert "trusted " in done.stdout
    assert {server["state"] for server in status(home).values()} == {"connected"}

    # A `git pull` changes one command, adds a server and removes another.
    write_project(
        home,
        {"keep": fixture_server("basic"), "edit": touching_by_shell(changed_marker), "added": touching(added_marker)},
    )
    servers = status(home)
    assert set(servers) == {"keep", "edit", "added"}
    assert servers["keep"]["state"] == "connected"
    assert servers["edit"]["state"] == "untrusted"
    assert servers["edit"]["reason"].startswith("changed since you trusted it (")
    assert "command" in servers["edit"]["reason"]
    assert servers["added"]["state"] == "untrusted"
    assert servers["added"]["reason"].startswith("added since you trusted it")
    assert not changed_marker.exists()
    assert not added_marker.exists()

    # Shown again, the change is named; trusted again, both start.
    again = run_mcpyard(home, "trust", "--yes", "--json")
    assert again.returncode == 0, again.stderr
    rows = {row["id"]: row for row in json.loads(again.stdout)["servers"]}
    assert (rows["keep"]["change"], rows["edit"]["change"], rows["added"]["change"]) == (
        "unchanged",
        "changed",
        "added",
    )
    assert rows["edit"]["changed"] == ["command", "args"]
    status(home)
    assert changed_marker.exists()
    assert added_marker.exists()


def test_cfg6_the_trust_option_starts_every_server_shown_for_one_run_only(home: Home) -> None:
    marker = home.root / "started"
    write_project(home, {"keep": fixture_server("basic")})
    assert run_mcpyard(home, "trust", "--yes").returncode == 0
    write_project(home, {"keep": fixture_server("basic"), "added": touching(marker)})
    assert status(home, "--trust")["added"]["state"] == "failed", "started (and exited)"
    assert marker.exists()
    marker.unlink()
    assert status(home)["added"]["state"] == "untrusted", "--trust recorded nothing"
    assert not marker.exists()


def test_cfg6_trust_recorded_by_an_older_version_trusts_no_server_until_trusted_again(
    home: Home, project: Path
) -> None:
    """CFG-6, ERR-1: an old-format trust file: every project server untrusted with why, never a traceback."""
    home.data_home.mkdir(mode=0o700)
    trust_file = home.data_home / "trust.json"
    trust_file.write_text(json.dumps({"version": 1, "workspaces": [str(home.workspace.resolve())]}))
    trust_file.chmod(0o600)
    [server] = status(home).values()
    assert server["state"] == "untrusted"
    assert "recorded by an older version of mcpyard" in server["reason"]
    assert "run `mcpyard trust` again" in server["reason"]
    done = run_mcpyard(home, "trust", "--yes")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert project_state(home) == "failed", "trusted: started (its command is missing)"


def test_cfg6_trust_asks_on_a_terminal_and_a_yes_records_it(home: Home, project: Path) -> None:
    done = on_a_terminal(home, "y\n")
    assert done.returncode == 0, done.stderr
    assert "runs /nonexistent/mcp-proj" in done.stdout
    assert "[y/N]" in done.stdout + done.stderr
    assert project_state(home) == "failed", "trusted: the server was started"


@pytest.mark.parametrize("answer", ["n\n", "\n", "maybe\n", ""])
def test_cfg6_trust_on_a_terminal_records_nothing_unless_the_answer_is_yes(
    home: Home, project: Path, answer: str
) -> None:
    done = on_a_terminal(home, answer) if answer else _closed_terminal(home)
    assert done.returncode == 1, done.stderr
    assert "runs /nonexistent/mcp-proj" in done.stdout
    assert "nothing was recorded" in done.stdout
    assert project_state(home) == "untrusted"


def _closed_terminal(home: Home) -> subprocess.CompletedProcess[str]:
    """A terminal whose input ends at once (Ctrl-D): no answer is no."""
    leader, follower = os.openpty()
    try:
        os.write(leader, b"\x04")
        return in_a_process(home, "trust", stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)


def test_cfg6_trust_without_a_project_file_or_with_a_broken_one_records_nothing(home: Home) -> None:
    """CFG-6, ERR-1: one line, exit 2, nothing recorded, never a traceback."""
    missing = run_mcpyard(home, "trust", "--yes")
    assert missing.returncode == 2
    assert missing.stderr.startswith("mcpyard: error: there is no .mcp.json in ")
    (home.workspace / ".mcp.json").write_text('{"mcpServers": {"a": ')
    broken = run_mcpyard(home, "trust", "--yes")
    assert broken.returncode == 2
    [line] = broken.stderr.strip().splitlines()
    assert "is not valid JSON" in line
    assert line.endswith("nothing was recorded")
    assert not (home.data_home / "trust.json").exists()


def test_cfg6_trust_asks_nothing_when_everything_shown_is_trusted_already(home: Home, project: Path) -> None:
    assert run_mcpyard(home, "trust", "--yes").returncode == 0
    done = run_mcpyard(home, "trust")
    assert done.returncode == 0, done.stderr
    assert "runs /nonexistent/mcp-proj" in done.stdout
    assert "trusted already" in done.stdout
    assert "is trusted already: nothing changed since" in done.stdout
