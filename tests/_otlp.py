"""A loopback OTLP/HTTP trace receiver: what a service under test exports, decoded span by span.

Real OTLP over real HTTP (protobuf, as the SDK's exporter sends it): the service is configured by
the standard `OTEL_*` variables (`environment()`), and the test reads the spans it received.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["OtlpReceiver", "ReceivedSpan", "otlp_receiver"]

MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    service: str


class OtlpReceiver:
    def __init__(self, port: int) -> None:
        self.port = port
        self.spans: list[ReceivedSpan] = []
        self.changed = threading.Condition()

    def environment(self) -> dict[str, str]:
        """The variables that point a service's traces here, exported within a tenth of a second."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{self.port}",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found: list[ReceivedSpan] = []
        for resource_spans in request.resource_spans:
            service = next(
                (a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"), ""
            )
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    ids = (span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex())
                    found.append(ReceivedSpan(span.name, *ids, attributes, service))
        with self.changed:
            self.spans.extend(found)
            self.changed.notify_all()

    def wait_for(self, name: str, timeout: float = 15.0) -> ReceivedSpan:
        """The first span received named `name`, waiting for it at most `timeout` seconds."""
        with self.changed:
            found = self.changed.wait_for(lambda: any(s.name == name for s in self.spans), timeout)
            assert found, f"no span {name!r} within {timeout} s; received {[s.name for s in self.spans]}"
            return next(s for s in self.spans if s.name == name)

    def by_id(self, span_id: str) -> ReceivedSpan | None:
        with self.changed:
            return next((s for s in self.spans if s.span_id == span_id), None)


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """A receiver on a free 127.0.0.1 port, serving until the block ends."""
    holder: list[OtlpReceiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = min(int(self.headers.get("content-length", "0")), MAX_BODY)
            body = self.rfile.read(length)
            if self.path == "/v1/traces":
                holder[0].take(body)
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(OtlpReceiver(server.server_address[1]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
