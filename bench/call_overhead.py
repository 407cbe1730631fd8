"""Per-call cost of `Host.call` against a direct SDK `Client.call_tool`, same server, same run.

Both sides talk to their own copy of `bench/server.py` over stdio and are measured in
interleaved rounds (the order alternates each round), after a warm-up. Small calls
(`echo`, `noop`) show the pipeline's overhead in mode `auto`, by one caller or, with
`--c N`, by N concurrent callers on the one host and the one SDK client (throughput and
p50). `blob(size)` results of 1 MiB and 10 MiB show large results: mcpyard reads the whole
result, gives the model its first 64 KiB with a cut mark and keeps the rest (up to 16 MiB)
by handle; the host side checks the handle and the mark on every call. A third side, `raw`,
is the floor for a large result: a child process writes the same JSON-RPC response bytes
to a pipe, which this process reads (`os.read`) and parses (`json.loads`), no MCP at all.

Run: `.venv/bin/python bench/call_overhead.py [--rounds 30] [--calls 50] [--c 1] [--pin]
[--blob-sizes 1048576,10485760]`
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

from _common import (
    PYTHON,
    Caller,
    Home,
    Samples,
    compare,
    host_caller,
    median,
    percentile,
    pin_processes,
    print_table,
    report,
    run_bench,
    sdk_caller,
    server_params,
    time_calls,
)
from mcpyard import Host

GOAL_SMALL = 1.05
GOAL_BLOB_DIRECT = {2**20: 1.3}
"""Host / SDK, by result size."""
GOAL_BLOB_RAW = {10 * 2**20: 2.5}
"""Host / (raw pipe read + json.loads), by result size."""
SERVER_ID = "bench"
MAX_RESULT_BYTES = 65_536
"""What the model reads of one result (the default `max_result_bytes`); a longer one is cut and stored."""

RAW_WRITER = """
import sys
data = open(sys.argv[1], "rb").read()
out = sys.stdout.buffer
for _ in sys.stdin.buffer:
    out.write(data)
    out.flush()
"""
"""The raw side's child: answers each line on its stdin with the same response bytes."""


# ------------------------------------------------------------------ the raw floor for large results


def response_line(size: int, request_id: int = 1) -> bytes:
    """The JSON-RPC response to `blob(size)` as the SDK's stdio server writes it: one line."""
    result = types.CallToolResult(content=[types.TextContent(type="text", text="x" * size)])
    message = types.JSONRPCResponse(
        jsonrpc="2.0", id=request_id, result=result.model_dump(by_alias=True, exclude_none=True, mode="json")
    )
    return message.model_dump_json(by_alias=True, exclude_none=True).encode() + b"\n"


