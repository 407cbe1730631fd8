"""Host settings in the user config and the flag file (CFG-8; CALL-4: how much is kept; POL-4: deny rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpyard.config import Hook, HostSettings
from mcpyard.errors import ConfigError
from mcpyard.pipeline import MAX_STORED_RESULT_BYTES

from ._support import Setup

USER_TOML = """
mode = "ask"
tool_name_separator = "_"
max_result_bytes = 1000
max_stored_result_bytes = 2000000
grants = ["~/shared", "docs", "/abs/data"]

[permissions]
allow = ["github__get_*"]
deny = ["*__delete_*"]

[[hooks.pre_call]]
match = "github__*"
command = "audit-hook"

[[mcp.servers]]
id = "a"
command = "x"
"""


def test_no_settings_gives_the_defaults_cfg_8(cfg: Setup) -> None:
    """CFG-8, CALL-4: 64 KiB results, 16 MiB kept of one, `__` separator, no rules, no grants, no hooks, no mode."""
    settings = cfg.load().settings
    assert settings == HostSettings()
    assert (settings.max_result_bytes, settings.tool_name_separator, settings.mode) == (65_536, "__", None)
    assert settings.max_stored_result_bytes == 16_777_216 == MAX_STORED_RESULT_BYTES


def test_the_user_config_sets_every_host_setting_in_toml_cfg_8(cfg: Setup) -> None:
    """CFG-8: `[permissions]`, top-level `mode`, and so on; `~` is home, relative is beside the file."""
    cfg.user(USER_TOML)
    settings = cfg.load(environ={"HOME": "/home/me"}).settings
    assert settings.allow == ("github__get_*",)
    assert settings.deny == ("*__delete_*",)
    assert (settings.mode, settings.tool_name_separator, settings.max_result_bytes) == ("ask", "_", 1000)
    assert settings.max_stored_result_bytes == 2_000_000
    assert settings.grants == (Path("/home/me/shared"), cfg.user_file.parent / "docs", Path("/abs/data"))
    assert settings.hooks == (Hook(match="github__*", command="audit-hook"),)


def test_json_settings_sit_beside_the_servers_cfg_8(cfg: Setup) -> None:
    """CFG-8: in JSON the settings are top-level keys next to `servers` / `mcpServers`."""
    flag = cfg.flag(
        {
            "mcpServers": {},
            "permissions": {"deny": ["x__*"]},
            "mode": "read-only",
            "max_stored_result_bytes": 5000,
            "grants": ["../outside"],
            "hooks": {"pre_call": [{"match": "*", "command": "h"}]},
        }
    )
    settings = cfg.load(config_file=flag).settings
    assert (settings.deny, settings.mode, settings.max_stored_result_bytes) == (("x__*",), "read-only", 5000)
    assert settings.grants == (flag.parent / "../outside",)
    assert settings.hooks == (Hook(match="*", command="h"),)


def test_the_flag_file_overrides_user_settings_field_by_field_cfg_8(cfg: Setup) -> None:
    """CFG-8, CFG-1: a field the flag file sets replaces the user's; the others are kept."""
    cfg.user(USER_TOML)
    flag = cfg.flag({"servers": [], "mode": "plan", "permissions": {"allow": []}})
    settings = cfg.load(config_file=flag, environ={"HOME": "/h"}).settings
    assert settings.mode == "plan"
    assert settings.allow == ()
    assert settings.deny == ("*__delete_*",)
    assert (settings.tool_name_separator, settings.max_result_bytes) == ("_", 1000)
    assert settings.max_stored_result_bytes == 2_000_000
    assert settings.hooks == (Hook(match="github__*", command="audit-hook"),)


def test_the_flag_file_sets_how_much_of_a_result_is_kept_over_the_user_config_cfg_8_call_4(cfg: Setup) -> None:
    """CFG-8, CALL-4: `max_stored_result_bytes` is merged like `max_result_bytes`; a float that is whole counts."""
    cfg.user(USER_TOML)
    flag = cfg.flag({"servers": [], "max_stored_result_bytes": 33554432.0})
    settings = cfg.load(config_file=flag, environ={"HOME": "/h"}).settings
    assert (settings.max_stored_result_bytes, settings.max_result_bytes) == (33_554_432, 1000)
    assert isinstance(settings.max_stored_result_bytes, int)


