"""What the benchmarks share: an isolated mcpyard home, the server entry, interleaved timing, tables, leftovers."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters

from mcpyard import Host

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
    """A plain text table: the first column aligned left, the others (numbers) right."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        )

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line([str(cell) for cell in row]))


# ------------------------------------------------------------------ interleaved timing

Caller = Callable[[str, dict[str, Any]], Awaitable[int]]
"""Calls one tool and returns the length of its text (checked against the expectation)."""

Arguments = Mapping[str, Any] | Callable[[], dict[str, Any]]
"""The arguments of every call, or a function giving the next call's arguments (fresh keys)."""


@dataclass
class Samples:
    """One side's measurements, per round: wall seconds of each call, and this process's CPU per call."""

    rounds: list[list[float]] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def all(self) -> list[float]:
        return [s for r in self.rounds for s in r]


async def time_calls(
    call: Caller, tool: str, arguments: Arguments, count: int, expect: int
) -> tuple[list[float], float]:
    """Wall seconds of each call, and the CPU seconds per call this process spent (all its threads)."""
    times: list[float] = []
    cpu_start = time.process_time()
    for _ in range(count):
        args = arguments() if callable(arguments) else dict(arguments)
        start = time.perf_counter()
        length = await call(tool, args)
        times.append(time.perf_counter() - start)
        if length != expect:
            raise RuntimeError(f"{tool} returned {length} characters, expected {expect}")
    return times, (time.process_time() - cpu_start) / count


async def compare(
    sides: Mapping[str, Caller],
    tool: str,
    arguments: Arguments,
    *,
    expect: int,
    rounds: int,
    calls: int,
    warmup: int,
) -> dict[str, Samples]:
    """Warm up every side, then run `rounds` rounds of `calls` calls per side, alternating which side goes first."""
    for call in sides.values():
        await time_calls(call, tool, arguments, warmup, expect)
    samples = {name: Samples() for name in sides}
    names = list(sides)
    for index in range(rounds):
        order = names if index % 2 == 0 else names[::-1]
        for name in order:
            times, cpu = await time_calls(sides[name], tool, arguments, calls, expect)
            samples[name].rounds.append(times)
            samples[name].cpu.append(cpu)
    return samples


def report(
    title: str,
    host: Samples,
    direct: Samples,
    *,
    goal: float | None,
    unit: Literal["ms", "us"] = "ms",
    labels: tuple[str, str] = ("mcpyard Host.call", "SDK Client.call_tool"),
) -> float:
    """Print both sides' p50, p90, min and client CPU per call, and the ratio of the medians; returns the ratio."""
    scale, digits = (1e3, 3) if unit == "ms" else (1e6, 0)

    def fmt(seconds: float) -> str:
        return f"{seconds * scale:.{digits}f}"

    ratio = median(host.all) / median(direct.all)
    per_round = [median(h) / median(d) for h, d in zip(host.rounds, direct.rounds, strict=True)]
    print(f"\n{title}  ({len(host.rounds)} rounds x {len(host.rounds[0])} calls per side)")
    rows = [
        [name, fmt(median(s.all)), fmt(percentile(s.all, 90)), fmt(min(s.all)), fmt(median(s.cpu))]
        for name, s in zip(labels, (host, direct), strict=True)
    ]
    print_table(["side", f"p50 {unit}", f"p90 {unit}", f"min {unit}", f"client CPU {unit}/call"], rows)
    verdict = "" if goal is None else (f"; goal <= {goal:.2f}: " + ("met" if ratio <= goal else "NOT MET"))
    print(
        f"ratio of medians host/direct: {ratio:.3f}"
        f" (per round: median {median(per_round):.3f}, {min(per_round):.3f}-{max(per_round):.3f});"
        f" difference {(median(host.all) - median(direct.all)) * 1e6:+.0f} us/call wall,"
        f" {(median(host.cpu) - median(direct.cpu)) * 1e6:+.0f} us/call client CPU{verdict}",
        flush=True,
    )
    return ratio


CUT_MARK = "[… cut by mcpyard: the full result is "
"""How the text the model reads marks a result cut at `max_result_bytes` (the rest is kept by handle)."""


