"""Per-call cost of `Host.call` against a direct SDK `Client.call_tool`, same server, same run.

Both sides talk to their own copy of `bench/server.py` over stdio and are measured in
interleaved rounds (the order alternates each round), after a warm-up. Small calls
(`echo`, `noop`) show the pipeline's overhead in mode `auto`; `blob(size)` results of
1 MiB and 10 MiB show mcpyard's own stdio transport against the SDK's `stdio_client` for
large messages. mcpyard keeps at most 1 MiB of one result's text: a larger one is read
whole, then refused (`result_too_large`); that refusal is what the host side times there.

Run: `.venv/bin/python bench/call_overhead.py [--rounds 30] [--calls 50] [--pin] [--blob-sizes 1048576,10485760]`
"""

from __future__ import annotations

import argparse
from typing import Any

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

GOAL_SMALL = 1.05
SERVER_ID = "bench"
MAX_KEPT_BYTES = 1024 * 1024
"""mcpyard refuses a result whose text is larger (`result_too_large`), after reading it."""


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
            samples = await compare(
                sides, tool, arguments, expect=expect, rounds=args.rounds, calls=args.calls, warmup=args.warmup
            )
            title = f"{tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
            report(title, samples["host"], samples["direct"], goal=GOAL_SMALL)
        for size in args.blob_sizes:
            too_large = size > MAX_KEPT_BYTES
            sides = {"host": host_caller(host, SERVER_ID, too_large_ok=too_large), "direct": direct}
            samples = await compare(
                sides,
                "blob",
                {"size": size},
                expect=size,
                rounds=args.blob_rounds,
                calls=args.blob_calls,
                warmup=1,
            )
            note = "; mcpyard reads it, then refuses it: result_too_large" if too_large else ""
            report(f"blob(size={size}) = {size / 2**20:g} MiB{note}", samples["host"], samples["direct"], goal=None)


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per side (small calls)")
    parser.add_argument("--calls", type=int, default=50, help="calls per side per round (small calls)")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side before measuring")
    parser.add_argument("--text", default="hello, world", help="the text `echo` sends")
    parser.add_argument(
        "--blob-sizes", type=_sizes, default=[2**20, 10 * 2**20], help="blob result sizes in bytes, comma-separated"
    )
    parser.add_argument("--blob-rounds", type=int, default=3, help="interleaved rounds per side (blob calls)")
    parser.add_argument("--blob-calls", type=int, default=5, help="calls per side per round (blob calls)")
    parser.add_argument("--pin", action="store_true", help="pin this process to one CPU and the servers to the others")
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), "; both sides call bench/server.py over stdio")


if __name__ == "__main__":
    main()
