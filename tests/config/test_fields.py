"""Entry fields, their defaults, bad values and transports (CFG-3, CFG-4, CONN-1, CONN-2)."""

from __future__ import annotations

import pytest

from mcpyard.config import TransportName

from ._support import Setup, by_id, mentioning


def test_a_minimal_entry_gets_every_default_cfg_3(cfg: Setup) -> None:
    """CFG-3: name is the id, annotations trusted, 32 MiB files, 30/60/5 s timeouts, enabled."""
    spec, loaded = cfg.load_one({"command": "server"})
    assert spec.name == "s"
    assert spec.trust_annotations is True
    assert spec.max_file_bytes == 33_554_432
    assert (spec.connect_timeout_secs, spec.call_timeout_secs, spec.shutdown_timeout_secs) == (
        30.0,
        60.0,
        5.0,
    )
    assert (spec.enabled, spec.state, spec.problem, spec.transport) == (True, "ok", None, "stdio")
    assert (spec.args, spec.env, spec.inherit_env, spec.cwd, spec.shared_tools) == ((), (), (), None, None)
    assert loaded.warnings == ()


def test_every_field_is_carried_into_the_spec_cfg_3(cfg: Setup) -> None:
    """CFG-3: all fields of the own form, as written."""
    flag = cfg.flag(
        {
            "servers": [
                {
                    "id": "fs",
                    "command": "node",
                    "args": ["srv.js"],
                    "env": {"MODE": "x"},
                    "inherit_env": ["PATH_EXTRA"],
                    "cwd": "/srv",
                    "transport": "stdio",
                    "name": "files",
                    "trust_annotations": False,
                    "max_file_bytes": 1024,
                    "shared_tools": ["read"],
                    "connect_timeout_secs": 2,
                    "call_timeout_secs": None,
                    "shutdown_timeout_secs": 0.5,
                    "enabled": True,
                }
            ]
        }
    )
    (spec,) = cfg.load(config_file=flag).servers
    assert (spec.command, spec.args, spec.env, spec.cwd) == ("node", ("srv.js",), (("MODE", "x"),), "/srv")
    assert (spec.inherit_env, spec.name, spec.trust_annotations) == (("PATH_EXTRA",), "files", False)
    assert (spec.max_file_bytes, spec.shared_tools) == (1024, ("read",))
    assert (spec.connect_timeout_secs, spec.call_timeout_secs, spec.shutdown_timeout_secs) == (2.0, None, 0.5)
    assert spec.state == "ok"


def test_no_call_time_limit_is_written_none_in_toml_cfg_3(cfg: Setup) -> None:
    """CFG-3: TOML has no null, so `call_timeout_secs = "none"` means no limit."""
    cfg.user('[[mcp.servers]]\nid = "a"\ncommand = "x"\ncall_timeout_secs = "none"\n')
    assert by_id(cfg.load())["a"].call_timeout_secs is None


BAD_VALUES = [
    ("max_file_bytes", 0, "max_file_bytes: must be a whole number of at least 1, not 0"),
    ("max_file_bytes", 1.5, "max_file_bytes: must be a whole number of at least 1, not 1.5"),
    ("max_file_bytes", "big", "max_file_bytes: must be a whole number of at least 1, not a string"),
    ("max_file_bytes", True, "max_file_bytes: must be a whole number"),
    ("connect_timeout_secs", -1, "connect_timeout_secs: must be a number of seconds greater than 0, not -1"),
    ("shutdown_timeout_secs", 0, "shutdown_timeout_secs: must be a number of seconds greater than 0"),
    ("call_timeout_secs", -5, 'for no limit write null (JSON) or "none" (TOML)'),
    ("call_timeout_secs", "soon", "call_timeout_secs: must be a number of seconds"),
    ("args", "-y pkg", "args: must be a list of strings, not a string"),
    ("args", ["-p", 8080], "args: must be a list of strings; item 1 is a number, quote it"),
    ("env", ["A=1"], "env: must be an object of names to strings, not a list"),
    ("env", {"PORT": 8080}, "env.PORT: must be a string, not a number; quote it"),
    ("env", {"A=B": "x"}, "env['A=B']: is not a variable name"),
    (
        "inherit_env",
        "PATH",
        'inherit_env: must be a list of strings, not a string, or "*" for the whole environment',
    ),
    ("inherit_env", [""], "inherit_env[0]: is not a variable name"),
    ("cwd", 3, "cwd: must be a string, not a number"),
    ("name", "", "name: is empty; give a value or remove the field"),
    ("trust_annotations", "yes", "trust_annotations: must be true or false, not a string"),
    ("enabled", 0, "enabled: must be true or false, not a number"),
    ("shared_tools", "read", "shared_tools: must be a list of strings"),
    ("headers", {"Bad Name": "x"}, "headers['Bad Name']: is not a valid header name"),
    ("transport", "http", "transport: must be one of stdio, streamable_http, sse, websocket, not 'http'"),
    ("command", ["npx"], "command: must be a string, not a list"),
]


