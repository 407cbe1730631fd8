"""Other clients' variables in a value (`${workspaceFolder}`, `${input:id}`, `$VAR`…) as mcpyard expands them."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mcpyard.config._imported import ClientFormat, Notes
from mcpyard.config._names import quote

__all__ = ["SECRET_NAME", "editor_workspace", "rewrite"]

SECRET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
"""A name `${secret:NAME}` can read (CFG-5)."""

_BRACED = re.compile(r"\$\{([^{}]*)\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_OPENCODE_ENV = re.compile(r"(?<!\$)\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_OPENCODE_FILE = re.compile(r"(?<!\$)\{file:[^{}]*\}")
_WORKSPACE = frozenset({"workspaceFolder", "workspaceRoot"})
_SEPARATOR = frozenset({"pathSeparator", "/"})
# Variables of an editor's own state (the open file, the selection, its own program): nothing outside it knows them.
_EDITOR_ONLY = frozenset(
    {
        "cwd",
        "execPath",
        "file",
        "fileBasename",
        "fileBasenameNoExtension",
        "fileDirname",
        "fileDirnameBasename",
        "fileExtname",
        "fileWorkspaceFolder",
        "relativeFile",
        "relativeFileDirname",
        "lineNumber",
        "columnNumber",
        "selectedText",
        "defaultBuildTask",
    }
)
_EDITOR_PREFIXES = ("config:", "command:", "extensionInstallFolder:")


_EDITOR_FOLDERS = frozenset({".vscode", ".cursor"})
"""Where an editor keeps a project's own MCP file: `${workspaceFolder}` in it is the folder holding this one."""


def editor_workspace(path: Path, workspace: Path, home: str | None) -> Path:
    """What `${workspaceFolder}` stands for in the file at `path`: the project whose `.vscode` or `.cursor` folder
    holds it (the folder the editor opens with it, wherever mcpyard runs), else `workspace`; a `.cursor` folder in
    the home folder `home` is Cursor's file for every project, whose variable is the workspace."""
    folder = Path(os.path.abspath(path)).parent
    if folder.name not in _EDITOR_FOLDERS:
        return workspace
    project = folder.parent
    if folder.name == ".cursor" and home and os.path.realpath(project) == os.path.realpath(os.path.expanduser(home)):
        return workspace
    return project


def rewrite(text: str, *, client: ClientFormat, workspace: Path, server: str, where: str, notes: Notes) -> str:
    """`text` with the client's variables written as mcpyard's `${VAR}`, `${env:VAR}` and `${secret:NAME}`.

    Every client: `${workspaceFolder}` becomes the workspace's path, `${userHome}` `${HOME}`,
    `${pathSeparator}` the separator, as a file read as it is expands them. VS Code and Cursor too:
    VS Code's prompted `${input:ID}` the saved secret `${secret:ID}`; an editor-only variable
    (`${file}`, `${config:…}`…) is left out. Gemini CLI: `$VAR` becomes `${VAR}`. OpenCode:
    `{env:VAR}` becomes `${VAR}`; `{file:…}` is left out. The rest is mcpyard's syntax already. What
    changed is noted.
    """
    if client == "gemini":
        text = _gemini(text, server=server, where=where, notes=notes)
    elif client == "opencode":
        text = _opencode(text, server=server, where=where, notes=notes)

    def one(match: re.Match[str]) -> str:
        return _editor(
            match.group(1), match.group(0), client=client, workspace=workspace, server=server, where=where, notes=notes
        )

    # Every client's file, read as it is, has the workspace variables expanded (`Expander`): so are they written
    # (mcpyard's own `mcpServers` tables too: they are the shared form; its `servers` list is never rewritten).
    return _BRACED.sub(one, text)


def _opencode(text: str, *, server: str, where: str, notes: Notes) -> str:
    rewritten = _OPENCODE_ENV.sub(r"${\1}", text)
    if rewritten != text:
        notes.said(where, server, "OpenCode's {env:NAME} is written ${NAME}, as mcpyard reads a variable")
    if _OPENCODE_FILE.search(rewritten):
        notes.ignore(
            where,
            server,
            "OpenCode's {file:…} reads a file, which mcpyard does not do in a config; it is left out, so the value "
            "lacks that part: save it with `mcpyard secrets set NAME` and write ${secret:NAME}",
        )
        rewritten = _OPENCODE_FILE.sub("", rewritten)
    return rewritten


def _gemini(text: str, *, server: str, where: str, notes: Notes) -> str:
    rewritten = _BARE.sub(r"${\1}", text)
    if rewritten != text:
        notes.said(where, server, "Gemini CLI's $VAR is written ${VAR}, as mcpyard reads a variable")
    return rewritten


def _editor(
    name: str, written: str, *, client: ClientFormat, workspace: Path, server: str, where: str, notes: Notes
) -> str:
    if name in _WORKSPACE:
        notes.said(where, server, f"{written} is written as {workspace}, the workspace it was read for")
        return str(workspace)
    if name == "workspaceFolderBasename":
        notes.said(
            where, server, f"{written} is written as {workspace.name}, the name of the workspace it was read for"
        )
        return workspace.name
    if name == "userHome":
        notes.said(where, server, f"{written} is written ${{HOME}}")
        return "${HOME}"
    if name in _SEPARATOR:
        return os.sep
    folder, named = name.partition(":")[::2] if name.startswith("workspaceFolder:") else ("", "")
    if folder and named == workspace.name:
        notes.said(where, server, f"{written} is written as {workspace}, the workspace it was read for")
        return str(workspace)
    if folder:
        notes.ignore(
            where,
            server,
            f"{quote(written)} names one folder of a VS Code multi-root workspace, not the workspace it was read for "
            f"({workspace.name}); it is left out, so the value lacks that part: write that folder's path",
        )
        return ""
    if client not in ("vscode", "cursor"):
        return written  # the editors' own variables mean nothing in another client's file
    if client == "vscode" and name.startswith("input:"):
        return _input(name.removeprefix("input:"), written, server=server, where=where, notes=notes)
    if name in _EDITOR_ONLY or name.startswith(_EDITOR_PREFIXES) or name.startswith("input:"):
        notes.ignore(
            where,
            server,
            f"{quote(written)} is the editor's own state, which mcpyard cannot know; it is left out, so the value "
            "lacks that part: write the value itself",
        )
        return ""
    return written  # ${VAR}, ${VAR:-default}, ${env:VAR}: mcpyard reads these as they are


def _input(input_id: str, written: str, *, server: str, where: str, notes: Notes) -> str:
    if SECRET_NAME.fullmatch(input_id):
        notes.said(
            where,
            server,
            f"{written} is a value VS Code asks for when the server starts; mcpyard cannot ask then, so it "
            f"reads the saved secret {input_id}: save it with `mcpyard secrets set {input_id}`",
        )
        return f"${{secret:{input_id}}}"
    notes.ignore(
        where,
        server,
        f"{quote(written)} is a value VS Code asks for when the server starts; mcpyard cannot ask then, and its id is "
        "not a name a saved secret can have (letters, digits, _ . -); it is left out",
    )
    return ""
