"""Throughput and latency of `mcpyard serve` (the gateway) against direct SDK calls and FastMCP's proxy, same run.

Six sides, each an SDK `Client` in this process calling `echo(text)` on its own copy of
`bench/server.py` (the SDK's `MCPServer`), all on 127.0.0.1:

- `direct-stdio`: the server over stdio, no gateway;
- `direct-http`: the server over streamable HTTP (`MCPServer.run("streamable-http")`, a
  subprocess): the baseline of every HTTP front;
- `mcpyard-stdio`: the client spawns `python -m mcpyard serve --share-all --mcp-config CFG`
  (config mode `auto`), which spawns the server over stdio; the tool is `bench__echo`;
- `mcpyard-http`: `mcpyard serve --transport http --port P --share-all` as a subprocess;
- `relay-stdio` (only with `--sides`): `bench/relay.py`, a bare JSON relay in front of the same
  server (each message read as JSON and written again, nothing else): the floor of any process
  between client and server;
- `relay-http` (only with `--sides`): `bench/relay_http.py`, the same relay behind an HTTP front
  (uvicorn with httptools on uvloop, as `mcpyard serve --transport http`; one JSON body per
  request, no session): the floor of any HTTP front before a stdio server;
- `fastmcp-stdio`, `fastmcp-http`: FastMCP's proxy (`create_proxy(StdioTransport(...))`,
  `bench/fastmcp_proxy.py`) in front of the same stdio server, run from a separate
  virtualenv (`.tools/bench-venv`; fastmcp is never installed in mcpyard's own).

For each concurrency c (default 1 and 16: c tasks sharing the one client session, taking
calls from a common count), `--rounds` rounds of `--calls` calls per side (default 4 x 500,
2,000 calls per side and c), the order of the sides rotating each round. Per side: calls per
second (calls / wall time of the rounds), p50 and p90 latency of one call, and CPU per call
of this process (the client), of the process the client talks to (the front) and of the
processes behind it (the server behind a gateway), from /proc.

Ratios are of calls per second (higher is better): `mcpyard-http / direct-http` (goal
>= 0.8), `mcpyard-stdio / fastmcp-stdio` (goal >= 1.4), and every side against `direct-stdio`.

`--profile SIDE` runs only that side at the highest concurrency while its front process is
profiled, and prints where that process spends its time: py-spy (from the bench virtualenv)
samples it for `--profile-seconds`, or, with `--profiler cprofile`, the process runs under
cProfile for `--profile-calls` calls (µs per call of each function; `cprofile-cpu` times them
by the thread's CPU clock instead of the wall clock, `bench/cpu_profile.py`). Both cProfile
figures include the process's start (its imports) spread over the calls. `--profiler segments`
(for `mcpyard-stdio`; best with `--concurrency 1`) times each step of a call in the running
gateway instead (`bench/segments.py`): the median of each, and the waits on server and client.

The bench virtualenv, once (or pass `--install-fastmcp`):
`python3 -m venv .tools/bench-venv && .tools/bench-venv/bin/pip install fastmcp py-spy`

Run: `.venv/bin/python bench/gateway.py [--rounds 4] [--calls 500] [--concurrency 1,16] [--sides ...]`,
or `.venv/bin/python bench/gateway.py --profile mcpyard-stdio [--profiler cprofile]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pstats
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from _common import (
    BENCH,
    PYTHON,
    SERVER_SCRIPT,
    Home,
    live_children,
    load_line,
    median,
    percentile,
    print_table,
    stop_leftovers,
    temp_home,
)

REPO = BENCH.parent
DEFAULT_BENCH_VENV = REPO / ".tools" / "bench-venv"
SERVER_ID = "bench"
DEFAULT_SIDES = ("direct-stdio", "direct-http", "mcpyard-stdio", "mcpyard-http", "fastmcp-stdio", "fastmcp-http")
SIDES = (*DEFAULT_SIDES, "relay-stdio", "relay-http")
"""`relay-stdio` and `relay-http` (`bench/relay.py`, `bench/relay_http.py`: a bare JSON relay in front of the
server) are the floors of any process between client and server; they run only when asked for (`--sides`)."""
GOAL_HTTP = 0.8
"""mcpyard-http calls/s over direct-http calls/s, at least."""
GOAL_STDIO_VS_FASTMCP = 1.4
"""mcpyard-stdio calls/s over fastmcp-stdio calls/s, at least."""
CLOCK_TICK = 1 / os.sysconf("SC_CLK_TCK")
PY_SPY_RATE = 250
"""Samples per second of `--profile`."""
HTTP_SERVER_CODE = (
    "import sys; sys.path.insert(0, sys.argv[1]); from server import build_server; "
    "build_server().run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))"
)
"""`bench/server.py` over streamable HTTP on 127.0.0.1 (the SDK's defaults: stateful, SSE responses)."""


# ------------------------------------------------------------------ processes


def _proc_table() -> dict[int, tuple[int, float]]:
    """Every process: pid -> (ppid, CPU seconds so far: utime + stime)."""
    table: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        # After the command name: state(0) ppid(1) ... utime(11) stime(12)
        table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) * CLOCK_TICK)
    return table


