"""Other MCP clients' config files: detected, translated into the own form, read by --mcp-config (CFG-1, CFG-2, CFG-3).

The samples (`_samples.py`) are written as each client writes them: Claude Desktop's
claude_desktop_config.json, Claude Code's .mcp.json, VS Code's .vscode/mcp.json (with comments,
`inputs`), Cursor's .cursor/mcp.json, Codex's config.toml and Gemini CLI's settings.json.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.config import ImportedConfig, import_config, load_config
from mcpyard.config._jsonc import strip_jsonc
from mcpyard.config._literal import secret_literals
from mcpyard.config._own_text import own_text
from mcpyard.errors import ConfigError

from ._samples import CODEX, ENVIRON, SAMPLES, sample
from ._support import Setup, by_id, mentioning


def imported(tmp_path: Path, name: str) -> ImportedConfig:
    return import_config(sample(tmp_path, name), workspace=tmp_path / "workspace")


def workspace_of(tmp_path: Path, name: str) -> Path:
    """What `${workspaceFolder}` is in the sample: the project holding its editor folder, else the workspace."""
    editor_folder = Path(SAMPLES[name][0]).parts[0] in (".vscode", ".cursor")
    return tmp_path / "from" if editor_folder else tmp_path / "workspace"


def fields(config: ImportedConfig, server_id: str) -> dict[str, object]:
    return next(dict(server.fields) for server in config.servers if server.id == server_id)


@pytest.mark.parametrize("name", SAMPLES)
def test_each_clients_file_is_detected_by_its_keys_and_shape_cfg_2(tmp_path: Path, name: str) -> None:
    """CFG-2: the format is named for what the file is."""
    assert imported(tmp_path, name).format == name


@pytest.mark.parametrize(
    ("file_name", "document", "expected"),
    [
        ("x.json", {"mcpServers": {"a": {"command": "x"}}}, "claude-desktop"),
        ("x.json", {"mcpServers": {"a": {"type": "stdio", "command": "x"}}}, "claude-code"),
        ("x.json", {"mcpServers": {"a": {"url": "https://x.test/mcp"}}}, "cursor"),
        ("x.json", {"mcpServers": {"a": {"command": "x", "envFile": ".env"}}}, "cursor"),
        ("x.json", {"mcpServers": {"a": {"command": "x", "args": ["${workspaceFolder}"]}}}, "cursor"),
        ("x.json", {"mcpServers": {"a": {"httpUrl": "https://x.test/mcp"}}}, "gemini"),
        ("x.json", {"mcpServers": {"a": {"command": "x", "trust": False}}}, "gemini"),
        ("x.json", {"mcpServers": {}, "mcp": {"allowed": ["a"]}}, "gemini"),
        ("x.json", {"servers": {"a": {"type": "stdio", "command": "x"}}}, "vscode"),
        ("x.json", {"servers": [{"id": "a", "command": "x"}]}, "mcpyard"),
        ("x.json", {"mode": "plan"}, "mcpyard"),
        (".mcp.json", {"mcpServers": {"a": {"url": "https://x.test/mcp"}}}, "claude-code"),
        ("x.json", {"mcpServers": {"a": {"serverUrl": "https://x.test/mcp"}}}, "windsurf"),
        ("mcp_config.json", {"mcpServers": {"a": {"command": "x"}}}, "windsurf"),
        ("claude_desktop_config.json", {"mcpServers": {"a": {"url": "https://x.test"}}}, "claude-desktop"),
        ("mcp_config.json", {"mcpServers": {"a": {"serverUrl": "https://x.test", "trust": True}}}, "windsurf"),
        (".mcp.json", {"mcpServers": {"a": {"httpUrl": "https://x.test/mcp"}}}, "claude-code"),
        ("claude_desktop_config.json", {"mcpServers": {"a": {"command": "x", "trust": True}}}, "claude-desktop"),
        ("x.toml", '[mcp_servers.a]\ncommand = "x"\n', "codex"),
        ("x.toml", '[[mcp.servers]]\nid = "a"\ncommand = "x"\n', "mcpyard"),
        ("x.toml", '[mcp.mcpServers.a]\ncommand = "x"\n', "mcpyard"),
    ],
)
def test_the_format_follows_keys_then_the_file_name_cfg_2(
    tmp_path: Path, file_name: str, document: object, expected: str
) -> None:
    """CFG-2: the file's name or folder, then Gemini's own keys, then Cursor's and Claude Code's marks decide."""
    path = tmp_path / file_name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    assert import_config(path, workspace=tmp_path).format == expected


SERVERS: dict[str, list[tuple[str, str, str | None, str | None, bool]]] = {
    "claude-desktop": [
        ("filesystem", "stdio", "npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop", None, True),
        ("github", "stdio", "npx -y @modelcontextprotocol/server-github", None, True),
    ],
    "claude-code": [
        ("api", "streamable_http", None, "${API_BASE_URL:-https://api.example.com}/mcp", True),
        ("sentry", "sse", None, "https://mcp.sentry.dev/sse", True),
        ("local", "stdio", "'${HOME}/bin/server' --config '${CONFIG_PATH:-./config.json}'", None, True),
        ("signed", "streamable_http", None, "https://mcp.example.com/mcp", True),
    ],
    "vscode": [
        ("perplexity", "stdio", "npx -y server-perplexity-ask", None, True),
        ("fetch", "stdio", "uvx mcp-server-fetch", None, True),
        ("github", "streamable_http", None, "https://api.githubcopilot.com/mcp/", True),
        ("files", "stdio", "node WORKSPACE/server.js --open ''", None, True),
    ],
    "cursor": [
        ("userjot", "streamable_http", None, "https://api.userjot.com/v1/mcp", True),
        ("mittwald", "streamable_http", None, "https://mcp.mittwald.de/mcp", True),
        ("notes", "stdio", "python '${HOME}/mcp/notes.py'", None, True),
    ],
    "codex": [
        ("context7", "stdio", "npx -y @upstash/context7-mcp", None, True),
        ("figma", "streamable_http", None, "https://mcp.figma.com/mcp", True),
        ("legacy", "stdio", "legacy-server", None, False),
    ],
    "gemini": [
        ("pythonTools", "stdio", "python -m my_mcp_server --port 8080", None, True),
        ("github", "streamable_http", None, "https://api.githubcopilot.com/mcp/", True),
        ("experimental", "sse", None, "http://localhost:8080/sse", False),
    ],
    "windsurf": [
        ("github", "stdio", "npx -y @modelcontextprotocol/server-github", None, True),
        ("figma", "streamable_http", None, "https://mcp.figma.com/mcp", True),
    ],
}


@pytest.mark.parametrize("name", SAMPLES)
def test_every_server_is_understood_with_its_transport_and_command_or_url_cfg_3(tmp_path: Path, name: str) -> None:
    """CFG-3: each server keeps its id, gets its transport, and runs what the client would run."""
    config = imported(tmp_path, name)
    rows = [(s.id, s.transport, s.runs, s.url, s.enabled) for s in config.servers]
    workspace = str(workspace_of(tmp_path, name))
    expected = [(i, t, r.replace("WORKSPACE", workspace) if r else r, u, e) for i, t, r, u, e in SERVERS[name]]
    assert rows == expected


MAPPED: list[tuple[str, str, dict[str, object]]] = [
    (
        "claude-code",
        "local",
        {
            "command": "${HOME}/bin/server",
            "args": ["--config", "${CONFIG_PATH:-./config.json}"],
            "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"},
            "transport": "stdio",
        },
    ),
    (
        "claude-code",
        "signed",
        {
            "url": "https://mcp.example.com/mcp",
            "transport": "streamable_http",
            "oauth": {"client_id": "my-client", "redirect_port": 8080},
        },
    ),
    (
        "vscode",
        "perplexity",
        {
            "command": "npx",
            "args": ["-y", "server-perplexity-ask"],
            "env": {"PERPLEXITY_API_KEY": "${secret:perplexity-key}"},
            "transport": "stdio",
        },
    ),
    (
        "vscode",
        "github",
        {
            "url": "https://api.githubcopilot.com/mcp/",
            "transport": "streamable_http",
            "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"},
        },
    ),
    (
        "cursor",
        "mittwald",
        {
            "url": "https://mcp.mittwald.de/mcp",
            "oauth": {"client_id": "mw-client", "scopes": ["mcp", "offline_access"]},
        },
    ),
    ("cursor", "notes", {"command": "python", "args": ["${HOME}/mcp/notes.py"]}),
    (
        "codex",
        "context7",
        {
            "command": "npx",
            "args": ["-y", "@upstash/context7-mcp"],
            "env": {"DEBUG": "mcp:*"},
            "inherit_env": ["HTTPS_PROXY"],
            "connect_timeout_secs": 20,
            "call_timeout_secs": 120,
        },
    ),
    (
        "codex",
        "figma",
        {
            "url": "https://mcp.figma.com/mcp",
            "headers": {
                "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}",
                "X-Figma-Region": "us-east-1",
                "X-Org": "${FIGMA_ORG}",
            },
        },
    ),
    ("codex", "legacy", {"command": "legacy-server", "connect_timeout_secs": 5.0, "enabled": False}),
    (
        "gemini",
        "pythonTools",
        {
            "command": "python",
            "args": ["-m", "my_mcp_server", "--port", "8080"],
            "env": {"DATABASE_URL": "${DB_CONNECTION_STRING}", "API_KEY": "${EXTERNAL_API_KEY}"},
            "cwd": "./mcp-servers/python",
            "call_timeout_secs": 15,
        },
    ),
    (
        "gemini",
        "github",
        {
            "url": "https://api.githubcopilot.com/mcp/",
            "transport": "streamable_http",
            "headers": {"Authorization": "Bearer ${GITHUB_PAT}"},
        },
    ),
    ("gemini", "experimental", {"url": "http://localhost:8080/sse", "transport": "sse", "enabled": False}),
    ("windsurf", "figma", {"url": "https://mcp.figma.com/mcp", "headers": {"X-Figma-Region": "us-east-1"}}),
]


@pytest.mark.parametrize(("name", "server_id", "expected"), MAPPED, ids=[f"{n}-{s}" for n, s, _ in MAPPED])
def test_each_key_maps_onto_the_own_forms_field_and_references_stay_references_cfg_3_cfg_5(
    tmp_path: Path, name: str, server_id: str, expected: dict[str, object]
) -> None:
    """CFG-3, CFG-5: `type`, timeouts, headers, env pass-through map on; a `${VAR}` is written as a reference."""
    assert fields(imported(tmp_path, name), server_id) == expected


def test_workspace_variables_become_the_workspace_and_editor_state_is_left_out_cfg_5(tmp_path: Path) -> None:
    """CFG-5: `${workspaceFolder}` in a project's .vscode/mcp.json is that project; `${file}` has no meaning outside
    the editor."""
    config = imported(tmp_path, "vscode")
    assert fields(config, "files")["args"] == [f"{tmp_path / 'from'}/server.js", "--open", ""]
    assert ("files", "args[2]") in {(note.server, note.key) for note in config.ignored}


IGNORED: dict[str, set[tuple[str | None, str]]] = {
    "claude-desktop": {(None, "globalShortcut")},
    "claude-code": {("signed", "headersHelper")},
    "vscode": {(None, "inputs"), ("perplexity", "envFile"), ("fetch", "dev"), ("files", "args[2]")},
    "cursor": {("mittwald", "auth.CLIENT_SECRET"), ("notes", "envFile")},
    "codex": {
        (None, "model"),
        (None, "approval_policy"),
        ("figma", "enabled_tools"),
        ("legacy", "required"),
    },
    "gemini": {
        (None, "theme"),
        (None, "selectedAuthType"),
        ("pythonTools", "trust"),
        ("github", "includeTools"),
        ("experimental", "description"),
    },
    "windsurf": set(),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_keys_without_an_equivalent_are_ignored_each_with_why_cfg_3(tmp_path: Path, name: str) -> None:
    """CFG-3: every key mcpyard cannot read is reported with its server and a reason, none silently dropped."""
    config = imported(tmp_path, name)
    assert {(note.server, note.key) for note in config.ignored} == IGNORED[name]
    assert all(note.why and not note.why.endswith(" ") for note in config.ignored)


@pytest.mark.parametrize(
    ("name", "key", "needle"),
    [
        ("gemini", "trust", 'permissions.allow = ["pythonTools__*"]'),
        ("gemini", "includeTools", "all of its tools are offered"),
        ("codex", "enabled_tools", "to block the others, add them to permissions.deny"),
        ("vscode", "inputs", "reads the saved secret ID instead"),
        ("cursor", "auth.CLIENT_SECRET", "only from a saved secret, so it is not copied"),
        ("claude-code", "headersHelper", "does not run a program to make headers"),
    ],
)
def test_the_reason_says_what_to_do_instead_cfg_3_err_1(tmp_path: Path, name: str, key: str, needle: str) -> None:
    """CFG-3, ERR-1: a client's trust or allow-list is never taken over silently; the note names the fix."""
    [note] = [note for note in imported(tmp_path, name).ignored if note.key == key]
    assert needle in note.why


