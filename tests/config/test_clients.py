"""Config files as people keep them, read by `mcpyard import`, `--mcp-config` and as the project file (CFG-1..CFG-5).

Each file is written as its client writes it (Gemini CLI's settings.json, Windsurf's
mcp_config.json, a VS Code mcp.json, a Cursor mcp.json, a Codex config.toml) and read the
three ways a user can give it to mcpyard.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpyard.config import ProjectTrust, import_config, read_project
from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import Home

from ._samples import sample
from ._support import Setup, by_id, mentioning

GEMINI_REMOTE = """{
  "theme": "GitHub",
  "mcpServers": {
    "events": {
      "url": "http://localhost:8080/sse",
      "timeout": 30000
    },
    "api": {
      "httpUrl": "http://localhost:3000/mcp",
      "headers": {"Authorization": "Bearer $API_TOKEN"}
    },
    "typed": {"url": "http://localhost:3001/mcp", "type": "http"}
  }
}"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_cfg3_a_gemini_url_is_sse_and_its_http_url_streamable_http(cfg: Setup) -> None:
    """CFG-3: Gemini CLI's `url` is an SSE endpoint (its `httpUrl` is streamable HTTP); a `type` still decides."""
    settings = write(cfg.root / "home" / ".gemini" / "settings.json", GEMINI_REMOTE)
    imported = import_config(settings, workspace=cfg.workspace)
    assert [(server.id, server.transport) for server in imported.servers] == [
        ("events", "sse"),
        ("api", "streamable_http"),
        ("typed", "streamable_http"),
    ]
    [note] = [note for note in imported.understood if note.key == "url" and note.server == "events"]
    assert "sse" in note.why
    loaded = cfg.load(config_file=settings, environ={"API_TOKEN": "t"})
    servers = by_id(loaded)
    assert (servers["events"].transport, servers["events"].sse_fallback) == ("sse", False)
    assert (servers["api"].transport, servers["api"].sse_fallback) == ("streamable_http", False)
    assert servers["typed"].transport == "streamable_http"
    assert not mentioning(loaded, "events", "ignoring")


WINDSURF_PROJECT = """{
  "mcpServers": {
    "figma": {
      "serverUrl": "https://mcp.figma.com/mcp",
      "headers": {"X-Figma-Region": "us-east-1"}
    }
  }
}"""


def test_cfg3_windsurfs_server_url_is_the_servers_url_when_imported(tmp_path: Path) -> None:
    """CFG-3: Windsurf's `serverUrl` is read as `url`, said once, never dropped."""
    config = import_config(sample(tmp_path, "windsurf"), workspace=tmp_path / "workspace")
    assert config.format == "windsurf"
    assert config.format_name == "Windsurf mcp_config.json"
    [figma] = [server for server in config.servers if server.id == "figma"]
    assert (figma.transport, figma.url) == ("streamable_http", "https://mcp.figma.com/mcp")
    assert not [note for note in config.ignored if note.key == "serverUrl"]
    assert [note.why for note in config.understood if note.key == "serverUrl"] == ["is url"]


def test_cfg3_cfg4_windsurfs_server_url_connects_from_mcp_config_and_the_project_file(
    cfg: Setup, tmp_path: Path
) -> None:
    """CFG-3, CFG-4: given with --mcp-config, or as the project file, the entry is remote, not skipped."""
    loaded = cfg.load(config_file=sample(tmp_path, "windsurf"), environ={"GITHUB_TOKEN": "t"})
    figma = by_id(loaded)["figma"]
    assert (figma.state, figma.transport, figma.url) == ("ok", "streamable_http", "https://mcp.figma.com/mcp")
    assert not mentioning(loaded, "figma", "serverUrl")
    assert not mentioning(loaded, "skipped")
    cfg.project(WINDSURF_PROJECT)
    project = by_id(cfg.load(trusted=True))["figma"]
    assert (project.state, project.url) == ("ok", "https://mcp.figma.com/mcp")


def test_cfg6_trust_covers_a_project_servers_server_url(cfg: Setup) -> None:
    """CFG-6: trust records the address a `serverUrl` names; another address is a change, shown before it runs."""
    cfg.project(WINDSURF_PROJECT)
    project = read_project(cfg.workspace)
    assert project is not None
    [server] = project.servers
    assert server.runs == "connects to https://mcp.figma.com/mcp"
    trust = ProjectTrust(project.digests())
    cfg.project(WINDSURF_PROJECT.replace("mcp.figma.com", "figma.example.net"))
    changed = by_id(cfg.load(trusted=trust))["figma"]
    assert changed.state == "untrusted"
    assert changed.problem is not None
    assert "url" in changed.problem


def test_cfg3_server_url_beside_url_is_said_to_be_ignored(cfg: Setup) -> None:
    """CFG-3: with both keys, `url` is what is read, and the file is told so."""
    entry = {"url": "https://a.example/mcp", "serverUrl": "https://b.example/mcp"}
    spec, loaded = cfg.load_one(entry)
    assert spec.url == "https://a.example/mcp"
    assert mentioning(loaded, "ignoring the key 'serverUrl'", "`url` is set too")