def tree_pids(root: int, table: dict[int, tuple[int, float]] | None = None) -> list[int]:
    """`root` and all its descendants that are still running."""
    table = _proc_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in table:
            found.append(pid)
            todo.extend(children.get(pid, ()))
    return found


def tree_cpu(root: int) -> tuple[float, float]:
    """CPU seconds so far of `root` itself, and of its descendants."""
    table = _proc_table()
    pids = tree_pids(root, table)
    own = table[root][1] if root in table else 0.0
    return own, sum(table[pid][1] for pid in pids if pid != root)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Spawned:
    """A subprocess this benchmark started (in its own process group), with its stderr in a file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    seen: set[int] = field(default_factory=set)

    def tail(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-15:])


async def wait_for_port(spawned: Spawned, port: int, within: float = 30.0) -> None:
    """Until something accepts connections on 127.0.0.1:port; fails if the process ends first."""
    with anyio.fail_after(within):
        while True:
            if spawned.process.poll() is not None:
                raise RuntimeError(f"{spawned.name} exited with {spawned.process.returncode}:\n{spawned.tail()}")
            with contextlib.suppress(OSError):
                stream = await anyio.connect_tcp("127.0.0.1", port)
                await stream.aclose()
                return
            await anyio.sleep(0.05)


def stop(spawned: Spawned, grace: float = 10.0) -> None:
    """SIGINT (a clean shutdown, servers stopped), then SIGKILL to its process group if it did not exit."""
    process = spawned.process
    spawned.seen.update(tree_pids(process.pid))
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            print(f"warning: {spawned.name} did not stop within {grace:g} s after SIGINT; killing its group")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


def kill_survivors(pids: set[int], grace: float = 5.0) -> int:
    """Wait a little for `pids` to end, then SIGKILL each that is still running; returns how many were."""
    deadline = time.monotonic() + grace
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        table = _proc_table()
        alive = {pid for pid in alive if pid in table}
        if alive:
            time.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if alive:
        print(f"warning: {len(alive)} process(es) of this run were still running and were killed: {sorted(alive)}")
    return len(alive)


# ------------------------------------------------------------------ sides


@dataclass
class Side:
    """One client session and what it measures."""

    name: str
    client: Client
    tool: str
    root: int
    """The pid of the process the client talks to (the front); its descendants are the servers behind it."""
    protocol: str = ""


@dataclass
class Round:
    latencies: list[float]
    wall: float
    client_cpu: float
    front_cpu: float
    behind_cpu: float


@dataclass
class Stats:
    rounds: list[Round] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(len(r.latencies) for r in self.rounds)

    @property
    def throughput(self) -> float:
        return self.calls / sum(r.wall for r in self.rounds)

    @property
    def latencies(self) -> list[float]:
        return [s for r in self.rounds for s in r.latencies]

    def per_call(self, attribute: str) -> float:
        return float(sum(getattr(r, attribute) for r in self.rounds)) / self.calls


class Bench:
    """The six sides' processes and sessions, opened in one exit stack."""

    def __init__(self, args: argparse.Namespace, home: Home, stack: contextlib.AsyncExitStack) -> None:
        self.args = args
        self.home = home
        self.stack = stack
        self.config = self._write_config()
        self.spawned: list[Spawned] = []
        self.seen: set[int] = set()

    def _write_config(self) -> Path:
        path = self.home.root / "gateway.json"
        server = {"command": PYTHON, "args": [str(SERVER_SCRIPT)]}
        path.write_text(json.dumps({"mode": "auto", "mcpServers": {SERVER_ID: server}}), encoding="utf-8")
        return path

    def _serve_args(self) -> list[str]:
        return ["--share-all", "--workspace", str(self.home.workspace), "--mcp-config", str(self.config)]

    def _fastmcp_args(self) -> list[str]:
        return [str(BENCH / "fastmcp_proxy.py"), "--server-python", PYTHON]

    def _script(self, name: str, code: str) -> str:
        path = self.home.root / f"{name}.py"
        path.write_text(code + "\n", encoding="utf-8")
        return str(path)

    def _profiled(self, name: str, command: list[str]) -> list[str]:
        """With `--profile NAME --profiler cprofile`, the front process runs under cProfile (stats written at exit)."""
        if name != self.args.profile or self.args.profiler == "py-spy":
            return command
        if self.args.profiler == "segments":
            return [command[0], str(BENCH / "segments.py"), str(segments_path(self.args, name)), *command[1:]]
        out = str(cprofile_path(self.args, name))
        if self.args.profiler == "cprofile-cpu":
            return [command[0], str(BENCH / "cpu_profile.py"), out, *command[1:]]
        return [command[0], "-m", "cProfile", "-o", out, *command[1:]]

    def spawn(self, name: str, command: Sequence[str]) -> Spawned:
        log = self.home.root / f"{name}.log"
        with log.open("wb") as err:
            process = subprocess.Popen(
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=self.home.environ,
                cwd=self.home.workspace,
                start_new_session=True,  # its own process group, to kill as one if it will not stop
            )
        spawned = Spawned(name, process, log)
        self.spawned.append(spawned)
        self.stack.callback(self._stop, spawned)
        return spawned

    def _stop(self, spawned: Spawned) -> None:
        stop(spawned)
        self.seen.update(spawned.seen)

    async def open(self, name: str) -> Side:
        """Start what `name` needs and open its client session (tools listed, one checked call)."""
        venv_python = str(self.args.bench_venv / "bin" / "python")
        before = set(live_children())
        if "-http" in name:
            port = free_port()
            command = {
                "direct-http": [PYTHON, self._script("http_server", HTTP_SERVER_CODE), str(BENCH), str(port)],
                "mcpyard-http": [
                    *(PYTHON, "-m", "mcpyard", "serve", "--transport", "http", "--port", str(port)),
                    *self._serve_args(),
                ],
                "fastmcp-http": [venv_python, *self._fastmcp_args(), "--port", str(port)],
                "relay-http": [PYTHON, str(BENCH / "relay_http.py"), str(port)],
            }[name]
            spawned = self.spawn(name, self._profiled(name, command))
            await wait_for_port(spawned, port)
            root = spawned.process.pid
            client = Client(f"http://127.0.0.1:{port}/mcp")
        else:
            command = {
                "direct-stdio": [PYTHON, str(SERVER_SCRIPT)],
                "mcpyard-stdio": [PYTHON, "-m", "mcpyard", "serve", *self._serve_args()],
                "fastmcp-stdio": [venv_python, *self._fastmcp_args()],
                "relay-stdio": [PYTHON, str(BENCH / "relay.py")],
            }[name]
            command = self._profiled(name, command)
            params = StdioServerParameters(
                command=command[0], args=command[1:], env=self.home.environ, cwd=str(self.home.workspace)
            )
            client = Client(params)  # its stderr is this process's
            root = -1
        await self.stack.enter_async_context(client)  # the client's task group: no cancel scope around it
        with anyio.fail_after(60):
            tools = {tool.name for tool in (await client.list_tools()).tools}
        if root == -1:
            [root] = set(live_children()) - before
        self.seen.update(tree_pids(root))
        tool = f"{SERVER_ID}__echo" if name.startswith("mcpyard") else "echo"
        if tool not in tools:
            raise RuntimeError(f"{name} does not list {tool}: {sorted(tools)}")
        side = Side(name, client, tool, root, client.protocol_version)
        await call_once(side, self.args.text)
        return side


