"""Trace headers on HTTP requests: the host session on every request, a fresh W3C trace per tool call (CALL-3)."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from mcpyard.ops import tracing

__all__ = [
    "SESSION_HEADER",
    "TRACE_HEADER",
    "TRACE_HEADERS",
    "current_traceparent",
    "new_traceparent",
    "split_trace_headers",
    "tool_call_trace",
]

SESSION_HEADER = "Mcpyard-Session-Id"
TRACE_HEADER = "traceparent"
TRACE_HEADERS = frozenset({SESSION_HEADER.lower(), TRACE_HEADER})

_TRACEPARENT: ContextVar[str | None] = ContextVar("mcpyard_traceparent", default=None)


def new_traceparent() -> str:
    """`00-<32 hex trace id>-<16 hex parent id>-01`, both random."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


@contextmanager
def tool_call_trace() -> Iterator[str]:
    """Every request made inside this block (the call, its progress, its cancellation) carries one fresh trace.

    The SDK hands the caller's context to the task that sends each message, so the
    variable set here reaches the HTTP client's request hook. With tracing on (OBS-1) the trace is the
    current span's (the call's), so the server's spans join it; else a fresh random one.
    """
    value = tracing.current_traceparent() if tracing.active() else None
    value = value or new_traceparent()
    token = _TRACEPARENT.set(value)
    try:
        yield value
    finally:
        _TRACEPARENT.reset(token)


def current_traceparent() -> str | None:
    return _TRACEPARENT.get()


def split_trace_headers(headers: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """Configured headers to send, and the names not sent because mcpyard sets them itself (any case)."""
    sent: list[tuple[str, str]] = []
    not_sent: list[str] = []
    for name, value in headers:
        if name.lower() in TRACE_HEADERS:
            not_sent.append(name)
        else:
            sent.append((name, value))
    return sent, not_sent
