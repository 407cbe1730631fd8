"""Answers typed into forms stay out of logs: the SDK's HTTP transports log whole messages at debug level.

A form's answer rides inside such a message (a response to the server's request, or a new-era
call's retry holding its input responses), so those debug lines are dropped at their loggers,
whatever level or handler a program sets up (SEC-2).
"""

from __future__ import annotations

import logging

__all__ = ["BODY_LOGGERS", "keep_answers_out_of_logs"]

BODY_LOGGERS = ("mcp.client.streamable_http", "mcp.client.sse")
_PREFIXES = ("Sending client message:", "SSE message:", "Received server message:")


class _NoMessageBodies(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_PREFIXES))


_FILTER = _NoMessageBodies()


def keep_answers_out_of_logs() -> None:
    """Drop the SDK transports' debug lines that print whole messages (once per process; idempotent)."""
    for name in BODY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
