"""SEC-1: saved secrets in a 0600 file (no keyring here), names only in listings."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpyard.errors import ConfigError, UsageError
from mcpyard.secrets import FileSecretStore, MemorySecretStore, default_secret_store


def test_sec1_secrets_are_saved_atomically_readable_by_the_user_only(tmp_path: Path) -> None:
    store = FileSecretStore(tmp_path / "data" / "secrets.json")
    store.set("API", "value-one")
    store.set("OTHER.key-2", "value-two")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert store.names() == ["API", "OTHER.key-2"]
    assert store.get_all() == {"API": "value-one", "OTHER.key-2": "value-two"}
    assert store.delete("API")
    assert not store.delete("API")
    assert store.names() == ["OTHER.key-2"]
    assert not list(store.path.parent.glob("*.tmp*")), "no temporary file is left behind"


@pytest.mark.parametrize("name", ["", "has space", "semi;colon", "${x}", "-leading"])
def test_sec1_a_name_that_cannot_be_referenced_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="not a secret name"):
        FileSecretStore(tmp_path / "s.json").set(name, "v")


def test_sec1_a_secrets_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    store = FileSecretStore(tmp_path / "secrets.json")
    store.set("API", "value")
    os.chmod(store.path, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        store.get_all()


def test_sec1_a_secrets_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    real = FileSecretStore(tmp_path / "real.json")
    real.set("API", "value")
    (tmp_path / "link.json").symlink_to(real.path)
    with pytest.raises(ConfigError, match="symbolic link"):
        FileSecretStore(tmp_path / "link.json").get_all()


def test_sec1_without_a_keyring_the_file_is_used(tmp_path: Path) -> None:
    assert isinstance(default_secret_store(tmp_path), FileSecretStore)


def test_memory_store_for_embedding() -> None:
    store = MemorySecretStore({"A": "1"})
    store.set("B", "2")
    assert store.names() == ["A", "B"]
