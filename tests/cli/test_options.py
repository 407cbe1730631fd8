"""The options every command accepts after its name, declared once and taken by all (API-4, CLI-2)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpyard.cli import main
from tests._cli import Ran, run_mcpyard
from tests.conftest import Home

GLOBAL_OPTIONS = ("--workspace", "--mcp-config", "--trust", "--json")

# Each command's cheapest real run over one disabled server (nothing connects): its words after
# `mcpyard`, what it reads on stdin, its exit code, and a piece of what it prints.
CASES: dict[str, tuple[list[str], str, int, str]] = {
    "status": (["status"], "", 0, '"state":"disabled"'),
    "tools": (["tools"], "", 0, '{"tools":['),
    "call": (["call", "off__nothing"], "", 2, '"code":"unknown_tool"'),
    "reload": (["reload"], "", 0, '"state":"disabled"'),
    "trust": (["trust", "--yes"], "", 0, '"trusted":true'),
    "doctor": (["doctor", "off"], "", 0, '"config_state":"disabled"'),
    "login": (["login", "off"], "", 2, '"id":"off"'),
    "logout": (["logout", "off"], "", 2, "mcpyard holds no sign-in for 'off'"),
    "pin": (["pin", "off__nothing", "run_freely"], "", 2, "no connected tool 'off__nothing'"),
    "unpin": (["unpin", "off/nothing"], "", 2, "'off/nothing' is not pinned"),
    "serve": (["serve"], "", 0, ""),
    "shell": (["shell"], "/mcp\n", 0, '"state":"disabled"'),
    "demo": (["demo"], "", 0, '"calls":['),
    "secrets set": (["secrets", "set", "gw_token"], "a-long-enough-secret-value", 0, '{"saved":"gw_token"}'),
    "secrets list": (["secrets", "list"], "", 0, '{"secrets":[]}'),
    "secrets rm": (["secrets", "rm", "nosuch"], "", 2, "no saved secret 'nosuch'"),
}


def mcpyard(home: Home, *args: str, stdin: str = "", cwd: Path | None = None) -> Ran:
    """`mcpyard ARGS` in this process (`tests/_cli.py`), in the home's folder; saved secrets go to the data folder's
    file (tests/conftest.py keeps the machine's keyring out). What `--help` imports is measured in a process."""
    return run_mcpyard(home, *args, stdin=stdin, cwd=cwd or home.root)


@pytest.mark.parametrize("command", list(CASES))
def test_api4_every_command_accepts_the_four_options_after_its_name(home: Home, command: str) -> None:
    words, stdin, code, shown = CASES[command]
    project = home.workspace / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {"off": {"command": "echo", "enabled": False}}}))
    # Run from elsewhere: --workspace is what names the workspace.
    options = ["--workspace", str(home.workspace), "--mcp-config", str(project), "--trust", "--json"]
    done = mcpyard(home, *words, *options, stdin=stdin)
    assert "No such option" not in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == code, done.stderr
    assert shown in done.stdout + done.stderr
    if code == 2 and done.stderr:
        assert done.stderr.startswith("mcpyard: error:")


def test_api4_secrets_json_names_what_was_saved_listed_and_removed(home: Home) -> None:
    options = ["--workspace", str(home.workspace), "--json"]
    saved = mcpyard(home, "secrets", "set", "gw_token", *options, stdin="a-long-enough-secret-value\n")
    assert json.loads(saved.stdout) == {"saved": "gw_token"}, saved.stderr
    listed = mcpyard(home, "secrets", "list", *options)
    assert json.loads(listed.stdout) == {"secrets": ["gw_token"]}
    assert "a-long-enough-secret-value" not in listed.stdout
    removed = mcpyard(home, "secrets", "rm", "gw_token", *options)
    assert json.loads(removed.stdout) == {"removed": "gw_token"}
    assert json.loads(mcpyard(home, "secrets", "list", "--json").stdout) == {"secrets": []}


def _commands(help_text: str) -> list[str]:
    section = help_text.split("Commands:", 1)[1]
    return re.findall(r"^  (\S+)", section, flags=re.MULTILINE)


def test_api4_every_command_in_the_help_documents_the_four_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    commands = [[name] for name in _commands(capsys.readouterr().out)]
    assert len(commands) >= 14
    for command in commands:  # grows as groups are met: their commands are checked too
        assert main([*command, "--help"]) == 0
        shown = capsys.readouterr().out
        for option in GLOBAL_OPTIONS:
            assert re.search(rf"^\s+{re.escape(option)}\b", shown, flags=re.MULTILINE), (command, option)
        if "Commands:" in shown:  # a group (`secrets`, `org`): it takes them, and so does each of its commands
            commands += [[*command, sub] for sub in _commands(shown)]
    assert ["secrets", "list"] in commands
    assert ["org", "token", "create"] in commands


@pytest.mark.parametrize("group", [["secrets"], ["org"], ["org", "token"]])
def test_api4_a_group_accepts_the_four_options_after_its_name_and_its_command_uses_them(
    home: Home, group: list[str]
) -> None:
    project = home.workspace / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {}}))
    options = ["--workspace", str(home.workspace), "--mcp-config", str(project), "--trust", "--json"]
    if group == ["secrets"]:
        done = mcpyard(home, *group, *options, "list")
        assert json.loads(done.stdout) == {"secrets": []}, done.stderr
    else:
        done = mcpyard(home, *group, *options, "--help")
        assert done.returncode == 0, done.stderr
        assert "Usage: mcpyard " + " ".join(group) in done.stdout
    assert "No such option" not in done.stderr


@pytest.mark.parametrize("args", [["--help"], ["status", "--nope"], ["call"], ["secrets", "list", "--workspace"]])
def test_api4_help_and_usage_errors_do_not_import_the_sdk(args: list[str]) -> None:
    code = f"import sys; from mcpyard.cli import main; main({args!r}); print('mcp.client' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout.strip().endswith("False")
