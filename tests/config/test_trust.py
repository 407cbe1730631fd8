"""Trusted workspaces, recorded by `mcpyard trust` (CFG-6, ERR-1)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mcpyard._paths import trust_file
from mcpyard.config import TrustStore
from mcpyard.errors import ConfigError


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(trust_file(tmp_path / "data"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def test_a_workspace_is_untrusted_until_trusted_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6: `mcpyard trust` records it; nothing else is trusted by it."""
    assert not store.is_trusted(workspace)
    store.trust(workspace)
    assert store.is_trusted(workspace)
    assert not store.is_trusted(workspace.parent)
    assert not store.is_trusted(workspace.parent / "repo2")


def test_trust_is_kept_in_the_file_for_the_next_run_cfg_6(store: TrustStore, workspace: Path, tmp_path: Path) -> None:
    """CFG-6: a new store on the same file sees earlier trust, and trusting twice keeps one record."""
    other = tmp_path / "other"
    other.mkdir()
    store.trust(workspace)
    store.trust(other)
    store.trust(workspace)
    again = TrustStore(store.path)
    assert again.is_trusted(workspace)
    assert again.is_trusted(other)
    document = json.loads(store.path.read_text())
    assert document["workspaces"] == [str(workspace.resolve()), str(other.resolve())]


def test_trust_is_keyed_by_the_resolved_absolute_path_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CFG-6: a symlink, `..` and a relative path name the same workspace."""
    link = tmp_path / "link"
    link.symlink_to(workspace)
    store.trust(link)
    assert store.is_trusted(workspace)
    assert store.is_trusted(tmp_path / "other" / ".." / "repo")
    monkeypatch.chdir(tmp_path)
    assert store.is_trusted(Path("repo"))


def test_the_trust_file_is_private_and_its_folder_too_cfg_6_err_1(store: TrustStore, workspace: Path) -> None:
    """CFG-6, ERR-1: written atomically, mode 0600, in a 0700 folder."""
    store.trust(workspace)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert sorted(os.listdir(store.path.parent)) == ["trust.json"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"workspaces": "all"}',
        b"\xff\xfe",
        b'{"workspaces": [1, null]}',
        b"[" * 100_000,
    ],
)
def test_a_corrupt_trust_file_trusts_nothing_and_is_rewritten_cleanly_cfg_6(
    store: TrustStore, workspace: Path, content: bytes
) -> None:
    """CFG-6, ERR-1: no crash; fail closed; `trust` writes a valid file."""
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    store.path.chmod(0o600)
    assert not store.is_trusted(workspace)
    store.trust(workspace)
    assert store.is_trusted(workspace)
    assert json.loads(store.path.read_text())["workspaces"] == [str(workspace.resolve())]


def test_a_trust_file_others_can_write_trusts_nothing_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6: anyone who could write it could make a workspace trusted, so it is not believed."""
    store.trust(workspace)
    store.path.chmod(0o622)
    assert not store.is_trusted(workspace)


def test_a_trust_file_that_is_a_symlink_trusts_nothing_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path
) -> None:
    """CFG-6: the file is opened without following links."""
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"version": 1, "workspaces": [str(workspace.resolve())]}))
    elsewhere.chmod(0o600)
    store.path.parent.mkdir(parents=True)
    store.path.symlink_to(elsewhere)
    assert not store.is_trusted(workspace)


def test_a_trust_file_that_is_a_fifo_trusts_nothing_without_hanging_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6, ERR-1: never a hang."""
    store.path.parent.mkdir(parents=True)
    os.mkfifo(store.path, 0o600)
    assert not store.is_trusted(workspace)


def test_trust_that_cannot_be_written_is_a_clear_error_cfg_6_err_1(tmp_path: Path, workspace: Path) -> None:
    """ERR-1: the message says where and what to do instead."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data folder should be")
    store = TrustStore(blocker / "data" / "trust.json")
    with pytest.raises(ConfigError, match=r"cannot record the trusted workspace .* pass --trust") as caught:
        store.trust(workspace)
    assert caught.value.source == store.path