@pytest.mark.parametrize(
    ("name", "deny"),
    [
        ("gemini", ["github__delete_repository"]),
        ("codex", ["figma__delete_file", "figma__post_comment"]),
        ("windsurf", ["github__create_repository", "github__fork_repository"]),
        ("claude-code", []),
    ],
)
def test_excluded_tools_become_deny_rules_on_their_model_facing_names_pol_4_cat_1(
    tmp_path: Path, name: str, deny: list[str]
) -> None:
    """POL-4, CAT-1: Gemini's excludeTools, Codex's disabled_tools and Windsurf's disabledTools are denied by name,
    as the model sees it."""
    config = imported(tmp_path, name)
    assert config.settings == ({"permissions": {"deny": deny}} if deny else {})


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("claude-desktop", {("github", "env.GITHUB_PERSONAL_ACCESS_TOKEN")}),
        ("claude-code", set()),
        ("vscode", set()),
        ("codex", set()),
        ("gemini", set()),
    ],
)
def test_literal_secret_looking_values_are_named_never_shown_sec_1(
    tmp_path: Path, name: str, found: set[tuple[str, str]]
) -> None:
    """SEC-1: a token written into the file is reported by where it is; references are not."""
    config = imported(tmp_path, name)
    assert {(note.server, note.key) for note in config.literal_secrets} == found
    shown = json.dumps(config.to_json())
    assert "ghp_16C7e42F" not in shown


