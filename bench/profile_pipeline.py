"""Where the time of one `Host.call` goes: layer by layer, stage by stage, and under cProfile.

A diagnostic, not a benchmark with a goal, built on the pipeline's public seams (the host's
view and session, `pipeline.STAGES`). Three views of one small read-only call (`peek(key)`,
host in mode `ask`):

1. **Layers**, interleaved in short blocks (the order rotates every block), each layer adding
   one thing to the one before: the SDK `Client` over the SDK's `stdio_client`; the SDK
   `Client` over mcpyard's `StdioTransport`; the server's connection in the host
   (`Supervisor.call`, what the dispatch stage calls); `pipeline.run` on the host's view and
   session; `Host.call`. The last three share the host's server process. Reported: median
   wall and client CPU per call, and the median over blocks of the difference to the layer
   before (paired, so drift cancels).
2. **Stages**: every stage of `pipeline.STAGES` timed where it runs, one call after another
   (`peek`, never cached; `lookup` with a new key, a real cache miss).
3. **cProfile** of `--profile-calls` `Host.call`s: the functions of mcpyard with the most
   own time and cumulative time, in µs per call (cProfile inflates small functions; read
   it as a ranking, and the first two views for the amounts).

Run: `.venv/bin/python bench/profile_pipeline.py [--blocks 60] [--block 30] [--profile-calls 2000] [--extra-servers 0]`
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client

import mcpyard
from _common import (
    PYTHON,
    SERVER_SCRIPT,
    Home,
    median,
    print_table,
    run_bench,
    server_params,
)
from mcpyard import Host, pipeline
from mcpyard.connect import StdioTransport
from mcpyard.pipeline import STAGES, CallRequest, Refusal
from mcpyard.pipeline import Call as PipelineCall

SERVER_ID = "bench"
TOOL = "peek"
NAME = f"{SERVER_ID}__{TOOL}"
ARGS: dict[str, Any] = {"key": "k000000000"}
SRC = str(Path(str(mcpyard.__file__)).resolve().parent)

Call = Callable[[], Awaitable[object]]


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    """A progress callback that does nothing (the supervisor always passes one)."""


def _layers(host: Host, sdk: Client, plain: Client) -> dict[str, Call]:
    view, session = host.view, host.session
    connection = view.connections[SERVER_ID]
    timeout = view.specs[SERVER_ID].call_timeout_secs

    async def pipeline_run() -> object:
        result = await pipeline.run(host.view, session, CallRequest(NAME, ARGS, session.id))
        if not result.ok or result.cached:
            raise RuntimeError(f"pipeline.run: {result.error}")
        return result

    async def host_call() -> object:
        result = await host.call(NAME, ARGS)
        if not result.ok or result.cached:
            raise RuntimeError(f"Host.call: {result.error}")
        return result

    return {
        "SDK Client over SDK stdio_client": lambda: sdk.call_tool(TOOL, ARGS),
        "SDK Client over mcpyard StdioTransport": lambda: plain.call_tool(TOOL, ARGS),
        "the server's connection (Supervisor.call)": lambda: connection.call(TOOL, ARGS, timeout_secs=timeout),
        "pipeline.run": pipeline_run,
        "Host.call": host_call,
    }


async def measure_layers(layers: dict[str, Call], blocks: int, block: int, warmup: int) -> None:
    """`blocks` blocks of `block` calls per layer, the order rotating each block; a block's first call is dropped.

    Calls go in blocks, not one by one: a call right after a call to another server process
    pays that process's wake-up, which would be charged to whichever layer comes first.
    """
    names = list(layers)
    for name in names:
        for _ in range(warmup):
            await layers[name]()
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for index in range(blocks):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            await layers[name]()  # the switch to this layer's server
            times: list[float] = []
            cpu_start = time.process_time()
            for _ in range(block):
                start = time.perf_counter()
                await layers[name]()
                times.append(time.perf_counter() - start)
            wall[name].append(median(times))
            cpu[name].append((time.process_time() - cpu_start) / block)
    rows = []
    for position, name in enumerate(names):
        step_wall = step_cpu = ""
        if position:
            before = names[position - 1]
            step_wall = f"{median([a - b for a, b in zip(wall[name], wall[before], strict=True)]) * 1e6:+.1f}"
            step_cpu = f"{median([a - b for a, b in zip(cpu[name], cpu[before], strict=True)]) * 1e6:+.1f}"
        rows.append([name, f"{median(wall[name]) * 1e6:.0f}", step_wall, f"{median(cpu[name]) * 1e6:.0f}", step_cpu])
    print(f"\n1. layers: {blocks} blocks of {block} calls per layer, order rotating (us per call)")
    print("   wall: median of block medians; CPU: this process per call; step: median over blocks of the difference")
    print_table(["layer", "wall p50", "step wall", "client CPU", "step CPU"], rows)
    ratio = median([h / d for h, d in zip(wall[names[-1]], wall[names[0]], strict=True)])
    extra_cpu = median([h - d for h, d in zip(cpu[names[-1]], cpu[names[0]], strict=True)]) * 1e6
    print(f"{names[-1]} / {names[0]}: {ratio:.3f} wall (median over blocks); {extra_cpu:+.0f} us client CPU per call")


async def measure_in_place(host: Host, calls: int, *, miss: bool) -> None:
    """Every stage of a call timed where it runs: the pipeline's own loop, with a clock around each stage.

    `miss`: call `lookup` (idempotent) with a new key every time, a real cache miss; else `peek`.
    """
    tool = "lookup" if miss else TOOL
    keys = (f"k{n:09d}" for n in itertools.count(10**8))
    session = host.session
    per_stage: dict[str, list[int]] = {}
    for index in range(calls + 50):
        view = host.view
        request = CallRequest(f"{SERVER_ID}__{tool}", {"key": next(keys)} if miss else ARGS, session.id)
        call = PipelineCall(request, started=time.time())
        spent: dict[str, int] = {}
        begin = time.perf_counter_ns()
        for stage in STAGES:
            start = time.perf_counter_ns()
            outcome = await stage(view, session, call)
            spent[stage.__name__] = time.perf_counter_ns() - start
            if isinstance(outcome, Refusal):
                raise RuntimeError(f"{stage.__name__} refused {request.name}: {outcome.message}")  # noqa: TRY004
        result = call.result
        if result is None or not result.ok or result.cached:
            raise RuntimeError(f"{request.name}: {result.error if result else 'no result'}")
        spent["all stages"] = time.perf_counter_ns() - begin
        spent["all stages but dispatch"] = spent["all stages"] - spent["dispatch"]
        if index >= 50:  # warm-up
            for label, ns in spent.items():
                per_stage.setdefault(label, []).append(ns)
    rows = [[label, f"{median(values) / 1000:.2f}"] for label, values in per_stage.items()]
    what = "lookup(<new key>): a cache miss" if miss else f"{TOOL}(): never cached"
    print(f"\n2. each stage timed where it runs, {what}, {calls} calls (us per call, median)")
    print_table(["stage", "us/call"], rows)


async def profile_calls(host: Host, calls: int, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        await host.call(NAME, ARGS)
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries: list[tuple[str, float, float, int]] = []
    for (file, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if file.startswith(SRC):
            where = f"{Path(file).relative_to(SRC)}:{line} {func}"
            entries.append((where, tottime, cumtime, ncalls))
    print(f"\n3. cProfile of {calls} Host.call({NAME}): mcpyard functions (us per Host.call, inflated by cProfile)")
    for title, index in (("by own time", 1), ("by cumulative time", 2)):
        ranked = sorted(entries, key=lambda e: e[index], reverse=True)[:top]
        rows = [[w, f"{t / calls * 1e6:.1f}", f"{c / calls * 1e6:.1f}", f"{n / calls:g}"] for w, t, c, n in ranked]
        print(f"\n{title}")
        print_table(["function", "own us", "cumulative us", "calls per call"], rows)


async def run(args: argparse.Namespace, home: Home) -> None:
    config = home.write_config([SERVER_ID, *(f"idle{index}" for index in range(args.extra_servers))])
    transport = StdioTransport(
        PYTHON, (str(SERVER_SCRIPT),), env=home.environ, cwd=str(home.workspace), shutdown_timeout=5.0
    )
    async with (
        Host.open(
            workspace=home.workspace,
            mode="ask",
            config_file=config,
            environ=home.environ,
            config_home=home.config_home,
            data_home=home.data_home,
        ) as host,
        Client(server_params(home)) as sdk,
        Client(transport) as plain,
    ):
        await sdk.list_tools()
        await plain.list_tools()
        servers = host.status().servers
        if bad := [server for server in servers if server.state != "connected"]:
            raise RuntimeError(f"the host did not connect {bad[0].id}: {bad[0].state}: {bad[0].reason}")
        print(f"the host has {len(servers)} server(s) and {len(host.catalog)} tools; only {SERVER_ID} is called")
        await measure_layers(_layers(host, sdk, plain), args.blocks, args.block, args.warmup)
        await measure_in_place(host, args.in_place_calls, miss=False)
        await measure_in_place(host, args.in_place_calls, miss=True)
        if args.profile_calls:
            await profile_calls(host, args.profile_calls, args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=60, help="blocks per layer (the order rotates each block)")
    parser.add_argument("--block", type=int, default=30, help="calls per layer per block")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per layer")
    parser.add_argument("--in-place-calls", type=int, default=2000, help="calls timed stage by stage")
    parser.add_argument("--profile-calls", type=int, default=2000, help="Host.calls under cProfile (0: skip)")
    parser.add_argument("--top", type=int, default=15, help="functions listed per cProfile ranking")
    parser.add_argument(
        "--extra-servers", type=int, default=0, help="more copies of the server the host connects but never calls"
    )
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), f"; mcpyard from {SRC}")


if __name__ == "__main__":
    main()
