"""`${workspaceFolder}` in a project's own editor file is that project, wherever mcpyard runs (CFG-5).

VS Code and Cursor expand it to the folder they opened, the one holding `.vscode/` or `.cursor/`: a
file read from another folder (`mcpyard import ../app/.vscode/mcp.json`) means that folder, never
the current one. Cursor's file for every project, `~/.cursor/mcp.json`, and a file anywhere else
mean the workspace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpyard.config import import_config

from ._support import Setup, by_id

VSCODE = {"servers": {"fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${workspaceFolder}"]}}}
CURSOR = {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs", "${workspaceFolder}"]}}}


def write(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(("folder", "document"), [(".vscode", VSCODE), (".cursor", CURSOR)])
def test_cfg5_a_projects_editor_file_read_from_elsewhere_means_that_project(
    cfg: Setup, folder: str, document: object
) -> None:
    """CFG-5: imported or given with --mcp-config, the file's `${workspaceFolder}` is the project holding it."""
    project = cfg.root / "app"
    path = write(project / folder / "mcp.json", document)
    home = str(cfg.root / "home")
    [server] = import_config(path, workspace=cfg.workspace, home=home).servers
    assert server.fields["args"] == ["-y", "server-fs", str(project)]
    loaded = cfg.load(config_file=path, environ={"HOME": home})
    assert by_id(loaded)["fs"].args == ("-y", "server-fs", str(project))


def test_cfg5_cursors_file_for_every_project_and_a_file_elsewhere_mean_the_workspace(cfg: Setup) -> None:
    """CFG-5: `~/.cursor/mcp.json` is Cursor's for any project it opens, and a file outside an editor's folder
    belongs to no project: both mean the workspace."""
    home = cfg.root / "home"
    for path in (write(home / ".cursor" / "mcp.json", CURSOR), write(cfg.root / "shared" / "mcp.json", CURSOR)):
        [server] = import_config(path, workspace=cfg.workspace, home=str(home)).servers
        assert server.fields["args"] == ["-y", "server-fs", str(cfg.workspace)], path
        loaded = cfg.load(config_file=path, environ={"HOME": str(home)})
        assert by_id(loaded)["fs"].args == ("-y", "server-fs", str(cfg.workspace)), path
