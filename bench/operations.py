"""What metrics, JSON logs and tracing cost a call: `Host.call` with each turned on, against the same host bare.

Phase A (no tracer provider installed: what every host runs with unless `OTEL_*` is set): four sides
in interleaved rounds, each its own host and server process: a bare host (nothing configured), a
host whose calls are also counted by `MetricsRecorder` (what `mcpyard serve --transport http` and
`mcpyard org serve` do), a host that also writes a JSON log line per call (to /dev/null), and the
direct SDK call as the baseline. Phase B installs the OpenTelemetry SDK's tracer provider (a batch
processor whose exporter drops the spans: the export itself runs on the SDK's own thread) and measures
the host with metrics and tracing against the direct call again. Two bare hosts in phase A give the
noise: the spread between two identical sides.

Run: `.venv/bin/python bench/operations.py [--rounds 20] [--calls 50]`
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

from mcp import Client

from _common import Caller, Home, compare, host_caller, median, report, run_bench, sdk_caller, server_params
from mcpyard import Host
from mcpyard.ops import CallLogRecorder, JsonFormatter, MetricsRecorder
from mcpyard.pipeline import CallRecorder, Recorders

SERVER_ID = "bench"
KEY = "k000000000"


@contextlib.asynccontextmanager
async def _host(home: Home, config: Any, recorders: list[CallRecorder]) -> AsyncIterator[Host]:
    async with Host.open(
        workspace=home.workspace,
        mode="ask",
        config_file=config,
        environ=home.environ,
        config_home=home.config_home,
        data_home=home.data_home,
        recorder=Recorders(recorders) if recorders else None,
    ) as host:
        yield host


def _json_log_to_nowhere() -> None:
    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115  # lives as long as the run
    handler.setFormatter(JsonFormatter())
    calls = logging.getLogger("mcpyard.calls")
    calls.addHandler(handler)
    calls.setLevel(logging.INFO)
    calls.propagate = False


def _install_tracing() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            del spans
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)


async def run(args: argparse.Namespace, home: Home) -> None:
    config = home.write_config([SERVER_ID])
    rounds = {"rounds": args.rounds, "calls": args.calls, "warmup": args.warmup}
    expect = len(f"value of {KEY}")
    _json_log_to_nowhere()
    async with (
        _host(home, config, []) as bare,
        _host(home, config, []) as bare_again,
        _host(home, config, [MetricsRecorder()]) as metered,
        _host(home, config, [MetricsRecorder(), CallLogRecorder(who=lambda r: r.conversation)]) as logged,
        Client(server_params(home)) as client,
    ):
        await client.list_tools()
        direct = sdk_caller(client)
        sides: dict[str, Caller] = {
            "bare": host_caller(bare, SERVER_ID),
            "bare again": host_caller(bare_again, SERVER_ID),
            "metrics": host_caller(metered, SERVER_ID),
            "metrics + json log": host_caller(logged, SERVER_ID),
            "direct": direct,
        }
        a = await compare(sides, "peek", {"key": KEY}, expect=expect, **rounds)
        for name in ("bare", "bare again", "metrics", "metrics + json log"):
            report(f"(A) {name}: peek(key), mode ask", a[name], a["direct"], goal=None)

        _install_tracing()
        sides = {"bare": host_caller(bare, SERVER_ID), "traced": host_caller(metered, SERVER_ID), "direct": direct}
        b = await compare(sides, "peek", {"key": KEY}, expect=expect, **rounds)
        for name in ("bare", "traced"):
            report(f"(B) tracer provider installed, {name}: peek(key)", b[name], b["direct"], goal=None)

    def cost(side: str, base: str, samples: dict[str, Any]) -> str:
        wall = (median(samples[side].all) - median(samples[base].all)) * 1e6
        cpu = (median(samples[side].cpu) - median(samples[base].cpu)) * 1e6
        return f"{wall:+5.0f} us wall, {cpu:+4.0f} us CPU"

    def against_direct(side: str, samples: dict[str, Any]) -> float:
        return median(samples[side].all) / median(samples["direct"].all)

    print("\nsummary, p50 against the bare host of the same phase, per call:")
    print(f"  noise (bare again - bare):              {cost('bare again', 'bare', a)}")
    print(f"  metrics:                                {cost('metrics', 'bare', a)}")
    print(f"  metrics + a JSON log line:              {cost('metrics + json log', 'bare', a)}")
    print(
        "  ratio to the direct call: bare (no tracer) "
        f"{against_direct('bare', a):.3f}, metrics + a span per call {against_direct('traced', b):.3f}"
    )
    print("\nin isolation, CPU per call (10,000 records):")
    for line in _isolated():
        print(f"  {line}")


def _isolated() -> list[str]:
    """The operations' own CPU per call, without a call around it: the counters, a log line, a span."""
    import time

    from mcpyard.ops import tracing
    from mcpyard.pipeline import CallRecord

    record = CallRecord(
        started_at=time.time(), conversation="c", server=SERVER_ID, tool=f"{SERVER_ID}__peek", server_tool="peek",
        arguments={}, files=(), decision="run", why="", answer=None, status="ran", error_code=None,
        duration_ms=1.0, result_bytes=10, summary="", tags={"call_id": "x"},
    )  # fmt: skip
    metrics, log = MetricsRecorder("bench"), CallLogRecorder(org="bench")
    lines = []

    def each(what: str, step: Any, count: int = 10_000) -> None:
        start = time.process_time()
        for _ in range(count):
            step()
        lines.append(f"{what}: {(time.process_time() - start) / count * 1e6:.1f} us")

    each("tracing.active() (asked once per call)", tracing.active)
    each("metrics (a counter, a histogram)", lambda: metrics.observe(record))
    each("a JSON log line", lambda: _drain(log.record(record)))

    def span() -> None:
        with tracing.span("execute_tool bench__peek"):
            tracing.annotate_call(record)

    each("a span with its attributes (tracer provider installed)", span)
    return lines


def _drain(coroutine: Any) -> None:
    """Run a coroutine that never awaits anything to its end."""
    try:
        coroutine.send(None)
    except StopIteration:
        return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds per side")
    parser.add_argument("--calls", type=int, default=50, help="calls per side per round")
    parser.add_argument("--warmup", type=int, default=100, help="warm-up calls per side before measuring")
    parser.add_argument("--timeout", type=float, default=400.0, help="give up after this many seconds")
    run_bench(run, parser.parse_args(), "; every side calls bench/server.py over stdio")


if __name__ == "__main__":
    main()