@pytest.mark.parametrize(
    ("entry", "found"),
    [
        ({"env": {"GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}}, ["env.GITHUB_TOKEN"]),
        ({"env": {"API_KEY": "${API_KEY}"}}, []),
        ({"env": {"API_KEY": "${secret:api}"}}, []),
        ({"env": {"AUTH_MODE": "oauth"}}, []),
        ({"env": {"DB_PASSWORD": "correct-horse-battery"}}, ["env.DB_PASSWORD"]),
        ({"env": {"NOTES": "sk-ant-api03-abcdefghijklmnopqrstuvwx"}}, ["env.NOTES"]),
        ({"headers": {"Authorization": "Bearer ${TOKEN}"}}, []),
        ({"headers": {"Authorization": "Bearer abcdefghijklmnop"}}, ["headers.Authorization"]),
        ({"headers": {"X-Api-Key": "0123456789abcdef"}}, ["headers.X-Api-Key"]),
        ({"headers": {"Accept": "application/json"}}, []),
        ({"args": ["--api-key", "0123456789abcdef"]}, ["args[1]"]),
        ({"args": ["--token=0123456789abcdef"]}, ["args[0]"]),
        ({"args": ["--token", "${TOKEN}"]}, []),
        ({"args": ["--port", "8080", "/Users/me/Desktop"]}, []),
        ({"args": ["-e", "xoxb-1234567890-abcdef"]}, ["args[1]"]),
        ({"url": "https://x.test/mcp?api_key=0123456789abcdef"}, ["url"]),
        ({"url": "https://x.test/mcp?page=2"}, []),
        ({"url": "https://me:hunter2hunter2@x.test/mcp"}, ["url"]),
        ({"command": "docker"}, []),
    ],
)
def test_which_values_look_like_written_secrets_sec_1(entry: dict[str, object], found: list[str]) -> None:
    """SEC-1: a token's shape, or a literal of 8 characters or more under a secret's name."""
    assert secret_literals(entry) == found


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("fmt", ["json", "toml"])
def test_the_own_form_written_loads_as_the_same_servers_cfg_1_cfg_2(
    cfg: Setup, tmp_path: Path, name: str, fmt: Literal["json", "toml"]
) -> None:
    """CFG-1, CFG-2: what `mcpyard import --write` writes is a valid mcpyard config with the same servers."""
    config = imported(tmp_path, name)
    text = config.text(fmt)
    written = cfg.flag(text, f"own.{fmt}")
    loaded = cfg.load(config_file=written, environ=ENVIRON, secrets={"perplexity-key": "pplx"})
    assert [spec.id for spec in loaded.servers] == [server.id for server in config.servers]
    assert all(spec.state in ("ok", "disabled") for spec in loaded.servers), [s.problem for s in loaded.servers]
    assert not mentioning(loaded, "ignoring")
    document = json.loads(text) if fmt == "json" else tomllib.loads(text)
    servers = document["servers"] if fmt == "json" else document["mcp"]["servers"]
    assert servers == config.document()["servers"]


DIRECT = [
    ("vscode", ["perplexity", "fetch", "github", "files"]),
    ("codex", ["context7", "figma", "legacy"]),
    ("gemini", ["pythonTools", "github", "experimental"]),
]


@pytest.mark.parametrize(("name", "ids"), DIRECT)
def test_mcp_config_reads_vscode_codex_and_gemini_files_directly_cfg_1(
    cfg: Setup, tmp_path: Path, name: str, ids: list[str]
) -> None:
    """CFG-1: the unambiguous foreign forms are read as they are; each ignored key is one warning naming it."""
    config_file = sample(tmp_path, name)
    loaded = cfg.load(config_file=config_file, environ={"HOME": "/home/me"}, secrets={"perplexity-key": "pplx"})
    assert [spec.id for spec in loaded.servers] == ids
    assert all(spec.source == "flag" for spec in loaded.servers)
    for server_id, key in IGNORED[name]:
        where = f"server '{server_id}' in --mcp-config file {config_file}" if server_id else str(config_file)
        assert len(mentioning(loaded, where, f"ignoring '{key}'")) == 1, (server_id, key, loaded.warnings)


def test_a_gemini_file_runs_as_gemini_would_cfg_3_cfg_5_pol_4(cfg: Setup, tmp_path: Path) -> None:
    """CFG-3, CFG-5, POL-4: `$VAR` expands, the timeout is in seconds, excluded servers and tools are off."""
    environ = {"DB_CONNECTION_STRING": "postgres://db", "EXTERNAL_API_KEY": "k", "GITHUB_PAT": "p"}
    servers = by_id(loaded := cfg.load(config_file=sample(tmp_path, "gemini"), environ=environ))
    assert servers["pythonTools"].env == (("DATABASE_URL", "postgres://db"), ("API_KEY", "k"))
    assert servers["pythonTools"].call_timeout_secs == 15.0
    assert servers["github"].headers == (("Authorization", "Bearer p"),)
    assert (servers["github"].transport, servers["github"].sse_fallback) == ("streamable_http", False)
    assert servers["experimental"].state == "disabled"
    assert loaded.settings.deny == ("github__delete_repository",)


def test_a_vscode_input_reads_the_saved_secret_of_its_id_cfg_5_sec_1(cfg: Setup, tmp_path: Path) -> None:
    """CFG-5, SEC-1: a prompted `${input:ID}` cannot be asked unattended; the saved secret ID answers it."""
    config_file = sample(tmp_path, "vscode")
    answered = by_id(cfg.load(config_file=config_file, secrets={"perplexity-key": "pplx-1"}))["perplexity"]
    assert answered.env == (("PERPLEXITY_API_KEY", "pplx-1"),)
    assert answered.secret_values == (("perplexity-key", "pplx-1"),)
    loaded = cfg.load(config_file=config_file, secrets={})
    assert mentioning(loaded, "${secret:perplexity-key}", "mcpyard secrets set perplexity-key")


@pytest.mark.parametrize("name", ["claude-desktop", "claude-code", "cursor", "windsurf"])
def test_claude_and_cursor_files_load_as_the_shared_form_as_before_cfg_2(cfg: Setup, tmp_path: Path, name: str) -> None:
    """CFG-2: these are the shared form; `--mcp-config` reads them exactly as it always did."""
    config_file = sample(tmp_path, name)
    loaded = cfg.load(config_file=config_file, environ={"HOME": "/home/me"})
    assert [spec.id for spec in loaded.servers] == [row[0] for row in SERVERS[name]]
    if name == "cursor":
        assert mentioning(loaded, "ignoring the key 'envFile'")
    if name == "claude-desktop":
        assert mentioning(loaded, "ignoring the unknown top-level key 'globalShortcut'")


def test_a_servers_object_of_commands_alone_is_read_as_vscodes_file_cfg_2(cfg: Setup) -> None:
    """CFG-2: `servers` keyed by id, nothing but commands VS Code reads (as many a README shows its file), loads."""
    entry = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"A": "1"}}
    loaded = cfg.load(config_file=cfg.flag({"servers": {"memory": entry}}, "vscode-mcp.json"))
    [spec] = loaded.servers
    assert (spec.id, spec.command, list(spec.args), spec.env) == ("memory", "npx", entry["args"], (("A", "1"),))


@pytest.mark.parametrize(
    "document",
    [
        {"servers": {"a": {"command": "x", "call_timeout_secs": 5}}},
        {"mode": "auto", "servers": {"a": {"command": "x"}}},
    ],
    ids=["a setting of mcpyard's in a server", "a setting of mcpyard's beside the servers"],
)
def test_a_servers_object_with_mcpyards_settings_stays_an_error_that_says_how_cfg_2(
    cfg: Setup, document: dict[str, object]
) -> None:
    """CFG-2: `servers` keyed by id with a setting only mcpyard reads is the own form with a slip; the fix is named
    (read as VS Code's, the setting would be dropped)."""
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=cfg.flag(document))
    assert "use `mcpServers`" in caught.value.message
    assert "once a server has its `type`" in caught.value.message