URL_KEY_SLIPS = {
    "empty": ({"serverUrl": ""}, "serverUrl: is empty"),
    "a number": ({"serverUrl": 5}, "serverUrl: must be a string, not a number"),
    "another scheme": ({"serverUrl": "ftp://x.example/mcp"}, "serverUrl: must start with http:// or https://"),
    "no host": ({"serverUrl": "https:///mcp"}, "serverUrl: has no host"),
    "a password": ({"serverUrl": "https://u:p@x.example/mcp"}, "serverUrl: carries a user name or password"),
    "beside a command": (
        {"command": "node", "serverUrl": "https://x.example/mcp"},
        "command, serverUrl: both are set; keep `command` for a local server or `serverUrl` for a remote one",
    ),
    "gemini's, empty": ({"httpUrl": ""}, "httpUrl: is empty"),
    "gemini's, with stdio": (
        {"httpUrl": "https://x.example/mcp", "type": "stdio"},
        "but this entry has only `httpUrl`",
    ),
}


@pytest.mark.parametrize(("entry", "said"), URL_KEY_SLIPS.values(), ids=URL_KEY_SLIPS.keys())
def test_err1_a_bad_server_url_is_named_as_written(cfg: Setup, entry: dict[str, object], said: str) -> None:
    """ERR-1, CFG-3: the entry fails naming the key the file has (Windsurf's `serverUrl`, Gemini CLI's `httpUrl`),
    not `url`, which the file does not have; and a variable it lacks is said to be missing there."""
    spec, _ = cfg.load_one(entry)
    assert spec.state == "failed"
    assert spec.problem is not None
    assert said in spec.problem
    assert "url:" not in spec.problem.replace("serverUrl:", "").replace("httpUrl:", "")
    _, loaded = cfg.load_one({"serverUrl": "https://x.example/${MCP_PATH_PART}"})
    assert mentioning(loaded, "${MCP_PATH_PART} in serverUrl is not set")


def test_err1_import_names_a_bad_server_url_as_written(tmp_path: Path) -> None:
    """ERR-1, CFG-3: `import` says what keeps the server from loading under the key the file has."""
    path = tmp_path / "mcp_config.json"
    path.write_text(json.dumps({"mcpServers": {"w": {"serverUrl": 5}, "g": {"httpUrl": ""}}}), encoding="utf-8")
    problems = {(note.server, note.key): note.why for note in import_config(path, workspace=tmp_path).problems}
    assert problems == {
        ("w", "serverUrl"): "must be a string, not a number",
        ("g", "httpUrl"): "is empty; give a value or remove the field",
    }


def test_pol4_windsurfs_disabled_tools_become_deny_rules_when_imported(tmp_path: Path) -> None:
    """POL-4, CAT-1: the tools a client leaves out are denied by their model-facing names, said under their own key."""
    config = import_config(sample(tmp_path, "windsurf"), workspace=tmp_path / "workspace")
    assert config.settings == {"permissions": {"deny": ["github__create_repository", "github__fork_repository"]}}
    [note] = [note for note in config.understood if note.server == "github" and "permissions.deny" in note.why]
    assert note.key == "disabledTools"
    assert not [note for note in config.ignored if note.key == "disabledTools"]
    assert "shared_tools" not in json.dumps(config.to_json())


OWN_TOML_SHARED_TABLES = """tool_name_separator = "_"

[permissions]
allow = ["fs_read_file"]
deny = ["fs_move_file"]

[mcp.mcpServers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
disabledTools = ["write_file", "move_file"]
"""


def test_pol4_cfg2_tools_left_out_in_the_own_tomls_shared_tables_are_denied_as_in_the_json_form(cfg: Setup) -> None:
    """POL-4, CFG-2: `disabledTools` in mcpyard's TOML `[mcp.mcpServers.<id>]` tables (the shared form) is written as
    deny rules by import, as it is for the same entry in JSON; named with the file's separator, beside its own rules,
    which are kept; the written file, loaded, denies them."""
    toml = write(cfg.root / "mine.toml", OWN_TOML_SHARED_TABLES)
    entry = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
    shared = write(cfg.root / "mine.json", json.dumps({"mcpServers": {"fs": {**entry, "disabledTools": ["x"]}}}))
    assert import_config(shared, workspace=cfg.workspace).settings == {"permissions": {"deny": ["fs__x"]}}
    plain = write(cfg.root / "plain.toml", '[mcp.mcpServers.fs]\ncommand = "npx"\ndisabledTools = ["x"]\n')
    assert import_config(plain, workspace=cfg.workspace).settings == {"permissions": {"deny": ["fs__x"]}}
    imported = import_config(toml, workspace=cfg.workspace)
    assert imported.settings == {
        "tool_name_separator": "_",
        "permissions": {"allow": ["fs_read_file"], "deny": ["fs_move_file", "fs_write_file"]},
    }
    [note] = [note for note in imported.understood if note.key == "disabledTools"]
    assert "(fs_write_file, fs_move_file)" in note.why
    written = write(cfg.root / "written.toml", imported.text("toml"))
    loaded = cfg.load(config_file=written)
    assert loaded.settings.deny == ("fs_move_file", "fs_write_file")
    assert by_id(loaded)["fs"].args == tuple(entry["args"])


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (
            {"editor.fontSize": 12, "workbench.colorTheme": "Default Dark+"},
            "a VS Code settings.json with no MCP servers",
        ),
        (
            {"name": "my-app", "version": "1.0.0", "scripts": {"start": "node ."}},
            "has neither `servers` nor `mcpServers`",
        ),
    ],
    ids=["vscode-settings", "package-json"],
)
def test_err1_another_programs_settings_given_as_a_config_say_what_is_missing_in_one_line(
    cfg: Setup, home: Home, document: dict[str, object], said: str
) -> None:
    """ERR-1, CFG-2: a file with no key of mcpyard's (nor a slip of one) is not listed key by key as mistakes; a slip
    of a key of ours is still named, with the key it is close to."""
    path = cfg.flag(document, "settings.json")
    done = run_mcpyard(home, "status", "--mcp-config", str(path))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert said in line
    assert not any(key in line for key in document)
    slip = cfg.flag({"mcpServer": {"a": {"command": "x"}}}, "slip.json")
    with pytest.raises(ConfigError, match="unknown top-level key 'mcpServer'; did you mean `mcpServers`"):
        cfg.load(config_file=slip)


