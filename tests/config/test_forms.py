"""The two forms in JSON and TOML, source-level errors and unknown keys (CFG-1, CFG-2, CFG-3, CFG-4, CFG-8, ERR-1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpyard.config import ServerSpec, TransportName, import_config
from mcpyard.errors import ConfigError

from ._support import Setup, by_id, mentioning

SAME_SERVER_FORMS = {
    "json-own": (
        "flag.json",
        '{"servers": [{"id": "gh", "command": "npx", "args": ["-y", "gh"], "env": {"A": "1"}, "name": "git"}]}',
    ),
    "json-shared": (
        "flag.json",
        '{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh"], "env": {"A": "1"}, "name": "git"}}}',
    ),
    "toml-own": (
        "flag.toml",
        '[[mcp.servers]]\nid = "gh"\ncommand = "npx"\nargs = ["-y", "gh"]\nenv = { A = "1" }\nname = "git"\n',
    ),
    "toml-shared": (
        "flag.toml",
        '[mcp.mcpServers.gh]\ncommand = "npx"\nargs = ["-y", "gh"]\nenv = { A = "1" }\nname = "git"\n',
    ),
}


@pytest.mark.parametrize(("name", "text"), SAME_SERVER_FORMS.values(), ids=SAME_SERVER_FORMS.keys())
def test_each_form_in_json_and_toml_gives_the_same_server_cfg_2(cfg: Setup, name: str, text: str) -> None:
    """CFG-2: own and shared form, JSON and TOML, describe the same entry."""
    loaded = cfg.load(config_file=cfg.flag(text, name))
    (spec,) = loaded.servers
    assert (spec.id, spec.name, spec.command, spec.args, spec.env) == (
        "gh",
        "git",
        "npx",
        ("-y", "gh"),
        (("A", "1"),),
    )
    assert (spec.state, spec.transport, spec.source) == ("ok", "stdio", "flag")
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    "toml",
    [
        '[[mcp.servers]]\nid = "a"\ncommand = "x"\n',
        '[mcp.mcpServers.a]\ncommand = "x"\n',
    ],
)
def test_the_user_config_is_toml_in_either_form_cfg_1_cfg_2(cfg: Setup, toml: str) -> None:
    """CFG-1, CFG-2: the user config is TOML and may use either form."""
    cfg.user(toml)
    spec = by_id(cfg.load())["a"]
    assert (spec.source, spec.source_path, spec.command) == ("user", cfg.user_file, "x")


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("f.json", '{"servers": [], "mcpServers": {}}', "both `servers` and `mcpServers`"),
        ("f.toml", "[mcp]\nservers = []\n[mcp.mcpServers]\n", "both `servers` and `mcpServers`"),
        ("f.json", '{"mcp_servers": {}}', "unknown top-level key 'mcp_servers'; did you mean `mcpServers`?"),
        ("f.json", '{"MCPServers": {}}', "unknown top-level key 'MCPServers'; did you mean `mcpServers`?"),
        ("f.json", '{"SERVERS": []}', "unknown top-level key 'SERVERS'; did you mean `servers`?"),
        ("f.json", "{}", "neither `servers` nor `mcpServers`"),
        ("f.toml", "# servers go here\n", "neither `servers` nor `mcpServers`"),
        ("f.toml", "", "is empty, so it holds no servers"),
        ("f.json", '{"servers": [{"id": "a", "command": "x"}, {"id": "a", "command": "y"}]}', "'a' twice"),
        ("f.json", '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}', "'a' twice"),
        (
            "f.toml",
            '[[mcp.servers]]\nid = "a"\ncommand = "x"\n[[mcp.servers]]\nid = "a"\ncommand = "y"\n',
            "twice",
        ),
    ],
)
def test_both_forms_neither_form_or_a_repeated_id_is_an_error_naming_the_source_cfg_2(
    cfg: Setup, name: str, text: str, needle: str
) -> None:
    """CFG-2: such a source is an error naming the source; nothing is loaded."""
    flag = cfg.flag(text, name)
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=flag)
    assert needle in caught.value.message
    assert str(flag) in caught.value.message
    assert caught.value.source == flag


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"servers": {"a": {"command": "x", "enabled": false}}}', "use `mcpServers`"),
        ('{"servers": ["x"]}', "entry 1 of `servers` must be an object"),
        ('{"servers": [{"command": "x"}]}', "needs an `id`"),
        ('{"servers": [{"id": "", "command": "x"}]}', "needs an `id`"),
        ('{"mcpServers": {"a": "npx"}}', "server 'a' in `mcpServers` must be an object"),
        ('{"mcpServers": ["a"]}', "object whose keys are the server ids"),
        ('[{"id": "a"}]', "must hold an object at the top level"),
        ('{"servers": [], "unknown": 1}', "unknown top-level key 'unknown'"),
        ('{"servers": [], "mod": "ask"}', "did you mean `mode`?"),
    ],
)
def test_a_badly_shaped_json_source_is_an_error_that_says_the_fix_cfg_2(cfg: Setup, text: str, needle: str) -> None:
    """CFG-2, ERR-1: the message says what is wrong and how to write it."""
    with pytest.raises(ConfigError, match=r"flag\.json") as caught:
        cfg.load(config_file=cfg.flag(text))
    assert needle in caught.value.message


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ('[[servers]]\nid = "a"\ncommand = "x"\n', "belongs under [mcp]"),
        ('[mcpServers.a]\ncommand = "x"\n', "belongs under [mcp]"),
        ('mcp = "x"\n', "`mcp` must be a table"),
        ("[mcp]\nserver = []\n", "unknown key 'server' in [mcp]"),
        ('[mcp.mcpServers]\na = "npx"\n', "must be an object"),
    ],
)
def test_a_badly_shaped_toml_user_config_is_an_error_cfg_2(cfg: Setup, toml: str, needle: str) -> None:
    """CFG-2: TOML servers live under [mcp]; anything else is an error naming the user config."""
    cfg.user(toml)
    with pytest.raises(ConfigError, match="user config") as caught:
        cfg.load()
    assert needle in caught.value.message


def test_an_unknown_field_in_the_own_form_names_field_entry_and_source_cfg_3(cfg: Setup) -> None:
    """CFG-3: a typo never silently drops a setting."""
    flag = cfg.flag({"servers": [{"id": "gh", "comand": "npx"}]})
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=flag)
    error = caught.value
    assert (error.field, error.entry, error.source) == ("comand", "gh", flag)
    assert "'comand'" in error.message
    assert "'gh'" in error.message
    assert str(flag) in error.message
    assert "did you mean `command`?" in error.message


def test_type_in_the_own_form_is_refused_with_a_pointer_to_transport_cfg_3(cfg: Setup) -> None:
    """CFG-3: `type` is only read from the shared form; the own form says `transport`."""
    cfg.user('[[mcp.servers]]\nid = "a"\ncommand = "x"\ntype = "stdio"\n')
    with pytest.raises(ConfigError, match="write `transport`"):
        cfg.load()


def test_unknown_keys_of_the_shared_form_are_ignored_with_one_warning_each_cfg_3(cfg: Setup) -> None:
    """CFG-3: the shared form is foreign; `autoApprove`, `timeout` and a `disabled` that is not true or false only
    warn (`disabled: true` is read: see test_clients.py)."""
    spec, loaded = cfg.load_one({"command": "x", "disabled": "no", "autoApprove": ["t"], "timeout": 9})
    assert spec.state == "ok"
    for key in ("disabled", "autoApprove", "timeout"):
        assert len(mentioning(loaded, "server 's'", f"'{key}'")) == 1
    assert len(loaded.warnings) == 3
    assert mentioning(loaded, "'disabled'", "true or false", "`enabled`")


@pytest.mark.parametrize(
    ("type_", "transport", "where"),
    [
        ("stdio", "stdio", "command"),
        ("http", "streamable_http", "url"),
        ("streamable-http", "streamable_http", "url"),
        ("sse", "sse", "url"),
        ("ws", "websocket", "url"),
    ],
)
def test_the_shared_form_type_maps_onto_transport_cfg_3(
    cfg: Setup, type_: str, transport: TransportName, where: str
) -> None:
    """CFG-3: `type` is the one foreign key that is read."""
    target = "wss://example.com/mcp" if transport == "websocket" else "https://example.com/mcp"
    entry = {"type": type_, where: "server" if where == "command" else target}
    spec, loaded = cfg.load_one(entry)
    assert (spec.state, spec.transport, spec.sse_fallback) == ("ok", transport, False)
    assert loaded.warnings == ()


def test_an_unknown_shared_type_fails_only_that_server_cfg_3_cfg_4(cfg: Setup) -> None:
    """CFG-3, CFG-4: a `type` mcpyard cannot map stops that entry and says which values work."""
    flag = cfg.flag({"mcpServers": {"bad": {"type": "grpc", "url": "https://x.test"}, "good": {"command": "x"}}})
    servers = by_id(cfg.load(config_file=flag))
    assert servers["bad"].state == "failed"
    assert servers["bad"].problem is not None
    assert servers["bad"].problem.startswith("type: must be one of")
    assert servers["good"].state == "ok"


def test_type_and_transport_that_disagree_fail_the_entry_cfg_3(cfg: Setup) -> None:
    """CFG-3: a shared entry may not say two different transports."""
    spec, _ = cfg.load_one({"type": "sse", "transport": "streamable_http", "url": "https://x.test/mcp"})
    assert spec.state == "failed"
    assert spec.problem == "type: means `sse` but `transport` says `streamable_http`; keep one of them"


def test_unknown_top_level_keys_of_a_shared_json_file_only_warn_cfg_3(cfg: Setup) -> None:
    """CFG-3: a desktop client's config file with other settings can be passed as is."""
    flag = cfg.flag({"mcpServers": {"a": {"command": "x"}}, "globalShortcut": "Ctrl+K", "$schema": "x"})
    loaded = cfg.load(config_file=flag)
    assert [spec.id for spec in loaded.servers] == ["a"]
    assert loaded.warnings == (f"--mcp-config file {flag}: ignoring the unknown top-level key 'globalShortcut'",)