def host_caller(host: Host, server_id: str, *, cached: bool = False, cut: bool = False) -> Caller:
    """`Host.call` of one bench tool, returning the length of the server's text.

    The length is taken from the wire content blocks (`CallResult.content`), never from
    `CallResult.text`: that one is what the model reads, the data inside mcpyard's fence
    (and cut at the result cap). `cached` is whether every answer must come from mcpyard's
    idempotent cache (True) or from the server (False). `cut` is whether every answer must
    be a result mcpyard cut and stored (a handle, and the cut mark in the text) or not.
    """

    async def call(tool: str, arguments: dict[str, Any]) -> int:
        result = await host.call(f"{server_id}__{tool}", arguments)
        if not result.ok:
            raise RuntimeError(f"Host.call({tool}) failed: {result.error}")
        if result.cached != cached:
            raise RuntimeError(f"Host.call({tool}) answered from {'its cache' if result.cached else 'the server'}")
        if (result.handle is not None, CUT_MARK in result.text) != (cut, cut):
            raise RuntimeError(f"Host.call({tool}): handle {result.handle!r}, cut mark expected: {cut}")
        return sum(len(str(block.get("text", ""))) for block in result.content if block.get("type") == "text")

    return call


def sdk_caller(client: Client) -> Caller:
    """A direct SDK `Client.call_tool`, returning the length of the text content."""

    async def call(tool: str, arguments: dict[str, Any]) -> int:
        result = await client.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"call_tool({tool}) failed: {result.content}")
        return sum(len(getattr(block, "text", "")) for block in result.content)

    return call


def load_line() -> str:
    """Load averages (1, 5, 15 min) and this machine's CPU count, for the top of a run."""
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} CPUs, load average {one:.2f} {five:.2f} {fifteen:.2f}"


# ------------------------------------------------------------------ processes


def _live_parents() -> dict[int, int]:
    """Each running (not zombie) process's parent, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        # Fields after the parenthesized command name: state, ppid, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(ppid)
    return parents


def live_children() -> list[int]:
    """Pids of this process's children that are still running (not zombies), from /proc."""
    me = os.getpid()
    return [pid for pid, parent in _live_parents().items() if parent == me]


def live_descendants() -> list[int]:
    """Pids of every running process below this one: on Linux mcpyard's servers are its reaper's grandchildren."""
    below: dict[int, list[int]] = {}
    for pid, parent in _live_parents().items():
        below.setdefault(parent, []).append(pid)
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        for child in below.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def pin_processes() -> str:
    """Pin this process to the first CPU and every thread of the processes below it (the servers) to the others.

    Which core a server lands on relative to its client changes the cost of every
    round trip (a wake-up on the same core or across cores) and tends to stay put for a
    whole run, so two server processes can differ by 10 % for no reason of their own.
    Pinned, both sides get the same placement. Returns what was done, for the report.
    """
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return "not pinned (one CPU)"
    mine, theirs = {cpus[0]}, set(cpus[1:])
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task.name), mine)
    for pid in live_descendants():
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(int(task.name), theirs)
    return f"pinned: this process to CPU {cpus[0]}, the servers to CPU {','.join(map(str, sorted(theirs)))}"


def stop_leftovers() -> int:
    """Kill any process a benchmark left behind (there should be none); returns how many."""
    leftovers = live_descendants()
    for pid in leftovers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if leftovers:
        print(f"warning: {len(leftovers)} server process(es) were still running and were killed: {leftovers}")
    return len(leftovers)


def run_bench(
    run: Callable[[argparse.Namespace, Home], Awaitable[None]], args: argparse.Namespace, about: str = ""
) -> None:
    """Run a benchmark in a temporary home, bounded by `args.timeout`, stopping every process it started."""

    async def bounded() -> None:
        with anyio.fail_after(args.timeout):
            await run(args, home)

    print(f"python {sys.version.split()[0]}, {load_line()}{about}", flush=True)
    with temp_home() as home:
        try:
            anyio.run(bounded)
        finally:
            stop_leftovers()
    print(f"\nat the end: {load_line()}")
