"""Structured logs for the services (OBS-1): `--log-format json` makes every log line one JSON object.

`use_log_format("json")` puts a JSON formatter on the root logger's standard-error handler, so the
services' own lines, uvicorn's and the libraries' all come out as objects with `time`, `level`,
`logger` and `message`, plus the fields a line carries. `CallLogRecorder` adds one line per call
(who, which server and tool, the decision, the outcome, the error code, the time, the record's
id): arguments and results are never logged, and every text field passes the redactor given.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpyard.ops._facts import CallFacts

__all__ = ["CALL_LOG", "LOG_FORMATS", "CallLogRecorder", "JsonFormatter", "LogFormat", "log_event", "use_log_format"]

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")
CALL_LOG = logging.getLogger("mcpyard.calls")
EVENT_LOG = logging.getLogger("mcpyard.events")
_FIELDS = "mcpyard_fields"
_ADDRESS_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2")
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, and the line's own fields."""

    def __init__(self, redact: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, _FIELDS, None)
        if isinstance(fields, Mapping):
            line.update(fields)
        else:
            line.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        text = json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))
        return self._redact(text) if self._redact is not None else text


def use_log_format(log_format: LogFormat, *, redact: Callable[[str], str] | None = None) -> None:
    """Send the process's log lines to standard error in `log_format` (json: objects; text: as they are)."""
    if log_format != "json":
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(redact))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        named = logging.getLogger(name)
        for old in list(named.handlers):
            named.removeHandler(old)
        named.propagate = True
    CALL_LOG.setLevel(logging.INFO)
    EVENT_LOG.setLevel(logging.INFO)
    # The HTTP clients' own lines name every address requested (a webhook's address is a credential to
    # Slack; a server's may carry a key in its query): only their warnings are kept.
    for name in _ADDRESS_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def log_event(event: str, message: str, **fields: Any) -> None:
    """One structured line on the events log (a decision in an inbox, an alert…), None fields left out."""
    if EVENT_LOG.isEnabledFor(logging.INFO):
        kept = {"event": event, **{k: v for k, v in fields.items() if v is not None}}
        EVENT_LOG.info(message, extra={_FIELDS: kept})


class CallLogRecorder:
    """One log line per call (a `CallRecorder`), from its record: never its arguments or its result.

    `who` names the caller for the line (the organization's member, the gateway's client), from the
    record's conversation and tags; `org` is the organization, when there is one.
    """

    def __init__(self, *, org: str | None = None, who: Callable[[CallFacts], str | None] | None = None) -> None:
        self._org = org
        self._who = who

    async def record(self, record: CallFacts) -> None:
        if not CALL_LOG.isEnabledFor(logging.INFO):
            return
        fields: dict[str, Any] = {
            "event": "call",
            "org": self._org,
            "who": self._who(record) if self._who is not None else None,
            "server": record.server,
            "tool": record.tool,
            "decision": record.decision,
            "answer": record.answer,
            "outcome": record.status,
            "error_code": record.error_code,
            "why": record.why or None,
            "duration_ms": round(record.duration_ms, 3),
            "result_bytes": record.result_bytes,
            "call_id": record.tags.get("call_id"),
            "turn_id": record.tags.get("turn_id"),
            "client": record.tags.get("client"),
        }
        kept = {k: v for k, v in fields.items() if v is not None}
        CALL_LOG.info("call %s %s", record.tool, record.status, extra={_FIELDS: kept})
