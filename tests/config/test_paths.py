"""Where the user config, the trust file and the data folder are (API-4, CFG-1, CFG-6); tests `mcpyard._paths`."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from mcpyard._paths import config_home, data_home, trust_file, user_config_file


def test_the_environment_overrides_both_folders_api_4() -> None:
    """API-4: MCPYARD_CONFIG_HOME and MCPYARD_DATA_HOME, for tests and sandboxes."""
    environ = {"MCPYARD_CONFIG_HOME": "/sandbox/conf", "MCPYARD_DATA_HOME": "/sandbox/data"}
    assert config_home(environ) == Path("/sandbox/conf")
    assert data_home(environ) == Path("/sandbox/data")


def test_without_overrides_the_platform_folders_are_used_api_4() -> None:
    """API-4, CFG-1: an empty override counts as unset."""
    environ = {"MCPYARD_CONFIG_HOME": ""}
    assert config_home(environ) == Path(platformdirs.user_config_dir("mcpyard", appauthor=False))
    assert data_home({}) == Path(platformdirs.user_data_dir("mcpyard", appauthor=False))
    assert config_home(environ).name == "mcpyard"


def test_the_user_config_file_and_trust_file_names_cfg_1_cfg_6() -> None:
    """CFG-1: `config.toml` in the config folder; CFG-6: `trust.json` in the data folder."""
    assert user_config_file(Path("/c")) == Path("/c/config.toml")
    assert trust_file(Path("/d")) == Path("/d/trust.json")