def test_comments_are_read_where_the_client_allows_them_cfg_1_err_1(cfg: Setup) -> None:
    """CFG-1, ERR-1: VS Code and Gemini CLI files may have comments; a Claude Code file may not, and is told so."""
    vscode = cfg.flag('{"servers": {"a": {"type": "stdio", "command": "x",}}, // mine\n}', "mcp.json")
    assert [spec.id for spec in cfg.load(config_file=vscode).servers] == ["a"]
    claude = cfg.flag('{"mcpServers": {"a": {"command": "x"}} // mine\n}', "claude.json")
    with pytest.raises(ConfigError, match="JSON has no comments or trailing commas"):
        cfg.load(config_file=claude)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("a.json", "{}", "is not a config mcpyard can read"),
        ("a.json", '{"servers": [], "mcpServers": {}}', "has both `servers` and `mcpServers`"),
        ("a.json", '{"servers": {"a": "npx"}}', "server 'a' in `servers` must be an object"),
        ("a.toml", 'approval_policy = "never"\n', "is a Codex config.toml with no MCP servers in it"),
        ("a.toml", 'title = "notes"\n', "is not a config mcpyard can read"),
        ("a.toml", 'mcp_servers = "x"\n', "is not a config mcpyard can read"),
        ("a.toml", '[mcp_servers]\nctx = "npx"\n', "server 'ctx' in [mcp_servers] must be an object"),
        ("a.json", '{"mcpServers": {"a": {}}', "is not valid JSON"),
    ],
)
def test_a_file_in_no_known_form_is_one_error_naming_the_fix_err_1(
    tmp_path: Path, name: str, text: str, needle: str
) -> None:
    """ERR-1: what cannot be imported says why, and what would be."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        import_config(path, workspace=tmp_path)
    assert needle in caught.value.message
    assert str(path) in caught.value.message


def test_a_toml_file_named_json_is_read_as_toml(tmp_path: Path) -> None:
    """CFG-1: the format follows the extension, and the other one is tried when that fails."""
    path = tmp_path / "codex.json"
    path.write_text(CODEX, encoding="utf-8")
    assert import_config(path, workspace=tmp_path).format == "codex"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1} // note', '{"a": 1}        '),
        ('{"a": "// not a comment"}', '{"a": "// not a comment"}'),
        ('{"a": 1, /* two\nlines */ "b": 2}', '{"a": 1,' + " " * 7 + "\n" + " " * 9 + '"b": 2}'),
        ('{"a": [1, 2,], }', '{"a": [1, 2 ]  }'),
        ('{"a": "x,]"}', '{"a": "x,]"}'),
        ('{"a": "\\",}"}', '{"a": "\\",}"}'),
        ("/* never closed", "               "),
    ],
)
def test_jsonc_comments_and_trailing_commas_are_blanked_in_place(text: str, expected: str) -> None:
    """CFG-1: positions stay, so a JSON error after them still names its line and column."""
    assert strip_jsonc(text) == expected


_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
_VALUES = st.one_of(
    _TEXT,
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31),
    st.lists(_TEXT, max_size=3),
    st.dictionaries(_TEXT, _TEXT, max_size=3),
)


@given(
    servers=st.lists(st.dictionaries(_TEXT, _VALUES, max_size=4), max_size=3),
    deny=st.lists(_TEXT, max_size=3),
)
def test_own_form_toml_reads_back_as_the_document_written(servers: list[dict[str, object]], deny: list[str]) -> None:
    """ERR-1: whatever strings and keys a file held, the TOML written parses back to the same document."""
    document: dict[str, object] = {"servers": [{"id": str(index), **server} for index, server in enumerate(servers)]}
    if deny:
        document["permissions"] = {"deny": deny}
    parsed = tomllib.loads(own_text(document, "toml"))
    assert parsed.get("mcp", {}).get("servers", []) == document["servers"]
    assert parsed.get("permissions") == document.get("permissions")


def test_load_config_reads_foreign_files_only_from_the_flag(cfg: Setup, tmp_path: Path) -> None:
    """CFG-1: the user config stays mcpyard's own TOML; a Codex table there is an unknown key, as before."""
    cfg.user('[mcp_servers.a]\ncommand = "x"\n')
    with pytest.raises(ConfigError, match="unknown top-level key 'mcp_servers'"):
        load_config(
            workspace=cfg.workspace,
            config_file=None,
            user_config_file=cfg.user_file,
            trusted=True,
            environ={},
            secrets={},
        )


