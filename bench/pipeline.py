"""The full call pipeline against a direct SDK `Client.call_tool`, same server, same run.

The host runs in mode `ask` with no approver, so a call that needed a card would fail the
run: only read-only tools are called, which `ask` runs without asking. Every figure is
measured in interleaved rounds (the order alternates each round) after a warm-up, both
sides talking to their own copy of `bench/server.py` over stdio. Three figures:

- **pipeline, never cached**: `peek(key)`, read-only and not idempotent, same key every
  call: resolve, validate, decide, (no files), the cache skipped (nothing to look up for a
  tool that is not idempotent), dispatch, shape (64 KiB cap, fence). Goal <= 1.05.
- **pipeline, cache miss**: `lookup(key)`, read-only and idempotent, a new key every call:
  the same stages plus a real miss: the cache key is computed, looked up and missed, and
  the result is put in the cache (64 entries, least recently used out).
- **cache hit**: `lookup(key)` with the same key every call: mcpyard answers from its cache
  without contacting the server (p50/p90 in microseconds); the SDK side calls the server.

With `--extra-servers N` the host also connects N more copies of the server that are never
called: a larger catalog, to show whether a call's cost depends on it (it should not).

Run: `.venv/bin/python bench/pipeline.py [--rounds 30] [--calls 50] [--pin] [--extra-servers 0]`
"""

from __future__ import annotations

import argparse
import itertools

from mcp import Client

from _common import (
    Caller,
    Home,
    compare,
    host_caller,
    pin_processes,
    report,
    run_bench,
    sdk_caller,
    server_params,
)
from mcpyard import Host

GOAL = 1.05
SERVER_ID = "bench"
KEY = "k000000000"
"""Every key has this length, so every `peek`/`lookup` result has the same length."""


def _value_length(key: str) -> int:
    return len(f"value of {key}")  # what bench/server.py returns for peek(key) and lookup(key)


def _check_catalog(host: Host) -> None:
    """The host sees the annotations this benchmark relies on."""
    peek = host.catalog.get(f"{SERVER_ID}__peek")
    lookup = host.catalog.get(f"{SERVER_ID}__lookup")
    if host.mode != "ask":
        raise RuntimeError(f"the host runs in mode {host.mode!r}, not 'ask'")
    if peek is None or not peek.read_only or peek.idempotent:
        raise RuntimeError("bench__peek should be listed as read-only and not idempotent")
    if lookup is None or not lookup.read_only or not lookup.idempotent:
        raise RuntimeError("bench__lookup should be listed as read-only and idempotent")


async def run(args: argparse.Namespace, home: Home) -> None:
    idle = [f"idle{index}" for index in range(args.extra_servers)]
    config = home.write_config([SERVER_ID, *idle])
    async with (
        Host.open(
            workspace=home.workspace,
            mode="ask",  # read-only tools run without a card; anything else would fail (no approver)
            config_file=config,
            environ=home.environ,
            config_home=home.config_home,
            data_home=home.data_home,
        ) as host,
        Client(server_params(home)) as client,
    ):
        servers = host.status().servers
        if bad := [server for server in servers if server.state != "connected"]:
            raise RuntimeError(f"the host did not connect {bad[0].id}: {bad[0].state}: {bad[0].reason}")
        if idle:
            print(f"the host has {len(servers)} servers and {len(host.catalog)} tools; only {SERVER_ID} is called")
        _check_catalog(host)
        if args.pin:
            print(pin_processes(), flush=True)
        await client.list_tools()  # a new-era client calls tools it has listed
        direct = sdk_caller(client)
        expect = _value_length(KEY)
        rounds = {"rounds": args.rounds, "calls": args.calls, "warmup": args.warmup}

        sides: dict[str, Caller] = {"host": host_caller(host, SERVER_ID, cached=False), "direct": direct}
        samples = await compare(sides, "peek", {"key": KEY}, expect=expect, **rounds)
        report(
            f"(a) pipeline, never cached: peek(key={KEY!r}), read-only, not idempotent",
            samples["host"],
            samples["direct"],
            goal=GOAL,
        )

        counter = itertools.count(1)

        def fresh() -> dict[str, str]:
            return {"key": f"k{next(counter):09d}"}

        samples = await compare(sides, "lookup", fresh, expect=expect, **rounds)
        report(
            "(a') pipeline, cache miss: lookup(key=<new key every call>), read-only, idempotent",
            samples["host"],
            samples["direct"],
            goal=GOAL,
        )

        first = await host.call(f"{SERVER_ID}__lookup", {"key": KEY})  # fills the cache
        if not first.ok or first.cached:
            raise RuntimeError(f"the first lookup should have reached the server: {first}")
        sides = {"host": host_caller(host, SERVER_ID, cached=True), "direct": direct}
        samples = await compare(sides, "lookup", {"key": KEY}, expect=expect, **rounds)
        report(
            f"(b) cache hit: lookup(key={KEY!r}) again; the SDK side calls the server",
            samples["host"],
            samples["direct"],
            goal=None,
            unit="us",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per side")
    parser.add_argument("--calls", type=int, default=50, help="calls per side per round")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side before measuring")
    parser.add_argument(
        "--extra-servers", type=int, default=0, help="more copies of the server the host connects but never calls"
    )
    parser.add_argument("--pin", action="store_true", help="pin this process to one CPU and the servers to the others")
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), "; both sides call bench/server.py over stdio")


if __name__ == "__main__":
    main()
