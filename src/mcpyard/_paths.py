"""Where mcpyard keeps its files: the user config folder and the data folder (API-4)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import platformdirs

__all__ = ["config_home", "data_home", "trust_file", "user_config_file"]

APP_NAME = "mcpyard"


def config_home(environ: Mapping[str, str]) -> Path:
    """The user config folder: `MCPYARD_CONFIG_HOME` when set, else the platform's (API-4)."""
    override = environ.get("MCPYARD_CONFIG_HOME")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_home(environ: Mapping[str, str]) -> Path:
    """The data folder (trust list, secrets, tokens): `MCPYARD_DATA_HOME` when set, else the platform's."""
    override = environ.get("MCPYARD_DATA_HOME")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_config_file(config_home: Path) -> Path:
    """The user config file inside `config_home` (CFG-1)."""
    return config_home / "config.toml"


def trust_file(data_home: Path) -> Path:
    """The file recording trusted workspaces inside `data_home` (CFG-6)."""
    return data_home / "trust.json"
