"""The official MCP clients, as scripts/check installs them: npm's Inspector CLI and the TypeScript SDK's `Client`
(driven by tests/gateway/ts_client/client.mjs), found and run to the end as real processes.

A missing install fails the test that asks for them (a skipped interop test proves nothing).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio.to_thread
import pytest

__all__ = ["CLIENT_SECONDS", "TS_CLIENT", "Clients", "official_clients", "run_client"]

ROOT = Path(__file__).resolve().parent.parent
TS_CLIENT = ROOT / "tests" / "gateway" / "ts_client" / "client.mjs"
CLIENT_SECONDS = 90


@dataclass(frozen=True)
class Clients:
    """Where scripts/check installed the official clients, and the `node` that runs them."""

    root: Path
    node: str

    @property
    def inspector(self) -> Path:
        return self.root / "node_modules" / ".bin" / "mcp-inspector-cli"

    @property
    def inspector_build(self) -> Path:
        # inspector-cli 1.0.3 finds its own package.json with `fs.existsSync("../package.json")`,
        # i.e. relative to the working folder, then imports it relative to itself: it only
        # starts from a folder whose parent holds a package.json, so it runs from its own build/.
        return self.root / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build"

    @property
    def sdk(self) -> Path:
        return self.root / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


def official_clients() -> Clients:
    """The installed clients, or the test fails naming what is missing and how to install it."""
    root = Path(os.environ.get("MCPYARD_TEST_CLIENTS") or ROOT / ".tools" / "clients").resolve()
    node = shutil.which("node")
    found = Clients(root, node or "node")
    missing = [str(path) for path in (found.inspector, found.sdk) if not path.exists()]
    if node is None:
        missing.append("node on PATH")
    if missing:
        pytest.fail(
            f"the official MCP clients are not installed (missing: {', '.join(missing)}): run scripts/check, "
            "which installs them in .tools/clients (or point MCPYARD_TEST_CLIENTS at a folder holding their "
            "node_modules)",
            pytrace=False,
        )
    return found


def _run(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> str:
    """Run a client to the end (at most CLIENT_SECONDS); its stdout. Its whole process group goes with it."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=CLIENT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{command[0]} ran over {CLIENT_SECONDS} s; stdout:\n{stdout}\nstderr:\n{stderr}")
    finally:
        # The Inspector's launcher runs its CLI as a child, which runs the stdio gateway: reap any stragglers.
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if process.returncode != 0:
        pytest.fail(f"{command} exited with {process.returncode}; stdout:\n{stdout}\nstderr:\n{stderr}")
    return stdout


async def run_client(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> str:
    return await anyio.to_thread.run_sync(partial(_run, command, env, cwd))