async def call_once(side: Side, text: str) -> None:
    """One `echo` call; fails the run on an error result or a text without the echoed one."""
    result = await side.client.call_tool(side.tool, {"text": text})
    got = "".join(getattr(block, "text", "") for block in result.content)
    if result.is_error or text not in got:
        raise RuntimeError(f"{side.name}: {side.tool} answered {'an error' if result.is_error else ''}: {got[:300]!r}")


async def run_round(side: Side, concurrency: int, calls: int, text: str) -> Round:
    """`calls` calls by `concurrency` tasks sharing the session; wall time, latencies, CPU of every process."""
    remaining = [calls]
    latencies: list[float] = []

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            start = time.perf_counter()
            await call_once(side, text)
            latencies.append(time.perf_counter() - start)

    front0, behind0 = tree_cpu(side.root)
    cpu0 = time.process_time()
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    front1, behind1 = tree_cpu(side.root)
    return Round(latencies, wall, cpu, front1 - front0, behind1 - behind0)


# ------------------------------------------------------------------ report


def report(concurrency: int, stats: dict[str, Stats]) -> dict[str, float]:
    """A table per concurrency; returns each side's calls/s."""
    names = list(stats)
    any_stats = stats[names[0]]
    print(
        f"\nc = {concurrency}: {len(any_stats.rounds)} rounds x {len(any_stats.rounds[0].latencies)} calls per side",
        flush=True,
    )
    base = stats.get("direct-stdio")
    rows = []
    for name, s in stats.items():
        lat = s.latencies
        rows.append(
            [
                name,
                f"{s.throughput:.0f}",
                f"{median(lat) * 1e3:.3f}",
                f"{percentile(lat, 90) * 1e3:.3f}",
                f"{s.throughput / base.throughput:.2f}" if base else "-",
                f"{s.per_call('client_cpu') * 1e3:.3f}",
                f"{s.per_call('front_cpu') * 1e3:.3f}",
                f"{s.per_call('behind_cpu') * 1e3:.3f}",
            ]
        )
    headers = ["side", "calls/s", "p50 ms", "p90 ms", "x direct-stdio", "client CPU ms", "front CPU ms", "behind ms"]
    print_table(headers, rows)
    return {name: s.throughput for name, s in stats.items()}


