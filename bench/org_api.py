"""Throughput and latency of the organization service's call API against `Host.call` and ContextForge, same run.

Every side calls `echo(text)` of one `bench/server.py` served over streamable HTTP on
127.0.0.1 (a subprocess; the sides take turns, so they never share it at the same moment):

- `host`: `Host.call("bench__echo", ...)` in this process, on a Host opened on that server
  over streamable HTTP the way the organization service opens its own (the same `ServerSpec`,
  mode `ask`, the tool `run_freely`, the outbound guard in dev mode, lazy): the baseline;
- `org-sqlite`, `org-postgresql`: `POST /api/v1/calls` with a member's bearer token, over
  real HTTP with keep-alive (httpx2), to `mcpyard org serve --dev` (a subprocess: the service
  as it is deployed, in a process of its own on uvicorn) on SQLite (a temporary file) or on
  PostgreSQL (a throwaway cluster, `tests/org/_postgres.py`). The server is registered and
  `echo`'s policy set to `run_freely` through the API by the organization's owner first;
- `org-mcp-sqlite`, `org-mcp-postgresql`: the same service (a process of its own), the member
  calling as an MCP client of `/mcp`: one session (initialized once), `tools/call` per call,
  each answered as a short event stream, read by the same lean client;
- `contextforge`: IBM's ContextForge (`mcp-contextforge-gateway`, from `--contextforge-venv`,
  a virtualenv of its own: never in mcpyard's) as a subprocess on a temporary SQLite database:
  the same server registered through its admin API (`POST /gateways`), the tool called
  through its JSON-RPC endpoint (`POST /rpc`, `tools/call`) with a JWT for its admin;
- `contextforge-mcp`: the same, the tool called through ContextForge's own MCP endpoint (`/mcp`,
  stateless with JSON answers as it ships), one session as for `org-mcp-*`.

For each concurrency c (default 1 and 16: c tasks taking calls from a common count),
`--rounds` rounds of `--calls` calls per side (ContextForge: `--contextforge-calls`), the
order of the sides rotating and reversing each round; while one side runs, the other sides'
services are stopped (SIGSTOP, then SIGCONT), so an idle service's own work (ContextForge
checks its gateways' health) takes nothing from the side being measured. Per side: calls/s (calls over the wall
time of its rounds), p50 and p90 latency, CPU per call of every process from /proc (this
process: the client, and for `host` the Host too; the service; the MCP server; PostgreSQL's
processes), and at the end the memory (RSS, and its peak) of each. Goals: every `org-*` side
at least 0.6x `host`'s calls/s, and at least 2x `contextforge`'s; every `org-mcp-*` side at
least 0.9x its `org-*` side's calls/s, and at least 2x `contextforge-mcp`'s.

`--profile SIDE` runs that side alone at the highest c while py-spy samples its service
process (or, `--profiler cprofile`, the service runs under cProfile: org sides only;
`cprofile-cpu` times it by the CPU clock, `bench/cpu_profile.py`).

ContextForge needs Python >= 3.12 (1.1.0); make its virtualenv once (or pass `--install-contextforge`):
`python3.12 -m venv .tools/contextforge-venv &&
.tools/contextforge-venv/bin/pip install mcp-contextforge-gateway==1.1.0 py-spy`

Run: `.venv/bin/python bench/org_api.py [--rounds 4] [--calls 400] [--c 1,16]
[--sides host,org,org-mcp,contextforge,contextforge-mcp]
[--databases sqlite,postgresql] [--contextforge-venv DIR] [--timeout 900]`.
"""

# Named org_api, never org: a script's folder comes first on sys.path, and `pickle` probes for a module `org`.
from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from _common import Home, load_line, median, percentile, print_table, stop_leftovers, temp_home
from _org_sides import (
    CONTEXTFORGE_VERSION,
    DEFAULT_CONTEXTFORGE_VENV,
    REPO,
    REQUEST_SECONDS,
    Bench,
    Proc,
    Side,
    contextforge_version,
    cprofile_path,
    install_contextforge,
    open_contextforge,
    open_host,
    open_org,
    peak_rss,
    proc_table,
    start_server,
    tree,
)
from gateway import PY_SPY_RATE, kill_survivors, main_thread_stacks, summarize_cprofile, summarize_stacks

