"""What `mcpyard trust` shows and records: each project server as written, nothing expanded (CFG-6)."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mcpyard.config._digest import (
    EntryDigest,
    ProjectTrust,
    changed_parts,
    entry_digest,
    inherited_names,
    variables_read,
)
from mcpyard.config._load import PROJECT_FILE
from mcpyard.config._read import RawEntry, read_document, split_source

__all__ = ["ProjectFile", "ProjectServer", "describe_entry", "read_project", "shell_word", "shown"]

Change = Literal["new", "added", "changed", "unchanged"]


@dataclass(frozen=True, slots=True)
class ProjectServer:
    """One server of a project file as the person trusting it sees it: written, not expanded.

    Every string but `id` is shown exactly: an invisible or control character is written
    as an escape (`shown`), never dropped, so what is shown is what runs.
    """

    id: str
    """The id as written (the key trust is recorded under); `label` is how to show it."""
    runs: str
    """`runs <command line>` (and `in <cwd>`), `connects to <url>`, or why it starts nothing."""
    reads: tuple[str, ...]
    """The `${…}` references it writes, sorted."""
    env_names: tuple[str, ...]
    """The names its `env` sets (never the values), sorted."""
    inherits: tuple[str, ...] | Literal["*"]
    """What `inherit_env` passes on from your environment: names, or `*` for all of it."""
    enabled: bool
    digest: EntryDigest

    @property
    def label(self) -> str:
        """The id, escaped like every other string here."""
        return shown(self.id)

    def change(self, trust: ProjectTrust | None) -> tuple[Change, tuple[str, ...]]:
        """How this entry stands against what was recorded: new (no trust), added, changed (and what), unchanged."""
        if trust is None or trust.legacy:
            return "new", ()
        before = trust.servers.get(self.id)
        if before is None:
            return "added", ()
        if before.digest == self.digest.digest:
            return "unchanged", ()
        return "changed", changed_parts(before, self.digest)


@dataclass(frozen=True, slots=True)
class ProjectFile:
    """A workspace's project file, read for trust: its path, its servers in file order, and warnings."""

    path: Path
    servers: tuple[ProjectServer, ...]
    warnings: tuple[str, ...]

    def digests(self) -> dict[str, EntryDigest]:
        """What `TrustStore.trust` records for it."""
        return {server.id: server.digest for server in self.servers}


def read_project(workspace: Path) -> ProjectFile | None:
    """Read the project file of `workspace` for trust: None when there is none. Nothing is expanded.

    Raises:
        ConfigError: the file cannot be read or is malformed (its servers cannot be shown).
    """
    path = workspace / PROJECT_FILE
    if not os.path.lexists(path):
        return None
    raw = split_source(read_document(path, "json", kind="project"), kind="project", path=path, fmt="json")
    return ProjectFile(path, tuple(describe_entry(entry) for entry in raw.entries), tuple(raw.warnings))


def describe_entry(raw: RawEntry) -> ProjectServer:
    """What one entry, as written, will run; pure."""
    fields = raw.fields
    enabled = fields.get("enabled")
    inherits = inherited_names(fields)
    return ProjectServer(
        id=raw.id,
        runs=_runs(fields),
        reads=variables_read(fields),
        env_names=tuple(shown(name) for name in sorted(env)) if isinstance(env := fields.get("env"), dict) else (),
        inherits=inherits if inherits == "*" else tuple(shown(name) for name in inherits),
        enabled=enabled is not False,
        digest=entry_digest(fields),
    )


def _runs(fields: Mapping[str, object]) -> str:
    command, url, cwd = fields.get("command"), fields.get("url"), fields.get("cwd")
    lines: list[str] = []
    if command is not None:
        args = fields.get("args")
        words = [_text(command), *([_text(arg) for arg in args] if isinstance(args, list) else [])]
        line = "runs " + " ".join(shell_word(word) for word in words)
        if args is not None and not isinstance(args, list):
            line += f" (args as written: {shown(_text(args))})"
        if cwd is not None:
            line += f" in {shell_word(_text(cwd))}"
        lines.append(line)
    if url is not None:
        lines.append(f"connects to {shown(_text(url))}")
    return " and ".join(lines) or "starts nothing (it has neither `command` nor `url`)"


def shown(text: str) -> str:
    """`text` as is when every character is printable; else with each unprintable one escaped (`\\u200b`)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() and char != "\\" else _escape(char) for char in text)


def shell_word(text: str) -> str:
    """One word of a command line as a shell reads it; with unprintable characters, in `$'…'` with escapes."""
    if text.isprintable():
        return shlex.quote(text)
    body = "".join(char if char.isprintable() and char not in "\\'" else _escape(char) for char in text)
    return f"$'{body}'"


def _escape(char: str) -> str:
    code = ord(char)
    if char in "\\'":
        return "\\" + char
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _text(value: object) -> str:
    """A string as written; any other value as its JSON (a bad value fails the entry once trusted)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=True)
    except (RecursionError, ValueError, TypeError):
        return "<a value nested too deep to show>"