def ratio_line(
    concurrency: int, stats: dict[str, Stats], top: str, bottom: str, goal: float | None
) -> tuple[float, float] | None:
    """calls/s of `top` over `bottom`, with the per-round range and the ratio of p50s (bottom/top)."""
    if top not in stats or bottom not in stats:
        return None
    t, b = stats[top], stats[bottom]
    ratio = t.throughput / b.throughput
    per_round = [
        (len(rt.latencies) / rt.wall) / (len(rb.latencies) / rb.wall) for rt, rb in zip(t.rounds, b.rounds, strict=True)
    ]
    p50 = median(b.latencies) / median(t.latencies)
    verdict = "" if goal is None else f"; goal >= {goal:.1f}: " + ("met" if ratio >= goal else "NOT MET")
    print(
        f"  c={concurrency:<3} {top} / {bottom}: {ratio:.2f}x calls/s"
        f" (rounds {min(per_round):.2f}-{max(per_round):.2f}), {p50:.2f}x by p50{verdict}"
    )
    return ratio, p50


# ------------------------------------------------------------------ runs


async def measure(args: argparse.Namespace, sides: list[Side]) -> None:
    for side in sides:
        print(f"  {side.name}: pid {side.root}, protocol {side.protocol}", flush=True)
    for side in sides:  # warm-up, every concurrency
        for concurrency in args.concurrency:
            await run_round(side, concurrency, args.warmup, args.text)
    results: dict[int, dict[str, Stats]] = {}
    for concurrency in args.concurrency:
        stats = {side.name: Stats() for side in sides}
        for index in range(args.rounds):
            shift = index % len(sides)
            order = sides[shift:] + sides[:shift]
            if index % 2:
                order = order[::-1]
            for side in order:
                stats[side.name].rounds.append(await run_round(side, concurrency, args.calls, args.text))
        results[concurrency] = stats
        report(concurrency, stats)
    print("\nratios of calls/s (and of p50 latency, direct/side):")
    pairs: list[tuple[str, str, float | None]] = [
        ("mcpyard-http", "direct-http", GOAL_HTTP),
        ("mcpyard-stdio", "fastmcp-stdio", GOAL_STDIO_VS_FASTMCP),
        ("mcpyard-http", "fastmcp-http", None),
        ("fastmcp-http", "direct-http", None),
        ("relay-http", "direct-http", None),
        ("mcpyard-http", "relay-http", None),
        ("mcpyard-stdio", "relay-stdio", None),
        *((name, "direct-stdio", None) for name in SIDES if name != "direct-stdio"),
    ]
    for top, bottom, goal in pairs:
        for concurrency, stats in results.items():
            ratio_line(concurrency, stats, top, bottom, goal)