def test_a_settings_only_user_config_is_not_an_error_cfg_2_cfg_8(cfg: Setup) -> None:
    """CFG-2, CFG-8: a user config that only sets host settings lists no servers and is valid."""
    cfg.user('mode = "plan"\n')
    loaded = cfg.load()
    assert loaded.servers == ()
    assert loaded.settings.mode == "plan"


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        ("f.json", '{"servers": [', ("is not valid JSON", "line 1, column")),
        (
            "f.json",
            '[[mcp.servers]]\nid = "a"\ncommand = "x"\n',
            ("is not valid JSON", "rename it to end in .toml"),
        ),
        ("f.toml", '{"mcpServers": {}}', ("is not valid TOML", "rename it to end in .json")),
        ("f.toml", "[mcp\n", ("is not valid TOML", "line 1")),
        ("f.json", '{"mcpServers": {}, "x": NaN}', ("NaN is not a JSON number",)),
        ("f.json", b'{"mcpServers": {"\xff": {}}}', ("is not UTF-8 text",)),
        (
            "f.json",
            '{"mcpServers": {"a": {"env": {"K": "1", "K": "2"}}}}',
            ("repeats the key 'K'", "mcpServers.a.env"),
        ),
    ],
)
def test_a_malformed_flag_file_is_an_error_that_helps_fix_it_cfg_1_err_1(
    cfg: Setup, name: str, text: str | bytes, needles: tuple[str, ...]
) -> None:
    """CFG-1, ERR-1: the parser follows the extension; a file in the other format says to rename it."""
    with pytest.raises(ConfigError) as caught:
        cfg.load(config_file=cfg.flag(text, name))
    for needle in needles:
        assert needle in caught.value.message


