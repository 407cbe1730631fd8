"""Where the time of one `Host.call` goes: layer by layer, stage by stage, and under cProfile.

A diagnostic, not a benchmark with a goal: it reaches into mcpyard's internals (the
host's supervisor and runner), so it may need updating when they change. Three views of
one small read-only call (`peek(key)`, host in mode `ask`):

1. **Layers**, interleaved in short blocks (the order rotates every block), each layer adding
   one thing to the one before: the SDK `Client` over the SDK's `stdio_client`; the SDK
   `Client` over mcpyard's `StdioTransport`; the host's own `Client` (as the supervisor
   configured it); the same with a progress callback; `Supervisor.call`;
   `CallRunner.run` (the pipeline); `Host.call`. The last five share the host's server
   process. Reported: median wall and client CPU per call, and the median over blocks of
   the difference to the layer before (paired, so drift cancels).
2. **Stages**, in process and without I/O, on the host's real catalog entry and a real
   result of the server: what each pipeline step costs on its own (µs per call, median
   of batches).
3. **cProfile** of `--profile-calls` `Host.call`s: the functions of mcpyard with the most
   own time and cumulative time, in µs per call (cProfile inflates small functions; read
   it as a ranking, and the first two views for the amounts).

Run: `.venv/bin/python bench/profile_pipeline.py [--blocks 60] [--block 30] [--profile-calls 2000] [--extra-servers 0]`
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import itertools
import pstats
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
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
from mcpyard import Host
from mcpyard.catalog import CatalogEntry
from mcpyard.connect import StdioTransport, Supervisor
from mcpyard.pipeline import ShapeContext, cache_key, fence, resolve, shape_result, validate_arguments
from mcpyard.policy import CallFacts, Rules, decide

SERVER_ID = "bench"
TOOL = "peek"
NAME = f"{SERVER_ID}__{TOOL}"
ARGS: dict[str, Any] = {"key": "k000000000"}
SRC = str(Path(str(mcpyard.__file__)).resolve().parent)

Call = Callable[[], Awaitable[object]]


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    """A progress callback that does nothing (the supervisor always passes one)."""


def _layers(host: Host, sdk: Client, plain: Client) -> dict[str, Call]:
    supervisor: Supervisor = host._supervisors[SERVER_ID]
    client = supervisor._client
    if client is None:
        raise RuntimeError("the host's supervisor has no client")
    timeout = supervisor.spec.call_timeout_secs
    runner = host._runner

    async def runner_run() -> object:
        result = await runner.run(NAME, ARGS)
        if not result.ok or result.cached:
            raise RuntimeError(f"CallRunner.run: {result.error}")
        return result

    async def host_call() -> object:
        result = await host.call(NAME, ARGS)
        if not result.ok or result.cached:
            raise RuntimeError(f"Host.call: {result.error}")
        return result

    return {
        "SDK Client over SDK stdio_client": lambda: sdk.call_tool(TOOL, ARGS),
        "SDK Client over mcpyard StdioTransport": lambda: plain.call_tool(TOOL, ARGS),
        "host's Client (Supervisor._client)": lambda: client.call_tool(TOOL, dict(ARGS)),
        "  + progress_callback": lambda: client.call_tool(TOOL, dict(ARGS), progress_callback=_no_progress),
        "Supervisor.call": lambda: supervisor.call(TOOL, ARGS, timeout_secs=timeout),
        "CallRunner.run (pipeline)": runner_run,
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


def _per_call_us(fn: Callable[[], object], count: int, batches: int = 7) -> float:
    """Median over batches of the mean µs per call of `fn`."""
    results = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(count):
            fn()
        results.append((time.perf_counter_ns() - start) / count / 1000)
    return median(results)


async def _per_call_us_async(fn: Callable[[], Awaitable[object]], count: int, batches: int = 7) -> float:
    results = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(count):
            await fn()
        results.append((time.perf_counter_ns() - start) / count / 1000)
    return median(results)


async def measure_stages(host: Host, count: int) -> None:
    entry: CatalogEntry | None = host.catalog.get(NAME)
    supervisor = host._supervisors[SERVER_ID]
    if entry is None:
        raise RuntimeError(f"{NAME} is not in the catalog")
    runner = host._runner
    session = host.session
    settings = runner._settings()
    spec = supervisor.spec
    result: types.CallToolResult = await supervisor.call(TOOL, ARGS, timeout_secs=None)
    keys = (f"k{n:09d}" for n in itertools.count())

    def facts_and_decide() -> object:
        facts = CallFacts(
            name=entry.name,
            read_only=entry.read_only,
            destructive=entry.destructive,
            trust_annotations=spec.trust_annotations,
            sends_files=False,
        )
        return decide(facts, session.mode, Rules(settings.allow, settings.deny), session.session_allows)

    def context() -> ShapeContext:
        return ShapeContext(
            conversation=session.id, marker=session.marker, max_bytes=settings.max_result_bytes, store=session.store
        )

    cache = type(session.cache)()  # a cache of its own, so the host's stays as it was

    def miss_and_put() -> None:
        key = cache_key(entry.server, entry.tool, {"key": next(keys)}, {})
        if cache.get(key) is None:
            cache.put(key, entry.server, result)

    stages: list[tuple[str, str, Callable[[], object]]] = [
        ("resolve", "pipeline/_stages.py resolve", lambda: resolve(runner._catalog(), NAME)),
        (
            "validate (valid arguments)",
            "pipeline/_stages.py validate_arguments",
            lambda: validate_arguments(entry, ARGS),
        ),
        ("CallFacts + Rules + decide", "policy/_decide.py decide", facts_and_decide),
        ("settings lookup", "_host.py settings", runner._settings),
        ("cache key (canonical_json)", "pipeline/_cache.py cache_key", lambda: cache_key(SERVER_ID, TOOL, ARGS, {})),
        ("cache miss + put (new key)", "pipeline/_cache.py get, put", miss_and_put),
        ("forget_server (not read-only calls)", "pipeline/_cache.py forget_server", lambda: cache.forget_server("x")),
        ("ShapeContext", "pipeline/_shape.py ShapeContext", context),
        ("shape_result, total", "pipeline/_shape.py shape_result", lambda: shape_result(entry, result, context())),
        (
            "  of which model_dump of the blocks",
            "pipeline/_shape.py shape_result",
            lambda: [b.model_dump(by_alias=True, exclude_none=True, mode="json") for b in result.content],
        ),
        (
            "  of which fence",
            "pipeline/_shape.py fence",
            lambda: fence("value of k000000000", server=SERVER_ID, marker=session.marker),
        ),
    ]
    rows = [[label, where, f"{_per_call_us(fn, count):.2f}"] for label, where, fn in stages]

    async def read_files() -> object:
        return await runner._read_files(entry, spec, dict(ARGS), [], settings.grants)

    rows.insert(4, ["_read_files (no file)", "pipeline/_run.py CallRunner._read_files", ""])
    rows[4][2] = f"{await _per_call_us_async(read_files, count):.2f}"

    async def cached_call() -> object:
        return await host.call(f"{SERVER_ID}__lookup", ARGS)

    await cached_call()
    rows.append(["Host.call answered from the cache", "the whole path but dispatch", ""])
    rows[-1][2] = f"{await _per_call_us_async(cached_call, count):.2f}"
    print(f"\n2. stages in process, no I/O (us per call, median of 7 batches of {count})")
    print_table(["stage", "where (src/mcpyard/...)", "us/call"], rows)


async def measure_in_place(host: Host, calls: int, *, miss: bool) -> None:
    """`CallRunner.run` with each step it takes timed where it runs (names patched for the duration).

    `miss`: call `lookup` (idempotent) with a new key every time, a real cache miss; else `peek`.
    """
    import mcpyard.pipeline._run as run_module  # the pipeline's own module, to patch its names

    runner = host._runner
    supervisor = host._supervisors[SERVER_ID]
    spent: dict[str, int] = {}

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0) + time.perf_counter_ns() - start

        return wrapper

    def timed_async(label: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return await fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0) + time.perf_counter_ns() - start

        return wrapper

    module_names = {
        "resolve": "pipeline/_stages.py resolve",
        "validate_arguments": "pipeline/_stages.py validate_arguments",
        "CallFacts": "policy CallFacts(...)",
        "Rules": "policy Rules(...)",
        "decide": "policy/_decide.py decide",
        "cache_key": "pipeline/_cache.py cache_key",
        "ShapeContext": "pipeline/_shape.py ShapeContext(...)",
        "shape_result": "pipeline/_shape.py shape_result",
    }
    runner_names = {  # the runner's own attributes and methods, where this version has them
        "_catalog": "_host.py catalog lookup",
        "_settings": "_host.py settings lookup",
        "_server": "_host.py supervisor lookup",
        "_pinned": "pipeline/_run.py CallRunner._pinned (pins)",
        "_read_files": "pipeline/_run.py CallRunner._read_files",
        "_hooks": "pipeline/_run.py CallRunner._hooks (pre_call hooks)",
    }
    module_names = {name: label for name, label in module_names.items() if hasattr(run_module, name)}
    runner_names = {name: label for name, label in runner_names.items() if hasattr(runner, name)}
    originals = {name: getattr(run_module, name) for name in module_names}
    own = {name: vars(runner)[name] for name in runner_names if name in vars(runner)}  # put back afterwards
    cache = host.session.cache
    cache_names = {"get": "pipeline/_cache.py IdempotentCache.get", "put": "pipeline/_cache.py IdempotentCache.put"}
    tool = "lookup" if miss else TOOL
    keys = (f"k{n:09d}" for n in itertools.count(10**8))
    per_call: dict[str, list[int]] = {}
    try:
        for name, label in cache_names.items():
            setattr(cache, name, timed(label, getattr(cache, name)))
        for name, label in module_names.items():
            setattr(run_module, name, timed(label, originals[name]))
        for name, label in runner_names.items():
            fn = getattr(runner, name)
            setattr(runner, name, (timed_async if inspect.iscoroutinefunction(fn) else timed)(label, fn))
        supervisor.call = timed_async("dispatch: connect/_supervisor.py Supervisor.call", supervisor.call)  # type: ignore[method-assign,assignment]
        for index in range(calls + 50):
            spent.clear()
            start = time.perf_counter_ns()
            result = await runner.run(f"{SERVER_ID}__{tool}", {"key": next(keys)} if miss else ARGS)
            total = time.perf_counter_ns() - start
            if not result.ok or result.cached:
                raise RuntimeError(f"CallRunner.run: {result.error or 'answered from the cache'}")
            if index < 50:  # warm-up
                continue
            spent["rest of CallRunner.run / _run (by difference)"] = total - sum(spent.values())
            spent["CallRunner.run, total"] = total
            for label, ns in spent.items():
                per_call.setdefault(label, []).append(ns)
    finally:
        for name, fn in originals.items():
            setattr(run_module, name, fn)
        for name in runner_names:
            if name in own:
                setattr(runner, name, own[name])
            else:
                vars(runner).pop(name, None)  # back to the class's method
        vars(supervisor).pop("call", None)
        for name in cache_names:
            vars(cache).pop(name, None)
    rows = [[label, f"{median(values) / 1000:.2f}"] for label, values in per_call.items()]
    spent.clear()
    probe = timed("probe", lambda: None)
    wrapper_us = _per_call_us(probe, 2000) - _per_call_us(lambda: None, 2000)
    timed_steps = len(per_call) - 3  # less dispatch, rest and total
    rows.append([f"(the {timed_steps} timing wrappers, in the rest: ~{wrapper_us:.2f} us each)", ""])
    what = "lookup(<new key>): a cache miss" if miss else f"{TOOL}(): never cached"
    print(f"\n2a. each step of CallRunner.run timed where it runs, {what}, {calls} calls (us per call, median)")
    print_table(["step", "us/call"], rows)


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
        await measure_stages(host, args.stage_calls)
        if args.profile_calls:
            await profile_calls(host, args.profile_calls, args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=60, help="blocks per layer (the order rotates each block)")
    parser.add_argument("--block", type=int, default=30, help="calls per layer per block")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per layer")
    parser.add_argument("--in-place-calls", type=int, default=2000, help="CallRunner.run calls timed step by step")
    parser.add_argument("--stage-calls", type=int, default=2000, help="calls per batch when timing a stage")
    parser.add_argument("--profile-calls", type=int, default=2000, help="Host.calls under cProfile (0: skip)")
    parser.add_argument("--top", type=int, default=15, help="functions listed per cProfile ranking")
    parser.add_argument(
        "--extra-servers", type=int, default=0, help="more copies of the server the host connects but never calls"
    )
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), f"; mcpyard from {SRC}")


if __name__ == "__main__":
    main()
