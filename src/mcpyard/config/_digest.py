"""What trust covers: the digest of a project server as written, and whether recorded trust still covers it (CFG-6).

The digest is computed on the entry exactly as the project file writes it, before any
`${…}` is expanded, so computing or comparing it needs no environment variable and no
secret. It covers what `mcpyard trust` shows: the command, the args, the env names (never
their values), the cwd, the url and the variables the entry reads.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcpyard.config._expand import template_references

__all__ = [
    "PARTS",
    "EntryDigest",
    "ProjectTrust",
    "changed_parts",
    "entry_digest",
    "inherited_names",
    "variables_read",
]

PARTS: tuple[tuple[str, str], ...] = (
    ("command", "command"),
    ("args", "args"),
    ("env_names", "env names"),
    ("cwd", "cwd"),
    ("url", "url"),
    ("variables", "variables it reads"),
    ("roots", "roots"),
)
"""Each covered part: its key in the trust file, and the words a status reason uses for it."""

_RETRY = "run `mcpyard trust` to review it (or pass --trust for one run)"
LEGACY_PROBLEM = (
    "trust for this workspace was recorded by an older version of mcpyard, which did not record "
    "what each server runs; run `mcpyard trust` again to review it (or pass --trust for one run)"
)
ADDED_PROBLEM = f"added since you trusted it; {_RETRY}"
_RETRY_CHANGE = "run `mcpyard trust` to review the change (or pass --trust for one run)"


@dataclass(frozen=True, slots=True)
class EntryDigest:
    """The SHA-256 of each covered part of one entry (hex), and of them all together."""

    parts: Mapping[str, str] = field(hash=False)

    @property
    def digest(self) -> str:
        """One digest for the whole entry: SHA-256 of the canonical JSON of `parts`."""
        return _sha256(dict(self.parts))


@dataclass(frozen=True, slots=True)
class ProjectTrust:
    """What `mcpyard trust` recorded for one workspace: the digest of each project server it showed.

    `legacy`: recorded by an older mcpyard, which trusted the folder rather than what it
    runs; such trust covers no server.
    """

    servers: Mapping[str, EntryDigest] = field(hash=False)
    legacy: bool = False

    def problem(self, server_id: str, digest: EntryDigest) -> str | None:
        """None when this trust covers the entry as it is now; else why it may not start.

        Args:
            server_id: the entry's id in the project file.
            digest: `entry_digest` of the entry as the project file writes it now.
        """
        if self.legacy:
            return LEGACY_PROBLEM
        trusted = self.servers.get(server_id)
        if trusted is None:
            return ADDED_PROBLEM
        if trusted.digest == digest.digest:
            return None
        labels = changed_parts(trusted, digest)
        what = f" ({', '.join(labels)})" if labels else ""
        return f"changed since you trusted it{what}; {_RETRY_CHANGE}"


def entry_digest(fields: Mapping[str, object]) -> EntryDigest:
    """The digest of one entry's fields as written (without `id`); pure, reads nothing else.

    Env values, the order of env keys, the order of fields and the file's whitespace do
    not change it; any change to a covered part does.
    """
    env = fields.get("env")
    covered: dict[str, object] = {
        "command": fields.get("command"),
        "args": _or_empty(fields.get("args"), []),
        "env_names": sorted(env) if isinstance(env, dict) else _or_empty(env, []),
        "cwd": fields.get("cwd"),
        "url": fields.get("url"),
        "variables": {"references": list(variables_read(fields)), "inherit_env": _inherit(fields.get("inherit_env"))},
    }
    if fields.get("roots") is not None:  # covered once an entry has roots: entries trusted before roots stay trusted
        covered["roots"] = fields.get("roots")
    return EntryDigest({key: _sha256(covered[key]) for key, _ in PARTS if key in covered})


def changed_parts(before: EntryDigest, now: EntryDigest) -> tuple[str, ...]:
    """The words for each covered part that differs, in `PARTS` order (a part missing on either side differs)."""
    return tuple(label for key, label in PARTS if before.parts.get(key) != now.parts.get(key))


def variables_read(fields: Mapping[str, object]) -> tuple[str, ...]:
    """Every `${…}` the entry writes (command, args, env values, cwd, url, header values), sorted, each once."""
    texts: list[object] = [fields.get("command"), fields.get("cwd"), fields.get("url")]
    args = fields.get("args")
    if isinstance(args, list):
        texts.extend(args)
    for table in ("env", "headers"):
        values = fields.get(table)
        if isinstance(values, dict):
            texts.extend(values.values())
    found = {str(ref) for text in texts if isinstance(text, str) for ref in template_references(text)}
    return tuple(sorted(found))


def inherited_names(fields: Mapping[str, object]) -> tuple[str, ...] | Literal["*"]:
    """The names `inherit_env` passes on as written: names, `"*"` (the whole environment), or none."""
    value = fields.get("inherit_env")
    if value == "*":
        return "*"
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def _inherit(value: object) -> object:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return sorted({str(item) for item in value})
    return _or_empty(value, [])


def _or_empty(value: object, empty: object) -> object:
    # Missing, null and empty all mean the default: writing one for another is no change.
    return empty if value is None or value == empty else value


def _sha256(value: object) -> str:
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    except (RecursionError, ValueError, TypeError):
        # A value too deep to encode fails its entry when it is built; its digest only has to be stable.
        text = '"<unrepresentable>"'
    return hashlib.sha256(text.encode("ascii")).hexdigest()
