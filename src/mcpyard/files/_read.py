"""Reading a local file once, safely, for a tool call (FILE-1 to FILE-3).

The path is checked as text, then resolved, checked again, and opened one component at
a time from an open root folder without following symlinks, so a symlink swapped in
after the check cannot redirect the read. The opened file is checked with `fstat`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from mcpyard.files._rules import FileRefused, has_parent_reference, refused_component

__all__ = ["LocalFile", "read_local_file"]

_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class LocalFile:
    """A file read for a call: the bytes sent are exactly these (FILE-3)."""

    path: str
    """The path as the model gave it."""
    data: bytes = field(repr=False)
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


def _root_of(resolved: Path, roots: Sequence[Path]) -> Path | None:
    for root in roots:
        if resolved == root or resolved.is_relative_to(root):
            return root
    return None


def read_local_file(raw: str, *, workspace: Path, grants: Sequence[Path], max_bytes: int) -> LocalFile:
    """Check and read one file named by a model (blocking: run it in a worker thread).

    Raises:
        FileRefused: `file_refused` when a rule forbids the path (FILE-1), `file_error`
            when it is not a regular file within the size limit, or cannot be read (FILE-2).
    """
    if not raw or "\0" in raw:
        raise FileRefused("file_refused", f"the file path {raw!r} is empty or holds a NUL character")
    if raw.endswith(("/", os.sep)):
        raise FileRefused("file_error", f"{raw!r} names a folder, not a file")
    # No `~` expansion: a path is relative to the workspace or absolute (FILE-1).
    given = Path(raw)
    if has_parent_reference(PurePath(raw)):
        raise FileRefused("file_refused", f"{raw!r} has a `..` component; give a path without one")
    absolute = given if given.is_absolute() else workspace / given
    roots = [workspace.resolve(), *(grant.resolve() for grant in grants)]
    literal = _normalized(absolute)
    literal_root = _root_of(literal, [workspace, *grants, *roots])
    if literal_root is not None:
        relative = literal.relative_to(literal_root)
        if (why := refused_component(relative.parts)) is not None:
            raise FileRefused("file_refused", f"{raw!r} is refused: {why}")
    resolved = Path(os.path.realpath(absolute))
    root = _root_of(resolved, roots)
    if root is None:
        raise FileRefused(
            "file_refused",
            f"{raw!r} is outside the workspace"
            + (" (it is a symlink that leads out)" if literal_root is not None else "")
            + "; only files in the workspace or a folder listed in `grants` can be sent",
        )
    parts = resolved.relative_to(root).parts
    if (why := refused_component(parts)) is not None:
        raise FileRefused("file_refused", f"{raw!r} is refused: {why}")
    if not parts:
        raise FileRefused("file_error", f"{raw!r} is a folder, not a file")
    data = _open_and_read(root, parts, raw, max_bytes)
    return LocalFile(path=raw, data=data, sha256=hashlib.sha256(data).hexdigest())


def _normalized(path: Path) -> Path:
    """`os.path.normpath`, with POSIX's `//` root folded into `/` so no spelling escapes the name checks."""
    text = os.path.normpath(path)
    if os.sep == "/" and text.startswith("//"):
        text = "/" + text.lstrip("/")
    return Path(text)


def _open_and_read(root: Path, parts: Sequence[str], raw: str, max_bytes: int) -> bytes:
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    directory = getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(root, os.O_RDONLY | directory)
    except OSError as exc:
        raise FileRefused(
            "file_error", f"{raw!r} cannot be read: its folder {str(root)!r} is unusable ({exc.strerror or exc})"
        ) from None
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, os.O_RDONLY | directory | nofollow, dir_fd=fd)
            except OSError as exc:
                raise _open_error(exc, raw) from None
            os.close(fd)
            fd = next_fd
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | nofollow | os.O_NONBLOCK, dir_fd=fd)
        except OSError as exc:
            raise _open_error(exc, raw) from None
    finally:
        os.close(fd)
    try:
        info = os.fstat(file_fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileRefused("file_error", f"{raw!r} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("file_error", f"{raw!r} is not a regular file (a pipe, socket or device)")
        if info.st_nlink > 1:
            raise FileRefused(
                "file_refused", f"{raw!r} has {info.st_nlink} hard links; only a file with one link can be sent"
            )
        if info.st_size > max_bytes:
            raise FileRefused(
                "file_error",
                f"{raw!r} is {info.st_size} bytes, over this server's limit of {max_bytes} (`max_file_bytes`)",
            )
        os.set_blocking(file_fd, True)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            try:
                chunk = os.read(file_fd, min(_READ_CHUNK, max_bytes + 1 - total))
            except OSError as exc:
                raise FileRefused("file_error", f"{raw!r} cannot be read: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise FileRefused("file_error", f"{raw!r} grew past the limit of {max_bytes} bytes while being read")
        return b"".join(chunks)
    finally:
        os.close(file_fd)


def _open_error(exc: OSError, raw: str) -> FileRefused:
    if exc.errno == errno.ENOENT:
        return FileRefused("file_error", f"{raw!r} does not exist")
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return FileRefused("file_refused", f"{raw!r} changed into a symlink while being opened; it is not sent")
    if exc.errno == errno.ENOTDIR:
        return FileRefused("file_error", f"{raw!r}: a part of the path is not a folder")
    if exc.errno == errno.EACCES:
        return FileRefused("file_error", f"{raw!r} cannot be read: permission denied")
    return FileRefused("file_error", f"{raw!r} cannot be opened: {exc.strerror or exc}")
