"""`${VAR}`, `${VAR:-default}`, `${env:VAR}` and `${secret:NAME}` expansion (CFG-5, CFG-6)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcpyard.config._names import is_credential_variable

__all__ = ["Expander", "Expansion", "Ref", "TemplateError", "home_path", "parse_template", "template_references"]

MAX_DEPTH = 8
"""How deep defaults may nest (`${A:-${B:-x}}` is depth 2); deeper is a malformed value."""

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_FORMS = "${NAME}, ${NAME:-default}, ${env:NAME} or ${secret:NAME}"
_BREAKS = ("\r", "\n", "\0")


@dataclass(frozen=True, slots=True)
class Ref:
    """One reference in a template: an environment variable or a saved secret."""

    kind: Literal["env", "secret"]
    name: str

    def __str__(self) -> str:
        if self.kind == "secret":
            return f"${{secret:{self.name}}}"
        return f"${{{self.name}}}"


@dataclass(frozen=True, slots=True)
class _Node:
    ref: Ref
    default: tuple[_Part, ...] | None


_Part = str | _Node


class TemplateError(ValueError):
    """A template cannot be parsed; the message gives positions and names, never values."""


@dataclass(slots=True)
class Expansion:
    """The outcome of expanding one template; the caller decides what each finding means."""

    value: str
    error: str | None = None
    """Why the template is malformed (then `value` is empty and nothing was looked up)."""
    unresolved: list[Ref] = field(default_factory=list)
    """Unset variables with no default, and secrets that are not saved."""
    blocked: list[Ref] = field(default_factory=list)
    """References a project file may not make (credential variables, any secret)."""
    line_breaks: list[Ref] = field(default_factory=list)
    """References whose value contains CR, LF or NUL."""
    secrets: list[tuple[str, str]] = field(default_factory=list, repr=False)
    """`(name, value)` of every secret expanded, for redaction."""
    outcomes: list[tuple[Ref, str]] = field(default_factory=list)
    """What became of each reference (`set`, `unset`, `default used`…), never its value, for `doctor`."""


def parse_template(text: str) -> tuple[_Part, ...]:
    """Split a template into literal text and references.

    A `$` not followed by `{` is literal text, and so is a `}` outside a reference.

    Raises:
        TemplateError: a `${` is not closed, names nothing valid, or nests too deep.
    """
    parts, _ = _parse_sequence(text, 0, 0)
    return parts


def template_references(text: str) -> tuple[Ref, ...]:
    """Every reference a template may read, defaults included, in order of first appearance.

    Nothing is looked up. A malformed template reads nothing (it fails its entry when expanded).
    """
    try:
        parts = parse_template(text)
    except TemplateError:
        return ()
    found: list[Ref] = []
    stack = list(reversed(parts))
    while stack:
        part = stack.pop()
        if isinstance(part, str):
            continue
        if part.ref not in found:
            found.append(part.ref)
        if part.default is not None:
            stack.extend(reversed(part.default))
    return tuple(found)


def _parse_sequence(text: str, pos: int, depth: int) -> tuple[tuple[_Part, ...], int]:
    parts: list[_Part] = []
    literal: list[str] = []
    while pos < len(text):
        char = text[pos]
        if depth and char == "}":
            break
        if char == "$" and text.startswith("${", pos):
            if literal:
                parts.append("".join(literal))
                literal = []
            node, pos = _parse_reference(text, pos, depth)
            parts.append(node)
            continue
        literal.append(char)
        pos += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts), pos


def _parse_reference(text: str, start: int, depth: int) -> tuple[_Node, int]:
    where = f"the `${{` at character {start + 1}"
    if depth >= MAX_DEPTH:
        raise TemplateError(f"{where} nests defaults more than {MAX_DEPTH} deep; simplify it")
    pos = start + 2
    kind: Literal["env", "secret"] = "env"
    if text.startswith("secret:", pos):
        kind, pos = "secret", pos + len("secret:")
    elif text.startswith("env:", pos):
        pos += len("env:")
    match = (_SECRET if kind == "secret" else _VARIABLE).match(text, pos)
    if match is None:
        if "}" not in text[pos:]:
            raise TemplateError(f"{where} is never closed with `}}`; write {_FORMS}")
        raise TemplateError(f"{where} does not start a valid reference; write {_FORMS}")
    ref = Ref(kind, match.group())
    pos = match.end()
    if text.startswith("}", pos):
        return _Node(ref, None), pos + 1
    if kind == "env" and text.startswith(":-", pos):
        default, pos = _parse_sequence(text, pos + 2, depth + 1)
        if pos >= len(text):
            raise TemplateError(f"{where} is never closed with `}}`; write {_FORMS}")
        return _Node(ref, default), pos + 1
    if pos >= len(text):
        raise TemplateError(f"{where} is never closed with `}}`; write {_FORMS}")
    if ref.name in ("workspaceFolder", "workspaceRoot") and text.startswith(":", pos):
        raise TemplateError(
            f"{where} names one folder of a VS Code multi-root workspace, not the workspace mcpyard reads: "
            "write that folder's path"
        )
    raise TemplateError(f"{where} is not a valid reference; write {_FORMS}")


class Expander:
    """Expands templates against one environment and one set of saved secrets.

    In restricted mode (a project file, CFG-6) credential variables and every secret
    expand to empty and are reported as `blocked`; defaults are not used for them.

    Given a `workspace` (for the shared form, which editors write), the editors' variables mean
    what they mean there, whatever the environment says: `${workspaceFolder}` and
    `${workspaceRoot}` the workspace's path, `${workspaceFolderBasename}` its name, `${userHome}`
    the environment's `HOME`, `${pathSeparator}` (and `${/}`) this system's separator (as
    `mcpyard import` writes them).
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str],
        secrets: Mapping[str, str],
        restricted: bool,
        workspace: Path | None = None,
    ) -> None:
        self._environ = environ
        self._secrets = secrets
        self._restricted = restricted
        self._editor: dict[str, tuple[str, str]] = {}
        """An editor's variable: its value and what it was read as."""
        self._aliases: dict[str, str] = {}
        """An editor's variable read as an environment variable (looked up only when expanded)."""
        if workspace is not None:
            self._editor = dict.fromkeys(("workspaceFolder", "workspaceRoot"), (str(workspace), "the workspace"))
            self._editor["workspaceFolderBasename"] = (workspace.name, "the workspace")
            self._editor["pathSeparator"] = (os.sep, "the path separator")
            self._aliases["userHome"] = "HOME"

    def expand(self, template: str) -> Expansion:
        """Expand `template`; never raises, a malformed one is reported in `Expansion.error`."""
        if self._editor and "${/}" in template:  # the editors' short form of ${pathSeparator}
            template = template.replace("${/}", os.sep)
        if self._editor and "${workspaceFolder:" in template:  # VS Code's name for one folder: this one's is it
            named = f"${{workspaceFolder:{self._editor['workspaceFolderBasename'][0]}}}"
            template = template.replace(named, "${workspaceFolder}")
        try:
            parts = parse_template(template)
        except TemplateError as error:
            return Expansion(value="", error=str(error))
        result = Expansion(value="")
        result.value = self._join(parts, result)
        return result

    def _join(self, parts: tuple[_Part, ...], result: Expansion) -> str:
        return "".join(part if isinstance(part, str) else self._resolve(part, result) for part in parts)

    def _resolve(self, node: _Node, result: Expansion) -> str:
        ref = node.ref
        outcomes = result.outcomes
        if ref.kind == "secret":
            if self._restricted:
                result.blocked.append(ref)
                outcomes.append((ref, "blocked in a project file"))
                return ""
            value = self._secrets.get(ref.name)
            if value is None:
                result.unresolved.append(ref)
                outcomes.append((ref, "not saved"))
                return ""
            result.secrets.append((ref.name, value))
            outcomes.append((ref, "saved"))
        else:
            if self._restricted and is_credential_variable(ref.name):
                result.blocked.append(ref)
                outcomes.append((ref, "blocked in a project file"))
                return ""
            if (editor := self._editor.get(ref.name)) is not None:
                outcomes.append((ref, editor[1]))
                return editor[0]
            found = self._environ.get(self._aliases.get(ref.name, ref.name))
            if not found:
                state = "unset" if found is None else "set but empty"
                if node.default is not None:
                    outcomes.append((ref, f"{state}, default used"))
                    return self._join(node.default, result)
                if found is None:
                    result.unresolved.append(ref)
                outcomes.append((ref, state))
                return ""
            value = found
            outcomes.append((ref, "set"))
        if any(mark in value for mark in _BREAKS):
            result.line_breaks.append(ref)
        return value


def home_path(text: str, environ: Mapping[str, str]) -> Path:
    """`~` or `~/…` as the user's home folder (`HOME`, else `USERPROFILE`, in `environ`); any other text as written
    (a relative path stays relative: its caller says to what)."""
    home = environ.get("HOME") or environ.get("USERPROFILE")
    if home and (text == "~" or text.startswith(("~/", "~\\"))):
        return Path(home) / text[2:]
    return Path(text)