@pytest.mark.parametrize(("field", "value", "problem"), BAD_VALUES)
def test_a_bad_value_stops_only_that_server_and_says_why_cfg_4(
    cfg: Setup, field: str, value: object, problem: str
) -> None:
    """CFG-4: the entry is failed with `<field>: <what is wrong and the fix>`; its neighbour starts."""
    flag = cfg.flag({"mcpServers": {"bad": {"command": "x", field: value}, "good": {"command": "y"}}})
    servers = by_id(cfg.load(config_file=flag))
    assert servers["bad"].state == "failed"
    assert servers["bad"].problem is not None
    assert problem in servers["bad"].problem
    assert servers["bad"].problem.startswith(field)
    assert (servers["good"].state, servers["good"].problem) == ("ok", None)


def test_every_bad_value_of_an_entry_is_reported_at_once_cfg_4(cfg: Setup) -> None:
    """CFG-4: one reload fixes them all, instead of one per attempt."""
    spec, _ = cfg.load_one({"command": "x", "max_file_bytes": -1, "connect_timeout_secs": "1"})
    assert spec.problem is not None
    assert spec.problem.count("; ") >= 1
    assert "max_file_bytes:" in spec.problem
    assert "connect_timeout_secs:" in spec.problem


def test_a_whole_float_is_a_whole_number_cfg_4(cfg: Setup) -> None:
    """CFG-4: `1048576.0` is a whole number, as JSON writers may emit it."""
    spec, _ = cfg.load_one({"command": "x", "max_file_bytes": 1048576.0})
    assert (spec.state, spec.max_file_bytes) == ("ok", 1048576)


def test_an_entry_with_neither_command_nor_url_is_skipped_with_one_warning_cfg_4(cfg: Setup) -> None:
    """CFG-4: skipped, the reason kept for the status page, one warning."""
    spec, loaded = cfg.load_one({"args": ["x"]})
    assert spec.state == "skipped"
    assert spec.problem is not None
    assert "neither `command` nor `url`" in spec.problem
    assert len(loaded.warnings) == 1
    assert mentioning(loaded, "server 's'", "is skipped")