async def profile(args: argparse.Namespace, side: Side) -> int:
    """Calls at the highest concurrency while the side's front process is profiled; returns how many calls.

    py-spy samples the running process for `--profile-seconds`; with `--profiler cprofile` the
    process already runs under cProfile, and `--profile-calls` calls are made (its stats are
    written when it exits, read by `summarize_cprofile`).
    """
    concurrency = max(args.concurrency)
    await run_round(side, concurrency, args.warmup, args.text)
    if args.profiler != "py-spy":
        start = time.perf_counter()
        await run_round(side, concurrency, args.profile_calls, args.text)
        wall = time.perf_counter() - start
        what = "the steps of a call" if args.profiler == "segments" else "cProfile"
        print(f"\n{what} of {side.name} (pid {side.root}): {args.profile_calls} calls at c={concurrency}, {wall:.1f} s")
        return int(args.profile_calls + args.warmup + 2)
    out = profile_dir(args) / f"{side.name}.pyspy.txt"
    command = [
        str(args.bench_venv / "bin" / "py-spy"), "record", "--pid", str(side.root), "--rate", str(PY_SPY_RATE),
        "--duration", str(args.profile_seconds), "--format", "raw", "--threads", "--output", str(out),
    ]  # fmt: skip
    err = out.with_suffix(".log")
    with err.open("wb") as err_file:
        spy = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_file)
    calls = 0
    try:
        with anyio.fail_after(args.profile_seconds + 30):
            await anyio.sleep(0.5)  # py-spy attaches
            while spy.returncode is None:
                await run_round(side, concurrency, 200, args.text)
                calls += 200
    finally:
        with anyio.move_on_after(30, shield=True):
            if spy.returncode is None:
                spy.send_signal(signal.SIGINT)
            await spy.wait()
    if spy.returncode != 0 or not out.exists():
        raise RuntimeError(f"py-spy failed ({spy.returncode}): {err.read_text(errors='replace')[-2000:]}")
    print(f"\npy-spy of {side.name} (pid {side.root}), {args.profile_seconds} s, ~{calls} calls at c={concurrency}")
    print(f"(collapsed stacks, every thread: {out})")
    main_thread = out.with_suffix(".main.txt")
    main_thread.write_text(main_thread_stacks(out))
    rate = args.profile_seconds * PY_SPY_RATE
    summarize_stacks(main_thread, args.profile_top, of=f"of {rate} possible: the main thread (the event loop) only")
    return calls


def profile_dir(args: argparse.Namespace) -> Path:
    path = Path(args.profile_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def cprofile_path(args: argparse.Namespace, name: str) -> Path:
    return profile_dir(args) / f"{name}.cprofile"


def segments_path(args: argparse.Namespace, name: str) -> Path:
    return profile_dir(args) / f"{name}.segments.txt"


def summarize_cprofile(path: Path, calls: int, top: int) -> None:
    """Own and cumulative time per call of the busiest functions, from the front process's cProfile stats.

    The stats cover the process's whole life (start-up and connecting too), divided by the tool
    calls it answered; a coroutine's time is counted only while it runs, not while it awaits.
    Waiting in epoll (idle) is listed, but left out of the total.
    """
    if not path.exists():
        print(f"no cProfile stats at {path}: the process did not exit cleanly")
        return
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]

    def label(key: tuple[str, int, str]) -> str:
        file, _, function = key
        return _frame(f"{function} ({file}:0)")

    idle = sum(tt for key, (_, _, tt, _, _) in stats.items() if _is_idle(key))
    busy = sum(tt for _, _, tt, _, _ in stats.values()) - idle
    print(f"{busy:.2f} s busy, {busy / calls * 1e6:.0f} us per call over {calls} calls; {idle:.2f} s in epoll (idle)")
    by_own = sorted(((k, v) for k, v in stats.items() if not _is_idle(k)), key=lambda item: item[1][2], reverse=True)
    print("\nown time:")
    print_table(
        ["file:function", "us/call", "% of busy", "entries/call"],
        [
            [label(k), f"{tt / calls * 1e6:.1f}", f"{tt / busy * 100:.1f}", f"{nc / calls:.1f}"]
            for k, (_, nc, tt, _, _) in by_own[:top]
        ],
    )
    ours = [(k, v) for k, v in stats.items() if "mcpyard" in k[0] and "/cli/" not in k[0] and k[2] != "<module>"]
    ours += [(k, v) for k, v in stats.items() if k[2] in _SDK_STEPS]
    ours.sort(key=lambda item: item[1][3], reverse=True)
    print("\ncumulative time of mcpyard's functions and a few SDK steps:")
    print_table(
        ["file:function", "us/call", "% of busy", "entries/call"],
        [
            [label(k), f"{ct / calls * 1e6:.1f}", f"{ct / busy * 100:.1f}", f"{nc / calls:.1f}"]
            for k, (_, nc, _, ct, _) in ours[:top]
        ],
    )


