"""Fixture server whose helpers leave its process group, to prove that no descendant outlives the host.

Run as `python tests/servers/detached.py --pid-file PATH [--inherit-stdio]` (stdio).
At start it spawns four long-sleeping helpers that each escape the server's process group:
one through the `setsid` command, one that calls `os.setsid()` itself, one started with
`start_new_session=True`, and a classic double-fork daemon (fork, `setsid`, fork, the middle
process exits, so the daemon's parent is gone before the server even serves). It writes
its own pid and theirs to PATH, one per line, atomically (temp file + rename), then serves `slow`
(progress as it goes) and `block` (blocks its event loop, so it ignores a cancellation).
By default the helpers get /dev/null for stdin and stdout; `--inherit-stdio` lets the
`setsid` one hold the server's pipes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
SETSID_SLEEP = [sys.executable, "-c", "import os, time; os.setsid(); time.sleep(600)"]


def spawn_helpers(*, inherit_stdio: bool) -> list[int]:
    """Start the four helpers; returns their pids (the daemon's is the sleeping grandchild's)."""
    quiet = subprocess.DEVNULL
    setsid = shutil.which("setsid")
    assert setsid is not None, "the setsid command (util-linux) is needed"
    streams = None if inherit_stdio else quiet
    # Not a group leader, so `setsid` makes the new session itself and execs the helper in
    # place: the helper's pid is the Popen's.
    by_command = subprocess.Popen([setsid, *SLEEP], stdin=streams, stdout=streams)
    by_call = subprocess.Popen(SETSID_SLEEP, stdin=quiet, stdout=quiet)
    by_flag = subprocess.Popen(SLEEP, stdin=quiet, stdout=quiet, start_new_session=True)
    return [by_command.pid, by_call.pid, by_flag.pid, double_fork_daemon()]


def double_fork_daemon() -> int:
    """The classic daemon: its parent exits at once, so it is nobody's child but init's (or a subreaper's)."""
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read)
        os.setsid()
        daemon = os.fork()
        if daemon == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1):
                os.dup2(null, fd)
            os.execv(sys.executable, SLEEP)
        os.write(write, f"{daemon}\n".encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        pid = int(pipe.read().strip())
    os.waitpid(middle, 0)
    return pid


def write_pid_file(path: Path, pids: list[int]) -> None:
    """Write `pids` to `path`, one per line, so a reader never sees a partial file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text("".join(f"{pid}\n" for pid in pids), encoding="ascii")
    temporary.replace(path)


def build_server() -> MCPServer:
    """A server with a slow tool that reports progress, to be killed mid-call, and one that ignores cancellation."""
    server = MCPServer("detached", instructions="Fixture server with detached helpers.", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def slow(ctx: Context, seconds: float, progress_every: float = 0.05) -> str:
        """Sleep for `seconds`, reporting progress every `progress_every` seconds."""
        elapsed = 0.0
        while elapsed < seconds:
            await anyio.sleep(progress_every)
            elapsed += progress_every
            await ctx.report_progress(elapsed, seconds)
        return f"slept {seconds} s"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def block(seconds: float) -> str:
        """Block the whole server for `seconds`: it cannot honour a cancellation meanwhile."""
        time.sleep(seconds)  # noqa: ASYNC251  # the point: a sync sleep inside the event loop
        return f"blocked {seconds} s"

    return server


def main(argv: Sequence[str] | None = None) -> None:
    """Spawn the helpers, record their pids, and serve over stdio until stdin closes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pid-file", type=Path, required=True, help="where to write its own and the helpers' pids")
    parser.add_argument("--inherit-stdio", action="store_true", help="let the setsid helper hold stdin/stdout")
    args = parser.parse_args(argv)
    # Deliberately neither waited for nor killed here: the host must clean them up.
    write_pid_file(args.pid_file, [os.getpid(), *spawn_helpers(inherit_stdio=args.inherit_stdio)])
    build_server().run("stdio")


if __name__ == "__main__":
    main()