def test_a_project_file_may_not_set_how_much_of_a_result_is_kept_cfg_8(cfg: Setup) -> None:
    """CFG-8: like every host setting, ignored in a project file with one warning naming it."""
    path = cfg.project({"mcpServers": {}, "max_stored_result_bytes": 1})
    loaded = cfg.load()
    assert loaded.settings.max_stored_result_bytes == 16_777_216
    assert loaded.warnings == (
        f"project file {path} sets host settings ('max_stored_result_bytes'), "
        "which a project file may not set; they are ignored. "
        "Put them in your user config or a --mcp-config file",
    )


@pytest.mark.parametrize(
    ("setting", "field", "needle"),
    [
        ('mode = "yolo"', "mode", "must be one of 'read-only', 'plan', 'ask', 'auto', not 'yolo'"),
        ('tool_name_separator = "."', "tool_name_separator", "must be one of '__', '_'"),
        ("max_result_bytes = 0", "max_result_bytes", "must be a whole number of bytes, at least 1, not 0"),
        ("max_result_bytes = true", "max_result_bytes", "must be a whole number"),
        ('max_result_bytes = "64k"', "max_result_bytes", "must be a whole number"),
        (
            "max_stored_result_bytes = 0",
            "max_stored_result_bytes",
            "must be a whole number of bytes, at least 1, not 0",
        ),
        ("max_stored_result_bytes = -5", "max_stored_result_bytes", "must be a whole number of bytes"),
        ("max_stored_result_bytes = 1.5", "max_stored_result_bytes", "must be a whole number of bytes"),
        ("max_stored_result_bytes = false", "max_stored_result_bytes", "must be a whole number"),
        ('max_stored_result_bytes = "16MiB"', "max_stored_result_bytes", "must be a whole number"),
        ('permissions = "all"', "permissions", "must be a table"),
        ("permissions = { allow = [1] }", "permissions.allow", "must be a list of non-empty strings"),
        ('permissions = { deny = "x" }', "permissions.deny", "must be a list of non-empty strings"),
        ('permissions = { allows = ["x"] }', "permissions.allows", "is not a setting"),
        ('grants = "/tmp"', "grants", "must be a list of non-empty strings"),
        ("hooks = { pre_call = {} }", "hooks.pre_call", "must be a list of tables"),
        ("hooks = { post_call = [] }", "hooks.post_call", "is not a setting"),
        ('hooks = { pre_call = ["x"] }', "hooks.pre_call[0]", "must be a table"),
        (
            'hooks = { pre_call = [{ match = "x" }] }',
            "hooks.pre_call[0].command",
            "must be the command to run",
        ),
        ('hooks = { pre_call = [{ command = "x" }] }', "hooks.pre_call[0].match", "must be a non-empty"),
        (
            'hooks = { pre_call = [{ match = "x", command = "y", when = 1 }] }',
            "hooks.pre_call[0].when",
            "not a hook",
        ),
    ],
)
def test_a_bad_host_setting_is_an_error_naming_the_setting_and_the_source_cfg_8(
    cfg: Setup, setting: str, field: str, needle: str
) -> None:
    """CFG-8, ERR-1: settings are the user's own; a bad one stops everything with a precise message."""
    cfg.user(f"{setting}\n[mcp]\nservers = []\n")
    with pytest.raises(ConfigError) as caught:
        cfg.load()
    error = caught.value
    assert (error.field, error.source) == (field, cfg.user_file)
    assert f"user config {cfg.user_file}: {field}: " in error.message
    assert needle in error.message


def test_a_bad_setting_in_the_flag_file_names_the_flag_file_cfg_8(cfg: Setup, tmp_path: Path) -> None:
    """CFG-8: the message points at the file to fix."""
    flag = cfg.flag({"servers": [], "mode": 3})
    with pytest.raises(ConfigError, match=r"--mcp-config file .*flag\.json: mode: must be one of"):
        cfg.load(config_file=flag)


def test_deny_rules_of_the_user_and_the_flag_file_add_up_pol_4(cfg: Setup) -> None:
    """POL-4, CFG-8: a flag file adds deny rules; it can never lift the user's."""
    cfg.user(USER_TOML)
    flag = cfg.flag({"servers": [], "permissions": {"deny": ["other__*"]}})
    settings = cfg.load(config_file=flag, environ={"HOME": "/h"}).settings
    assert settings.deny == ("*__delete_*", "other__*")
