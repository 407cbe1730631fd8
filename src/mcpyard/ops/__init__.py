"""Operations: Prometheus metrics, OpenTelemetry traces and structured logs for the services (OBS-1).

`tracing` is imported with the package (the pipeline asks it, per call, whether a span is wanted);
the metrics and the logs, on first use, so a program that embeds `Host` never loads prometheus-client.
"""

from typing import TYPE_CHECKING

from mcpyard._lazy import lazy_names
from mcpyard.ops import _tracing as tracing
from mcpyard.ops._tracing import IncomingTrace

if TYPE_CHECKING:
    from mcpyard.ops._facts import CallFacts
    from mcpyard.ops._logs import LOG_FORMATS, CallLogRecorder, JsonFormatter, LogFormat, log_event, use_log_format
    from mcpyard.ops._metrics import (
        APPROVALS_WAITING,
        CONTENT_TYPE,
        QUESTIONS_WAITING,
        MetricsRecorder,
        count_delivery,
        count_fast_call,
        count_turn,
        exposition,
        set_servers,
        set_waiting,
    )

_LOGS = "mcpyard.ops._logs"
_METRICS = "mcpyard.ops._metrics"
__getattr__ = lazy_names(
    __name__,
    {
        "CallFacts": "mcpyard.ops._facts",
        "LOG_FORMATS": _LOGS,
        "CallLogRecorder": _LOGS,
        "JsonFormatter": _LOGS,
        "LogFormat": _LOGS,
        "log_event": _LOGS,
        "use_log_format": _LOGS,
        "APPROVALS_WAITING": _METRICS,
        "CONTENT_TYPE": _METRICS,
        "QUESTIONS_WAITING": _METRICS,
        "MetricsRecorder": _METRICS,
        "count_delivery": _METRICS,
        "count_fast_call": _METRICS,
        "count_turn": _METRICS,
        "exposition": _METRICS,
        "set_servers": _METRICS,
        "set_waiting": _METRICS,
    },
)

__all__ = [
    "APPROVALS_WAITING",
    "CONTENT_TYPE",
    "LOG_FORMATS",
    "QUESTIONS_WAITING",
    "CallFacts",
    "CallLogRecorder",
    "IncomingTrace",
    "JsonFormatter",
    "LogFormat",
    "MetricsRecorder",
    "count_delivery",
    "count_fast_call",
    "count_turn",
    "exposition",
    "log_event",
    "set_servers",
    "set_waiting",
    "tracing",
    "use_log_format",
]
