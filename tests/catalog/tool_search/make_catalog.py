"""Dump the real tool definitions of the reference MCP servers into `catalog.json` (MOD-4's measuring catalog).

Why: tool search is judged on definitions people actually install, not ones written to suit the
ranker. This lists `tools/list` from each installed reference server with the official SDK client
(the npm servers under `.tools/node_modules/@modelcontextprotocol/`, the PyPI ones in
`.tools/*-venv`, and a few of our fixture servers in `tests/servers/`), then repeats them under
server prefixes (`fs1__read_file`, `fs2__read_file`, ...) as mcpyard names them, because a real
host often runs several filesystems or git repositories at once and the copies make ranking
harder. Servers that are not installed are skipped with a note on stderr.

Run from the repository root (no network is needed; the servers run locally over stdio):
`.venv/bin/python tests/catalog/tool_search/make_catalog.py [--out tests/catalog/tool_search/catalog.json]`
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]
TOOLS = ROOT / ".tools"
NPM = TOOLS / "node_modules" / "@modelcontextprotocol"

COPIES: dict[str, tuple[str, ...]] = {
    "filesystem": ("fs1", "fs2", "fs3", "docs", "home", "projects", "scratch"),
    "git": ("repo1", "repo2", "repo3", "website", "infra", "mobile"),
    "memory": ("memory", "notes", "kb", "crm"),
    "fetch": ("fetch", "web", "browser"),
    "time": ("time", "clock", "tz"),
    "everything": ("everything", "demo", "sandbox"),
    "sequential-thinking": ("thinking",),
    "basic": ("basic", "basic2"),
    "org_tools": ("org", "team"),
    "echo_secrets": ("secrets",),
    "turns": ("agent",),
}
"""Each listed server and the prefixes its copies get in the catalog (a real host's mix of repeats)."""


def _servers(scratch: Path) -> dict[str, StdioServerParameters]:
    """How to start each server that is installed here, keyed by the server's short name."""
    python = sys.executable
    found: dict[str, StdioServerParameters] = {}
    node_servers = {
        "filesystem": [str(scratch)],
        "memory": [],
        "everything": ["stdio"],
        "sequential-thinking": [],
    }
    for name, args in node_servers.items():
        entry = NPM / f"server-{name}" / "dist" / "index.js"
        if entry.exists():
            found[name] = StdioServerParameters(command="node", args=[str(entry), *args])
    pypi = {"fetch": "mcp_server_fetch", "git": "mcp_server_git", "time": "mcp_server_time"}
    for name, module in pypi.items():
        venv_python = TOOLS / f"{name}-venv" / "bin" / "python"
        if venv_python.exists():
            found[name] = StdioServerParameters(command=str(venv_python), args=["-m", module])
    for name in ("basic", "echo_secrets", "turns"):
        found[name] = StdioServerParameters(command=python, args=[str(ROOT / "tests" / "servers" / f"{name}.py")])
    return found


def _org_tools() -> Any:
    """`tests/servers/org_tools.py` serves streamable HTTP only: its server is listed in memory instead."""
    sys.path.insert(0, str(ROOT))
    from tests.servers.org_tools import build_server

    return build_server(None)


async def _list(params: Any) -> list[dict[str, Any]]:
    with anyio.fail_after(60):
        async with Client(params) as client:
            result = await client.list_tools()
    tools: list[dict[str, Any]] = []
    for tool in result.tools:
        dumped = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        tools.append({key: dumped[key] for key in ("name", "title", "description", "inputSchema") if key in dumped})
    return tools


async def _main() -> list[dict[str, Any]]:
    listed: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        servers: dict[str, Any] = {**_servers(Path(scratch)), "org_tools": _org_tools()}
        for name, params in servers.items():
            try:
                listed[name] = await _list(params)
            except Exception as error:  # a missing or broken server is skipped, never fatal
                print(f"skipped {name}: {error!r}", file=sys.stderr)
                continue
            print(f"{name}: {len(listed[name])} tools", file=sys.stderr)
    catalog: list[dict[str, Any]] = []
    for name, prefixes in COPIES.items():
        for prefix in prefixes:
            for tool in listed.get(name, []):
                catalog.append({**tool, "name": f"{prefix}__{tool['name']}", "server": name})
    return catalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("catalog.json"))
    out: Path = parser.parse_args().out
    catalog = anyio.run(_main)
    out.write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n")
    print(f"{len(catalog)} tools written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