def test_cfg3_a_server_another_client_left_off_is_never_started_here(cfg: Setup, home: Home) -> None:
    """CFG-3: Cline's, Windsurf's and Roo's `disabled: true` is `enabled: false` with --mcp-config, as the project file
    and imported; `disabled: false` is said nothing about; beside `enabled`, `enabled` is what is read."""
    started = cfg.root / "started"
    touch = {"command": sys.executable, "args": ["-c", f"open({str(started)!r}, 'w')"]}
    servers = {
        "off": {**touch, "disabled": True, "autoApprove": []},
        "on": {"url": "https://a.example/mcp", "disabled": False},
        "both": {"url": "https://b.example/mcp", "disabled": True, "enabled": True},
    }
    flag = cfg.flag({"mcpServers": servers})
    loaded = cfg.load(config_file=flag)
    states = {server_id: spec.state for server_id, spec in by_id(loaded).items()}
    assert states == {"off": "disabled", "on": "ok", "both": "ok"}
    assert not mentioning(loaded, "'off'", "disabled")
    assert not mentioning(loaded, "'on'", "disabled")
    assert mentioning(loaded, "'both'", "ignoring the key 'disabled'", "`enabled`")
    cfg.project({"mcpServers": servers})
    assert by_id(cfg.load(trusted=True))["off"].state == "disabled"
    imported = import_config(flag, workspace=cfg.workspace)
    assert {server.id: server.enabled for server in imported.servers} == {"off": False, "on": True, "both": True}
    done = run_mcpyard(home, "status", "--mcp-config", str(flag), "--json")
    assert {server["id"]: server["state"] for server in json.loads(done.stdout)["servers"]}["off"] == "disabled"
    assert not started.exists()


def claude_code_file(workspace: Path, other: Path) -> dict[str, object]:
    """`~/.claude.json` as Claude Code writes it: its state, servers for every folder, and servers per folder."""
    return {
        "numStartups": 12,
        "userID": "0f3c",
        "tipsHistory": {"new-user-warmup": 1},
        "mcpServers": {
            "everywhere": {"type": "stdio", "command": "node", "args": ["everywhere.js"], "env": {}},
            "both": {"type": "stdio", "command": "node", "args": ["for-every-folder.js"]},
        },
        "projects": {
            str(workspace): {
                "allowedTools": [],
                "mcpServers": {
                    "here": {"type": "http", "url": "https://here.example/mcp"},
                    "both": {"type": "stdio", "command": "node", "args": ["for-this-folder.js"]},
                },
            },
            str(other): {"allowedTools": [], "mcpServers": {"elsewhere": {"command": "node"}}},
            "/no/servers": {"allowedTools": [], "mcpServers": {}},
        },
    }


def test_cfg3_claude_codes_own_file_gives_its_servers_for_every_folder_and_this_ones(cfg: Setup, home: Home) -> None:
    """CFG-3: `~/.claude.json` read with --mcp-config or imported: the servers for every folder and the workspace's own
    (winning on a shared name, as in Claude Code); another folder's are counted, never read; its state is one note."""
    other = cfg.root / "other"
    other.mkdir()
    path = write(cfg.root / "home" / ".claude.json", json.dumps(claude_code_file(cfg.workspace, other)))
    imported = import_config(path, workspace=cfg.workspace)
    assert (imported.format, imported.format_name) == ("claude-code-user", "Claude Code ~/.claude.json")
    args = {server.id: server.fields.get("args") for server in imported.servers}
    assert args == {"everywhere": ["everywhere.js"], "both": ["for-this-folder.js"], "here": None}
    [projects] = [note for note in imported.understood if note.key == "projects"]
    assert "1 other folder" in projects.why
    assert "elsewhere" not in json.dumps(imported.to_json())
    [state] = imported.ignored
    assert "Claude Code's own settings" in state.why
    loaded = cfg.load(config_file=path)
    specs = by_id(loaded)
    assert sorted(specs) == ["both", "everywhere", "here"]
    assert (specs["both"].args, specs["here"].url) == (("for-this-folder.js",), "https://here.example/mcp")
    assert not mentioning(loaded, "'projects'")
    done = run_mcpyard(home, "import", str(path), "--workspace", str(other), "--json")
    assert done.returncode == 0, done.stderr
    assert [server["id"] for server in json.loads(done.stdout)["servers"]] == ["everywhere", "both", "elsewhere"]


