"""The list of workspaces whose project file the user trusts (`mcpyard trust`, CFG-6)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

from mcpyard._atomic import write_atomic
from mcpyard.errors import ConfigError

__all__ = ["TrustStore"]

_FORMAT_VERSION = 1
_MAX_BYTES = 4 * 1024 * 1024
# O_NONBLOCK: a FIFO planted at the path must not hang the open; fstat then refuses it.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


class TrustStore:
    """Trusted workspaces, kept in a JSON file (usually `trust.json` in the data folder).

    A workspace is keyed by its resolved absolute path, so `.`, a relative path and a
    symbolic link to it are one workspace. The file fails closed: when it is missing,
    corrupt, a symbolic link, not owned by the user or writable by others, no workspace
    is trusted (and `trust` rewrites it cleanly).

    Args:
        path: the trust file.
    """

    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        """The trust file."""
        return self._path

    def is_trusted(self, workspace: Path) -> bool:
        """Whether the project file of `workspace` may start its servers."""
        return _key(workspace) in self._read()

    def trust(self, workspace: Path) -> None:
        """Record `workspace` as trusted; the file is written atomically with mode 0600.

        Raises:
            ConfigError: the trust file cannot be written; the message says where.
        """
        known = self._read()
        key = _key(workspace)
        if key not in known:
            known.append(key)
        document = {"version": _FORMAT_VERSION, "workspaces": known}
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
        try:
            write_atomic(self._path, data, mode=0o600)
        except OSError as error:
            raise ConfigError(
                f"cannot record the trusted workspace in {self._path} ({error.strerror or error}); "
                "check that this folder is writable, or pass --trust to trust it for one run",
                source=self._path,
            ) from None

    def _read(self) -> list[str]:
        try:
            fd = os.open(self._path, _READ_FLAGS)
        except OSError:
            return []
        with contextlib.closing(os.fdopen(fd, "rb")) as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or not _owned_privately(info):
                return []
            data = stream.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return []
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return []
        if not isinstance(document, dict):
            return []
        workspaces = document.get("workspaces")
        if not isinstance(workspaces, list):
            return []
        return [item for item in workspaces if isinstance(item, str)]


def _owned_privately(info: os.stat_result) -> bool:
    # Anyone else able to write this file could make a workspace trusted.
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    return bool(info.st_uid == getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _key(workspace: Path) -> str:
    return os.path.normcase(str(workspace.resolve()))
