"""Helpers for configuration tests: real files in a temporary folder, then `load_config`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpyard.config import LoadedConfig, ProjectTrust, ServerSpec, load_config


class RecordingMapping(Mapping[str, str]):
    """A mapping that records every name looked up in it."""

    def __init__(self, data: Mapping[str, str]) -> None:
        self._data = dict(data)
        self.looked_up: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.looked_up.append(key)
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        self.looked_up.append("<iterated>")
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


@dataclass
class Setup:
    """A workspace, a user config home and a place for flag files, all under `root`."""

    root: Path
    environ: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def user_file(self) -> Path:
        return self.root / "config-home" / "config.toml"

    def project(self, content: object) -> Path:
        """Write `.mcp.json`: a string as is, anything else as JSON."""
        return _write(self.workspace / ".mcp.json", content)

    def user(self, toml: str) -> Path:
        return _write(self.user_file, toml)

    def flag(self, content: object, name: str = "flag.json") -> Path:
        return _write(self.root / "flags" / name, content)

    def load(
        self,
        *,
        config_file: Path | None = None,
        trusted: bool | ProjectTrust = True,
        environ: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> LoadedConfig:
        self.workspace.mkdir(parents=True, exist_ok=True)
        return load_config(
            workspace=self.workspace,
            config_file=config_file,
            user_config_file=self.user_file,
            trusted=trusted,
            environ=self.environ if environ is None else environ,
            secrets=self.secrets if secrets is None else secrets,
        )

    def load_one(
        self,
        entry: Mapping[str, object],
        *,
        environ: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
    ) -> tuple[ServerSpec, LoadedConfig]:
        """Load a flag file holding one shared-form entry with id `s`; return its spec too."""
        flag = self.flag({"mcpServers": {"s": dict(entry)}})
        loaded = self.load(config_file=flag, environ=environ, secrets=secrets)
        return by_id(loaded)["s"], loaded


def _write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def by_id(loaded: LoadedConfig) -> dict[str, ServerSpec]:
    return {spec.id: spec for spec in loaded.servers}


def mentioning(loaded: LoadedConfig, *needles: str) -> list[str]:
    """The warnings that contain every one of `needles`."""
    return [warning for warning in loaded.warnings if all(needle in warning for needle in needles)]
