"""The project file: trust, credential variables, secrets and settings it may not set.

CFG-6, CFG-8, and where the project file meets CFG-1, CFG-3, CFG-5 and ERR-1.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpyard.config import CREDENTIAL_VARIABLES, ServerSpec

from ._support import RecordingMapping, Setup, by_id, mentioning

PROJECT = {
    "mcpServers": {
        "a": {"command": "${TOOL_BIN}", "args": ["${secret:GH}"], "env": {"K": "${ANTHROPIC_API_KEY}"}},
        "b": {"url": "https://x.test/${PATH_PART}", "headers": {"Authorization": "${secret:GH}"}},
        "c": {"url": "https://x.test:1/${UNSET}"},
    }
}


def test_an_untrusted_project_file_lists_its_servers_and_expands_nothing_cfg_6(cfg: Setup) -> None:
    """CFG-6: no expansion before trust: not one environment variable or secret is looked up."""
    cfg.project(PROJECT)
    environ = RecordingMapping({"TOOL_BIN": "/bin/tool", "ANTHROPIC_API_KEY": "sk-live"})
    secrets = RecordingMapping({"GH": "ghp_x"})
    loaded = cfg.load(trusted=False, environ=environ, secrets=secrets)
    assert (environ.looked_up, secrets.looked_up) == ([], [])
    assert [(spec.id, spec.state, spec.source) for spec in loaded.servers] == [
        ("a", "untrusted", "project"),
        ("b", "untrusted", "project"),
        ("c", "untrusted", "project"),
    ]
    for spec in loaded.servers:
        assert (spec.command, spec.url, spec.args, spec.headers, spec.transport) == (None, None, (), (), None)
        assert spec.problem is not None
        assert "mcpyard trust" in spec.problem


def test_an_untrusted_project_file_gives_one_line_saying_how_many_and_how_to_trust_cfg_6(cfg: Setup) -> None:
    """CFG-6: one line, with the count, the file and both ways to trust it."""
    path = cfg.project(PROJECT)
    loaded = cfg.load(trusted=False)
    assert loaded.warnings == (
        f"3 servers in project file {path} were not started: the workspace is not trusted; "
        "run `mcpyard trust` (or pass --trust) to start them",
    )


def test_the_untrusted_line_is_singular_for_one_server_cfg_6(cfg: Setup) -> None:
    """CFG-6: `1 server … was not started`."""
    cfg.project({"servers": [{"id": "only", "command": "x"}]})
    (warning,) = cfg.load(trusted=False).warnings
    assert warning.startswith("1 server in project file ")
    assert " was not started" in warning


def test_an_untrusted_project_file_with_no_servers_says_nothing_cfg_6(cfg: Setup) -> None:
    """CFG-6: nothing was held back, so there is nothing to say."""
    cfg.project({"mcpServers": {}})
    assert cfg.load(trusted=False).warnings == ()


def test_a_missing_project_file_is_silent_cfg_6(cfg: Setup) -> None:
    """CFG-6: missing: nothing, silently; and it is not listed as a source."""
    loaded = cfg.load()
    assert (loaded.servers, loaded.warnings, loaded.sources) == ((), (), ())


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "must hold an object at the top level"),
        ('{"servers": [], "mcpServers": {}}', "both `servers` and `mcpServers`"),
        ('{"mode": "auto"}', "neither `servers` nor `mcpServers`"),
        ('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}', "defines server 'a' twice"),
        (b"\xff\xfe{}", "is not UTF-8 text"),
    ],
)
@pytest.mark.parametrize("trusted", [True, False])
def test_a_malformed_project_file_gives_one_warning_and_startup_goes_on_cfg_6(
    cfg: Setup, content: str | bytes, needle: str, trusted: bool
) -> None:
    """CFG-6: the project file never raises; the user's own servers still load."""
    path = cfg.project(content)
    cfg.user('[[mcp.servers]]\nid = "mine"\ncommand = "x"\n')
    loaded = cfg.load(trusted=trusted)
    assert [spec.id for spec in loaded.servers] == ["mine"]
    assert len(loaded.warnings) == 1
    assert needle in loaded.warnings[0]
    assert str(path) in loaded.warnings[0]
    assert loaded.warnings[0].endswith("its servers were not started")