def test_cfg3_claude_codes_own_file_of_tens_of_megabytes_is_read_and_a_server_switched_off_there_stays_off(
    cfg: Setup,
) -> None:
    """CFG-3, CFG-4: Claude Code keeps each folder's history in `~/.claude.json` (tens of MB are common), and `/mcp`'s
    Disable writes the folder's `disabledMcpServers`: such a server is listed, never started, as in Claude Code."""
    document = claude_code_file(cfg.workspace, cfg.root / "other")
    projects = document["projects"]
    assert isinstance(projects, dict)
    projects[str(cfg.workspace)]["disabledMcpServers"] = ["everywhere"]
    for number in range(60):  # about 6 MB of history in other folders
        projects[f"/work/p{number}"] = {"allowedTools": [], "history": [{"display": "x" * 1000}] * 100}
    path = write(cfg.root / "home" / ".claude.json", json.dumps(document))
    assert path.stat().st_size > 5 * 1024 * 1024
    specs = by_id(cfg.load(config_file=path))
    assert (specs["everywhere"].state, specs["both"].state) == ("disabled", "ok")
    imported = import_config(path, workspace=cfg.workspace)
    assert {server.id: server.enabled for server in imported.servers}["everywhere"] is False
    assert any("switched off for this folder in Claude Code" in note.why for note in imported.understood)


ZED_SETTINGS = """// Zed's settings, with its MCP servers under context_servers
{
  "ui_font_size": 16,
  "buffer_font_size": 15,
  "theme": {"mode": "system", "light": "One Light", "dark": "One Dark"},
  "context_servers": {
    "notes": {"source": "custom", "command": "node", "args": ["notes.js"], "env": {"NOTES_DIR": "/tmp"}},
    "time": {"command": {"path": "uvx", "args": ["mcp-server-time"], "env": {}}, "settings": {}},
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "from-extension": {"source": "extension", "settings": {"key": "value"}},
    "off": {"command": "node", "enabled": false},
  },
}"""


def test_cfg3_zeds_context_servers_are_read_from_its_settings(cfg: Setup, home: Home) -> None:
    """CFG-3: Zed's settings.json (comments allowed): `context_servers`, its older `command` table, `enabled`; an
    extension's server is said to need its command; Zed's own settings are one note; without servers, one line."""
    path = write(cfg.root / "home" / ".config" / "zed" / "settings.json", ZED_SETTINGS)
    imported = import_config(path, workspace=cfg.workspace)
    assert (imported.format, imported.format_name) == ("zed", "Zed settings.json")
    fields = {server.id: server.fields for server in imported.servers}
    assert (fields["notes"]["command"], fields["notes"]["args"]) == ("node", ["notes.js"])
    assert (fields["time"]["command"], fields["time"]["args"]) == ("uvx", ["mcp-server-time"])
    assert fields["remote"]["url"] == "https://example.com/mcp"
    assert fields["off"]["enabled"] is False
    assert [note.key for note in imported.ignored if note.server == "from-extension"] == ["source", "settings"]
    [state] = [note for note in imported.ignored if note.server is None]
    assert "Zed's own settings" in state.why
    specs = by_id(cfg.load(config_file=path, environ={"TOKEN": "t"}))
    states = {server_id: spec.state for server_id, spec in specs.items()}
    assert states == {"notes": "ok", "time": "ok", "remote": "ok", "from-extension": "skipped", "off": "disabled"}
    assert specs["time"].args == ("mcp-server-time",)
    settings_only = write(cfg.root / "other" / "zed" / "settings.json", '{"vim_mode": true, "ui_font_size": 16}')
    done = run_mcpyard(home, "status", "--mcp-config", str(settings_only))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "a Zed settings.json with no MCP servers in it (no `context_servers`)" in line


VSCODE_SETTINGS = """{
    // VS Code's user settings: its MCP servers in the `mcp` section, as before mcp.json
    "editor.fontSize": 14,
    "workbench.colorTheme": "Default Dark Modern",
    "mcp": {
        "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
        "servers": {
            "files": {
                "type": "stdio",
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}"],
            },
            "api": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${input:api-key}"}},
            "remote": {"url": "https://example.com/other/mcp"},
        },
        "discovery": true,
    },
    "chat.mcp.discovery.enabled": true,
}"""


