"""OBS-1 in one process: metric labels stay bounded whatever names calls carry; a JSON log line is one object with
no argument values and every secret redacted; `OTEL_*` settings that cannot be honoured are named, never a crash.

The records are the pipeline's own `CallRecord`s, built as a call's end builds them.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from mcpyard.ops import CallLogRecorder, JsonFormatter, MetricsRecorder, exposition, tracing
from mcpyard.pipeline import CallRecord

pytestmark = pytest.mark.anyio


def record(
    server: str | None, tool: str, status: str = "ran", error_code: str | None = None, why: str = ""
) -> CallRecord:
    return CallRecord(
        started_at=time.time(),
        conversation="c1",
        server=server,
        tool=tool,
        server_tool=tool.rsplit("__", maxsplit=1)[-1],
        arguments={"password": "hunter2-argument"},
        files=(),
        decision="run",
        why=why,
        answer=None,
        status=status,  # type: ignore[arg-type]  # a CallStatus, as the table of cases gives it
        error_code=error_code,
        duration_ms=12.5,
        result_bytes=42,
        summary="the result text",
        tags={"call_id": "call-1"},
    )


def series(org: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(exposition(org).decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_obs1_labels_stay_bounded_whatever_names_the_calls_carry() -> None:
    org = f"bounds-{secrets.token_hex(4)}"
    recorder = MetricsRecorder(org, max_series=3, max_codes=2)
    for n in range(6):
        await recorder.record(record("s", f"s__tool{n}", "failed", error_code=f"code{n}"))
    await recorder.record(record(None, "typed-by-a-client-¿"))
    found = series(org)
    tools = {dict(labels)["tool"] for name, labels in found if name == "mcpyard_calls_total"}
    assert tools == {"s__tool0", "s__tool1", "s__tool2", "other", "unknown"}
    other = {"org": org, "server": "other", "tool": "other", "outcome": "failed"}
    assert found[("mcpyard_calls_total", tuple(sorted(other.items())))] == 3
    codes = {dict(labels)["code"] for name, labels in found if name == "mcpyard_call_errors_total"}
    assert codes == {"code0", "code1", "other"}
    assert "typed-by-a-client" not in exposition(org).decode()
    assert "hunter2" not in exposition(org).decode()


async def test_obs1_one_organizations_exposition_holds_only_its_series() -> None:
    mine, theirs = f"mine-{secrets.token_hex(4)}", f"theirs-{secrets.token_hex(4)}"
    await MetricsRecorder(mine).record(record("s", "s__mine"))
    await MetricsRecorder(theirs).record(record("s", "s__theirs"))
    text = exposition(mine).decode()
    assert "s__mine" in text
    assert "s__theirs" not in text
    assert theirs not in text


@pytest.fixture
def call_lines() -> Iterator[list[str]]:
    """What the call log writes while the test runs, through the JSON formatter with a redactor."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, item: logging.LogRecord) -> None:
            lines.append(self.format(item))

    handler = Keep()
    handler.setFormatter(JsonFormatter(lambda text: text.replace("sekrit-value", "[redacted]")))
    log = logging.getLogger("mcpyard.calls")
    before = (log.level, log.propagate)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield lines
    finally:
        log.removeHandler(handler)
        log.setLevel(before[0])
        log.propagate = before[1]


async def test_obs1_a_call_is_one_json_line_without_its_arguments_and_redacted(call_lines: list[str]) -> None:
    refused = record("s", "s__write", "refused", error_code="policy_off", why="the key sekrit-value is off")
    await CallLogRecorder(org="o1", who=lambda r: "member-7").record(refused)
    [line] = call_lines
    parsed: dict[str, Any] = json.loads(line)
    assert parsed["event"] == "call"
    assert (parsed["org"], parsed["who"], parsed["tool"]) == ("o1", "member-7", "s__write")
    assert (parsed["outcome"], parsed["error_code"], parsed["call_id"]) == ("refused", "policy_off", "call-1")
    assert parsed["why"] == "the key [redacted] is off"
    assert "hunter2" not in line
    assert "the result text" not in line


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({}, None),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, None),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, None),
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc"),
    ],
)
def test_obs1_otel_settings_that_cannot_be_honoured_are_named(variables: dict[str, str], named: str | None) -> None:
    problem = tracing.configure_from_environment("mcpyard-test", variables)
    if named is None:
        assert problem is None
    else:
        assert problem is not None
        assert named in problem
    assert not tracing.active(), "nothing was installed"
