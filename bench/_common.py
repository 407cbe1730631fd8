"""What the benchmarks share: an isolated mcpyard home, the server entry, percentiles, tables, leftovers."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

BENCH = Path(__file__).resolve().parent
SERVER_SCRIPT = BENCH / "server.py"
PYTHON = sys.executable


@dataclass(frozen=True, slots=True)
class Home:
    """A temporary workspace plus mcpyard config and data folders, isolated from the user's."""

    root: Path
    workspace: Path
    config_home: Path
    data_home: Path

    @property
    def environ(self) -> dict[str, str]:
        """The environment the host sees (and passes on): this one, minus any MCPYARD_ settings."""
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith("MCPYARD_")},
            "MCPYARD_CONFIG_HOME": str(self.config_home),
            "MCPYARD_DATA_HOME": str(self.data_home),
        }

    def write_config(self, server_ids: Sequence[str], **entry: Any) -> Path:
        """A config file in the shared form, one benchmark server per id."""
        servers = {sid: {"command": PYTHON, "args": [str(SERVER_SCRIPT)], **entry} for sid in server_ids}
        path = self.root / f"bench-{len(server_ids)}.json"
        path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        return path


@contextlib.contextmanager
def temp_home() -> Iterator[Home]:
    """A fresh `Home` in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="mcpyard-bench-") as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        yield Home(root, workspace, root / "config", root / "data")


def server_params(home: Home) -> StdioServerParameters:
    """The same server as `Home.write_config` writes, for the SDK's own stdio client."""
    return StdioServerParameters(command=PYTHON, args=[str(SERVER_SCRIPT)], env=home.environ, cwd=str(home.workspace))


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile `q` (0-100) of `values`."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """The median (mean of the two middle values for an even count)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A plain, aligned text table."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [
            str(cell).rjust(w) if i else str(cell).ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells))


def live_children() -> list[int]:
    """Pids of this process's children that are still running (not zombies), from /proc."""
    me = os.getpid()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        # Fields after the parenthesized command name: state, ppid, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == me and state != "Z":
            found.append(int(entry.name))
    return found


def stop_leftovers() -> int:
    """Kill any child process a benchmark left behind (there should be none); returns how many."""
    leftovers = live_children()
    for pid in leftovers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if leftovers:
        print(f"warning: {len(leftovers)} server process(es) were still running and were killed: {leftovers}")
    return len(leftovers)