SIDES = ("host", "org", "org-mcp", "contextforge", "contextforge-mcp")
DATABASES = ("sqlite", "postgresql")
GOAL_VS_HOST = 0.6
"""org-* calls/s over host calls/s, at least."""
GOAL_VS_CONTEXTFORGE = 2.0
"""org-* calls/s over contextforge calls/s, at least; and org-mcp-* over contextforge-mcp."""
GOAL_MCP_VS_API = 0.9
"""org-mcp-* calls/s (the member's MCP client on /mcp) over org-* (the same call through the API), at least."""


# ------------------------------------------------------------------ measuring


@dataclass
class Round:
    latencies: list[float]
    wall: float
    cpu: dict[str, float]
    """CPU seconds per process kind over the round: client, service, server, database."""


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

    def per_call(self, kind: str) -> float:
        return sum(r.cpu[kind] for r in self.rounds) / self.calls


KINDS = ("client", "service", "server", "database")


def _cpu(side: Side, bench: Bench) -> dict[str, float]:
    table = proc_table()
    groups = {"service": side.service, "server": [bench.server_pid], "database": side.database()}
    cpu = {kind: sum(table[pid].cpu for pid in tree(roots, table)) for kind, roots in groups.items()}
    cpu["client"] = time.process_time()
    return cpu


@contextlib.contextmanager
def others_paused(side: Side, sides: Sequence[Side]) -> Iterator[None]:
    """The other sides' services stopped (SIGSTOP) while `side` runs, then continued: an idle service still
    works (ContextForge checks its gateways' health, keeps metrics), and the CPU it takes is not `side`'s."""
    table = proc_table()
    paused = [pid for other in sides if other is not side for pid in tree(other.service, table)]
    for pid in paused:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in paused:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def run_round(side: Side, bench: Bench, concurrency: int, calls: int) -> Round:
    """`calls` calls by `concurrency` tasks; wall time, latencies, CPU of every process."""
    remaining = [calls]
    latencies: list[float] = []
    text = bench.args.text

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            start = time.perf_counter()
            await side.call(text)
            latencies.append(time.perf_counter() - start)

    before = _cpu(side, bench)
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    wall = time.perf_counter() - start
    after = _cpu(side, bench)
    return Round(latencies, wall, {kind: after[kind] - before[kind] for kind in KINDS})


def report(concurrency: int, stats: dict[str, Stats]) -> None:
    first = next(iter(stats.values()))
    print(f"\nc = {concurrency}: {len(first.rounds)} rounds per side (calls per round: ", end="")
    print(", ".join(f"{name} {len(s.rounds[0].latencies)}" for name, s in stats.items()) + ")", flush=True)
    rows = []
    for name, s in stats.items():
        lat = s.latencies
        cpu = [s.per_call(kind) * 1e3 for kind in KINDS]
        rows.append(
            [
                name,
                f"{s.throughput:.0f}" if s.throughput >= 100 else f"{s.throughput:.1f}",
                f"{median(lat) * 1e3:.2f}",
                f"{percentile(lat, 90) * 1e3:.2f}",
                *(f"{value:.3f}" for value in cpu),
                f"{sum(cpu):.3f}",
            ]
        )
    headers = ["side", "calls/s", "p50 ms", "p90 ms", "client", "service", "server", "database", "all CPU"]
    print_table(headers, rows)
    print("(CPU in ms per call of each process: client = this process, which holds the Host for `host`)")


def ratio_line(concurrency: int, stats: dict[str, Stats], top: str, bottom: str, goal: float | None) -> None:
    if top not in stats or bottom not in stats:
        return
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


def memory_report(bench: Bench, sides: Sequence[Side]) -> None:
    """RSS now and at its peak, per process kind (PostgreSQL: its processes added up, shared memory counted in each)."""
    table = proc_table()
    me = os.getpid()
    rows: list[tuple[str, str, int, int]] = [
        ("this process (client; the Host of `host`)", str(me), *_sizes([me], table, children=False))
    ]
    rows.append(("MCP server (bench/server.py --port)", str(bench.server_pid), *_sizes([bench.server_pid], table)))
    for side in sides:
        if side.service:
            rows.append((f"{side.name} service", ",".join(map(str, side.service)), *_sizes(side.service, table)))
        db = side.database()
        if db:
            rows.append((f"{side.name} PostgreSQL ({len(db)} processes)", str(db[0]), *_sizes(db, table)))
    print("\nmemory (MiB; a process tree's RSS added up):")
    print_table(
        ["process", "pid", "RSS", "peak RSS"], [[n, p, f"{r / 2**20:.0f}", f"{h / 2**20:.0f}"] for n, p, r, h in rows]
    )


