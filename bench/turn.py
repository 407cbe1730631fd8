"""The agent loop's own cost per tool call: `run_turn` with a scripted model against `Host.call`, same host, same run.

A turn here is what a model that answers at once costs the loop: the scripted model asks for
`--calls-per-turn` calls of `peek(key)` together (read-only, never cached; mode `ask`, so no
card), the loop runs them through the host's pipeline (concurrently), hands the results back,
and the model answers. The other side makes the same calls with `Host.call` directly (as many
at once, in a task group). Both sides use the one host and its one server process, in
interleaved rounds after a warm-up (see bench/README.md), so what differs is the loop alone:
its events, messages, name mapping, tool formats and two model requests per turn.

Goal: the loop adds <= 1 ms p50 per tool call (MOD-2).

Run: `.venv/bin/python bench/turn.py [--rounds 30] [--calls 50] [--calls-per-turn 1] [--pin]`
"""

from __future__ import annotations

import argparse

import anyio

from _common import Caller, Home, compare, median, pin_processes, report, run_bench
from mcpyard import CallResult, Host
from mcpyard.agent import run_turn
from mcpyard.model import Message, Reply, ScriptedModel, ToolCall

GOAL_MS = 1.0
SERVER_ID = "bench"
KEY = "k000000000"


def _length(result: CallResult, tool: str) -> int:
    if not result.ok or result.cached:
        raise RuntimeError(f"{tool}: expected a result from the server, got {result.error or 'a cached one'}")
    return sum(len(str(block.get("text", ""))) for block in result.content if block.get("type") == "text")


def turn_caller(host: Host, together: int) -> Caller:
    """One turn whose model asks for `together` calls at once, then answers; the length of the first result."""

    async def call(tool: str, arguments: dict[str, object]) -> int:
        name = f"{SERVER_ID}__{tool}"
        calls = tuple(ToolCall(f"call_{index}", name, arguments) for index in range(together))
        model = ScriptedModel([Reply("", calls), Reply("done")])
        turn = await run_turn(host, model, [Message.user("go")])
        if turn.status != "done" or len(turn.results) != together:
            raise RuntimeError(f"the turn ended {turn.status} with {len(turn.results)} results")
        lengths = {_length(result, name) for _, result in turn.results}
        return lengths.pop() if len(lengths) == 1 else -1

    return call


def host_caller(host: Host, together: int) -> Caller:
    """`together` calls of `Host.call` at once; the length of the first result."""

    async def call(tool: str, arguments: dict[str, object]) -> int:
        name = f"{SERVER_ID}__{tool}"
        results: list[CallResult] = []

        async def one() -> None:
            results.append(await host.call(name, arguments))

        async with anyio.create_task_group() as tg:
            for _ in range(together):
                tg.start_soon(one)
        lengths = {_length(result, name) for result in results}
        return lengths.pop() if len(lengths) == 1 else -1

    return call


async def run(args: argparse.Namespace, home: Home) -> None:
    config = home.write_config([SERVER_ID])
    async with Host.open(
        workspace=home.workspace,
        mode="ask",  # peek is read-only: it runs without a card; anything else would fail (no approver)
        config_file=config,
        environ=home.environ,
        config_home=home.config_home,
        data_home=home.data_home,
    ) as host:
        if args.pin:
            print(pin_processes(), flush=True)
        together = args.calls_per_turn
        sides = {"turn": turn_caller(host, together), "host": host_caller(host, together)}
        samples = await compare(
            sides,
            "peek",
            {"key": KEY},
            expect=len(f"value of {KEY}"),
            rounds=args.rounds,
            calls=args.calls,
            warmup=args.warmup,
        )
        ratio = report(
            f"one turn asking for {together} peek call(s) together, against as many Host.call at once",
            samples["turn"],
            samples["host"],
            goal=None,
            labels=("run_turn (scripted model)", "Host.call"),
        )

        added = (median(samples["turn"].all) - median(samples["host"].all)) / together * 1e3
        cpu = (median(samples["turn"].cpu) - median(samples["host"].cpu)) / together * 1e3
        verdict = "met" if added <= GOAL_MS else "NOT MET"
        print(
            f"the loop adds {added:.3f} ms p50 per tool call ({cpu:.3f} ms client CPU), ratio {ratio:.3f};"
            f" goal <= {GOAL_MS:g} ms: {verdict}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="interleaved rounds per side")
    parser.add_argument("--calls", type=int, default=50, help="turns (or groups of calls) per side per round")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up turns per side before measuring")
    parser.add_argument("--calls-per-turn", type=int, default=1, help="tool calls the model asks for together")
    parser.add_argument("--pin", action="store_true", help="pin this process to one CPU and the server to the others")
    parser.add_argument("--timeout", type=float, default=280.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), "; the scripted model answers at once; bench/server.py over stdio")


if __name__ == "__main__":
    main()