@pytest.mark.parametrize(
    ("file_name", "entry", "key"),
    [
        ("settings.json", {"command": "x", "excludeTools": ["add", "fail"]}, "excludeTools"),
        ("config.toml", {"command": "x", "disabled_tools": ["add", "fail"]}, "disabled_tools"),
    ],
)
def test_excluded_tools_are_denied_with_the_users_separator_pol_4_cat_1(
    cfg: Setup, file_name: str, entry: dict[str, object], key: str
) -> None:
    """POL-4, CAT-1: with `tool_name_separator = "_"` the model sees `b_add`, and that is the name denied."""
    cfg.user('tool_name_separator = "_"\n')
    if file_name.endswith(".toml"):
        text = f'[mcp_servers.b]\ncommand = "x"\n{key} = ["add", "fail"]\n'
        flag = cfg.flag(text, name=file_name)
    else:
        flag = cfg.flag({"mcpServers": {"b": entry}}, name=file_name)
    loaded = cfg.load(config_file=flag)
    assert loaded.settings.deny == ("b_add", "b_fail")
    assert not mentioning(loaded, "__")
    config = import_config(flag, workspace=cfg.workspace, separator="_")
    assert config.settings == {"permissions": {"deny": ["b_add", "b_fail"]}}
    said = " ".join(note.why for note in config.understood)
    assert "b_add, b_fail" in said
    assert "__" not in said


