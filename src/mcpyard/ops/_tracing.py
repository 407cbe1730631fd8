"""OpenTelemetry traces (OBS-1): a span per call and per turn, when a tracer provider is installed; nothing otherwise.

mcpyard uses only the OpenTelemetry API. A program that embeds `Host` installs its own tracer
provider and mcpyard's spans join its traces; `mcpyard serve` and `mcpyard org serve` install the
SDK's from the standard `OTEL_*` variables (`configure_from_environment`), when the optional
`otel` extra is installed. With no provider, `active()` is False and no span is made at all.

A span carries the server, the tool, the decision, the outcome, the error code and the call's
record id: never an argument's value or a result.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, SpanKind, StatusCode

if TYPE_CHECKING:
    from opentelemetry.trace import Span
    from starlette.types import ASGIApp, Receive, Scope, Send

    from mcpyard.ops._facts import CallFacts

__all__ = [
    "IncomingTrace",
    "active",
    "annotate_call",
    "attached",
    "configure_from_environment",
    "current_traceparent",
    "span",
]

_tracer = trace.get_tracer("mcpyard")
_EXPORTERS = ("otlp", "console", "none")
_INSTALL = "pip install 'mcpyard[otel]'"


RECHECK_SECS = 1.0
"""How long "no provider" is believed before OpenTelemetry is asked again (asking reads the environment)."""


class _Provider:
    installed = False
    """Seen installed: OpenTelemetry sets its global provider once and never takes it back."""
    recheck_at = 0.0
    """When (`time.monotonic`) to ask again whether one is installed."""


def active() -> bool:
    """Whether a tracer provider is installed (spans are made and exported); asked several times per call, so cheap.

    A provider a program installs after mcpyard last asked is seen within `RECHECK_SECS` (install it before opening
    a host to have every call traced); one `configure_from_environment` installs is seen at once.
    """
    if _Provider.installed:
        return True
    now = time.monotonic()
    if now < _Provider.recheck_at:
        return False
    _Provider.recheck_at = now + RECHECK_SECS
    _Provider.installed = not isinstance(trace.get_tracer_provider(), (ProxyTracerProvider, NoOpTracerProvider))
    return _Provider.installed


@contextmanager
def span(
    name: str, attributes: Mapping[str, Any] | None = None, *, kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[Span]:
    """A span around the block, current inside it (its children and the trace headers sent upstream name it)."""
    with _tracer.start_as_current_span(name, kind=kind, attributes=dict(attributes or {})) as made:
        yield made


def annotate_call(record: CallFacts) -> None:
    """Put what the call's record says (never its arguments or result) on the current span."""
    current = trace.get_current_span()
    if not current.is_recording():
        return
    attributes: dict[str, Any] = {"mcpyard.outcome": record.status, "gen_ai.tool.name": record.tool}
    if record.server is not None:
        attributes["mcpyard.server"] = record.server
    if record.server_tool is not None:
        attributes["mcpyard.server_tool"] = record.server_tool
    if record.decision is not None:
        attributes["mcpyard.decision"] = record.decision
    if record.answer is not None:
        attributes["mcpyard.answer"] = record.answer
    if record.error_code is not None:
        attributes["error.type"] = record.error_code
    if (call_id := record.tags.get("call_id")) is not None:
        attributes["mcpyard.call_id"] = call_id
    for key, value in record.tags.items():
        attributes[f"mcpyard.tag.{key}"] = value
    current.set_attributes(attributes)
    if record.status in ("failed", "refused"):
        current.set_status(StatusCode.ERROR, record.error_code or record.status)


def current_traceparent() -> str | None:
    """The W3C `traceparent` of the current span, when one is being recorded."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


@contextmanager
def attached(headers: Mapping[str, str] | None) -> Iterator[None]:
    """The trace context an incoming request carries (`traceparent`, `tracestate`) is current inside the block.

    Nothing is read or attached when tracing is off, or when the request carries no valid context.
    """
    if not headers or not active() or "traceparent" not in headers:
        yield
        return
    extracted = propagate.extract({k: v for k, v in headers.items() if k in ("traceparent", "tracestate")})
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        yield
        return
    token = otel_context.attach(extracted)
    try:
        yield
    finally:
        otel_context.detach(token)


def configure_from_environment(service: str, environ: Mapping[str, str]) -> str | None:
    """Install the OpenTelemetry SDK's tracer provider when the `OTEL_*` variables ask for traces.

    Traces are asked for by `OTEL_TRACES_EXPORTER` (`otlp`, `console`; `none` turns them off) or an
    OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); the SDK reads
    the rest of the variables itself (headers, batching, sampling, resource attributes). Returns a
    line for the operator when they cannot be honoured (the extra is not installed, an exporter is
    unknown), else None. `console` writes to standard error: standard output may be a protocol stream.
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not names and endpoint:
        names = ["otlp"]
    if not names or names == ["none"]:
        return None
    unknown = [n for n in names if n not in _EXPORTERS]
    if unknown:
        return f"OTEL_TRACES_EXPORTER names {', '.join(unknown)}: mcpyard sends traces with otlp or console only"
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
    except ImportError:
        return (
            "OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed: pip install 'mcpyard[otel]'"
        )
    exporters: list[SpanExporter] = []
    for name in names:
        if name == "console":
            exporters.append(ConsoleSpanExporter(out=sys.stderr))
        elif name == "otlp":
            protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            if protocol not in (None, "", "http/protobuf"):
                return f"OTEL_EXPORTER_OTLP_PROTOCOL {protocol!r}: mcpyard sends traces with http/protobuf only"
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                return f"OTEL_* variables ask for OTLP traces, but its exporter is not installed: {_INSTALL}"
            exporters.append(OTLPSpanExporter())
    given = {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service}
    provider = TracerProvider(resource=Resource.create(given))
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _Provider.recheck_at = 0.0  # seen at the next call
    return None


class IncomingTrace:
    """ASGI middleware: with tracing on, a request's `traceparent` (and `tracestate`) is the current trace while it
    is served, so the spans it causes (an API call, a turn it starts) join the caller's trace."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not active():
            await self._app(scope, receive, send)
            return
        carried = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers") or ()
            if name in (b"traceparent", b"tracestate")
        }
        with attached(carried):
            await self._app(scope, receive, send)
