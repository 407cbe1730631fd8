"""Which local paths may be sent to a server: the rules of FILE-1, as pure functions of path text."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import PurePath

__all__ = ["CREDENTIAL_PATTERNS", "PROTECTED_FOLDERS", "FileRefused", "refused_component"]

PROTECTED_FOLDERS = (".git", ".mcpyard")
CREDENTIAL_PATTERNS = (
    ".env*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials*",
    "*.p12",
    "*.pfx",
    "mcp-auth.json",
    "secrets.json",
)
"""Credential file names, matched case-folded against every path component (FILE-1)."""


class FileRefused(Exception):
    """A path the rules refuse (FILE-1) or a file that cannot be sent (FILE-2); the message says which and why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def refused_component(parts: Sequence[str]) -> str | None:
    """Why a path made of `parts` (relative to its root) is refused by name, or None.

    Every component is checked, case-folded: a folder named `.git` or `.mcpyard`
    anywhere in the path, or a credential-looking name at any depth.
    """
    for part in parts:
        folded = part.casefold()
        if folded in PROTECTED_FOLDERS:
            return f"it is inside a {part} folder, which is never sent"
        for pattern in CREDENTIAL_PATTERNS:
            if fnmatchcase(folded, pattern):
                return f"{part!r} looks like a credential file ({pattern}), which is never sent"
    return None


def has_parent_reference(path: PurePath) -> bool:
    return ".." in path.parts
