"""Helpers for local-file tests: a workspace, a granted folder and an outside folder, with real files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpyard.files import FileRefused, LocalFile, read_local_file

SECRET = b"API_KEY=sk-live-5ecret-0123456789abcdef"
"""Content of every file a test expects to be refused: it must never appear in a message."""
CONTENT = b"plain notes, fine to send\n"
MAX_BYTES = 64


@dataclass(frozen=True)
class Arrangement:
    """Files, folders and links to create before a read.

    Paths are relative to the workspace, or absolute through the `{ws}`, `{grant}` and `{out}`
    placeholders. A link target is written as given after expanding them, so a relative target
    stays relative to the link's folder.
    """

    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    """(link, target) pairs, created in order."""
    hard_links: tuple[tuple[str, str], ...] = ()
    """(existing file, new name) pairs."""
    data: bytes = SECRET


@dataclass(frozen=True)
class Places:
    """`workspace`, `granted` (listed in `grants`) and `outside` (not granted), side by side."""

    workspace: Path
    granted: Path
    outside: Path

    @property
    def grants(self) -> tuple[Path, ...]:
        return (self.granted,)

    def expand(self, text: str) -> str:
        return text.format(ws=self.workspace, grant=self.granted, out=self.outside)

    def path(self, spec: str) -> Path:
        path = Path(self.expand(spec))
        return path if path.is_absolute() else self.workspace / path

    def arrange(self, arrangement: Arrangement) -> None:
        for folder in arrangement.folders:
            self.path(folder).mkdir(parents=True, exist_ok=True)
        for file in arrangement.files:
            path = self.path(file)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(arrangement.data)
        for link, target in arrangement.links:
            path = self.path(link)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(self.expand(target))
        for existing, new in arrangement.hard_links:
            os.link(self.path(existing), self.path(new))

    def read(self, raw: str, *, max_bytes: int = MAX_BYTES, grants: Sequence[Path] | None = None) -> LocalFile:
        """`read_local_file` of `raw` (placeholders expanded) in this workspace."""
        return read_local_file(
            self.expand(raw),
            workspace=self.workspace,
            grants=self.grants if grants is None else grants,
            max_bytes=max_bytes,
        )

    def refusal(self, raw: str, *, max_bytes: int = MAX_BYTES, grants: Sequence[Path] | None = None) -> FileRefused:
        """The `FileRefused` that reading `raw` raises."""
        with pytest.raises(FileRefused) as info:
            self.read(raw, max_bytes=max_bytes, grants=grants)
        return info.value


def assert_explained(refusal: FileRefused, *, code: str, raw: str, why: str) -> None:
    """The refusal has `code`, names the path as given, says `why`, and quotes no file content."""
    assert refusal.code == code, refusal.message
    assert raw in refusal.message
    assert why in refusal.message
    assert str(refusal) == refusal.message
    assert SECRET.decode() not in refusal.message
    assert "sk-live" not in refusal.message