def _is_idle(key: tuple[str, int, str]) -> bool:
    """The event loop waiting for something to do (epoll), from a pstats key."""
    return "'poll' of 'select.epoll'" in key[2] or (key[0].endswith("selectors.py") and key[2] == "select")


_SDK_STEPS = {"_mcp_param_rejection", "_tool_input_schema", "handle_modern_request", "serve_one", "stdout_writer"}


def main_thread_stacks(path: Path) -> str:
    """The MainThread's stacks of a `py-spy record --threads --format raw` output, without the thread frame.

    py-spy takes a thread blocked in a system call it does not know (the SDK's stdio worker
    threads waiting on their queue, asyncio's waitpid thread) for a busy one, so those threads'
    samples are left out; the event loop's thread, idle in epoll, is recognised as idle.
    """
    lines = []
    for line in path.read_text().splitlines():
        thread, _, rest = line.partition(";")
        if thread.startswith("thread (") and thread.endswith("MainThread") and rest:
            lines.append(rest)
    return "\n".join(lines) + "\n"


def summarize_stacks(path: Path, top: int, *, of: str = "") -> None:
    """Where the samples fall, from py-spy's collapsed stacks: own time by package and by function, and
    inclusive time by function (leaving out the entry chain: frames in more than 60 % of the samples)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame(frame) for frame in stack.split(";")]
        frames = [frame for frame in frames if frame]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        packages[_package(frames[-1])] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        print("no samples")
        return

    def rows(counter: Counter[str], limit: int) -> list[list[str]]:
        return [[name, f"{n / total * 100:.1f}"] for name, n in counter.most_common(limit)]

    below = Counter({name: n for name, n in inclusive.items() if n <= 0.6 * total})
    print(f"{total} busy samples {of}\n\nown time by package:")
    print_table(["package", "%"], rows(packages, 20))
    print("\nown time by function:")
    print_table(["file:function", "%"], rows(own, top))
    print("\ninclusive time by function (entry chain left out):")
    print_table(["file:function", "%"], rows(below, top))
    ours = Counter({name: n for name, n in below.items() if name.startswith("mcpyard/") and "/cli/" not in name})
    if ours:
        print("\ninclusive time of mcpyard's functions:")
        print_table(["file:function", "%"], rows(ours, top))


def _package(frame: str) -> str:
    """The top-level package of a 'file:function' (the event loop's modules as one)."""
    file = frame.split(":", 1)[0]
    head = file.split("/", 1)[0] if "/" in file else file.removesuffix(".py")
    if head in {"asyncio", "selectors", "socket", "threading", "<frozen runpy>"}:
        return "asyncio event loop (asyncio, selectors)"
    return head


def _frame(frame: str) -> str:
    """'function (path/to/file.py:123)' -> 'package/file.py:function', the path cut after site-packages or src."""
    name, _, where = frame.partition(" (")
    file = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/src/", "/lib/python3.11/"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{file}:{name}" if file else name


@contextlib.asynccontextmanager
async def opened(args: argparse.Namespace, home: Home, names: Sequence[str]) -> AsyncIterator[tuple[Bench, list[Side]]]:
    async with contextlib.AsyncExitStack() as stack:
        bench = Bench(args, home, stack)
        try:
            sides = [await bench.open(name) for name in names]
            yield bench, sides
        finally:
            for spawned in bench.spawned:
                bench.seen.update(tree_pids(spawned.process.pid))
    # Every session closed, every spawned process stopped; their servers must be gone too.
    kill_survivors(bench.seen)


async def run(args: argparse.Namespace, home: Home) -> None:
    names = [args.profile] if args.profile else args.sides
    calls = 0
    with anyio.fail_after(args.timeout):
        async with opened(args, home, names) as (_, sides):
            if args.profile:
                calls = await profile(args, sides[0])
            else:
                await measure(args, sides)
    if args.profile and args.profiler.startswith("cprofile"):  # written when the process exited
        summarize_cprofile(cprofile_path(args, args.profile), calls, args.profile_top)
    if args.profile and args.profiler == "segments":
        print(segments_path(args, args.profile).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ setup and main


def ensure_bench_venv(args: argparse.Namespace, names: Sequence[str]) -> None:
    """The bench virtualenv must have fastmcp (FastMCP sides) and py-spy (--profile); `--install-fastmcp` makes it."""
    needs_fastmcp = any(name.startswith("fastmcp") for name in names)
    if not needs_fastmcp and not args.profile:
        return
    python = args.bench_venv / "bin" / "python"
    missing = not python.exists() or not (args.bench_venv / "bin" / "py-spy").exists()
    if not missing:
        check = [str(python), "-c", "import fastmcp"]
        missing = subprocess.run(check, capture_output=True, check=False, timeout=60).returncode != 0
    if not missing:
        return
    setup = f"python3 -m venv {args.bench_venv} && {args.bench_venv}/bin/pip install fastmcp py-spy"
    if not args.install_fastmcp:
        sys.exit(f"the bench virtualenv lacks fastmcp or py-spy; make it with:\n  {setup}\n(or pass --install-fastmcp)")
    print(f"making the bench virtualenv: {setup}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(args.bench_venv)], check=True, timeout=120)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "fastmcp", "py-spy"], check=True, timeout=600)


def fastmcp_version(venv: Path) -> str:
    python = venv / "bin" / "python"
    if not python.exists():
        return "-"
    code = "import importlib.metadata as m; print(m.version('fastmcp'))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False, timeout=60)
    return done.stdout.strip() or "-"


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds per side and concurrency")
    parser.add_argument("--calls", type=int, default=500, help="calls per side per round")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per side and concurrency")
    parser.add_argument(
        "--concurrency",
        type=lambda t: [int(c) for c in _list(t)],
        default=[1, 16],
        help="concurrent callers, e.g. 1,16",
    )
    parser.add_argument(
        "--sides", type=_list, default=list(DEFAULT_SIDES), help=f"comma-separated, of {', '.join(SIDES)}"
    )
    parser.add_argument("--text", default="hello, world", help="the text `echo` sends")
    parser.add_argument("--bench-venv", type=Path, default=DEFAULT_BENCH_VENV, help="the virtualenv with fastmcp")
    parser.add_argument("--install-fastmcp", action="store_true", help="make the bench virtualenv if it lacks fastmcp")
    parser.add_argument("--profile", choices=SIDES, help="only py-spy one side's front process (no comparison)")
    parser.add_argument(
        "--profiler",
        choices=("py-spy", "cprofile", "cprofile-cpu", "segments"),
        default="py-spy",
        help=(
            "with --profile (cprofile-cpu: cProfile timed by the CPU clock, bench/cpu_profile.py; segments: each "
            "step of a call in mcpyard-stdio's gateway, bench/segments.py)"
        ),
    )
    parser.add_argument("--profile-seconds", type=int, default=10, help="how long py-spy samples")
    parser.add_argument("--profile-calls", type=int, default=3000, help="calls made under cProfile")
    parser.add_argument("--profile-top", type=int, default=25, help="functions listed")
    parser.add_argument("--profile-dir", default="/tmp/mcpyard-bench-profiles", help="where py-spy's stacks go")
    parser.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    args = parser.parse_args()
    unknown = set(args.sides) - set(SIDES)
    if unknown:
        parser.error(f"unknown sides {sorted(unknown)}; choose from {', '.join(SIDES)}")
    names = [args.profile] if args.profile else args.sides
    ensure_bench_venv(args, names)
    print(
        f"python {sys.version.split()[0]}, {load_line()}; fastmcp {fastmcp_version(args.bench_venv)};"
        f" every side calls echo on bench/server.py; c = {args.concurrency}",
        flush=True,
    )
    with temp_home() as home:
        try:
            anyio.run(run, args, home)
        finally:
            stop_leftovers()
    print(f"\nat the end: {load_line()}")


if __name__ == "__main__":
    main()
