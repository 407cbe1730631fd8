"""Fixture server that starts a long-sleeping child of its own, to prove no grandchild outlives the host.

Run as `python tests/servers/grandchild.py --pid-file PATH [--inherit-stdio]` (stdio).
At start it spawns `python -c "import time; time.sleep(600)"` in the server's own process group
(a plain `subprocess.Popen`), writes that pid to PATH atomically (temp file + rename),
then serves the tool `grandchild_pid()`. By default the grandchild gets /dev/null for
stdin and stdout; `--inherit-stdio` lets it hold the server's pipes, as `npx` children do.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

GRANDCHILD_CODE = "import time; time.sleep(600)"


def spawn_grandchild(*, inherit_stdio: bool) -> subprocess.Popen[bytes]:
    """Start the sleeping grandchild in this process's group."""
    streams = None if inherit_stdio else subprocess.DEVNULL
    return subprocess.Popen([sys.executable, "-c", GRANDCHILD_CODE], stdin=streams, stdout=streams)


def write_pid_file(path: Path, pid: int) -> None:
    """Write `pid` to `path` so a reader never sees a partial file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(f"{pid}\n", encoding="ascii")
    temporary.replace(path)


def build_server(grandchild_pid: int) -> MCPServer:
    """Build the server that reports the grandchild's pid."""
    server = MCPServer("grandchild", instructions="Fixture server with a grandchild process.", log_level="WARNING")

    @server.tool(name="grandchild_pid", annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def report_pid() -> int:
        """Return the pid of the sleeping grandchild process."""
        return grandchild_pid

    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Spawn the grandchild, record its pid, and serve over stdio until stdin closes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pid-file", type=Path, required=True, help="where to write the grandchild's pid")
    parser.add_argument("--inherit-stdio", action="store_true", help="let the grandchild hold stdin/stdout")
    args = parser.parse_args(argv)
    grandchild = spawn_grandchild(inherit_stdio=args.inherit_stdio)
    write_pid_file(args.pid_file, grandchild.pid)
    # The grandchild is deliberately neither waited for nor killed here: the host must clean it up.
    build_server(grandchild.pid).run("stdio")


if __name__ == "__main__":
    main()