def _sizes(roots: Sequence[int], table: dict[int, Proc], *, children: bool = True) -> tuple[int, int]:
    """RSS and peak RSS of `roots` (with their descendants, unless `children` is false: the bench's own process
    is the parent of every service it started)."""
    pids = tree(roots, table) if children else [pid for pid in roots if pid in table]
    return sum(table[pid].rss for pid in pids), sum(peak_rss(pid) for pid in pids)


async def measure(bench: Bench, sides: list[Side]) -> None:
    args = bench.args
    for side in sides:
        print(f"  {side.name}: {side.about}; service pid {side.service or '-'}", flush=True)
    for side in sides:  # warm-up, every concurrency
        for concurrency in args.concurrency:
            with others_paused(side, sides):
                await run_round(side, bench, concurrency, min(args.warmup, side.calls))
    results: dict[int, dict[str, Stats]] = {}
    for concurrency in args.concurrency:
        stats = {side.name: Stats() for side in sides}
        for index in range(args.rounds):
            shift = index % len(sides)
            order = sides[shift:] + sides[:shift]
            if index % 2:
                order = order[::-1]
            for side in order:
                with others_paused(side, sides):
                    stats[side.name].rounds.append(await run_round(side, bench, concurrency, side.calls))
        results[concurrency] = stats
        report(concurrency, stats)
    print("\nratios of calls/s (and of p50 latency, bottom/top):")
    orgs = [side.name for side in sides if side.name.startswith("org-") and not side.name.startswith("org-mcp-")]
    pairs: list[tuple[str, str, float | None]] = [(name, "host", GOAL_VS_HOST) for name in orgs]
    pairs += [(name, "contextforge", GOAL_VS_CONTEXTFORGE) for name in orgs]
    mcps = [side.name for side in sides if side.name.startswith("org-mcp-")]
    pairs += [(name, f"org-{name.removeprefix('org-mcp-')}", GOAL_MCP_VS_API) for name in mcps]
    pairs += [(name, "contextforge-mcp", GOAL_VS_CONTEXTFORGE) for name in mcps]
    pairs += [("org-postgresql", "org-sqlite", None), ("contextforge", "host", None)]
    for top, bottom, goal in pairs:
        for concurrency, stats in results.items():
            ratio_line(concurrency, stats, top, bottom, goal)
    memory_report(bench, sides)


# ------------------------------------------------------------------ profiling


def py_spy(args: argparse.Namespace) -> str:
    """py-spy from `--py-spy`, the bench virtualenvs, or PATH."""
    for candidate in (args.py_spy, REPO / ".tools" / "bench-venv" / "bin" / "py-spy"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    if (args.contextforge_venv / "bin" / "py-spy").exists():
        return str(args.contextforge_venv / "bin" / "py-spy")
    found = shutil.which("py-spy")
    if found is None:
        sys.exit("--profile needs py-spy: pass --py-spy PATH (or --profiler cprofile for an org side)")
    return found


async def profile(bench: Bench, side: Side) -> int:
    """Calls at the highest concurrency while the side's service is profiled; returns how many it answered."""
    args = bench.args
    concurrency = max(args.concurrency)
    await run_round(side, bench, concurrency, args.warmup)
    if args.profiler.startswith("cprofile"):
        start = time.perf_counter()
        await run_round(side, bench, concurrency, args.profile_calls)
        wall = time.perf_counter() - start
        print(f"\ncProfile of {side.name}: {args.profile_calls} calls at c={concurrency} in {wall:.1f} s")
        return int(args.profile_calls + args.warmup + 1)
    out = Path(args.profile_dir) / f"{side.name}.pyspy.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [
        py_spy(args), "record", "--pid", str(side.service[0]), "--rate", str(PY_SPY_RATE),
        "--duration", str(args.profile_seconds), "--format", "raw", "--threads", "--output", str(out),
    ]  # fmt: skip
    err = out.with_suffix(".log")
    with err.open("wb") as err_file:
        spy = await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_file)
    calls = 0
    before = _cpu(side, bench)
    start = time.perf_counter()
    try:
        with anyio.fail_after(args.profile_seconds + 30):
            await anyio.sleep(0.5)  # py-spy attaches
            while spy.returncode is None:
                await run_round(side, bench, concurrency, min(side.calls, 100))
                calls += min(side.calls, 100)
    finally:
        with anyio.move_on_after(30, shield=True):
            if spy.returncode is None:
                spy.send_signal(signal.SIGINT)
            await spy.wait()
    after = _cpu(side, bench)
    if spy.returncode != 0 or not out.exists():
        raise RuntimeError(f"py-spy failed ({spy.returncode}): {err.read_text(errors='replace')[-2000:]}")
    wall = time.perf_counter() - start
    print(
        f"\npy-spy of {side.name} (pid {side.service[0]}), {args.profile_seconds} s: {calls} calls at c={concurrency}"
        f" ({calls / wall:.0f}/s; service CPU {(after['service'] - before['service']) / calls * 1e3:.2f} ms per call)"
    )
    print(f"(collapsed stacks, every thread: {out})")
    main_thread = out.with_suffix(".main.txt")
    main_thread.write_text(main_thread_stacks(out))
    rate = args.profile_seconds * PY_SPY_RATE
    summarize_stacks(main_thread, args.profile_top, of=f"of {rate} possible: the main thread (the event loop) only")
    return calls


