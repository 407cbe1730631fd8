"""Saved secrets by name: the OS keyring when there is one, else a 0600 file in the data folder (SEC-1)."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Protocol

from mcpyard._atomic import read_private, write_atomic
from mcpyard.errors import ConfigError, UsageError

__all__ = [
    "SECRETS_FILE",
    "FileSecretStore",
    "KeyringSecretStore",
    "MemorySecretStore",
    "SecretStore",
    "check_secret_name",
    "default_secret_store",
]

MAX_SECRETS_BYTES = 4 * 1024 * 1024
"""The most the secrets file (or the keyring's index of names) may hold."""

SECRETS_FILE = "secrets.json"
KEYRING_SERVICE = "mcpyard"
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")


def check_secret_name(name: str) -> str:
    """The name, if it can be written as `${secret:NAME}`.

    Raises:
        UsageError: it cannot.
    """
    if not _NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a secret name: use letters, digits, `_`, `.` and `-` (for `${{secret:NAME}}`)"
        )
    return name


class SecretStore(Protocol):
    """Where saved secrets live; values never leave it except into requests."""

    def get_all(self) -> dict[str, str]: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> bool: ...

    def names(self) -> list[str]: ...


class MemorySecretStore:
    """For tests and embedding: secrets in a dict."""

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self._values = dict(values or {})

    def get_all(self) -> dict[str, str]:
        return dict(self._values)

    def set(self, name: str, value: str) -> None:
        self._values[check_secret_name(name)] = value

    def delete(self, name: str) -> bool:
        return self._values.pop(name, None) is not None

    def names(self) -> list[str]:
        return sorted(self._values)


class FileSecretStore:
    """A JSON file readable by the user only (0600), written atomically; refused if anyone else could read it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, str]:
        data = read_private(self.path, max_bytes=MAX_SECRETS_BYTES, what=f"the secrets file {self.path}")
        if data is None:
            return {}
        try:
            values = json.loads(data)
        except ValueError:
            raise ConfigError(
                f"the secrets file {self.path} is not valid JSON; fix or delete it", source=self.path
            ) from None
        if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
            raise ConfigError(f"the secrets file {self.path} is not a JSON object of strings", source=self.path)
        return {str(k): v for k, v in values.items()}

    def get_all(self) -> dict[str, str]:
        return self._read()

    def set(self, name: str, value: str) -> None:
        values = self._read()
        values[check_secret_name(name)] = value
        write_atomic(self.path, json.dumps(values, indent=2, sort_keys=True).encode() + b"\n", mode=0o600)

    def delete(self, name: str) -> bool:
        values = self._read()
        if values.pop(name, None) is None:
            return False
        write_atomic(self.path, json.dumps(values, indent=2, sort_keys=True).encode() + b"\n", mode=0o600)
        return True

    def names(self) -> list[str]:
        return sorted(self._read())


class KeyringSecretStore:
    """Values in the OS keyring; the names (never values) in a small index file, since keyrings cannot list."""

    def __init__(self, index: Path) -> None:
        import keyring

        self._keyring = keyring
        self.index = index

    def names(self) -> list[str]:
        try:
            data = read_private(self.index, max_bytes=MAX_SECRETS_BYTES, what=f"the secrets index {self.index}")
            names = json.loads(data) if data is not None else []
        except (ConfigError, ValueError, RecursionError):
            return []
        return sorted(str(name) for name in names) if isinstance(names, list) else []

    def _save_names(self, names: list[str]) -> None:
        write_atomic(self.index, json.dumps(sorted(set(names))).encode(), mode=0o600)

    def get_all(self) -> dict[str, str]:
        values = {}
        for name in self.names():
            value = self._keyring.get_password(KEYRING_SERVICE, name)
            if value is not None:
                values[name] = value
        return values

    def set(self, name: str, value: str) -> None:
        self._keyring.set_password(KEYRING_SERVICE, check_secret_name(name), value)
        self._save_names([*self.names(), name])

    def delete(self, name: str) -> bool:
        if name not in self.names():
            return False
        with contextlib.suppress(self._keyring.errors.PasswordDeleteError):
            self._keyring.delete_password(KEYRING_SERVICE, name)
        self._save_names([n for n in self.names() if n != name])
        return True


def default_secret_store(data_home: Path) -> SecretStore:
    """The OS keyring when a usable one is there, else the 0600 file in the data folder."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
        usable = not isinstance(backend, fail.Keyring) and getattr(backend, "priority", 0) > 0
    except Exception:  # any keyring import or backend trouble means: no keyring here
        usable = False
    if usable:
        return KeyringSecretStore(data_home / "secret-names.json")
    return FileSecretStore(data_home / SECRETS_FILE)