def test_cfg3_vscodes_user_settings_are_read_from_their_mcp_section(cfg: Setup, home: Home) -> None:
    """CFG-3: VS Code's user settings.json (comments and trailing commas allowed): the servers of its `mcp` section,
    read as those of its mcp.json (`${workspaceFolder}`, `${input:ID}` as the saved secret ID), its own settings
    one note, the section's `inputs` said; a settings.json without servers says so in one line, pointing to mcp.json."""
    path = write(cfg.root / "home" / ".config" / "Code" / "User" / "settings.json", VSCODE_SETTINGS)
    imported = import_config(path, workspace=cfg.workspace)
    assert (imported.format, imported.format_name) == ("vscode-settings", "VS Code settings.json")
    fields = {server.id: server.fields for server in imported.servers}
    assert fields["files"]["args"] == ["-y", "@modelcontextprotocol/server-filesystem", str(cfg.workspace)]
    assert fields["api"]["url"] == "https://example.com/mcp"
    notes = {note.key: note.why for note in imported.ignored if note.server is None}
    assert "VS Code's own settings" in notes["editor.fontSize, workbench.colorTheme, chat.mcp.discovery.enabled"]
    assert "${input:ID} reads the saved secret ID" in notes["mcp.inputs"]
    assert "a setting of VS Code itself" in notes["mcp.discovery"]
    specs = by_id(cfg.load(config_file=path, secrets={"api-key": "k-123"}))
    assert {server_id: spec.state for server_id, spec in specs.items()} == {"files": "ok", "api": "ok", "remote": "ok"}
    assert specs["files"].args == ("-y", "@modelcontextprotocol/server-filesystem", str(cfg.workspace))
    done = run_mcpyard(home, "import", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "vscode-settings"
    settings_only = write(cfg.root / "other" / "Code" / "User" / "settings.json", '{"editor.tabSize": 2, // mine\n}')
    done = run_mcpyard(home, "status", "--mcp-config", str(settings_only))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "a VS Code settings.json with no MCP servers in it (no `mcp.servers`)" in line
    assert "VS Code keeps them in mcp.json beside it: give that file" in line


OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  "theme": "opencode",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    // a local server: one list of the program and its arguments
    "files": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
      "environment": {"FILES_TOKEN": "{env:MY_TOKEN}"},
      "enabled": true,
      "timeout": 10000,
    },
    "remote": {
      "type": "remote", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer {env:API_KEY}"}
    },
    "off": {"type": "local", "command": ["node", "off.js"], "enabled": false},
  },
}"""
OPENCODE_NEWER = {
    "$schema": "https://opencode.ai/config.json",
    "mcp": {"servers": {"time": {"type": "local", "command": ["uvx", "mcp-server-time"]}, "off": {
        "type": "local", "command": ["node"], "disabled": True}}},
}  # fmt: skip


def test_cfg3_opencodes_servers_are_read_from_its_config_in_both_forms(cfg: Setup, home: Home) -> None:
    """CFG-3: OpenCode's opencode.json (comments allowed): `mcp.<name>` and the newer `mcp.servers.<name>`, `command`
    as one list, `environment`, `enabled`/`disabled`, `{env:NAME}` as `${NAME}`; its own settings are one note."""
    path = write(cfg.root / "project" / "opencode.jsonc", OPENCODE)
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.format == "opencode"
    assert imported.a_format_name == "an OpenCode opencode.json"
    fields = {server.id: server.fields for server in imported.servers}
    assert (fields["files"]["transport"], fields["files"]["command"]) == ("stdio", "npx")
    assert fields["files"]["args"] == ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    assert fields["files"]["env"] == {"FILES_TOKEN": "${MY_TOKEN}"}
    assert fields["remote"]["headers"] == {"Authorization": "Bearer ${API_KEY}"}
    assert fields["off"]["enabled"] is False
    [state] = [note for note in imported.ignored if note.server is None]
    assert "OpenCode's own settings" in state.why
    specs = by_id(cfg.load(config_file=path, environ={"MY_TOKEN": "t", "API_KEY": "k"}))
    assert {server_id: spec.state for server_id, spec in specs.items()} == {
        "files": "ok",
        "remote": "ok",
        "off": "disabled",
    }
    assert specs["files"].args == ("-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    newer = cfg.flag(OPENCODE_NEWER, "opencode.json")
    loaded = by_id(cfg.load(config_file=newer))
    assert {server_id: spec.state for server_id, spec in loaded.items()} == {"time": "ok", "off": "disabled"}
    done = run_mcpyard(home, "import", str(newer))
    assert done.returncode == 0, done.stderr
    assert "an OpenCode opencode.json with 2 servers" in done.stdout


GITHUB = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "name": "gh"}


@pytest.mark.parametrize("key", ["disabledTools", "excludedTools", "disabled_tools"])
def test_pol4_a_list_of_tools_to_leave_out_says_how_to_write_the_deny_rule_cfg_3(cfg: Setup, key: str) -> None:
    """POL-4, CFG-3: read as it is, the list is one warning naming the deny rule to write, never `shared_tools`."""
    flag = cfg.flag({"mcpServers": {"github": {**GITHUB, key: ["create_repository", "fork_repository"]}}})
    loaded = cfg.load(config_file=flag)
    [warning] = mentioning(loaded, f"ignoring the key '{key}'")
    assert 'permissions.deny = ["gh__create_repository", "gh__fork_repository"]' in warning
    assert "shared_tools" not in warning
    assert "your user config or this file" in warning


@pytest.mark.parametrize("key", ["disabledTools", "excludeTools", "excludedTools", "disabled_tools"])
def test_pol4_cfg8_a_project_files_tools_to_leave_out_say_the_rule_for_the_user_config(cfg: Setup, key: str) -> None:
    """POL-4, CFG-8: a project file may not set permissions; the warning says where the rule goes instead."""
    cfg.project({"mcpServers": {"github": {**GITHUB, key: ["delete_repository"]}}})
    [warning] = mentioning(cfg.load(), f"ignoring the key '{key}'", ".mcp.json")
    assert 'permissions.deny = ["gh__delete_repository"] to your user config' in warning
    assert "shared_tools" not in warning
    assert "this file" not in warning


def test_cat1_pol4_a_shadowed_servers_tools_to_leave_out_say_it_is_not_used_never_the_used_servers_rule(
    cfg: Setup,
) -> None:
    """CAT-1, POL-4: two servers with one tool prefix: the later is used. The earlier one's list (in the same file,
    or in a source of lower priority) says that server is not used and names the one that is, never a deny rule,
    which would keep the used server's tools from running; the used server's own list still says its rule."""
    flag = cfg.flag(
        {
            "mcpServers": {
                "old": {"command": "x", "name": "files", "disabledTools": ["add"]},
                "new": {"command": "y", "name": "files", "disabledTools": ["fail"]},
            }
        }
    )
    cfg.user('[mcp.mcpServers.mine]\ncommand = "z"\nname = "files"\ndisabled_tools = ["echo"]\n')
    loaded = cfg.load(config_file=flag)
    used = f"server 'new' in --mcp-config file {flag}"
    hints: dict[str, str] = {}
    for server in ("old", "mine", "new"):
        [hints[server]] = [w for w in loaded.warnings if w.startswith(f"server '{server}' in ") and "'disabled" in w]
    for server in ("old", "mine"):
        assert f"this server is not used: {used} has the same tool prefix 'files'" in hints[server]
        assert "permissions.deny =" not in hints[server]
        assert "files__" not in hints[server]
    assert 'add permissions.deny = ["files__fail"]' in hints["new"]
    assert [spec.id for spec in loaded.servers] == ["mine", "old", "new"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "mcp_config.json",
            '{"mcpServers": {"old": {"command": "x", "name": "files", "disabledTools": ["add"]},'
            ' "new": {"command": "y", "name": "files"}}}',
        ),
        (
            "config.toml",
            '[mcp_servers."my.files"]\ncommand = "x"\ndisabled_tools = ["add"]\n\n'
            '[mcp_servers.my_files]\ncommand = "y"\n',
        ),
    ],
    ids=["windsurf", "codex"],
)
def test_cat1_pol4_import_writes_no_deny_rule_for_a_shadowed_server(cfg: Setup, name: str, text: str) -> None:
    """CAT-1, POL-4: imported or given with --mcp-config, a server another one in the file takes its tool prefix from
    gets no deny rule (it would deny that server's tool); why is said, naming the server used."""
    path = write(cfg.root / name, text)
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.settings == {}
    [note] = imported.ignored
    assert note.server in ("old", "my.files")
    assert "this server is not used: server " in note.why
    assert "no deny rule is written" in note.why
    assert not [note for note in imported.understood if "permissions.deny" in note.why]
    if name.endswith(".toml"):
        loaded = cfg.load(config_file=path)
        assert loaded.settings.deny in ((), None)
        assert mentioning(loaded, "'my.files'", "this server is not used: server 'my_files'")


def test_pol4_a_list_of_tools_that_is_not_one_still_says_how_to_deny_a_tool(cfg: Setup) -> None:
    """POL-4, ERR-1: a value that is not a list of names is named, with the rule's shape."""
    _, loaded = cfg.load_one({"command": "x", "disabledTools": "create_repository"})
    [warning] = mentioning(loaded, "ignoring the key 'disabledTools'")
    assert "a list of tool names" in warning
    assert "permissions.deny" in warning
    assert "s__TOOL" in warning


VSCODE_REMOTE = """{
  "servers": {
    "github": {
      "url": "https://api.githubcopilot.com/mcp/"
    },
    "context7": {
      "url": "https://mcp.context7.com/mcp"
    }
  }
}"""


def test_cfg1_a_vscode_file_whose_servers_have_only_a_url_loads_with_mcp_config(cfg: Setup) -> None:
    """CFG-1, CFG-2: VS Code writes a remote server as `url` alone; --mcp-config reads it as `import` does."""
    path = write(cfg.workspace / ".vscode" / "mcp.json", VSCODE_REMOTE)
    assert import_config(path, workspace=cfg.workspace).format == "vscode"
    loaded = cfg.load(config_file=path)
    assert [(spec.id, spec.state, spec.transport, spec.url) for spec in loaded.servers] == [
        ("github", "ok", "streamable_http", "https://api.githubcopilot.com/mcp/"),
        ("context7", "ok", "streamable_http", "https://mcp.context7.com/mcp"),
    ]
    assert not loaded.warnings


def test_cfg1_a_vscode_mcp_json_in_its_place_loads_whatever_its_servers_write(cfg: Setup) -> None:
    """CFG-1, CFG-2: .vscode/mcp.json is VS Code's by its place, even with no `type` anywhere."""
    text = '{"servers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}'
    loaded = cfg.load(config_file=write(cfg.workspace / ".vscode" / "mcp.json", text))
    assert [(spec.id, spec.state, spec.command) for spec in loaded.servers] == [("fetch", "ok", "uvx")]


CURSOR_WORKSPACE = """{
  "mcpServers": {
    "notes": {
      "command": "node",
      "args": ["${workspaceFolder}/tools/notes-server.js", "--name", "${workspaceFolderBasename}"],
      "cwd": "${workspaceFolder}/tools"
    }
  }
}"""


def test_cfg5_cursors_workspace_folder_is_the_workspace_when_read_as_it_is(cfg: Setup) -> None:
    """CFG-5: `${workspaceFolder}` in a Cursor file given with --mcp-config, or as the project file, is the workspace,
    as `mcpyard import` writes it; no "is not set" warning."""
    path = write(cfg.workspace / ".cursor" / "mcp.json", CURSOR_WORKSPACE)
    imported = import_config(path, workspace=cfg.workspace)
    [server] = imported.servers
    workspace = str(cfg.workspace)
    expected = ([f"{workspace}/tools/notes-server.js", "--name", "workspace"], f"{workspace}/tools")
    assert (server.fields["args"], server.fields["cwd"]) == expected
    for loaded in (cfg.load(config_file=path), (cfg.project(CURSOR_WORKSPACE), cfg.load(trusted=True))[1]):
        notes = by_id(loaded)["notes"]
        assert (list(notes.args), notes.cwd) == expected
        assert not mentioning(loaded, "workspaceFolder")


def test_cfg5_cursors_user_home_and_path_separator_mean_what_import_writes_when_read_as_it_is(cfg: Setup) -> None:
    """CFG-5: `${userHome}`, `${pathSeparator}` and `${/}` of Cursor's documented variables, read with --mcp-config or
    as the project file, are HOME and the separator, as `mcpyard import` writes them; never an empty value."""
    text = json.dumps(
        {"mcpServers": {"notes": {"command": "node", "args": ["${userHome}/notes.js", "a${pathSeparator}b", "c${/}d"]}}}
    )
    path = write(cfg.workspace / ".cursor" / "mcp.json", text)
    [server] = import_config(path, workspace=cfg.workspace).servers
    assert server.fields["args"] == ["${HOME}/notes.js", "a/b", "c/d"]
    environ = {"HOME": "/home/someone"}
    for loaded in (cfg.load(config_file=path, environ=environ), (cfg.project(text), cfg.load(environ=environ))[1]):
        notes = by_id(loaded)["notes"]
        assert (notes.state, notes.args) == ("ok", ("/home/someone/notes.js", "a/b", "c/d"))
        assert not mentioning(loaded, "is not set")


def test_cfg5_the_own_form_reads_workspace_folder_from_the_environment_as_before(cfg: Setup) -> None:
    """CFG-5: mcpyard's own form has no editor variables: `${workspaceFolder}` is a variable like any other."""
    flag = cfg.flag({"servers": [{"id": "notes", "command": "node", "args": ["${workspaceFolder}/a.js"]}]})
    loaded = cfg.load(config_file=flag)
    assert by_id(loaded)["notes"].args == ("/a.js",)
    assert mentioning(loaded, "${workspaceFolder}", "is not set")


CODEX_NO_SERVERS = """model = "o3"
approval_policy = "untrusted"
sandbox_mode = "workspace-write"

[shell_environment_policy]
inherit = "core"
"""

GEMINI_NO_SERVERS = """{
  // Gemini CLI's own settings; no MCP servers yet.
  "theme": "Default",
  "selectedAuthType": "oauth-personal",
  "model": {"name": "gemini-2.5-pro"},
  "contextFileName": "GEMINI.md",
}"""

CLAUDE_NO_SERVERS = '{"globalShortcut": "Ctrl+Space", "preferences": {"menuBarEnabled": false}}'

CODEX_SAID = "a Codex config.toml with no MCP servers in it (no [mcp_servers] tables)"
GEMINI_SAID = "a Gemini CLI settings.json with no MCP servers in it (no `mcpServers`)"
CLAUDE_SAID = "a Claude Desktop config with no MCP servers in it (no `mcpServers`)"
NO_SERVERS = [
    ("Claude/claude_desktop_config.json", CLAUDE_NO_SERVERS, CLAUDE_SAID),
    ("claude.json", CLAUDE_NO_SERVERS, CLAUDE_SAID),
    (".codex/config.toml", CODEX_NO_SERVERS, CODEX_SAID),
    ("codex.toml", CODEX_NO_SERVERS, CODEX_SAID),
    (".gemini/settings.json", GEMINI_NO_SERVERS, GEMINI_SAID),
    ("gemini.json", GEMINI_NO_SERVERS, GEMINI_SAID),
]


CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm run test:*)"]},
    "env": {"X": "1"},
    "model": "opus",
    "enableAllProjectMcpServers": True,
    "hooks": {},
}
CLAUDE_SAID = "is a Claude Code settings.json with no MCP servers in it"
# Claude Code's settings are not taken for mcpyard's (its `Bash(…)` rules are not ours): known by keys only it
# writes, its rules, or its place.
CLAUDE_FILES = [
    ("settings.json", CLAUDE_SETTINGS),
    ("settings.json", {"permissions": {"allow": ["Bash(npm run test:*)", "Read(./src)"]}}),
    ("perms.json", {"permissions": {"deny": ["mcp__github__delete_repo"]}}),
    (".claude/settings.local.json", {"permissions": {"allow": []}}),
]
NAMED = [(name, text, said, "add them") for name, text, said in NO_SERVERS] + [
    (name, json.dumps(document), CLAUDE_SAID, "~/.claude.json") for name, document in CLAUDE_FILES
]
NAMED_IDS = [row[0] for row in NO_SERVERS] + [
    "claude: keys only it writes",
    "claude: its rules alone",
    "claude: an MCP rule of its",
    "claude: its place",
]


