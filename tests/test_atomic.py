"""Atomic, private file writes (ERR-1; THREATS "Secrets": O_EXCL|O_NOFOLLOW at 0600, fsync, rename)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpyard._atomic import write_atomic


def test_a_new_file_gets_its_content_and_mode_0600_err_1(tmp_path: Path) -> None:
    """ERR-1: the default mode is private; no temporary file stays behind."""
    target = tmp_path / "tokens.json"
    write_atomic(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["tokens.json"]


def test_the_mode_is_the_one_asked_for_err_1(tmp_path: Path) -> None:
    """ERR-1: a config file may be written 0644 (the umask can only narrow it)."""
    target = tmp_path / "config.toml"
    old = os.umask(0o022)
    try:
        write_atomic(target, b"x", mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_missing_folder_is_created_private_err_1(tmp_path: Path) -> None:
    """THREATS: the parent of a secret file is 0700."""
    target = tmp_path / "a" / "b" / "secrets.json"
    write_atomic(target, b"s")
    assert target.read_bytes() == b"s"
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def test_an_existing_file_is_replaced_whole_err_1(tmp_path: Path) -> None:
    """ERR-1: the old content is replaced, never appended to or half-written; large data is written whole."""
    target = tmp_path / "f"
    target.write_bytes(b"old content that is longer")
    data = os.urandom(3 * 1024 * 1024)
    write_atomic(target, data)
    assert target.read_bytes() == data


def test_a_symlink_at_the_path_is_replaced_and_its_target_left_alone_err_1(tmp_path: Path) -> None:
    """THREATS: writing never follows a link planted where the file goes."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    target = tmp_path / "trust.json"
    target.symlink_to(victim)
    write_atomic(target, b"new")
    assert victim.read_bytes() == b"keep me"
    assert not target.is_symlink()
    assert target.read_bytes() == b"new"


def test_a_failed_write_raises_and_leaves_no_temporary_file_err_1(tmp_path: Path) -> None:
    """ERR-1: when the rename cannot happen, the error surfaces and the folder is as it was."""
    target = tmp_path / "occupied"
    target.mkdir()
    (target / "inside").write_bytes(b"x")
    with pytest.raises(OSError, match="occupied"):
        write_atomic(target, b"data")
    assert sorted(os.listdir(tmp_path)) == ["occupied"]
    assert (target / "inside").read_bytes() == b"x"