def test_a_deny_hint_names_the_tool_with_the_users_separator_pol_4_cat_1(cfg: Setup) -> None:
    """POL-4, CAT-1: the rule a warning tells you to write is the name the model sees."""
    cfg.user('tool_name_separator = "_"\n')
    flag = cfg.flag({"mcpServers": {"b": {"command": "x", "disabledTools": ["add"]}}}, name="mcp.json")
    cfg.project({"mcpServers": {"p": {"command": "x", "disabledTools": ["fail"]}}})
    loaded = cfg.load(config_file=flag)
    assert len(mentioning(loaded, 'permissions.deny = ["b_add"]')) == 1, loaded.warnings
    assert len(mentioning(loaded, 'permissions.deny = ["p_fail"]')) == 1, loaded.warnings


WINDSURF_WITH_GEMINI_KEY = {
    "mcpServers": {
        "remote": {"serverUrl": "https://example.invalid/mcp", "disabledTools": ["delete_all"]},
        "g": {"command": "x", "trust": True},
    }
}


def test_a_windsurf_file_with_a_key_copied_from_gemini_reads_alike_three_ways_cfg_1_cfg_3_pol_4(cfg: Setup) -> None:
    """CFG-1, CFG-3, POL-4: imported, given with --mcp-config, or as the workspace's .mcp.json: `serverUrl` is the
    url and `disabledTools` the deny rule (written by import; the rule to write, in the warnings of the others)."""
    flag = cfg.flag(WINDSURF_WITH_GEMINI_KEY, name="mcp_config.json")
    config = import_config(flag, workspace=cfg.workspace)
    assert (config.format, fields(config, "remote")["url"]) == ("windsurf", "https://example.invalid/mcp")
    assert config.settings == {"permissions": {"deny": ["remote__delete_all"]}}
    assert not [note for note in config.ignored if note.key in ("serverUrl", "disabledTools")]
    cfg.project(WINDSURF_WITH_GEMINI_KEY)
    for loaded, source in ((cfg.load(config_file=flag), "--mcp-config file"), (cfg.load(), "project file")):
        assert by_id(loaded)["remote"].url == "https://example.invalid/mcp", source
        assert by_id(loaded)["remote"].state == "ok", source
        assert len(mentioning(loaded, source, 'permissions.deny = ["remote__delete_all"]')) == 1, loaded.warnings