@pytest.mark.parametrize("text", ["", "  \n\n", "\ufeff\n"], ids=["0 bytes", "whitespace", "a BOM"])
@pytest.mark.parametrize("name", ["f.json", "f.toml"])
def test_err1_cfg2_an_empty_flag_file_says_it_is_empty_in_one_line(cfg: Setup, name: str, text: str) -> None:
    """ERR-1, CFG-2: read directly or imported, an empty file is named as empty with no servers, never as being in
    the other format; the line says what to write."""
    flag = cfg.flag(text, name)
    with pytest.raises(ConfigError) as loaded:
        cfg.load(config_file=flag)
    with pytest.raises(ConfigError) as imported:
        import_config(flag, workspace=cfg.workspace)
    for message in (loaded.value.message, imported.value.message):
        assert f"{flag} is empty, so it holds no servers; " in message
        assert "mcpServers" in message
        assert "or give the file that lists them" in message
        assert "valid" not in message
        assert "rename" not in message
        assert "\n" not in message


def test_a_missing_flag_file_is_an_error_cfg_1(cfg: Setup, tmp_path: Path) -> None:
    """CFG-1: `--mcp-config` naming no file stops everything with a clear message."""
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match=r"--mcp-config file .*nope\.json does not exist; check the path"):
        cfg.load(config_file=missing)


def test_a_flag_file_that_is_a_folder_is_an_error(cfg: Setup, tmp_path: Path) -> None:
    """CFG-1, ERR-1: a folder is named as such."""
    with pytest.raises(ConfigError, match="is a folder"):
        cfg.load(config_file=tmp_path)


def test_server_ids_with_control_characters_are_escaped_in_messages_cfg_3(cfg: Setup) -> None:
    """CFG-3: an id is quoted so a terminal escape in a file never reaches the console raw."""
    spec, loaded = cfg.load_one({"command": "x", "weird": 1})
    assert isinstance(spec, ServerSpec)
    flag = cfg.flag({"mcpServers": {"\x1b[31mred": {"command": "x", "odd": 1}}})
    loaded = cfg.load(config_file=flag)
    assert all("\x1b" not in warning for warning in loaded.warnings)
    assert mentioning(loaded, "'\\x1b[31mred'")