def test_an_unknown_field_in_a_trusted_project_file_gives_one_warning_cfg_6_cfg_3(cfg: Setup) -> None:
    """CFG-6, CFG-3: trusted, the own form's unknown field is reported as a warning, not raised."""
    cfg.project({"servers": [{"id": "a", "comand": "x"}]})
    loaded = cfg.load()
    assert loaded.servers == ()
    assert len(mentioning(loaded, "unknown field 'comand'", "did you mean `command`?")) == 1


def test_an_untrusted_project_file_is_parsed_for_its_ids_only_cfg_6(cfg: Setup) -> None:
    """CFG-6: before trust only the ids are read; field checks wait until it is trusted."""
    cfg.project({"servers": [{"id": "a", "comand": "x"}]})
    loaded = cfg.load(trusted=False)
    assert [(spec.id, spec.state) for spec in loaded.servers] == [("a", "untrusted")]
    assert len(loaded.warnings) == 1


def test_a_project_file_that_is_a_folder_gives_one_warning_cfg_6(cfg: Setup) -> None:
    """CFG-6: unreadable is a warning too."""
    (cfg.workspace / ".mcp.json").mkdir(parents=True)
    loaded = cfg.load()
    assert len(mentioning(loaded, "is a folder")) == 1


FIELDS: list[tuple[str, Callable[[str], dict[str, object]], str]] = [
    ("command", lambda ref: {"command": f"tool-{ref}"}, "tool-"),
    ("args[0]", lambda ref: {"command": "x", "args": [f"--key={ref}"]}, "--key="),
    ("env.K", lambda ref: {"command": "x", "env": {"K": ref}}, ""),
    ("cwd", lambda ref: {"command": "x", "cwd": f"/w/{ref}"}, "/w/"),
    ("url", lambda ref: {"url": f"https://x.test/?k={ref}"}, "https://x.test/?k="),
    ("headers.X-Key", lambda ref: {"url": "https://x.test", "headers": {"X-Key": ref}}, ""),
]


def _value(spec: ServerSpec, field: str) -> str | None:
    values = {
        "command": spec.command,
        "args[0]": spec.args[0] if spec.args else None,
        "env.K": dict(spec.env).get("K"),
        "cwd": spec.cwd,
        "url": spec.url,
        "headers.X-Key": dict(spec.headers).get("X-Key"),
    }
    return values[field]


@pytest.mark.parametrize("variable", sorted(CREDENTIAL_VARIABLES))
@pytest.mark.parametrize(("field", "entry", "expected"), FIELDS, ids=[row[0] for row in FIELDS])
def test_a_trusted_project_file_cannot_read_credential_variables_cfg_6(
    cfg: Setup, variable: str, field: str, entry: Callable[[str], dict[str, object]], expected: str
) -> None:
    """CFG-6: such a reference expands to empty with one warning, wherever it appears."""
    reference = "${" + variable + "}"
    cfg.project({"mcpServers": {"p": entry(reference)}})
    loaded = cfg.load(environ={variable: "sk-live-123"})
    spec = by_id(loaded)["p"]
    assert _value(spec, field) == expected
    assert spec.state == "ok"
    assert len(mentioning(loaded, reference, f"in {field} ", "project file may not read")) == 1
    assert all("sk-live-123" not in warning for warning in loaded.warnings)


@pytest.mark.parametrize("reference", ["${ANTHROPIC_API_KEY:-fallback}", "${env:OPENAI_API_KEY}", "${groq_api_key}"])
def test_credential_references_are_blocked_in_every_spelling_cfg_6(cfg: Setup, reference: str) -> None:
    """CFG-6: defaults do not apply, `env:` does not help, the case of the name does not matter."""
    cfg.project({"mcpServers": {"p": {"command": "x", "args": [reference]}}})
    environ = {"ANTHROPIC_API_KEY": "v", "OPENAI_API_KEY": "v", "groq_api_key": "v"}
    loaded = cfg.load(environ=environ)
    assert by_id(loaded)["p"].args == ("",)
    assert len(mentioning(loaded, "project file may not read")) == 1


def test_inherit_env_in_a_project_file_drops_credential_variables_with_a_warning_cfg_6(cfg: Setup) -> None:
    """CFG-6: `inherit_env` naming a credential variable loses that name, with a warning."""
    cfg.project({"mcpServers": {"p": {"command": "x", "inherit_env": ["LANG", "OPENAI_API_KEY", "XAI_API_KEY"]}}})
    loaded = cfg.load()
    assert by_id(loaded)["p"].inherit_env == ("LANG",)
    assert len(mentioning(loaded, "inherit_env[1]", "OPENAI_API_KEY", "dropped")) == 1
    assert len(mentioning(loaded, "inherit_env[2]", "XAI_API_KEY", "dropped")) == 1