# ------------------------------------------------------------------ run


def side_names(args: argparse.Namespace) -> list[str]:
    names: list[str] = []
    for side in args.sides:
        names += [f"{side}-{db}" for db in args.databases] if side in ("org", "org-mcp") else [side]
    return names


async def open_side(bench: Bench, name: str) -> Side | None:
    """The side, checked with one call; None (and the reason kept) when it cannot be opened.

    Not under a cancel scope of its own: what it opens lives in the run's exit stack. Every
    step is bounded (processes' start-up waits, request timeouts) and the run by `--timeout`.
    """
    try:
        if name == "host":
            side = await open_host(bench)
        elif name in ("contextforge", "contextforge-mcp"):
            side = await open_contextforge(bench, "mcp" if name == "contextforge-mcp" else "rpc")
        elif name.startswith("org-mcp-"):
            side = await open_org(bench, name.removeprefix("org-mcp-"), "mcp")
        else:
            side = await open_org(bench, name.removeprefix("org-"))
        with anyio.fail_after(REQUEST_SECONDS):
            await side.call(bench.args.text)
        return side
    except Exception as exc:  # a side that cannot run is reported, and the others still run
        reason = f"{type(exc).__name__}: {exc}"
        for spawned in bench.spawned:
            if spawned.name == name and spawned.process.poll() is not None:
                reason += "\n    its log ends:\n    " + spawned.tail().replace("\n", "\n    ")
        bench.unavailable[name] = reason
        print(f"  {name}: NOT MEASURED: {reason}", flush=True)
        return None


@contextlib.asynccontextmanager
async def opened(args: argparse.Namespace, home: Home) -> AsyncIterator[tuple[Bench, list[Side]]]:
    async with contextlib.AsyncExitStack() as stack:
        bench = Bench(args, home, stack)
        await start_server(bench)
        names = [args.profile] if args.profile else side_names(args)
        sides = [side for side in [await open_side(bench, name) for name in names] if side is not None]
        try:
            yield bench, sides
        finally:
            for spawned in bench.spawned:
                bench.remember(spawned.process.pid)
    # Every client closed, every process stopped (LIFO: services, then the clusters, then the MCP server).
    survivors = kill_survivors(bench.seen)
    clusters_left = [c for c in bench.clusters if (c.data / "postmaster.pid").exists()]
    print(
        f"\nprocesses: {len(bench.seen)} started by this run, {survivors} still running at the end (killed),"
        f" {len(clusters_left)} PostgreSQL cluster(s) left"
    )
    for name, reason in bench.unavailable.items():
        print(f"not measured: {name}: {reason}")


async def run(args: argparse.Namespace, home: Home) -> None:
    calls = 0
    with anyio.fail_after(args.timeout):
        async with opened(args, home) as (bench, sides):
            if not sides:
                print("nothing to measure")
            elif args.profile:
                calls = await profile(bench, sides[0])
            else:
                await measure(bench, sides)
    if args.profile and args.profiler.startswith("cprofile") and calls:  # written when the service exited
        summarize_cprofile(cprofile_path(args, args.profile), calls, args.profile_top)


