"""Write a file atomically (a private temporary file in the same folder, fsync, rename, fsync the folder), and read
back a private file: the one way mcpyard reads its tokens, secrets, keys, pins, trust and listings."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from mcpyard.errors import ConfigError

__all__ = ["read_private", "write_atomic", "write_new"]

# O_NONBLOCK: a FIFO planted at the path must not hang the open; fstat then refuses it.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)

_TEMP_ATTEMPTS = 8

# O_NOFOLLOW and O_CLOEXEC do not exist everywhere (Windows); O_BINARY only exists there.
_TEMP_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def read_private(path: Path, *, max_bytes: int, what: str | None = None, exposed: str = "") -> bytes | None:
    """The bytes of a private file of this user's, or None when there is no file at `path`.

    Private: a regular file (a symbolic link, a FIFO or a device is refused; opened non-blocking, so
    a FIFO never hangs the read), owned by this user, that no one else may read or write, of at most
    `max_bytes`. Anything else fails closed, with a message that names the file and the fix.

    Args:
        path: the file.
        max_bytes: the most it may hold.
        what: how messages name it (default: the path).
        exposed: a sentence added when others could read it (say, to rotate what it holds).

    Raises:
        ConfigError: the file exists but is not private, too large, or cannot be read.
    """
    named = what or str(path)
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise ConfigError(
                f"{named} is a symbolic link; mcpyard reads it only as a file of its own", source=path
            ) from None
        raise ConfigError(f"cannot read {named}: {exc.strerror or exc}", source=path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{named} is not a regular file; remove it, and mcpyard writes a new one", source=path)
        if not _owned_privately(info):
            if info.st_uid != _uid():
                raise ConfigError(f"{named} belongs to another user; mcpyard reads only a file of yours", source=path)
            raise ConfigError(
                f"{named} can be read or written by others; run `chmod 600 {path}`{', ' if exposed else ''}{exposed}",
                source=path,
            )
        data = _read_up_to(fd, max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {named}: {exc.strerror or exc}", source=path) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ConfigError(f"{named} is larger than mcpyard ever writes it ({max_bytes} bytes); remove it", source=path)
    return data


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def _owned_privately(info: os.stat_result) -> bool:
    # Anyone else able to write this file could have put anything in it; able to read it, could know it.
    uid = _uid()
    return uid is None or bool(info.st_uid == uid and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO))


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never half of one.

    The temporary file is created next to `path` with `O_CREAT|O_EXCL|O_NOFOLLOW` and
    already carries `mode` (less the umask) from its first moment: it is never created
    wider and narrowed afterwards. A missing parent folder is created with mode 0700.
    If `path` is a symbolic link, the link itself is replaced, never its target.

    Args:
        path: the file to write.
        data: its complete new content.
        mode: permission bits of the new file.

    Raises:
        OSError: the folder cannot be created or written, or `path` cannot be replaced;
            no temporary file is left behind.
    """
    parent = path.parent
    _make_private_folder(parent)
    fd, temp = _create_temp(parent, path.name, mode)
    try:
        _write_synced(fd, data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_folder(parent)


def write_new(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Create `path` holding `data`, complete from its first moment; never replace a file already there.

    Like `write_atomic` (a private temporary file, fsync, parent 0700 when created), but the
    file appears by a hard link that fails if the name is taken: of two writers racing to
    create it, exactly one wins and the other's data is never seen.

    Raises:
        FileExistsError: `path` exists (or is a symbolic link, even a dangling one).
        OSError: the folder cannot be created or written; no temporary file is left behind.
    """
    parent = path.parent
    _make_private_folder(parent)
    fd, temp = _create_temp(parent, path.name, mode)
    try:
        _write_synced(fd, data)
        os.link(temp, path, follow_symlinks=False)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    _fsync_folder(parent)


def _write_synced(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`, fsync it, and close it."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_private_folder(folder: Path) -> None:
    if folder.is_dir():
        return
    # Missing ancestors get the default mode, like `mkdir -p`; the folder that holds the
    # file is the one that must be private.
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        if not folder.is_dir():
            raise


def _create_temp(folder: Path, name: str, mode: int) -> tuple[int, Path]:
    for _ in range(_TEMP_ATTEMPTS):
        temp = folder / f".{name}.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(temp, _TEMP_FLAGS, mode), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a unique temporary file next to {folder / name}")


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable. Windows cannot open a folder this way; there the
    # rename is already as durable as the platform allows.
    directory_flag = getattr(os, "O_DIRECTORY", None)
    if directory_flag is None:
        return
    fd = os.open(folder, os.O_RDONLY | directory_flag)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
