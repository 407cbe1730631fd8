"""Where the sealing keys live, outside the database: `MCPYARD_ORG_KEY`, else a 0600 key file (ORG-2, API-5).

A key is 32 random bytes. Its id is a fingerprint (16 hex digits of a SHA-256 of the key), so
the same key has the same id wherever it is kept, and the id says nothing about the key.

The key file (`org.key` in the data folder, made by `mcpyard org init`) is JSON::

    {"format": "mcpyard-org-keyring/1", "current": "<id>", "keys": {"<id>": "<base64>", ...}}

`current` seals; every key listed unseals. `MCPYARD_ORG_KEY` holds one key in base64, or
several separated by commas: the first seals, all unseal (a rotation in steps across replicas).
No key, and no part of one, ever appears in a message, a log line or a `repr`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from mcpyard._atomic import read_private, write_atomic, write_new
from mcpyard.errors import ConfigError, UsageError

__all__ = [
    "KEY_BYTES",
    "KEY_ENV",
    "KEY_FILE",
    "EnvKeySource",
    "FileKeySource",
    "KeySource",
    "Keyring",
    "MemoryKeySource",
    "key_id",
    "key_source",
    "new_key",
]

KEY_ENV = "MCPYARD_ORG_KEY"
KEY_FILE = "org.key"
KEY_BYTES = 32
FORMAT = "mcpyard-org-keyring/1"
_MAX_FILE_BYTES = 1 << 20
_MAKE_ONE = "make one with `openssl rand -base64 32`"


def key_id(key: bytes) -> str:
    """The key's id: a fingerprint that identifies it and reveals nothing of it."""
    return hashlib.sha256(b"mcpyard org sealing key\x00" + key).hexdigest()[:16]


def new_key() -> bytes:
    return os.urandom(KEY_BYTES)


