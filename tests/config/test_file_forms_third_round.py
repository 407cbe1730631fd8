"""Files whose keys could be taken for another form: each read for what it is, never with a setting dropped (CFG-2).

A `servers` object beside mcpyard's own settings is the own form written by mistake, not VS Code's
mcp.json; Claude Code's settings.json and Codex's config.toml are named for what they are; an
`mcpServers` that is not an object is said so by `import` as by loading; a `servers` object in a
project file or the user config is told how to write it there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpyard.config import import_config
from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import Home

from ._support import Setup, by_id, mentioning

URL = "http://127.0.0.1:8772/mcp"

OWN_FORM_SLIPS = {
    "a deny rule beside": ({"mode": "auto", "permissions": {"deny": ["w__forecast"]}, "servers": {"w": {"url": URL}}}),
    "a mode beside": {"mode": "auto", "servers": {"w": {"url": URL}}},
    "a field of mcpyard's in a typed server": {
        "servers": {"w": {"type": "http", "url": URL, "trust_annotations": True}}
    },
    "at .vscode/mcp.json": {"inputs": [], "permissions": {"deny": ["w__*"]}, "servers": {"w": {"url": URL}}},
}


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


@pytest.mark.parametrize("document", OWN_FORM_SLIPS.values(), ids=OWN_FORM_SLIPS.keys())
def test_cfg2_a_servers_object_with_mcpyards_settings_is_refused_never_read_without_them(
    cfg: Setup, home: Home, document: dict[str, object]
) -> None:
    """CFG-2, ERR-1: read as VS Code's mcp.json, the deny rule (or mode, or field) would be dropped: it is an error
    that says how to write the own form, by `--mcp-config` and `import` alike."""
    name = ".vscode/mcp.json" if "inputs" in document else "my8.json"
    path = write(cfg.root / "from" / name, document)
    with pytest.raises(ConfigError) as loaded:
        cfg.load(config_file=path)
    with pytest.raises(ConfigError) as imported:
        import_config(path, workspace=cfg.workspace)
    for error in (loaded.value, imported.value):
        assert "mcpyard's own form written by mistake" in error.message
        assert "a list of objects, each with an `id`" in error.message
        assert "use `mcpServers`" in error.message
    for args in (["status", "--mcp-config", str(path)], ["import", str(path)]):
        done = run_mcpyard(home, *args)
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert "written by mistake" in line
        assert "a setting of VS Code itself" not in done.stderr + done.stdout


def test_cfg2_the_refusal_names_the_setting_or_field_of_mcpyards(cfg: Setup) -> None:
    """CFG-2, ERR-1: the key that makes it the own form is named, with where it is."""
    beside = cfg.flag({"permissions": {"deny": ["w__*"]}, "servers": {"w": {"url": URL}}})
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=beside)
    assert "'permissions' beside `servers`" in caught.value.message
    inside = cfg.flag({"servers": {"w": {"url": URL, "call_timeout_secs": 5}}})
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=inside)
    assert "'call_timeout_secs' in server 'w'" in caught.value.message
    assert (caught.value.entry, caught.value.field) == ("w", "call_timeout_secs")


def test_cfg2_a_vscode_mcp_json_with_its_own_keys_only_loads_as_before(cfg: Setup) -> None:
    """CFG-2: `inputs`, a remote server without a `type`, a typed stdio server: VS Code's file, read as it is."""
    document = {
        "inputs": [{"type": "promptString", "id": "token", "description": "Token", "password": True}],
        "servers": {"w": {"url": URL, "headers": {"X": "1"}}, "c": {"type": "stdio", "command": "x", "args": ["a"]}},
    }
    loaded = cfg.load(config_file=cfg.flag(document, "mcp.json"))
    assert sorted(by_id(loaded)) == ["c", "w"]
    assert import_config(cfg.flag(document, "mcp.json"), workspace=cfg.workspace).format == "vscode"


