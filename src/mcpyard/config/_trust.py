"""What `mcpyard trust` recorded: per workspace, the digest of each project server it showed (CFG-6)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from mcpyard._atomic import read_private, write_atomic
from mcpyard.config._digest import PARTS, EntryDigest, ProjectTrust
from mcpyard.errors import ConfigError

__all__ = ["TrustStore"]

_FORMAT_VERSION = 2
_LEGACY_VERSION = 1
_MAX_BYTES = 4 * 1024 * 1024
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
_PART_KEYS = frozenset(key for key, _ in PARTS if key != "roots")
"""The parts every digest has (`roots` only an entry that has roots)."""


class TrustStore:
    """Trusted project servers, kept in a JSON file (usually `trust.json` in the data folder).

    A workspace is keyed by its resolved absolute path, so `.`, a relative path and a
    symbolic link to it are one workspace. For each, the file holds the digest of every
    project server `mcpyard trust` showed (`entry_digest`): a server added or changed
    since is not covered. The file fails closed: when it is missing, corrupt, a symbolic
    link, not owned by the user or writable by others, nothing is trusted (and `trust`
    rewrites it cleanly); a workspace whose record is malformed is not trusted. A file an
    older mcpyard wrote (version 1, a list of folders) is read as trust that covers no
    server (`ProjectTrust.legacy`).

    Format (version 2)::

        {"version": 2, "workspaces": {"/abs/path": {"servers": {"<id>": {
            "digest": "<sha256 hex>", "parts": {"command": "<sha256 hex>", ...}}}}}}

    Args:
        path: the trust file.
    """

    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def path(self) -> Path:
        """The trust file."""
        return self._path

    def record(self, workspace: Path) -> ProjectTrust | None:
        """What was recorded for `workspace`, or None when nothing was (or the record cannot be believed)."""
        return self._read().get(_key(workspace))

    def is_trusted(self, workspace: Path) -> bool:
        """Whether this version of mcpyard recorded trust for `workspace` (which servers it covers: `record`)."""
        found = self.record(workspace)
        return found is not None and not found.legacy

    def trust(self, workspace: Path, servers: Mapping[str, EntryDigest]) -> None:
        """Record that the project servers of `workspace` are trusted exactly as `servers` describes them.

        Replaces what was recorded for that workspace: a server left out is no longer
        trusted. The file is written atomically with mode 0600.

        Args:
            workspace: the workspace folder.
            servers: the digest of each project server shown, by id.

        Raises:
            ConfigError: the trust file cannot be written; the message says where.
        """
        known = self._read()
        known[_key(workspace)] = ProjectTrust(dict(servers))
        document = {"version": _FORMAT_VERSION, "workspaces": {key: _dump(found) for key, found in known.items()}}
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
        try:
            write_atomic(self._path, data, mode=0o600)
        except OSError as error:
            raise ConfigError(
                f"cannot record the trusted workspace in {self._path} ({error.strerror or error}); "
                "check that this folder is writable, or pass --trust to trust it for one run",
                source=self._path,
            ) from None

    def _read(self) -> dict[str, ProjectTrust]:
        # Anyone else able to write this file could make a workspace trusted: fail closed.
        try:
            data = read_private(self._path, max_bytes=_MAX_BYTES)
        except ConfigError:
            return {}
        if data is None:
            return {}
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return {}
        if not isinstance(document, dict):
            return {}
        return _parse(document)


def _parse(document: dict[str, object]) -> dict[str, ProjectTrust]:
    version = document.get("version", _LEGACY_VERSION)
    workspaces = document.get("workspaces")
    if version == _LEGACY_VERSION and isinstance(workspaces, list):
        # The folder was trusted, not what it runs: covers no server until trusted again.
        return {item: ProjectTrust({}, legacy=True) for item in workspaces if isinstance(item, str)}
    if version != _FORMAT_VERSION or not isinstance(workspaces, dict):
        return {}
    found: dict[str, ProjectTrust] = {}
    for key, value in workspaces.items():
        record = _load_record(value)
        if isinstance(key, str) and record is not None:
            found[key] = record
    return found


def _load_record(value: object) -> ProjectTrust | None:
    """One workspace's record, or None when any of it is malformed (then none of it is believed)."""
    if not isinstance(value, dict):
        return None
    if value.get("legacy") is True:
        return ProjectTrust({}, legacy=True)
    servers = value.get("servers")
    if not isinstance(servers, dict):
        return None
    digests: dict[str, EntryDigest] = {}
    for server_id, entry in servers.items():
        if not isinstance(entry, dict):
            return None
        parts = entry.get("parts")
        if not isinstance(parts, dict) or set(parts) - {"roots"} != _PART_KEYS:
            return None
        if not all(isinstance(part, str) and _HEX_DIGEST.fullmatch(part) for part in parts.values()):
            return None
        digest = EntryDigest({key: str(parts[key]) for key, _ in PARTS if key in parts})
        if entry.get("digest") != digest.digest:
            return None
        digests[str(server_id)] = digest
    return ProjectTrust(digests)


def _dump(found: ProjectTrust) -> dict[str, object]:
    if found.legacy:
        return {"legacy": True}
    servers = {
        server_id: {"digest": digest.digest, "parts": dict(digest.parts)} for server_id, digest in found.servers.items()
    }
    return {"servers": servers}


def _key(workspace: Path) -> str:
    return os.path.normcase(str(workspace.resolve()))