@dataclass(frozen=True, slots=True, repr=False)
class Keyring:
    """The keys that unseal, by id, and the id of the one that seals."""

    current: str
    keys: Mapping[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.current not in self.keys:
            raise ValueError("the current key must be one of the keys")

    @classmethod
    def of(cls, *keys: bytes) -> Keyring:
        """A keyring of these keys; the first seals."""
        return cls(key_id(keys[0]), {key_id(key): key for key in keys})

    def key(self, kid: str) -> bytes | None:
        return self.keys.get(kid)

    def with_new_current(self, key: bytes) -> Keyring:
        """This keyring plus `key`, which seals from now on."""
        return Keyring(key_id(key), {**self.keys, key_id(key): key})

    def keeping(self, ids: set[str]) -> Keyring:
        """Only the current key and the keys in `ids`."""
        return Keyring(self.current, {k: v for k, v in self.keys.items() if k in ids or k == self.current})

    def __repr__(self) -> str:
        return f"Keyring(current={self.current!r}, ids={sorted(self.keys)!r})"


class KeySource(Protocol):
    """Where the keys are kept, and how a rotation changes them (ORG-2).

    A rotation is: `add_key` (a new current key, every old key kept, saved before any row
    changes), re-seal every credential in one transaction, then `drop_keys_except` the keys
    rows still use. Stopped at any step, every row can still be unsealed.
    """

    @property
    def where(self) -> str:
        """Where the keys are kept, for messages (never the keys)."""
        ...

    def load(self) -> Keyring: ...

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Held for a whole rotation: one at a time."""
        ...

    def add_key(self) -> Keyring:
        """The keyring to re-seal with: a current key to seal with, and every key that unseals."""
        ...

    def drop_keys_except(self, keep: set[str]) -> list[str]:
        """Forget the keys no row uses (or say which can be forgotten); their ids, sorted."""
        ...


class MemoryKeySource:
    """Keys in memory: for tests and embedding."""

    def __init__(self, keyring: Keyring | None = None) -> None:
        self.keyring = keyring or Keyring.of(new_key())

    @property
    def where(self) -> str:
        return "the in-memory keyring"

    def load(self) -> Keyring:
        return self.keyring

    def lock(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def add_key(self) -> Keyring:
        self.keyring = self.keyring.with_new_current(new_key())
        return self.keyring

    def drop_keys_except(self, keep: set[str]) -> list[str]:
        dropped = sorted(set(self.keyring.keys) - keep - {self.keyring.current})
        self.keyring = self.keyring.keeping(keep)
        return dropped


class EnvKeySource:
    """Keys from `MCPYARD_ORG_KEY`: base64 keys separated by commas, the first sealing.

    A rotation cannot change the environment: put the new key first (`MCPYARD_ORG_KEY=NEW,OLD`)
    on every replica, run `mcpyard org rotate-key`, then remove the old key.
    """

    def __init__(self, value: str) -> None:
        self._value = value

    @property
    def where(self) -> str:
        return KEY_ENV

    def load(self) -> Keyring:
        keys: list[bytes] = []
        parts = [part.strip() for part in self._value.split(",") if part.strip()]
        if not parts:
            raise ConfigError(f"{KEY_ENV} is set but holds no key; {_MAKE_ONE}, or unset it to use the key file")
        for position, part in enumerate(parts, start=1):
            which = f"{KEY_ENV}" if len(parts) == 1 else f"key {position} of {KEY_ENV}"
            keys.append(_decode_key(part, which))
        return Keyring.of(*dict.fromkeys(keys))

    def lock(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def add_key(self) -> Keyring:
        keyring = self.load()
        if len(keyring.keys) < 2:
            raise UsageError(
                f"the sealing key comes from {KEY_ENV}, which rotate-key cannot change: set {KEY_ENV}=NEW,OLD "
                f"(the new key first; {_MAKE_ONE}) on every replica, run `mcpyard org rotate-key` to re-seal "
                f"every credential with the new key, then set {KEY_ENV}=NEW"
            )
        return keyring

    def drop_keys_except(self, keep: set[str]) -> list[str]:
        keyring = self.load()
        return sorted(set(keyring.keys) - keep - {keyring.current})


def _decode_key(text: str, which: str) -> bytes:
    cleaned = text.replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        key = base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(f"{which} is not base64; a key is {KEY_BYTES} random bytes in base64 ({_MAKE_ONE})") from None
    if len(key) != KEY_BYTES:
        raise ConfigError(
            f"{which} decodes to {len(key)} bytes; a key is {KEY_BYTES} random bytes in base64 ({_MAKE_ONE})"
        )
    return key


class FileKeySource:
    """Keys in a JSON file readable by its owner only; refused when it is a symlink, not ours, or readable by others."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def where(self) -> str:
        return f"the key file {self.path}"

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def create(self) -> Keyring:
        """Make the key file with one new key.

        Raises:
            ConfigError: it exists already (it is never replaced), or cannot be written.
        """
        keyring = Keyring.of(new_key())
        try:
            write_new(self.path, _encode(keyring), mode=0o600)
        except FileExistsError:
            raise ConfigError(f"{self.where} exists already; it is never replaced") from None
        except OSError as exc:
            raise ConfigError(f"cannot create {self.where}: {exc.strerror or exc}") from None
        return keyring

    def load(self) -> Keyring:
        """The keyring in the file.

        Raises:
            ConfigError: it is missing, unsafe (a symlink, not the user's, readable by others) or damaged.
        """
        return _parse(self._read(), self.where)

    def save(self, keyring: Keyring) -> None:
        try:
            write_atomic(self.path, _encode(keyring), mode=0o600)
        except OSError as exc:
            raise ConfigError(f"cannot write {self.where}: {exc.strerror or exc}") from None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        import fcntl

        lock_path = self.path.with_name(f".{self.path.name}.lock")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot lock {self.where}: {exc.strerror or exc}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ConfigError(f"another key rotation is using {self.where}; wait for it to end") from None
            yield
        finally:
            os.close(fd)

    def add_key(self) -> Keyring:
        keyring = self.load().with_new_current(new_key())
        self.save(keyring)
        return keyring

    def drop_keys_except(self, keep: set[str]) -> list[str]:
        keyring = self.load()
        dropped = sorted(set(keyring.keys) - keep - {keyring.current})
        if dropped:
            self.save(keyring.keeping(keep))
        return dropped

    def _read(self) -> bytes:
        data = read_private(
            self.path,
            max_bytes=_MAX_FILE_BYTES,
            what=self.where,
            exposed="and consider the key exposed: rotate it with `mcpyard org rotate-key`",
        )
        if data is None:
            raise ConfigError(f"{self.where} does not exist: run `mcpyard org init` to make it, or set {KEY_ENV}")
        return data


def _encode(keyring: Keyring) -> bytes:
    document = {
        "format": FORMAT,
        "current": keyring.current,
        "keys": {kid: base64.b64encode(key).decode("ascii") for kid, key in sorted(keyring.keys.items())},
    }
    return json.dumps(document, indent=2).encode("utf-8") + b"\n"


def _parse(data: bytes, where: str) -> Keyring:
    damaged = f"{where} is damaged"
    try:
        document = json.loads(data)
    except ValueError:
        raise ConfigError(f"{damaged}: it is not JSON") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ConfigError(f"{damaged}: it is not a mcpyard keyring ({FORMAT})")
    current, entries = document.get("current"), document.get("keys")
    if not isinstance(current, str) or not isinstance(entries, dict) or current not in entries:
        raise ConfigError(f"{damaged}: it must name its current key among its keys")
    keys: dict[str, bytes] = {}
    for kid, encoded in entries.items():
        key = _decode_key(encoded, f"key {kid} in {where}") if isinstance(encoded, str) else b""
        if key_id(key) != kid:
            raise ConfigError(f"{damaged}: key {kid} does not match its id")
        keys[kid] = key
    return Keyring(current, keys)


def key_source(environ: Mapping[str, str], data_folder: Path) -> EnvKeySource | FileKeySource:
    """`MCPYARD_ORG_KEY` when it is set, else the key file in the data folder (API-5)."""
    value = environ.get(KEY_ENV, "")
    if value.strip():
        return EnvKeySource(value)
    return FileKeySource(data_folder / KEY_FILE)