@pytest.mark.parametrize(("name", "text", "said", "hint"), NAMED, ids=NAMED_IDS)
def test_err1_a_clients_settings_without_servers_says_so_in_one_line_cfg_2(
    cfg: Setup, home: Home, name: str, text: str, said: str, hint: str
) -> None:
    """ERR-1, CFG-2: imported or given with --mcp-config, the file is named for what it is, with where that client
    keeps its servers; its own settings are not reported as mistakes."""
    path = write(cfg.root / "from" / name, text)
    with pytest.raises(ConfigError) as imported:
        import_config(path, workspace=cfg.workspace)
    with pytest.raises(ConfigError) as loaded:
        cfg.load(config_file=path)
    for error in (imported.value, loaded.value):
        assert said in error.message
        assert hint in error.message
        assert "approval_policy" not in error.message
        assert "theme" not in error.message
        assert "globalShortcut" not in error.message
    for args in (["import", str(path)], ["status", "--mcp-config", str(path)]):
        done = run_mcpyard(home, *args)
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert said in line
        assert "unknown top-level key" not in line


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("cline_mcp_settings.json", "a Cline cline_mcp_settings.json"),
        ("mcp_settings.json", "a Roo Code MCP settings file"),
        (".roo/mcp.json", "a Roo Code MCP settings file"),
        ("Claude/claude_desktop_config.json", "a Claude Desktop config"),
        # Nothing marks it as one client's: named for its form, not as Claude Desktop's (read as before).
        ("servers.json", "an mcpServers file (the form Claude Desktop, Cursor and others share)"),
    ],
)
def test_cfg2_cline_and_roo_code_files_are_named_for_their_client_and_read_as_the_shared_form(
    cfg: Setup, name: str, named: str
) -> None:
    """CFG-2: known by their place (they were called a Cursor or a Claude Code file); read as the shared form, with
    Cline's lists of tools: the one to leave out denied, the one to approve named as the rule to write."""
    entry = {"command": "node", "args": ["x"], "disabled": False, "alwaysAllow": ["a"], "disabledTools": ["b"]}
    path = write(cfg.root / "from" / name, json.dumps({"mcpServers": {"e": entry}}))
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.a_format_name == named
    assert imported.settings["permissions"] == {"deny": ["e__b"]}
    [approved] = [note for note in imported.ignored if note.key == "alwaysAllow"]
    assert 'permissions.allow = ["e__a"]' in approved.why