@pytest.mark.parametrize(
    ("entry", "url", "transport"),
    [
        ({"httpUrl": "https://example.invalid/mcp"}, "https://example.invalid/mcp", "streamable_http"),
        ({"httpUrl": "https://example.invalid/mcp", "type": "sse"}, "https://example.invalid/mcp", "sse"),
        ({"url": "https://x.invalid/u", "httpUrl": "https://x.invalid/h"}, "https://x.invalid/u", None),
    ],
)
def test_geminis_http_url_in_the_workspace_file_is_read_as_import_reads_it_cfg_3_cfg_6(
    cfg: Setup, entry: dict[str, object], url: str, transport: str | None
) -> None:
    """CFG-3, CFG-6: `httpUrl` in a `.mcp.json` is the url over streamable HTTP, in the project file, with
    --mcp-config and by import alike; beside `url`, `url` is read and `httpUrl` is one warning."""
    project = cfg.project({"mcpServers": {"h": entry}})
    config = import_config(project, workspace=cfg.workspace)
    assert (fields(config, "h")["url"], fields(config, "h").get("transport")) == (url, transport)
    for loaded in (cfg.load(), cfg.load(config_file=project, trusted=False)):
        spec = by_id(loaded)["h"]
        assert (spec.state, spec.url) == ("ok", url), spec.problem
        assert spec.transport == (transport or "streamable_http")
        assert spec.sse_fallback is (transport is None)
        assert len(mentioning(loaded, "'httpUrl'")) == (1 if "url" in entry else 0), loaded.warnings


@pytest.mark.parametrize(
    ("folder", "document", "said"),
    [
        ("zed", {"theme": "One Dark", "ui_font_size": 16}, "a Zed settings.json with no MCP servers in it"),
        ("zed", {"theme": "One Dark"}, "(no `context_servers`)"),
        (".gemini", {"theme": "GitHub"}, "a Gemini CLI settings.json with no MCP servers in it"),
        ("elsewhere", {"theme": "GitHub"}, "a Gemini CLI settings.json with no MCP servers in it"),
    ],
)
def test_a_settings_file_without_servers_is_named_by_its_place_before_its_keys_cfg_2_err_1(
    cfg: Setup, folder: str, document: dict[str, object], said: str
) -> None:
    """CFG-2, ERR-1: Zed's settings.json has a `theme` as Gemini CLI's has; where it is says whose it is."""
    path = cfg.flag(document, name=f"{folder}/settings.json")
    with pytest.raises(ConfigError) as raised:
        import_config(path, workspace=cfg.workspace)
    assert said in str(raised.value)


def test_opencodes_tools_switched_off_are_denied_by_the_names_the_model_sees_pol_4_cat_1(cfg: Setup) -> None:
    """POL-4, CAT-1: OpenCode's `tools` map names a server's tool `<server>_<tool>` (globs too); `false` is a deny
    rule, by import and with --mcp-config; OpenCode's own tools, and a glob reaching two servers, say the rule to
    write."""
    cfg.user('tool_name_separator = "_"\n')
    document = {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {"b": {"type": "local", "command": ["x"]}, "git": {"type": "local", "command": ["y"]}},
        "tools": {"b_add": False, "b_f*": False, "b_echo": True, "bash": False, "*": False},
    }
    flag = cfg.flag(document, name="opencode.json")
    config = import_config(flag, workspace=cfg.workspace, separator="_")
    assert config.settings == {"permissions": {"deny": ["b_add", "b_f*"]}}
    assert {note.key for note in config.ignored if note.key.startswith("tools")} == {"tools.bash", "tools.*"}
    assert "OpenCode's own settings" not in json.dumps(config.to_json())
    assert cfg.load(config_file=flag).settings.deny == ("b_add", "b_f*")


