"""A client's file that holds no MCP servers says so in one line, naming the client, wherever it is read (CFG-2, ERR-1).

OpenCode's opencode.json is known by its `$schema` or its name (it writes a `theme` too, as Gemini CLI does); an
empty file where a client keeps its servers (a Cursor mcp.json of `{}`) is that client's; a project's `.mcp.json`
of `{}` is a project with no servers.
"""

from __future__ import annotations

import json

import pytest

from mcpyard.config import import_config
from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import Home

from ._support import Setup, by_id

SCHEMA = "https://opencode.ai/config.json"

WITHOUT_SERVERS = {
    "an opencode.json by its schema": ("settings.json", {"$schema": SCHEMA, "theme": "opencode"}, "an OpenCode"),
    "an opencode.json by its name": ("opencode.json", {"theme": "tokyonight", "model": "x/y"}, "an OpenCode"),
    "an opencode.jsonc by its name": ("opencode.jsonc", {"autoupdate": False}, "an OpenCode"),
    "an empty Cursor mcp.json": (".cursor/mcp.json", {}, "a Cursor mcp.json"),
    "an empty VS Code mcp.json": (".vscode/mcp.json", {}, "a VS Code mcp.json"),
    "a VS Code mcp.json of inputs only": ("anywhere/mcp.json", {"inputs": []}, "a VS Code mcp.json"),
    "an empty Windsurf mcp_config.json": ("mcp_config.json", {}, "a Windsurf mcp_config.json"),
    "an empty .mcp.json": (".mcp.json", {}, "a Claude Code .mcp.json"),
    "an empty Roo Code file": (".roo/mcp.json", {}, "a Roo Code"),
    "an empty Claude Desktop config": ("claude_desktop_config.json", {}, "a Claude Desktop config"),
}


@pytest.mark.parametrize(("name", "document", "client"), list(WITHOUT_SERVERS.values()), ids=list(WITHOUT_SERVERS))
def test_cfg2_err1_a_clients_file_without_servers_is_named_for_its_client(
    cfg: Setup, name: str, document: dict[str, object], client: str
) -> None:
    """CFG-2, ERR-1: read with --mcp-config or imported, the file is named as its client's, with no servers in it."""
    path = cfg.flag(document, name=name)
    for read in (lambda: cfg.load(config_file=path), lambda: import_config(path, workspace=cfg.workspace)):
        with pytest.raises(ConfigError) as caught:
            read()
        message = str(caught.value)
        assert f"is {client}" in message, message
        assert "with no MCP servers in it" in message, message
        assert "Gemini" not in message, message
        assert "neither" not in message, message


def test_cfg2_err1_the_cli_says_so_in_one_line_for_an_opencode_json_with_a_theme(home: Home) -> None:
    """ERR-1: `status --mcp-config` and `import` give the same one line and exit code 2, never Gemini CLI's name."""
    path = home.root / "oc" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"$schema": SCHEMA, "theme": "system"}), encoding="utf-8")
    lines = []
    for command in (("status", "--mcp-config"), ("import",)):
        done = run_mcpyard(home, *command, str(path))
        assert done.returncode == 2, done.stdout
        [line] = done.stderr.splitlines()
        assert "is an OpenCode opencode.json with no MCP servers in it (no `mcp`)" in line
        lines.append(line.removeprefix("mcpyard: error: --mcp-config file "))
    assert lines[0] == lines[1].removeprefix("mcpyard: error: ")


def test_cfg2_an_opencode_json_by_its_name_has_its_servers_read_without_a_type(cfg: Setup) -> None:
    """CFG-2: in a file named opencode.json, `mcp` entries without OpenCode's `type` are still its servers."""
    path = cfg.flag({"mcp": {"files": {"command": ["npx", "-y", "server-files"]}}}, name="opencode.json")
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.format == "opencode"
    spec = by_id(cfg.load(config_file=path))["files"]
    assert (spec.command, spec.args) == ("npx", ("-y", "server-files"))


def test_cfg6_a_project_mcp_json_of_an_empty_object_is_a_project_without_servers(cfg: Setup) -> None:
    """CFG-6: `{}` in a project's .mcp.json loads with no servers and no warning; any other key is still warned of."""
    cfg.project({})
    loaded = cfg.load()
    assert (loaded.servers, loaded.warnings) == ((), ())
    cfg.project({"theme": "x"})
    assert any("has neither `servers` nor `mcpServers`" in warning for warning in cfg.load().warnings)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_cfg2_cli4_an_editors_new_file_imported_is_written_as_a_file_that_reads_back_empty(
    home: Home, suffix: str
) -> None:
    """CFG-2: VS Code's and Cursor's files as they first make them load with no servers and nothing to warn of, and
    `import --write` of them writes a file that loads the same, in TOML and JSON alike."""
    for name, document in (
        (".vscode/mcp.json", {"servers": {}, "inputs": []}),
        (".cursor/mcp.json", {"mcpServers": {}}),
    ):
        path = home.root / "app" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document), encoding="utf-8")
        target = home.root / f"written-{path.parent.name}{suffix}"
        for args in (("status", "--mcp-config", str(path)), ("import", str(path), "--write", str(target))):
            done = run_mcpyard(home, *args)
            assert done.returncode == 0, done.stderr
            assert "warning" not in done.stdout + done.stderr, done.stdout + done.stderr
        done = run_mcpyard(home, "status", "--mcp-config", str(target))
        assert (done.returncode, done.stderr) == (0, ""), target.read_text(encoding="utf-8")
        assert "no servers are configured" in done.stdout


def test_cfg3_empty_lists_of_tools_another_client_writes_in_every_entry_say_nothing(cfg: Setup) -> None:
    """CFG-3, POL-4: Cline writes `"autoApprove": []` in every entry; an empty list approves, leaves out or offers
    nothing, so nothing is said of it, read as it is or imported."""
    entry = {"command": "python3", "args": ["-V"], "autoApprove": [], "disabledTools": [], "alwaysAllow": []}
    path = cfg.flag({"mcpServers": {"l": entry}}, name="cline_mcp_settings.json")
    assert cfg.load(config_file=path).warnings == ()
    imported = import_config(path, workspace=cfg.workspace)
    assert (imported.ignored, imported.understood, imported.settings) == ((), (), {})
