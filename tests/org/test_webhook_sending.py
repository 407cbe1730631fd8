"""How webhook deliveries are signed, judged and spaced, as tables; and two replicas sending one queue, each delivery
once (ORG-9)."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpyard.org.services import WaitingEvent, WebhookSettings, sign
from mcpyard.org.services._webhook_events import payload, summary
from mcpyard.org.services._webhook_sending import retry_delay, verdict
from mcpyard.org.store import Member
from tests._waiting import eventually
from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import served_service, serving
from tests.org._service import service_app

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 60


def test_the_signature_is_the_hmac_sha256_of_the_timestamp_a_dot_and_the_body() -> None:
    """The recipe the docs give a receiver, byte for byte."""
    body = b'{"text":"hello"}'
    expected = hmac.new(b"whsec_k", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert sign("whsec_k", "1700000000", body) == f"v1={expected}"
    assert sign("whsec_k", "1700000001", body) != sign("whsec_k", "1700000000", body), "the timestamp is signed"
    assert sign("whsec_other", "1700000000", body) != sign("whsec_k", "1700000000", body)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (200, "delivered"),
        (204, "delivered"),
        (301, "failed"),
        (400, "failed"),
        (401, "failed"),
        (404, "failed"),
        (408, "retry"),
        (410, "failed"),
        (429, "retry"),
        (500, "retry"),
        (502, "retry"),
        (503, "retry"),
    ],
)
def test_a_receivers_status_means_done_try_again_or_final(status: int, expected: str) -> None:
    assert verdict(status) == expected


DEFAULTS = WebhookSettings()


@pytest.mark.parametrize(
    ("attempt", "retry_after", "expected"),
    [
        (1, None, 20.0),
        (2, None, 40.0),
        (5, None, 320.0),
        (1, 90.0, 90.0),
        (3, 10.0, 80.0),
        (1, 86_400.0, 600.0),
    ],
)
def test_the_wait_doubles_and_a_longer_retry_after_is_honoured_up_to_its_cap(
    attempt: int, retry_after: float | None, expected: float
) -> None:
    assert retry_delay(attempt, DEFAULTS, retry_after) == expected


def test_the_default_attempts_span_about_ten_minutes() -> None:
    waited = sum(retry_delay(attempt, DEFAULTS) for attempt in range(1, DEFAULTS.attempts))
    assert 9 * 60 <= waited <= 11 * 60


def test_the_summary_escapes_what_slack_reads_as_markup_and_never_holds_argument_values() -> None:
    event = WaitingEvent(
        "approval_waiting",
        "org1",
        "a1",
        "/inbox#approval-a1",
        server="<!channel>",
        tool="x&y",
        arguments='{"note": "the-value"}',
    )
    text = summary(event, "acme", "ada@acme.test", "https://console.example/inbox#approval-a1")
    assert "<" not in text
    assert "&lt;!channel&gt;" in text
    assert "x&amp;y" in text
    assert "the-value" not in text
    assert text.endswith("https://console.example/inbox#approval-a1")


@pytest.mark.parametrize("include_arguments", [False, True])
def test_argument_values_go_only_where_asked_for(include_arguments: bool) -> None:
    event = WaitingEvent("approval_waiting", "org1", "a1", "/inbox#approval-a1", tool="t", arguments='{"k": "v"}')
    body: dict[str, Any] = payload(
        event,
        org_name="acme",
        member=Member(id="m1", email="ada@acme.test"),
        console_url="https://console.example/",
        at=datetime(2026, 1, 2, tzinfo=UTC),
        include_arguments=include_arguments,
    )
    assert body["link"] == "https://console.example/inbox#approval-a1"
    assert body["member"] == {"id": "m1", "email": "ada@acme.test"}
    assert ("arguments" in body) is include_arguments


async def test_org9_two_replicas_sending_one_queue_send_each_delivery_once(
    database_url: str, home: Home, upstream: str
) -> None:
    """Both replicas look for due deliveries all the time; each is claimed by one of them, and sent once."""
    seen: Counter[str] = Counter()
    calls, hooks = 6, 2

    async def hook(request: Request) -> Response:
        seen[request.headers["mcpyard-webhook-id"]] += 1
        return Response("ok")

    fast = WebhookSettings(backoff_seconds=0.05, poll_seconds=0.05)
    receiver = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    async with (
        serving(receiver, stop_seconds=0) as receiver_origin,
        served_service(database_url, home.data_home, webhooks=fast) as one,
        serving(service_app(database_url, home.data_home, webhooks=fast)),
    ):
        await set_policy(one, by_tool(await register(one, upstream))["write"], "ask_first")
        for _ in range(hooks):
            await one.post("/api/v1/webhooks", {"url": f"{receiver_origin}/hook"}, expect=201)
        for number in range(calls):
            await call(one, "tools__write", {"note": f"n{number}"}, expect=202)
        # Every delivery's last state is written after its receiver answered: no event says when.
        await eventually(lambda: len(seen) >= calls * hooks, within=WAIT_SECONDS, what="every delivery arrived")
        assert set(seen.values()) == {1}, "no delivery sent twice"
