"""A replica of the organization service as a process of its own, for the fault tests (ORG-9).

Run as `python -m tests.org._replica --database URL --data-home DIR --port N [--lease S] [--sweep S]` from the
repository's root, with `MCPYARD_ORG_KEY` set: the service's own app (`org_app`) on uvicorn on 127.0.0.1, in
development mode (loopback http servers allowed), its leases and sweeps as short as the test asks. It says
`fixture server listening on …` on stderr once it takes requests.

`replica(...)` starts one from a test and hands back its process (to kill), its origin and what it printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import Process

__all__ = ["Replica", "replica"]

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60
STOP_SECONDS = 10


@dataclass
class Replica:
    """A running replica: its process, where it answers, and everything it printed on stderr so far."""

    process: Process
    origin: str
    output: bytearray = field(default_factory=bytearray)

    @property
    def log(self) -> str:
        return self.output.decode(errors="replace")

    async def kill(self) -> None:
        """SIGKILL: the replica dies mid-whatever, with no chance to tidy up."""
        self.process.kill()
        with anyio.fail_after(STOP_SECONDS):
            await self.process.wait()


@asynccontextmanager
async def replica(
    database_url: str, data_home: Path, key: str, *, lease: float = 2.0, sweep: float = 0.5
) -> AsyncIterator[Replica]:
    """A replica on a free port, once it takes requests; stopped (SIGTERM, then SIGKILL) when the block ends."""
    from tests._forkserver import module_command
    from tests.servers._listen import LISTENING
    from tests.servers.http_runner import ServerStartError, free_port

    port = free_port()
    env = {**os.environ, "MCPYARD_ORG_KEY": key}
    arguments = ["--database", database_url, "--data-home", str(data_home), "--port", str(port)]
    # A fork of the worker's fork server, which has the SDK and the web and database libraries imported already.
    command = module_command(env, __name__, *arguments, "--lease", str(lease), "--sweep", str(sweep))  # this module
    process = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    running = Replica(process, f"http://127.0.0.1:{port}")
    listening, ended = anyio.Event(), anyio.Event()

    async def read() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            running.output.extend(chunk)
            if LISTENING.encode() in running.output:
                listening.set()
        ended.set()
        listening.set()

    async with process, anyio.create_task_group() as tg:
        tg.start_soon(read)
        try:
            with anyio.fail_after(STARTUP_SECONDS):
                await listening.wait()
            if ended.is_set() and LISTENING.encode() not in running.output:
                raise ServerStartError("the replica exited before it listened", running.log)
            yield running
        finally:
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(STOP_SECONDS):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
            with anyio.move_on_after(STOP_SECONDS):
                await ended.wait()
            tg.cancel_scope.cancel()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", required=True)
    parser.add_argument("--data-home", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--sweep", type=float, default=0.5)
    args = parser.parse_args(argv)

    from mcpyard.org import OrgSettings, org_app
    from tests.org._service import FAST_HASHING
    from tests.servers._listen import serve

    settings = OrgSettings(
        database_url=args.database,
        data_home=args.data_home,
        environ={"MCPYARD_ORG_KEY": os.environ["MCPYARD_ORG_KEY"]},
        dev=True,
        secure_cookies=False,
        password_hashing=FAST_HASHING,
        lease_seconds=args.lease,
        sweep_seconds=args.sweep,
    )
    serve(org_app(settings), host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
