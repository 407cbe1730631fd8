"""Sources and their priority: flag file, user config, project file (CFG-1; with CAT-1, CFG-3, CFG-5, CFG-6, ERR-1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpyard.errors import ConfigError

from ._support import Setup, by_id, mentioning


def _three_sources(cfg: Setup) -> Path:
    cfg.project(
        {
            "mcpServers": {
                "p1": {"command": "p"},
                "shared": {"command": "from-project"},
                "p2": {"command": "p"},
            }
        }
    )
    cfg.user(
        '[[mcp.servers]]\nid = "u1"\ncommand = "u"\n'
        '[[mcp.servers]]\nid = "shared"\ncommand = "from-user"\n'
        '[[mcp.servers]]\nid = "u2"\ncommand = "u"\n'
    )
    return cfg.flag({"servers": [{"id": "f1", "command": "f"}, {"id": "shared", "command": "from-flag"}]})


def test_the_highest_priority_source_wins_an_id_with_one_warning_naming_the_sources_cfg_1(cfg: Setup) -> None:
    """CFG-1: flag > user > project; one warning names the id and the sources."""
    flag = _three_sources(cfg)
    loaded = cfg.load(config_file=flag)
    spec = by_id(loaded)["shared"]
    assert (spec.command, spec.source, spec.source_path) == ("from-flag", "flag", flag)
    assert [s.id for s in loaded.servers].count("shared") == 1
    (warning,) = mentioning(loaded, "'shared'")
    assert str(flag) in warning
    assert str(cfg.user_file) in warning
    assert str(cfg.workspace / ".mcp.json") in warning
    assert warning.endswith("the entry in the --mcp-config file is used")


def test_the_user_config_wins_over_the_project_file_cfg_1(cfg: Setup) -> None:
    """CFG-1: without a flag file, the user config has the highest priority."""
    _three_sources(cfg)
    loaded = cfg.load()
    assert by_id(loaded)["shared"].command == "from-user"
    assert mentioning(loaded, "'shared'", "the entry in the user config is used")


def test_servers_are_ordered_project_then_user_then_flag_and_numbered_cfg_1_cat_1(cfg: Setup) -> None:
    """CFG-1, CAT-1: lowest priority first, file order within a file; `position` is the index."""
    loaded = cfg.load(config_file=_three_sources(cfg))
    assert [spec.id for spec in loaded.servers] == ["p1", "p2", "u1", "u2", "f1", "shared"]
    assert [spec.position for spec in loaded.servers] == [0, 1, 2, 3, 4, 5]
    assert [spec.source for spec in loaded.servers] == ["project", "project", "user", "user", "flag", "flag"]


def test_sources_are_listed_highest_priority_first_cfg_1(cfg: Setup) -> None:
    """CFG-1: the sources read, for the status page."""
    flag = _three_sources(cfg)
    loaded = cfg.load(config_file=flag)
    assert loaded.sources == (
        ("flag", flag),
        ("user", cfg.user_file),
        ("project", cfg.workspace / ".mcp.json"),
    )


def test_a_missing_user_config_is_not_an_error_and_not_a_source_cfg_1(cfg: Setup) -> None:
    """CFG-1: a fresh machine has no user config."""
    flag = cfg.flag({"mcpServers": {"a": {"command": "x"}}})
    loaded = cfg.load(config_file=flag)
    assert loaded.sources == (("flag", flag),)
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[mcp\n", "is not valid TOML"),
        ('[[mcp.servers]]\nid = "a"\ncomand = "x"\n', "unknown field 'comand'"),
        ('mode = "yolo"\n[mcp]\nservers = []\n', "mode: must be one of"),
    ],
)
def test_a_broken_user_config_stops_everything_with_a_clear_error_cfg_1_err_1(
    cfg: Setup, toml: str, needle: str
) -> None:
    """CFG-1, ERR-1: the user config is the user's own file: nothing starts until it is fixed."""
    cfg.user(toml)
    with pytest.raises(ConfigError) as caught:
        cfg.load()
    assert needle in caught.value.message
    assert str(cfg.user_file) in caught.value.message
    assert caught.value.source == cfg.user_file


def test_a_shadowed_entry_is_not_expanded_cfg_1_cfg_5(cfg: Setup) -> None:
    """CFG-1, CFG-5: only the entry used is expanded, so a shadowed one neither warns nor reads secrets."""
    cfg.user('[[mcp.servers]]\nid = "a"\ncommand = "${OLD_BIN}"\nargs = ["${secret:OLD}"]\n')
    flag = cfg.flag({"mcpServers": {"a": {"command": "new"}}})
    loaded = cfg.load(config_file=flag)
    assert by_id(loaded)["a"].secret_values == ()
    assert mentioning(loaded, "OLD") == []
    assert len(loaded.warnings) == 1


def test_a_shadowed_own_form_entry_is_still_checked_for_unknown_fields_cfg_1_cfg_3(cfg: Setup) -> None:
    """CFG-1, CFG-3: a typo in the user config is reported even while the flag file overrides that id."""
    cfg.user('[[mcp.servers]]\nid = "a"\ncomand = "x"\n')
    flag = cfg.flag({"mcpServers": {"a": {"command": "new"}}})
    with pytest.raises(ConfigError, match="unknown field 'comand'"):
        cfg.load(config_file=flag)


def test_an_untrusted_project_entry_is_shadowed_like_any_other_cfg_1_cfg_6(cfg: Setup) -> None:
    """CFG-1, CFG-6: the user's own entry for the same id is used."""
    cfg.project({"mcpServers": {"a": {"command": "project"}}})
    cfg.user('[mcp.mcpServers.a]\ncommand = "mine"\n')
    loaded = cfg.load(trusted=False)
    assert [(spec.id, spec.state, spec.command) for spec in loaded.servers] == [("a", "ok", "mine")]
    assert len(mentioning(loaded, "'a'", "is defined in")) == 1


def test_the_flag_file_parser_follows_the_extension_case_insensitively_cfg_1(cfg: Setup) -> None:
    """CFG-1: `.TOML` is TOML."""
    flag = cfg.flag('[mcp.mcpServers.a]\ncommand = "x"\n', "Config.TOML")
    assert by_id(cfg.load(config_file=flag))["a"].command == "x"