def test_cfg2_a_vscode_mcp_json_with_no_server_yet_loads_empty_as_import_reads_it(cfg: Setup) -> None:
    """`{"servers": {}}`: VS Code's file before its first server (the own form's `servers` is a list)."""
    loaded = cfg.load(config_file=cfg.flag({"servers": {}}, "mcp.json"))
    assert by_id(loaded) == {}
    assert import_config(cfg.flag({"servers": {}}, "mcp.json"), workspace=cfg.workspace).format == "vscode"


@pytest.mark.parametrize(
    "document",
    [
        {"permissions": {"deny": ["w__*"], "allow": ["notes__list_*"]}},
        {"mode": "plan"},
        {"mode": "ask", "permissions": {"deny": ["mcp__delete_*"]}},  # a server whose id is `mcp`
    ],
    ids=["mcpyard's own rules", "a mode", "rules beside a mode"],
)
def test_cfg8_a_file_of_mcpyards_settings_alone_still_loads(cfg: Setup, document: dict[str, object]) -> None:
    """CFG-8: a --mcp-config file may set host settings and no servers; its own rules are not Claude Code's."""
    loaded = cfg.load(config_file=cfg.flag(document))
    assert loaded.servers == ()
    assert import_config(cfg.flag(document), workspace=cfg.workspace).format == "mcpyard"


def test_cfg1_a_stray_key_beside_mcpyards_settings_is_named_not_taken_for_codexs(cfg: Setup) -> None:
    """CFG-1: a key Codex also writes (`profile`) beside mcpyard's `mode` is a mistake in mcpyard's file."""
    cfg.user('mode = "ask"\nprofile = "work"\n')
    with pytest.raises(ConfigError, match="unknown top-level key 'profile'") as caught:
        cfg.load()
    assert "Codex" not in caught.value.message


CODEX_USER = """model = "gpt-5-codex"
model_reasoning_effort = "high"

[projects."/x"]
trust_level = "trusted"
"""


@pytest.mark.parametrize(
    "toml",
    [CODEX_USER, CODEX_USER + '\n[mcp_servers.echo]\ncommand = "npx"\nargs = ["-y", "echo"]\n'],
    ids=["without servers", "with [mcp_servers] tables"],
)
def test_err1_codexs_config_as_the_user_config_is_named_with_how_to_use_it_cfg_1(
    cfg: Setup, home: Home, toml: str
) -> None:
    """ERR-1, CFG-1: the user config is mcpyard's own: Codex's file there is an error that names it and says what
    reads it (`--mcp-config`) or converts it (`mcpyard import`)."""
    cfg.user(toml)
    with pytest.raises(ConfigError) as caught:
        cfg.load()
    message = caught.value.message
    assert "this is Codex's config.toml (its [mcp_servers] tables)" in message
    assert "--mcp-config" in message
    assert "mcpyard import" in message
    assert "the known keys are" not in message
    write(home.config_home / "config.toml", toml)
    done = run_mcpyard(home, "status")
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "Codex's config.toml" in line


@pytest.mark.parametrize("document", [{"mcpServers": []}, {"mcpServers": "npx"}], ids=["a list", "a string"])
def test_cfg2_import_of_an_mcpservers_that_is_not_an_object_says_so_as_loading_does(
    cfg: Setup, home: Home, document: dict[str, object]
) -> None:
    """CFG-2, ERR-1: the same reason by both ways, not "neither `servers` nor `mcpServers`"."""
    path = write(cfg.root / "from" / "pos.json", document)
    with pytest.raises(ConfigError) as imported:
        import_config(path, workspace=cfg.workspace)
    with pytest.raises(ConfigError) as loaded:
        cfg.load(config_file=path)
    for error in (imported.value, loaded.value):
        assert "`mcpServers` must be an object whose keys are the server ids" in error.message
        assert "neither" not in error.message
    done = run_mcpyard(home, "import", str(path))
    assert done.returncode == 2
    assert "`mcpServers` must be an object" in done.stderr