@pytest.mark.parametrize(
    ("entry", "key", "needle"),
    [
        ({"type": "sse", "command": "nope"}, "transport", "has only `command`"),
        ({"type": "stdio", "url": "https://x.invalid/d"}, "transport", "has only `url`"),
        ({"command": "nope", "url": "https://x.invalid/e"}, "command, url", "both are set"),
    ],
)
def test_import_names_fields_that_contradict_each_other_as_loading_would_refuse_them_cfg_3_err_1(
    cfg: Setup, entry: dict[str, object], key: str, needle: str
) -> None:
    """CFG-3, ERR-1: what --mcp-config refuses, import says will not load as written; a disabled entry loads."""
    source = cfg.flag({"mcpServers": {"s": entry, "off": {**entry, "disabled": True}}}, name="mcp.json")
    config = import_config(source, workspace=cfg.workspace)
    assert [(note.server, note.key) for note in config.problems] == [("s", key)]
    assert needle in config.problems[0].why
    written = cfg.flag(config.text("json"), name="own.json")
    for loaded in (cfg.load(config_file=source), cfg.load(config_file=written)):
        assert (by_id(loaded)["s"].state, by_id(loaded)["off"].state) == ("failed", "disabled")


EDITOR_VARIABLES = {
    "command": "node",
    "args": ["${workspaceFolder}/a", "${userHome}/a", "${workspaceFolderBasename}", "${pathSeparator}"],
    "cwd": "${workspaceFolder}/sub",
}


@pytest.mark.parametrize(
    ("name", "written_by"),
    [
        ("claude_desktop_config.json", "claude-desktop"),
        ("mcp_config.json", "windsurf"),
        ("x.json", "claude-code"),
        ("own.toml", "mcpyard"),
    ],
)
def test_workspace_variables_are_written_as_a_file_read_as_it_is_expands_them_cfg_5(
    cfg: Setup, name: str, written_by: str
) -> None:
    """CFG-5: a file written by `import` runs the server as the client's file read with --mcp-config does, in every
    client's form (they were kept as written but for VS Code's and Cursor's, and then meant nothing)."""
    source = cfg.flag({"mcpServers": {"e": EDITOR_VARIABLES}}, name)
    if name.endswith(".toml"):  # mcpyard's own file, its servers as the shared form's tables
        lines = [f"{key} = {json.dumps(value)}" for key, value in EDITOR_VARIABLES.items()]  # JSON's are TOML's too
        source.write_text("\n".join(["[mcp.mcpServers.e]", *lines, ""]))
    config = import_config(source, workspace=cfg.workspace)
    if written_by != "claude-code":  # a plain `mcpServers` file is named for the client most likely to write it
        assert config.format == written_by
    own = source.with_name("written.toml")
    own.write_text(config.text("toml"))
    environ = {"HOME": "/home/me"}
    direct, written = (by_id(cfg.load(config_file=path, environ=environ))["e"] for path in (source, own))
    workspace = str(cfg.workspace)
    assert direct.args == (f"{workspace}/a", "/home/me/a", cfg.workspace.name, os.sep)
    assert (written.args, written.cwd) == (direct.args, direct.cwd) == (direct.args, f"{workspace}/sub")


def test_a_folder_of_a_multi_root_workspace_is_the_workspace_or_said_to_be_another_cfg_5(cfg: Setup) -> None:
    """CFG-5: VS Code's `${workspaceFolder:NAME}` is the workspace when NAME is its name; another folder is left out,
    saying so, by `import` and a direct read alike; in the shared form, where it cannot be read, the error names it."""
    named = f"${{workspaceFolder:{cfg.workspace.name}}}/a"
    entry = {"type": "stdio", "command": "node", "args": [named, "${workspaceFolder:other}/b"]}
    source = cfg.flag({"servers": {"e": entry}}, "mcp.json")
    config = import_config(source, workspace=cfg.workspace)
    assert fields(config, "e")["args"] == [f"{cfg.workspace}/a", "/b"]
    [note] = [note for note in config.ignored if note.key == "args[1]"]
    assert "multi-root" in note.why
    assert by_id(loaded := cfg.load(config_file=source))["e"].args == (f"{cfg.workspace}/a", "/b")
    assert mentioning(loaded, "'args[1]'", "multi-root")
    shared_args = [named, "${workspaceFolder:other}/b"]
    shared = cfg.flag({"mcpServers": {"e": {"command": "node", "args": shared_args}}}, "x.json")
    spec = by_id(cfg.load(config_file=shared))["e"]
    assert spec.state == "failed"
    assert "multi-root workspace, not the workspace mcpyard reads" in (spec.problem or "")
    shared = cfg.flag({"mcpServers": {"e": {"command": "node", "args": [named]}}}, "y.json")
    assert by_id(cfg.load(config_file=shared))["e"].args == (f"{cfg.workspace}/a",)