def versions(args: argparse.Namespace) -> str:
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], capture_output=True, text=True, check=False, cwd=REPO, timeout=30)
        return done.stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    wanted = {"contextforge", "contextforge-mcp"} & set(args.sides)
    cf = contextforge_version(args.contextforge_venv) if wanted else None
    return (
        f"mcp {importlib.metadata.version('mcp')}, mcpyard at {git('rev-parse', '--short', 'HEAD')}{dirty},"
        f" ContextForge {cf or '-'}"
    )


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds per side and concurrency")
    parser.add_argument("--calls", type=int, default=400, help="calls per side per round")
    parser.add_argument("--contextforge-calls", type=int, default=100, help="calls per round for ContextForge")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side and concurrency")
    parser.add_argument(
        "--c",
        "--concurrency",
        dest="concurrency",
        type=lambda t: [int(c) for c in _list(t)],
        default=[1, 16],
        help="concurrent callers, e.g. 1,16",
    )
    parser.add_argument("--sides", type=_list, default=list(SIDES), help=f"comma-separated, of {', '.join(SIDES)}")
    parser.add_argument("--databases", type=_list, default=list(DATABASES), help="the org service's, e.g. sqlite")
    parser.add_argument("--text", default="hello, world", help="the text `echo` sends")
    parser.add_argument(
        "--client",
        choices=("lean", "httpx"),
        default="lean",
        help="the HTTP client of the API sides: a bare keep-alive HTTP/1.1 client, or httpx2 (its cost counted in)",
    )
    parser.add_argument("--contextforge-venv", type=Path, default=DEFAULT_CONTEXTFORGE_VENV, help="its virtualenv")
    parser.add_argument("--contextforge-python", type=Path, help="the Python for --install-contextforge (>= 3.12)")
    parser.add_argument("--contextforge-version", default=CONTEXTFORGE_VERSION, help="for --install-contextforge")
    parser.add_argument(
        "--install-contextforge", action="store_true", help="make the ContextForge virtualenv if it has none"
    )
    parser.add_argument("--profile", help="py-spy one side's service (org-sqlite, org-postgresql, contextforge)")
    parser.add_argument(
        "--profiler",
        choices=("py-spy", "cprofile", "cprofile-cpu"),
        default="py-spy",
        help="with --profile (cprofile-cpu: timed by the CPU clock, bench/cpu_profile.py)",
    )
    parser.add_argument("--profile-seconds", type=int, default=10, help="how long py-spy samples")
    parser.add_argument("--profile-calls", type=int, default=3000, help="calls made under cProfile")
    parser.add_argument("--profile-top", type=int, default=25, help="functions listed")
    parser.add_argument("--profile-dir", default="/tmp/mcpyard-bench-profiles", help="where profiles go")
    parser.add_argument("--py-spy", type=Path, help="the py-spy binary for --profile")
    parser.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    args = parser.parse_args()
    if unknown := set(args.sides) - set(SIDES):
        parser.error(f"unknown sides {sorted(unknown)}; choose from {', '.join(SIDES)}")
    if unknown := set(args.databases) - set(DATABASES):
        parser.error(f"unknown databases {sorted(unknown)}; choose from {', '.join(DATABASES)}")
    profiled = {f"{face}-{db}" for face in ("org", "org-mcp") for db in DATABASES}
    profiled |= {"contextforge", "contextforge-mcp"}
    if args.profile and args.profile not in profiled:
        parser.error(f"--profile takes one of {', '.join(sorted(profiled))}")
    if args.profile in ("contextforge", "contextforge-mcp") and args.profiler == "cprofile":
        parser.error("--profiler cprofile is for the org sides; py-spy ContextForge instead")
    wants_contextforge = bool({"contextforge", "contextforge-mcp"} & {*args.sides, args.profile})
    if args.install_contextforge and wants_contextforge and contextforge_version(args.contextforge_venv) is None:
        install_contextforge(args)
    print(f"python {sys.version.split()[0]}, {load_line()}; {versions(args)}", flush=True)
    names = ", ".join([args.profile] if args.profile else side_names(args))
    print(f"sides: {names}; c = {args.concurrency}; API client: {args.client}")
    with temp_home() as home:
        try:
            anyio.run(run, args, home)
        finally:
            stop_leftovers()
    print(f"\nat the end: {load_line()}")


if __name__ == "__main__":
    main()