def test_cfg2_a_servers_object_in_a_project_file_is_told_to_use_mcpservers_there_cfg_6(cfg: Setup) -> None:
    """CFG-2, CFG-6: `.mcp.json` reads the own and the shared form; VS Code's `servers` object is read only from a
    file given with --mcp-config, and the warning says so instead of what VS Code's file would need."""
    cfg.project({"servers": {"w": {"url": URL}}})
    loaded = cfg.load()
    [warning] = mentioning(loaded, ".mcp.json", "its servers were not started")
    assert "rename `servers` to `mcpServers`" in warning
    assert "only from a file given with --mcp-config" in warning
    assert "would read" not in warning
    cfg.project({"mcpServers": {"w": {"url": URL}}})
    assert by_id(cfg.load())["w"].url == URL


def test_cfg2_servers_tables_keyed_by_id_in_the_user_config_say_how_toml_writes_them(cfg: Setup) -> None:
    """CFG-2: in TOML the list is [[mcp.servers]] tables; tables keyed by id are [mcp.mcpServers.<id>]."""
    cfg.user('[mcp.servers.a]\ncommand = "x"\n')
    with pytest.raises(ConfigError) as caught:
        cfg.load()
    assert "[[mcp.servers]] tables, each with an `id`" in caught.value.message
    assert "[mcp.mcpServers.<id>]" in caught.value.message
    assert "VS Code" not in caught.value.message


CODEX_SETTINGS_ONLY = {
    "a model alone": 'model = "o3"\n',
    "a model and an approval policy": 'model = "o3"\napproval_policy = "never"\n',
    "a model and a key of newer Codex": 'model = "gpt-5-codex"\nhide_agent_reasoning = true\n',
    "a sandbox and its history": 'sandbox_mode = "read-only"\n\n[history]\npersistence = "none"\n',
}


@pytest.mark.parametrize("toml", list(CODEX_SETTINGS_ONLY.values()), ids=list(CODEX_SETTINGS_ONLY))
def test_err1_cfg1_a_codex_config_toml_without_servers_is_named_so_wherever_it_is(home: Home, toml: str) -> None:
    """ERR-1, CFG-1: Codex's config.toml holding only Codex's settings (a string `model`, `approval_policy`…) is
    recognised by its keys as at ~/.codex/config.toml: `status --mcp-config` and `import` say, in the same one line
    and with the same exit code, that it holds no MCP servers; never that `model` must be mcpyard's table."""
    at_codex = write(home.root / ".codex" / "config.toml", toml)
    elsewhere = write(home.root / "c1" / "config.toml", toml)
    for command in (("status", "--mcp-config"), ("import",)):
        lines: list[str] = []
        for path in (at_codex, elsewhere):
            done = run_mcpyard(home, *command, str(path))
            assert done.returncode == 2, done.stdout
            [line] = done.stderr.splitlines()
            assert "is a Codex config.toml with no MCP servers in it" in line
            assert "must be a table" not in line
            assert "0 servers" not in done.stdout
            lines.append(line.replace(str(path), "FILE"))
        assert lines[0] == lines[1]


def test_cfg8_mcpyards_model_table_or_a_string_model_beside_its_settings_is_still_mcpyards(cfg: Setup) -> None:
    """CFG-8, MOD-3: only a string `model` with no setting of mcpyard's is Codex's: mcpyard's own `[model]` table in
    a --mcp-config TOML loads, and `model = "o3"` beside `mode` is mcpyard's file with a wrong `model`."""
    table = cfg.flag('[model]\nmodel = "llama3"\nbase_url = "http://127.0.0.1:11434/v1"\n', name="config.toml")
    assert cfg.load(config_file=table).settings.model.model == "llama3"
    assert import_config(table, workspace=cfg.workspace).format == "mcpyard"
    slip = cfg.flag('mode = "ask"\nmodel = "o3"\n', name="slip.toml")
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=slip)
    assert caught.value.field == "model"
    assert "must be a table" in caught.value.message
