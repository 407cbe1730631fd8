"""Prometheus metrics for the faces that run as services (OBS-1): calls, latency, errors, servers, turns, waiting work.

Every call's record passes through `MetricsRecorder`, which counts it by server, tool and outcome and
times it. Label values are bounded: a tool name no server offers counts as `unknown`, and past
`MAX_SERIES` distinct server/tool pairs (or `MAX_CODES` error codes) new ones count as `other`, so a
client that calls random names cannot grow the scrape without end. Arguments and results never
become labels.

With `PROMETHEUS_MULTIPROC_DIR` set (before the process starts), prometheus-client keeps the values
in files there and `exposition()` sums every process that shares the folder (workers, replicas on
one machine).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from mcpyard.ops._facts import CallFacts

__all__ = [
    "APPROVALS_WAITING",
    "CONTENT_TYPE",
    "MAX_CODES",
    "MAX_SERIES",
    "QUESTIONS_WAITING",
    "REGISTRY",
    "SERVERS",
    "MetricsRecorder",
    "count_delivery",
    "count_fast_call",
    "count_turn",
    "exposition",
    "set_servers",
    "set_waiting",
]

CONTENT_TYPE = CONTENT_TYPE_LATEST
MAX_SERIES = 2000
"""Distinct server and tool pairs a host's calls are counted under; more count as `other`."""
MAX_CODES = 200
"""Distinct error codes kept apart; more count as `other`."""
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

REGISTRY = CollectorRegistry(auto_describe=True)
"""mcpyard's own registry (an embedding program's default registry stays its own)."""

CALLS = Counter(
    "mcpyard_calls",
    "Tool calls by organization (empty outside the organization service), server, tool and outcome "
    "(ran, failed, refused, cached).",
    ["org", "server", "tool", "outcome"],
    registry=REGISTRY,
)
CALL_SECONDS = Histogram(
    "mcpyard_call_duration_seconds",
    "How long tool calls took, from the request to the result, by organization, server and tool.",
    ["org", "server", "tool"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
CALL_ERRORS = Counter(
    "mcpyard_call_errors",
    "Calls that did not succeed, by organization and error code (refused or failed).",
    ["org", "code"],
    registry=REGISTRY,
)
SERVERS = Gauge(
    "mcpyard_servers",
    "Configured MCP servers by organization and state (connected, failed, …).",
    ["org", "state"],
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
APPROVALS_WAITING = Gauge(
    "mcpyard_approvals_waiting",
    "Calls waiting in an inbox for a person's approval, by organization.",
    ["org"],
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
QUESTIONS_WAITING = Gauge(
    "mcpyard_questions_waiting",
    "Servers' questions waiting in an inbox for an answer, by organization.",
    ["org"],
    registry=REGISTRY,
    multiprocess_mode="mostrecent",
)
TURNS = Counter(
    "mcpyard_turns",
    "Agent turns by organization and how they ended.",
    ["org", "status"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "mcpyard_webhook_deliveries",
    "Webhook delivery attempts by organization and result (delivered, retried, failed).",
    ["org", "result"],
    registry=REGISTRY,
)

FAST_CALLS = Counter(
    "mcpyard_fast_calls",
    "Tool calls an HTTP front (the gateway, the organization's /mcp) answered on parsed JSON, without the SDK's "
    "server stack (a client's repeated calls; see the gateway's documentation).",
    registry=REGISTRY,
)


class _Bounded:
    """Label values as given while there are few of them, then `other` for any not seen yet."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[tuple[str, ...]] = set()
        self._lock = threading.Lock()

    def __call__(self, values: tuple[str, ...], other: tuple[str, ...]) -> tuple[str, ...]:
        if values in self._seen:
            return values
        with self._lock:
            if len(self._seen) >= self._limit:
                return other
            self._seen.add(values)
        return values


class MetricsRecorder:
    """Counts and times each call as its record is made (a `CallRecorder`).

    One per host (the gateway's, each organization's): `max_series` distinct server and tool pairs and
    `max_codes` error codes are kept apart, more count as `other`.
    """

    def __init__(self, org: str = "", *, max_series: int = MAX_SERIES, max_codes: int = MAX_CODES) -> None:
        self._org = org
        self._tools = _Bounded(max_series)
        self._codes = _Bounded(max_codes)
        self._series: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}
        """(org, server, tool, status) → its counter and its histogram (`labels` costs as much as the rest)."""

    async def record(self, record: CallFacts) -> None:
        self.observe(record)

    def observe(self, record: CallFacts) -> None:
        org = self._org
        if record.server is None:  # a name no server owns: what a caller typed is not a label
            server, tool = "none", "unknown"
        else:
            org, server, tool = self._tools((org, record.server, record.tool), (org, "other", "other"))
        key = (org, server, tool, record.status)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = (CALLS.labels(*key), CALL_SECONDS.labels(org, server, tool))
        series[0].inc()
        series[1].observe(record.duration_ms / 1000)
        if record.error_code is not None:
            _, code = self._codes((org, record.error_code), (org, "other"))
            CALL_ERRORS.labels(org, code).inc()


def count_turn(status: str, org: str = "") -> None:
    """One agent turn ended with `status` (`done`, `failed`, `cancelled`, …: a fixed set)."""
    TURNS.labels(org, status).inc()


def count_fast_call() -> None:
    """One tool call answered on an HTTP front's fast path."""
    FAST_CALLS.inc()


def count_delivery(result: str, org: str = "") -> None:
    """One webhook delivery attempt ended: `delivered`, `retried` (tried again later) or `failed` for good."""
    WEBHOOK_DELIVERIES.labels(org, result).inc()


def set_servers(states: Iterable[str], org: str = "") -> None:
    """The servers' states as they are now (read when scraped)."""
    counts: dict[str, int] = {}
    for state in states:
        counts[state] = counts.get(state, 0) + 1
    for state in ("connected", "failed", "connecting", *counts):
        SERVERS.labels(org, state).set(counts.get(state, 0))


def set_waiting(gauge: Gauge, counts: Mapping[str, int]) -> None:
    """A waiting-work gauge as the database has it now: every organization it names, the rest back to 0."""
    gauge.clear()
    for org, count in counts.items():
        gauge.labels(org).set(count)


class _OneOrganization:
    """Only the samples of one organization (what its owner or admin may read at `/metrics`)."""

    def __init__(self, source: Any, org: str) -> None:
        self._source = source
        self._org = org

    def collect(self) -> Iterable[Metric]:
        for family in self._source.collect():
            samples = [s for s in family.samples if s.labels.get("org") == self._org]
            if samples:
                family.samples = samples
                yield family


def exposition(org: str | None = None) -> bytes:
    """The Prometheus text of every metric (of one organization's series only, when `org` is given)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        source: Any = CollectorRegistry()
        MultiProcessCollector(source)  # type: ignore[no-untyped-call]  # prometheus-client leaves it untyped
    else:
        source = REGISTRY
    return generate_latest(source if org is None else _OneOrganization(source, org))