def test_the_user_config_may_read_credential_variables_cfg_6(cfg: Setup) -> None:
    """CFG-6: only the project file is restricted."""
    cfg.user('[[mcp.servers]]\nid = "u"\ncommand = "x"\nenv = { K = "${OPENAI_API_KEY}" }\n')
    spec = by_id(cfg.load(environ={"OPENAI_API_KEY": "sk"}))["u"]
    assert spec.env == (("K", "sk"),)


def test_secrets_in_a_trusted_project_file_expand_to_empty_with_a_warning_cfg_6(cfg: Setup) -> None:
    """CFG-6: `${secret:…}` is not read for a project file, not even in headers, and never recorded."""
    cfg.project(PROJECT)
    secrets = RecordingMapping({"GH": "ghp_x"})
    environ = {"TOOL_BIN": "/bin/tool", "PATH_PART": "mcp", "UNSET_NOT": "x"}
    loaded = cfg.load(environ=environ, secrets=secrets)
    servers = by_id(loaded)
    assert secrets.looked_up == []
    assert servers["a"].args == ("",)
    assert (servers["b"].state, servers["b"].headers) == ("ok", (("Authorization", ""),))
    assert servers["a"].secret_values == servers["b"].secret_values == ()
    assert len(mentioning(loaded, "${secret:GH}", "may not read saved secrets")) == 2


def test_a_trusted_project_file_reads_ordinary_variables_cfg_6_cfg_5(cfg: Setup) -> None:
    """CFG-6, CFG-5: other variables expand as anywhere else."""
    cfg.project(PROJECT)
    servers = by_id(cfg.load(environ={"TOOL_BIN": "/bin/tool", "PATH_PART": "mcp"}))
    assert servers["a"].command == "/bin/tool"
    assert servers["b"].url == "https://x.test/mcp"


def test_host_settings_in_a_project_file_are_ignored_with_one_warning_cfg_8(cfg: Setup) -> None:
    """CFG-8, POL-4: a project file cannot allow tools, change the mode or grant folders."""
    path = cfg.project(
        {"mcpServers": {}, "mode": "auto", "permissions": {"allow": ["*"]}, "grants": ["/"], "hooks": {}}
    )
    cfg.user('mode = "plan"\n[permissions]\ndeny = ["x__*"]\n')
    loaded = cfg.load()
    assert loaded.settings.mode == "plan"
    assert (loaded.settings.allow, loaded.settings.deny, loaded.settings.grants) == ((), ("x__*",), ())
    assert loaded.warnings == (
        f"project file {path} sets host settings ('mode', 'permissions', 'grants', 'hooks'), "
        "which a project file may not set; they are ignored. "
        "Put them in your user config or a --mcp-config file",
    )


def test_only_the_workspace_root_mcp_json_is_the_project_file_cfg_1(cfg: Setup, tmp_path: Path) -> None:
    """CFG-1: `.mcp.json` at the workspace root; a TOML or nested file is not read."""
    (cfg.workspace / "sub").mkdir(parents=True)
    (cfg.workspace / "sub" / ".mcp.json").write_text('{"mcpServers": {"n": {"command": "x"}}}')
    (cfg.workspace / ".mcp.toml").write_text('[mcp.mcpServers.t]\ncommand = "x"\n')
    assert cfg.load().servers == ()


def test_a_project_file_that_is_a_fifo_gives_one_warning_without_hanging_cfg_6_err_1(cfg: Setup) -> None:
    """CFG-6, ERR-1: a pipe planted as `.mcp.json` is unreadable, never a hang."""
    cfg.workspace.mkdir(parents=True)
    os.mkfifo(cfg.workspace / ".mcp.json")
    loaded = cfg.load()
    assert len(mentioning(loaded, "cannot be read (not a regular file)")) == 1


def test_a_project_file_nested_absurdly_deep_gives_one_warning_cfg_6_err_1(cfg: Setup) -> None:
    """CFG-6, ERR-1: a hostile file cannot crash the loader."""
    cfg.project('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    loaded = cfg.load()
    assert len(loaded.warnings) == 1
    assert "its servers were not started" in loaded.warnings[0]