def test_enabled_false_disables_the_server_without_expanding_it_cfg_3(cfg: Setup) -> None:
    """CFG-3, CAT-4: a disabled entry is listed as disabled; its references are not looked up."""
    spec, loaded = cfg.load_one({"command": "x", "args": ["${UNSET}"], "enabled": False})
    assert (spec.state, spec.enabled) == ("disabled", False)
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    ("entry", "transport", "fallback"),
    [
        ({"url": "https://example.com/mcp"}, "streamable_http", True),
        ({"url": "http://127.0.0.1:8750/mcp"}, "streamable_http", True),
        ({"url": "wss://example.com/mcp"}, "websocket", False),
        ({"url": "https://example.com/mcp", "transport": "streamable_http"}, "streamable_http", False),
        ({"url": "https://example.com/sse", "transport": "sse"}, "sse", False),
        ({"url": "ws://127.0.0.1/mcp", "transport": "websocket"}, "websocket", False),
        ({"command": "x"}, "stdio", False),
        ({"command": "x", "transport": "stdio"}, "stdio", False),
    ],
)
def test_the_transport_follows_the_entry_cfg_3_conn_1(
    cfg: Setup, entry: dict[str, object], transport: TransportName, fallback: bool
) -> None:
    """CFG-3, CONN-1: a url with no transport is streamable HTTP falling back to SSE; a command is stdio."""
    spec, _ = cfg.load_one(entry)
    assert (spec.state, spec.transport, spec.sse_fallback) == ("ok", transport, fallback)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            {"url": "https://x.test", "transport": "stdio"},
            "transport: `stdio` starts a local process and needs",
        ),
        ({"command": "x", "transport": "sse"}, "transport: `sse` connects to a `url`"),
        (
            {"url": "https://x.test", "type": "stdio"},
            "type: `stdio` starts a local process and needs `command`, but this entry has only `url`; remove `type` or "
            "set it to http, sse or ws",
        ),
        (
            {"command": "x", "type": "http"},
            "type: `http` connects to a `url`, but this entry has only `command`; remove `type` or set it to stdio",
        ),
        ({"command": "x", "url": "https://x.test"}, "command, url: both are set"),
        ({"url": "ftp://x.test/mcp"}, "url: must start with http:// or https://"),
        ({"url": "https://x.test/mcp", "transport": "websocket"}, "url: must start with ws:// or wss://"),
        ({"url": "https:///mcp"}, "url: has no host"),
        ({"url": "https://x.test:99999/mcp"}, "url: is not a valid URL"),
        ({"url": "https://x.test/a b"}, "url: holds spaces or control characters"),
    ],
)
def test_a_transport_or_url_that_cannot_work_fails_the_entry_with_the_reason_cfg_3_cfg_4(
    cfg: Setup, entry: dict[str, object], problem: str
) -> None:
    """CFG-3, CFG-4: contradictions between transport, command and url are named."""
    spec, _ = cfg.load_one(entry)
    assert spec.state == "failed"
    assert spec.problem is not None
    assert problem in spec.problem


@pytest.mark.parametrize("url", ["https://alice:hunter2@x.test/mcp", "https://hunter2@x.test/mcp"])
def test_a_url_with_a_user_name_or_password_is_refused_for_that_entry_cfg_4(cfg: Setup, url: str) -> None:
    """CFG-4, SEC-2: the entry fails pointing to headers; the password is in no message and not kept."""
    spec, loaded = cfg.load_one({"url": url})
    assert spec.state == "failed"
    assert spec.problem is not None
    assert "url: carries a user name or password" in spec.problem
    assert "`headers`" in spec.problem
    assert "hunter2" not in spec.problem
    assert spec.url == "https://x.test/mcp"
    assert all("hunter2" not in warning for warning in loaded.warnings)


def test_inherit_env_may_pass_the_whole_environment_cfg_3_conn_2(cfg: Setup) -> None:
    """CFG-3, CONN-2: `"*"` is kept as is; the connection layer filters secret-looking names."""
    spec, _ = cfg.load_one({"command": "x", "inherit_env": "*"})
    assert spec.inherit_env == "*"


@pytest.mark.parametrize(
    ("entry", "ignored"),
    [
        ({"command": "x", "headers": {"A": "b"}}, "`headers`"),
        ({"url": "https://x.test", "env": {"A": "b"}, "args": ["a"]}, "`args`, `env`"),
    ],
)
def test_fields_the_transport_does_not_use_are_ignored_with_a_warning_cfg_3(
    cfg: Setup, entry: dict[str, object], ignored: str
) -> None:
    """CFG-3: a header on a stdio server (or args on a remote one) is pointed out, not silently lost."""
    spec, loaded = cfg.load_one(entry)
    assert spec.state == "ok"
    assert mentioning(loaded, "server 's'", f"ignoring {ignored}")
    assert spec.headers == ()
    assert spec.env == ()


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"command": "x", "args": ["a\u0000b"]}, "args[0]"),
        ({"command": "x", "env": {"K": "a\u0000"}}, "env.K"),
        ({"command": "x\u0000y"}, "command"),
    ],
)
def test_a_nul_character_in_a_process_string_fails_the_entry_cfg_4(
    cfg: Setup, entry: dict[str, object], field: str
) -> None:
    """CFG-4, ERR-1: a process cannot receive NUL; the entry fails naming the field, not later."""
    spec, _ = cfg.load_one(entry)
    assert spec.state == "failed"
    assert spec.problem == f"{field}: holds a NUL character, which a process cannot receive; remove it"