@contextlib.contextmanager
def raw_caller(path: Path) -> Iterator[Caller]:
    """A caller reading the bytes of `path` from a child's pipe and parsing them, per call."""
    child = subprocess.Popen([PYTHON, "-c", RAW_WRITER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None
    send, receive = child.stdin.fileno(), child.stdout.fileno()

    async def call(tool: str, arguments: dict[str, Any]) -> int:
        # Blocking on purpose: nothing else runs meanwhile, and a thread hop is not part of the floor.
        os.write(send, b"go\n")
        chunks: list[bytes] = []
        while not chunks or not chunks[-1].endswith(b"\n"):
            chunk = os.read(receive, 1 << 20)
            if not chunk:
                raise RuntimeError("the raw writer exited")
            chunks.append(chunk)
        message = json.loads(b"".join(chunks))
        return sum(len(block.get("text", "")) for block in message["result"]["content"])

    try:
        yield call
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()


def report_blob(title: str, samples: Mapping[str, Samples], size: int) -> None:
    """Host, SDK and raw floor side by side; the ratios host/SDK and host/raw with their goals."""

    def fmt(seconds: float) -> str:
        return f"{seconds * 1e3:.3f}"

    labels = {"host": "mcpyard Host.call", "direct": "SDK Client.call_tool", "raw": "raw pipe read + json.loads"}
    print(f"\n{title}  ({len(samples['host'].rounds)} rounds x {len(samples['host'].rounds[0])} calls per side)")
    rows = [
        [labels[name], fmt(median(s.all)), fmt(percentile(s.all, 90)), fmt(min(s.all)), fmt(median(s.cpu))]
        for name, s in samples.items()
    ]
    print_table(["side", "p50 ms", "p90 ms", "min ms", "client CPU ms/call"], rows)
    host = samples["host"]
    for name, goals in (("direct", GOAL_BLOB_DIRECT), ("raw", GOAL_BLOB_RAW)):
        other = samples[name]
        ratio = median(host.all) / median(other.all)
        per_round = [median(h) / median(o) for h, o in zip(host.rounds, other.rounds, strict=True)]
        goal = goals.get(size)
        verdict = "" if goal is None else f"; goal <= {goal:.2f}: " + ("met" if ratio <= goal else "NOT MET")
        print(
            f"ratio of medians host/{name}: {ratio:.3f}"
            f" (per round: median {median(per_round):.3f}, {min(per_round):.3f}-{max(per_round):.3f}){verdict}",
            flush=True,
        )


# ------------------------------------------------------------------ concurrent callers


@dataclass
class Throughput:
    """One side's rounds with N callers: calls per second of each round, every call's wall time, CPU per call."""

    per_second: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


async def compare_concurrent(
    sides: Mapping[str, Caller],
    tool: str,
    arguments: dict[str, Any],
    *,
    expect: int,
    rounds: int,
    calls: int,
    callers: int,
    warmup: int,
) -> dict[str, Throughput]:
    """Like `compare`, but each round runs `callers` concurrent callers of `calls` calls each on one side."""
    for call in sides.values():
        await time_calls(call, tool, arguments, warmup, expect)
    results = {name: Throughput() for name in sides}
    names = list(sides)

    async def caller(call: Caller, times: list[list[float]]) -> None:
        mine, _ = await time_calls(call, tool, arguments, calls, expect)
        times.append(mine)

    for index in range(rounds):
        for name in names if index % 2 == 0 else names[::-1]:
            times: list[list[float]] = []
            cpu_start, start = time.process_time(), time.perf_counter()
            async with anyio.create_task_group() as group:
                for _ in range(callers):
                    group.start_soon(caller, sides[name], times)
            wall = time.perf_counter() - start
            total = callers * calls
            results[name].per_second.append(total / wall)
            results[name].times.extend(t for mine in times for t in mine)
            results[name].cpu.append((time.process_time() - cpu_start) / total)
    return results


def report_concurrent(title: str, host: Throughput, direct: Throughput, *, callers: int, calls: int) -> None:
    """Calls per second, p50/p90 and client CPU per call per side; the ratios host/direct of calls/s and p50."""
    print(f"\n{title}  ({len(host.per_second)} rounds x {callers} callers x {calls} calls per side)")
    rows = [
        [
            name,
            f"{median(s.per_second):.0f}",
            f"{median(s.times) * 1e3:.3f}",
            f"{percentile(s.times, 90) * 1e3:.3f}",
            f"{median(s.cpu) * 1e3:.3f}",
        ]
        for name, s in (("mcpyard Host.call", host), ("SDK Client.call_tool", direct))
    ]
    print_table(["side", "calls/s", "p50 ms", "p90 ms", "client CPU ms/call"], rows)
    per_round = [h / d for h, d in zip(host.per_second, direct.per_second, strict=True)]
    print(
        f"ratio of calls/s host/direct: {median(host.per_second) / median(direct.per_second):.3f}"
        f" (per round: {min(per_round):.3f}-{max(per_round):.3f});"
        f" ratio of p50s host/direct: {median(host.times) / median(direct.times):.3f}",
        flush=True,
    )


# ------------------------------------------------------------------ the run


async def run(args: argparse.Namespace, home: Home) -> None:
    config = home.write_config([SERVER_ID])
    async with (
        Host.open(
            workspace=home.workspace,
            mode="auto",  # no approval step: the call path itself is measured
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
        if args.pin:
            print(pin_processes(), flush=True)

        direct = sdk_caller(client)
        small: list[tuple[str, dict[str, Any], int]] = [
            ("echo", {"text": args.text}, len(args.text)),
            ("noop", {}, 0),
        ]
        for tool, arguments, expect in small:
            # echo is read-only but not idempotent, noop not read-only: neither is ever cached.
            sides: dict[str, Caller] = {"host": host_caller(host, SERVER_ID), "direct": direct}
            title = f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
            if args.c > 1:
                concurrent = await compare_concurrent(
                    sides,
                    tool,
                    arguments,
                    expect=expect,
                    rounds=args.rounds,
                    calls=args.calls,
                    callers=args.c,
                    warmup=args.warmup,
                )
                report_concurrent(
                    f"{title}, {args.c} concurrent callers",
                    concurrent["host"],
                    concurrent["direct"],
                    callers=args.c,
                    calls=args.calls,
                )
                continue
            samples = await compare(
                sides, tool, arguments, expect=expect, rounds=args.rounds, calls=args.calls, warmup=args.warmup
            )
            report(title, samples["host"], samples["direct"], goal=GOAL_SMALL)
        for size in args.blob_sizes:
            cut = size > MAX_RESULT_BYTES
            response = home.root / f"response-{size}.jsonl"
            response.write_bytes(response_line(size))
            with raw_caller(response) as raw:
                sides = {"host": host_caller(host, SERVER_ID, cut=cut), "direct": direct, "raw": raw}
                samples = await compare(
                    sides,
                    "blob",
                    {"size": size},
                    expect=size,
                    rounds=args.blob_rounds,
                    calls=args.blob_calls,
                    warmup=1,
                )
            note = "; mcpyard gives the first 64 KiB, cut, and stores it" if cut else ""
            report_blob(f"blob(size={size}) = {size / 2**20:g} MiB{note}", samples, size)


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per side (small calls)")
    parser.add_argument("--calls", type=int, default=50, help="calls per side per round (per caller with --c)")
    parser.add_argument("--c", type=int, default=1, help="concurrent callers per side (small calls)")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side before measuring")
    parser.add_argument("--text", default="hello, world", help="the text `echo` sends")
    parser.add_argument(
        "--blob-sizes", type=_sizes, default=[2**20, 10 * 2**20], help="blob result sizes in bytes, comma-separated"
    )
    parser.add_argument("--blob-rounds", type=int, default=3, help="interleaved rounds per side (blob calls)")
    parser.add_argument("--blob-calls", type=int, default=5, help="calls per side per round (blob calls)")
    parser.add_argument("--pin", action="store_true", help="pin this process to one CPU and the servers to the others")
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    args = parser.parse_args()
    if args.c < 1:
        parser.error("--c must be at least 1")
    run_bench(run, args, "; both sides call bench/server.py over stdio")


if __name__ == "__main__":
    main()
