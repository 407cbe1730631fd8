"""Time to connect N stdio servers: `Host.open` against N concurrent SDK clients, same run.

mcpyard side: `Host.open` over a config of N copies of `bench/server.py`, timed until the
block is entered (every server connected and its tools listed), checked with `status()`.
SDK side: an anyio task group enters N `Client(StdioServerParameters(...))` at once and
calls `list_tools()` on each, timed until the last listing arrives. The sides run one
after the other (never both at once), alternating which goes first each round; an
unmeasured N=1 warm-up of each side comes first. Every server is stopped before the
next measurement and the script checks that no server process is left behind.

Run: `.venv/bin/python bench/connect.py [--sizes 1,10,50] [--rounds 3]`
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client

from _common import Home, live_descendants, median, print_table, run_bench, server_params
from mcpyard import Host

GOAL = 1.1
TOOLS_PER_SERVER = 5
"""echo, noop, blob, peek, lookup: the tools of bench/server.py."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One side's connection of N servers."""

    connect_secs: float
    stop_secs: float
    rss_gib: float
    """Resident memory of the processes below this one once connected (servers; mcpyard's reaper and keepers)."""
    idle_cpu: float
    """CPU this process used while connected and idle, as a share of one core (0.05 = 5 %)."""


def _servers_rss_gib() -> float:
    total_kib = 0
    for pid in live_descendants():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kib += int(line.split()[1])
    return total_kib / 2**20


async def _idle_cpu(seconds: float) -> float:
    """The share of one core this process uses while nothing is asked of it for `seconds`."""
    if seconds <= 0:
        return 0.0
    cpu_start, start = time.process_time(), time.perf_counter()
    await anyio.sleep(seconds)
    return (time.process_time() - cpu_start) / (time.perf_counter() - start)


def _check_stopped(side: str) -> None:
    if left := live_descendants():
        raise RuntimeError(f"{side}: {len(left)} server process(es) still running after stop: {left}")


async def host_side(home: Home, count: int, connect_timeout: float, idle_secs: float) -> Attempt:
    config = home.write_config([f"s{i}" for i in range(count)], connect_timeout_secs=connect_timeout)
    start = time.perf_counter()
    async with Host.open(
        workspace=home.workspace,
        config_file=config,
        environ=home.environ,
        config_home=home.config_home,
        data_home=home.data_home,
    ) as host:
        connected = time.perf_counter()
        servers = host.status().servers
        bad = [s for s in servers if s.state != "connected" or len(s.tools) != TOOLS_PER_SERVER]
        if len(servers) != count or bad:
            raise RuntimeError(f"host: {len(bad)} of {count} servers not connected: {bad[0].state}: {bad[0].reason}")
        rss = _servers_rss_gib()
        idle = await _idle_cpu(idle_secs)
        leaving = time.perf_counter()
    stopped = time.perf_counter()
    _check_stopped("host")
    return Attempt(connected - start, stopped - leaving, rss, idle)


async def direct_side(home: Home, count: int, connect_timeout: float, idle_secs: float) -> Attempt:
    params = server_params(home)
    listed = 0
    all_listed = anyio.Event()
    release = anyio.Event()

    async def one() -> None:
        nonlocal listed
        async with Client(params) as client:
            tools = await client.list_tools()
            if len(tools.tools) != TOOLS_PER_SERVER:
                raise RuntimeError(f"direct: listed {len(tools.tools)} tools")
            listed += 1
            if listed == count:
                all_listed.set()
            await release.wait()

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
        with anyio.fail_after(connect_timeout):
            await all_listed.wait()
        connected = time.perf_counter()
        rss = _servers_rss_gib()
        idle = await _idle_cpu(idle_secs)
        leaving = time.perf_counter()
        release.set()
    stopped = time.perf_counter()
    _check_stopped("direct")
    return Attempt(connected - start, stopped - leaving, rss, idle)


Side = Callable[[Home, int, float, float], Awaitable[Attempt]]


async def run(args: argparse.Namespace, home: Home) -> None:
    sides: dict[str, Side] = {"host": host_side, "direct": direct_side}
    bound = args.connect_timeout + 30
    for side in sides.values():  # warm-up: disk caches, first imports
        with anyio.fail_after(bound):
            await side(home, 1, args.connect_timeout, 0.0)
    rows: list[list[str]] = []
    names = list(sides)
    for count in args.sizes:
        results: dict[str, list[Attempt]] = {name: [] for name in names}
        for index in range(args.rounds):
            for name in names if index % 2 == 0 else names[::-1]:
                with anyio.fail_after(bound):
                    results[name].append(await sides[name](home, count, args.connect_timeout, args.idle_secs))
        host = median([a.connect_secs for a in results["host"]])
        direct = median([a.connect_secs for a in results["direct"]])
        ratio = host / direct
        rows.append(
            [
                str(count),
                f"{host:.3f}",
                f"{direct:.3f}",
                f"{ratio:.3f}",
                "met" if ratio <= GOAL else "NOT MET",
                f"{median([a.stop_secs for a in results['host']]):.2f}",
                f"{median([a.stop_secs for a in results['direct']]):.2f}",
                f"{median([a.idle_cpu for a in results['host']]) * 100:.1f}",
                f"{median([a.idle_cpu for a in results['direct']]) * 100:.1f}",
                f"{max(a.rss_gib for a in results['host']):.2f}",
            ]
        )
        print(f"N={count}: host {host:.3f} s, direct {direct:.3f} s, ratio {ratio:.3f}", flush=True)
    print(f"\nconnect N stdio servers, median of {args.rounds} round(s) per side; goal host/direct <= {GOAL}")
    print(
        f"stop: time to leave the block (all servers stopped); idle CPU: this process over {args.idle_secs:g} s "
        "while connected and idle, % of one core; RSS: the host's child processes once connected"
    )
    print_table(
        [
            "N",
            "host s",
            "direct s",
            "ratio",
            "goal",
            "host stop s",
            "direct stop s",
            "host idle CPU %",
            "direct idle CPU %",
            "children RSS GiB",
        ],
        rows,
    )


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=_sizes, default=[1, 10, 50], help="server counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per side and size")
    parser.add_argument(
        "--connect-timeout", type=float, default=120.0, help="connect timeout per server (both sides), seconds"
    )
    parser.add_argument(
        "--idle-secs", type=float, default=1.0, help="measure this process's CPU while idle and connected (0: skip)"
    )
    parser.add_argument("--timeout", type=float, default=480.0, help="give up on the whole run after this long")
    run_bench(run, parser.parse_args(), "")


if __name__ == "__main__":
    main()
