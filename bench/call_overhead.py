"""Per-call cost of `Host.call` against a direct SDK `Client.call_tool`, same server, same run.

Both sides talk to their own copy of `bench/server.py` over stdio and are measured in
interleaved rounds (the order alternates each round), after a warm-up. Small calls
(`echo`, `noop`) show the pipeline's overhead; `blob(size)` results of 1 MiB and 10 MiB
show mcpyard's own stdio transport against the SDK's `stdio_client` for large messages.

Run: `.venv/bin/python bench/call_overhead.py [--rounds 5] [--calls 300] [--blob-sizes 1048576,10485760]`
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from _common import Home, median, percentile, print_table, server_params, stop_leftovers, temp_home
from mcp import Client

from mcpyard import Host

GOAL_SMALL = 1.05
SERVER_ID = "bench"

Caller = Callable[[str, dict[str, Any]], Awaitable[int]]
"""Calls one tool and returns the length of its text (checked against the expectation)."""


@dataclass
class Samples:
    """Per-call seconds of one side, per round."""

    rounds: list[list[float]] = field(default_factory=list)

    @property
    def all(self) -> list[float]:
        return [s for r in self.rounds for s in r]


async def _time_calls(call: Caller, tool: str, arguments: dict[str, Any], count: int, expect: int) -> list[float]:
    times: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        length = await call(tool, arguments)
        times.append(time.perf_counter() - start)
        if length != expect:
            raise RuntimeError(f"{tool} returned {length} characters, expected {expect}")
    return times


async def _compare(
    sides: dict[str, Caller],
    tool: str,
    arguments: dict[str, Any],
    *,
    expect: int,
    rounds: int,
    calls: int,
    warmup: int,
) -> dict[str, Samples]:
    """Warm up both sides, then run `rounds` rounds of `calls` calls, alternating which side goes first."""
    for call in sides.values():
        await _time_calls(call, tool, arguments, warmup, expect)
    samples = {name: Samples() for name in sides}
    names = list(sides)
    for index in range(rounds):
        order = names if index % 2 == 0 else names[::-1]
        for name in order:
            samples[name].rounds.append(await _time_calls(sides[name], tool, arguments, calls, expect))
    return samples


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def _report(title: str, host: Samples, direct: Samples, goal: float | None) -> float:
    ratio = median(host.all) / median(direct.all)
    per_round = [median(h) / median(d) for h, d in zip(host.rounds, direct.rounds, strict=True)]
    print(f"\n{title}  ({len(host.rounds)} rounds x {len(host.rounds[0])} calls per side)")
    rows = [
        [name, _ms(median(s.all)), _ms(percentile(s.all, 90)), _ms(min(s.all))]
        for name, s in (("mcpyard Host.call", host), ("SDK Client.call_tool", direct))
    ]
    print_table(["side", "p50 ms", "p90 ms", "min ms"], rows)
    verdict = "" if goal is None else (f"  goal <= {goal:.2f}: " + ("met" if ratio <= goal else "NOT MET"))
    print(
        f"ratio of medians host/direct: {ratio:.3f}"
        f"  (per round {min(per_round):.3f}-{max(per_round):.3f});"
        f" overhead {(median(host.all) - median(direct.all)) * 1e6:+.0f} us/call{verdict}"
    )
    return ratio


async def run(args: argparse.Namespace, home: Home) -> None:
    config = home.write_config([SERVER_ID])
    async with (
        Host.open(
            workspace=home.workspace,
            config_file=config,
            environ=home.environ,
            config_home=home.config_home,
            data_home=home.data_home,
        ) as host,
        Client(server_params(home)) as client,
    ):
        [server] = host.status().servers
        if server.state != "connected":
            raise RuntimeError(f"the host did not connect the bench server: {server.state}: {server.reason}")
        # A new-era client calls tools it has listed (the host listed its own at connect).
        await client.list_tools()

        async def via_host(tool: str, arguments: dict[str, Any]) -> int:
            result = await host.call(f"{SERVER_ID}__{tool}", arguments)
            if not result.ok:
                raise RuntimeError(f"Host.call failed: {result.error}")
            return len(result.text)

        async def via_sdk(tool: str, arguments: dict[str, Any]) -> int:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise RuntimeError(f"call_tool failed: {result.content}")
            return sum(len(getattr(block, "text", "")) for block in result.content)

        sides: dict[str, Caller] = {"host": via_host, "direct": via_sdk}
        small: list[tuple[str, dict[str, Any], int]] = [
            ("echo", {"text": args.text}, len(args.text)),
            ("noop", {}, 0),
        ]
        for tool, arguments, expect in small:
            samples = await _compare(
                sides, tool, arguments, expect=expect, rounds=args.rounds, calls=args.calls, warmup=args.warmup
            )
            title = f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
            _report(title, samples["host"], samples["direct"], GOAL_SMALL)
        for size in args.blob_sizes:
            samples = await _compare(
                sides,
                "blob",
                {"size": size},
                expect=size,
                rounds=args.blob_rounds,
                calls=args.blob_calls,
                warmup=1,
            )
            _report(f"blob(size={size}) = {size / 2**20:g} MiB", samples["host"], samples["direct"], None)


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per side (small calls)")
    parser.add_argument("--calls", type=int, default=300, help="calls per side per round (small calls)")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side before measuring")
    parser.add_argument("--text", default="hello, world", help="the text `echo` sends")
    parser.add_argument(
        "--blob-sizes", type=_sizes, default=[2**20, 10 * 2**20], help="blob result sizes in bytes, comma-separated"
    )
    parser.add_argument("--blob-rounds", type=int, default=3, help="interleaved rounds per side (blob calls)")
    parser.add_argument("--blob-calls", type=int, default=5, help="calls per side per round (blob calls)")
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
        "both sides call bench/server.py over stdio"
    )
    with temp_home() as home:
        try:
            anyio.run(_bounded, args, home)
        finally:
            stop_leftovers()


async def _bounded(args: argparse.Namespace, home: Home) -> None:
    with anyio.fail_after(args.timeout):
        await run(args, home)


if __name__ == "__main__":
    main()