def test_cfg3_clines_and_roo_codes_keys_are_read_in_their_units(cfg: Setup) -> None:
    """CFG-3: Cline's `transportType` (its name for `type` before it) is the transport, and Cline's and Roo Code's
    `timeout` is in seconds: the call timeout; a `timeout` in a file of a client whose unit is not known is said."""
    cline = {"legacy": {"url": "http://127.0.0.1:9/sse", "transportType": "sse", "timeout": 90}}
    [server] = import_config(
        cfg.flag({"mcpServers": cline}, name="cline_mcp_settings.json"), workspace=cfg.workspace
    ).servers
    assert (server.transport, server.fields.get("call_timeout_secs")) == ("sse", 90)
    roo = write(
        cfg.root / "app" / ".roo" / "mcp.json", json.dumps({"mcpServers": {"r": {"command": "n", "timeout": 5}}})
    )
    assert import_config(roo, workspace=cfg.workspace).servers[0].fields["call_timeout_secs"] == 5
    claude = cfg.flag({"mcpServers": {"c": {"command": "n", "timeout": 5}}}, name=".mcp.json")
    imported = import_config(claude, workspace=cfg.workspace)
    assert "call_timeout_secs" not in imported.servers[0].fields
    assert [note.key for note in imported.ignored] == ["timeout"]


def test_cfg3_a_windsurf_entry_copied_into_a_file_read_as_gemini_clis_keeps_its_url(cfg: Setup) -> None:
    """CFG-3: one entry with Gemini CLI's `httpUrl` makes the file Gemini's; another copied from Windsurf keeps its
    `serverUrl` as its url (streamable HTTP, falling back to SSE), never "no equivalent"."""
    path = cfg.flag(
        {"mcpServers": {"w": {"serverUrl": "https://w.invalid/mcp"}, "g": {"httpUrl": "https://g.invalid/mcp"}}},
        name="mix.json",
    )
    imported = import_config(path, workspace=cfg.workspace)
    assert imported.format == "gemini"
    assert {server.id: server.fields.get("url") for server in imported.servers} == {
        "w": "https://w.invalid/mcp",
        "g": "https://g.invalid/mcp",
    }
    spec = by_id(cfg.load(config_file=path))["w"]
    assert (spec.url, spec.transport, spec.sse_fallback) == ("https://w.invalid/mcp", "streamable_http", True)
