"""Webhooks of the organization service, through its JSON API, on SQLite and PostgreSQL, to real receivers on 127.0.0.1:
an approval that waits, a server's question sent to the inbox and an alert each reach the webhooks that want them,
signed with the webhook's secret, off the request path; a receiver that fails is tried again with backoff and, failing
on, ends failed after the bounded attempts; the log shows every attempt; the outbound guard refuses private
addresses; the secret is shown once and never again, nor logged; only owners and admins manage webhooks, and another
organization's webhook is not found (ORG-5, ORG-8, ORG-9, API-6, NET-1, SEC-2)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpyard.connect import EgressGuard, MemoryResolver
from mcpyard.org.services import WebhookSettings
from tests._waiting import eventually
from tests.conftest import Home
from tests.org._flows import TOKEN, by_tool, call, register, set_policy
from tests.org._served import served_service, serving
from tests.org._service import Service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30
REPLAY_SECONDS = 300
"""The replay window the docs tell receivers to use."""
FAST = WebhookSettings(attempts=3, backoff_seconds=0.05, poll_seconds=0.1, timeout_seconds=5)
"""Deliveries tried again at once, and given up after three attempts: the tests wait for nothing."""
NOTE = "the-note-value-4f1d"
"""An argument's value: it must never reach a webhook that did not ask for values."""


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value


@dataclass
class Receiver:
    """A webhook receiver: it keeps every request, answers each with the next status of `answers` (then 200), and
    holds its answers while `held` is set."""

    answers: list[int] = field(default_factory=list)
    always: int = 200
    got: list[Received] = field(default_factory=list)
    held: anyio.Event | None = None
    _arrived: anyio.Event = field(default_factory=anyio.Event)

    async def endpoint(self, request: Request) -> Response:
        self.got.append(Received({k.lower(): v for k, v in request.headers.items()}, await request.body()))
        self._arrived.set()
        self._arrived = anyio.Event()
        if self.held is not None:
            with anyio.fail_after(WAIT_SECONDS):
                await self.held.wait()
        status = self.answers.pop(0) if self.answers else self.always
        return Response("ok" if status < 300 else "no", status_code=status)

    async def wait_for(self, count: int) -> list[Received]:
        with anyio.fail_after(WAIT_SECONDS):
            while len(self.got) < count:
                await self._arrived.wait()
        return self.got


@pytest.fixture
def receiver() -> Receiver:
    return Receiver()


@pytest.fixture
async def hook_url(receiver: Receiver) -> AsyncIterator[str]:
    """Where `receiver` listens: a real HTTP server on 127.0.0.1 (development mode lets the service reach it)."""
    app = Starlette(routes=[Route("/hook", receiver.endpoint, methods=["POST"])])
    async with serving(app, stop_seconds=0) as origin:
        yield f"{origin}/hook"


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home, webhooks=FAST) as running:
        yield running


def verified(received: Received, secret: str) -> dict[str, Any]:
    """The body, once its signature is checked as the docs tell a receiver to: HMAC-SHA256 of `<timestamp>.<body>`
    with the secret, compared in constant time, the timestamp within the replay window."""
    timestamp = received.headers["mcpyard-timestamp"]
    assert abs(time.time() - int(timestamp)) <= REPLAY_SECONDS, "a fresh timestamp"
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + received.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(received.headers["mcpyard-signature"], f"v1={expected}"), "the signature verifies"
    assert received.headers["content-type"] == "application/json"
    return received.json()


async def add_hook(service: Service, url: str, *, token: str | None = None, **fields: Any) -> dict[str, Any]:
    created: dict[str, Any] = await service.post("/api/v1/webhooks", {"url": url, **fields}, expect=201, token=token)
    return created


async def ask_first_write(service: Service, upstream: str) -> None:
    tools = by_tool(await register(service, upstream))
    await set_policy(service, tools["write"], "ask_first")


async def deliveries_of(service: Service, hook_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await service.get(f"/api/v1/webhooks/{hook_id}/deliveries")
    return found


async def ended(service: Service, hook_id: str, status: str) -> dict[str, Any]:
    """The webhook's one delivery once it is `status` (written just after the receiver answered: no event says so)."""

    async def holds() -> bool:
        return [d["status"] for d in await deliveries_of(service, hook_id)] == [status]

    await eventually(holds, within=WAIT_SECONDS, what=f"the delivery is {status}")
    [delivery] = await deliveries_of(service, hook_id)
    return delivery


async def test_an_ask_first_call_sends_a_signed_delivery_off_its_path_without_argument_values(
    service: Service, upstream: str, receiver: Receiver, hook_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """ORG-5, SEC-2: the call parks at once while the receiver still holds the delivery; the receiver verifies the
    signature with the secret; the body has `text`, the inbox link, the tool and the member, and no value."""
    caplog.set_level(logging.DEBUG)
    await ask_first_write(service, upstream)
    created = await add_hook(service, hook_url)
    secret = created["secret"]
    assert secret.startswith("whsec_")
    assert created["events"] == ["approval_waiting", "question_waiting", "alert_raised"], "every event by default"
    assert created["include_arguments"] is False
    shown_before = len(service.responses)
    receiver.held = anyio.Event()
    parked = await call(service, "tools__write", {"note": NOTE}, expect=202)  # answered while the receiver holds
    approval_id = parked["approval"]["id"]
    [received] = await receiver.wait_for(1)
    receiver.held.set()
    body = verified(received, secret)
    link = f"{service.origin}/inbox#approval-{approval_id}"
    assert body["event"] == "approval_waiting"
    assert body["link"] == link
    assert link in body["text"]
    assert "tools__write" in body["text"]
    assert "owner@acme.test" in body["text"]
    assert (body["tool"], body["server"]) == ("tools__write", "tools")
    assert body["member"]["email"] == "owner@acme.test"
    assert body["organization"]["name"] == "acme"
    assert body["subject"] == {"type": "approval", "id": approval_id}
    assert "arguments" not in body, "no argument value unless asked for"
    assert NOTE not in received.body.decode()
    assert received.headers["mcpyard-webhook-id"]
    delivery = await ended(service, created["id"], "delivered")
    assert (delivery["attempts"], delivery["last_status"], delivery["event"]) == (1, 200, "approval_waiting")
    assert delivery["id"] == received.headers["mcpyard-webhook-id"]
    [listed] = await service.get("/api/v1/webhooks")
    assert "secret" not in listed
    assert listed["id"] == created["id"]
    assert secret not in "\n".join(service.responses[shown_before:]), "the secret is never answered again"
    assert secret not in caplog.text, "nor logged"


async def test_a_webhook_that_asks_for_argument_values_gets_them_redacted_as_the_inbox_shows_them(
    service: Service, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """ORG-7, SEC-3: values only where a webhook turned them on, redacted like everything the service shows."""
    await ask_first_write(service, upstream)
    created = await add_hook(service, hook_url, include_arguments=True, events=["approval_waiting"])
    assert created["include_arguments"] is True
    await call(service, "tools__write", {"note": f"{NOTE} {TOKEN}"}, expect=202)
    [received] = await receiver.wait_for(1)
    body = verified(received, created["secret"])
    [pending] = await service.get("/api/v1/approvals", params={"status": "pending"})
    assert body["arguments"] == pending["arguments"], "the values as the inbox shows them"
    assert NOTE in body["arguments"]
    assert TOKEN not in received.body.decode(), "a secret the service knows is redacted"


async def test_a_servers_question_sent_to_the_inbox_is_delivered(
    service: Service, receiver: Receiver, hook_url: str
) -> None:
    """ORG-5: a question waits in the inbox, and the webhooks that want it hear of it with its link."""
    async with serve_http_in_process("elicits", "streamable-http") as asking:
        for tool in by_tool(await register(service, asking, name="asks", token=None)).values():
            await set_policy(service, tool, "run_freely")
        created = await add_hook(service, hook_url, events=["question_waiting"])
        parked = await call(service, "asks__sign_up", expect=202)
        [received] = await receiver.wait_for(1)
        body = verified(received, created["secret"])
        question_id = parked["question"]["id"]
        assert body["event"] == "question_waiting"
        assert body["link"] == f"{service.origin}/inbox#question-{question_id}"
        assert (body["server"], body["tool"]) == ("asks", "asks__sign_up")
        assert body["member"]["email"] == "owner@acme.test"
        assert body["message"] == "Sign up for the fixture service"
        await service.post(f"/api/v1/questions/{question_id}/answer", {"action": "decline"})
        await ended(service, created["id"], "delivered")


async def test_an_alert_raised_is_delivered_and_a_webhook_not_asking_for_it_hears_nothing(
    service: Service, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """ORG-8: a failed connection raises an alert; the webhook for alerts hears of it, the one for approvals not."""
    alerts = await add_hook(service, hook_url, events=["alert_raised"])
    approvals = await add_hook(service, hook_url, events=["approval_waiting"])
    server = await register(service, upstream, token="a-wrong-token-0123456789")
    [alert] = [a for a in await service.get("/api/v1/alerts") if a["server_id"] == server["id"]]
    [received] = await receiver.wait_for(1)
    body = verified(received, alerts["secret"])
    assert body["event"] == "alert_raised"
    assert body["link"] == f"{service.origin}/alerts#alert-{alert['id']}"
    assert body["subject"] == {"type": "alert", "id": alert["id"], "kind": alert["kind"]}
    assert body["server"] == "tools"
    assert body["message"] == alert["message"]
    assert body["member"] is None
    await ended(service, alerts["id"], "delivered")
    assert await deliveries_of(service, approvals["id"]) == []


async def test_a_receiver_answering_500_then_200_is_tried_again_and_the_log_shows_both_attempts(
    service: Service, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """A 5xx is tried again after the backoff, with the same delivery id and a fresh signature."""
    receiver.answers = [500]
    await ask_first_write(service, upstream)
    created = await add_hook(service, hook_url, events=["approval_waiting"])
    await call(service, "tools__write", {"note": NOTE}, expect=202)
    first, second = await receiver.wait_for(2)
    assert verified(first, created["secret"]) == verified(second, created["secret"]), "the same payload"
    assert first.headers["mcpyard-webhook-id"] == second.headers["mcpyard-webhook-id"], "one delivery, twice tried"
    delivery = await ended(service, created["id"], "delivered")
    assert delivery["attempts"] == 2
    assert [item["status"] for item in delivery["tries"]] == [500, 200]
    assert (delivery["last_status"], delivery["last_error"]) == (200, None)
    scraped = (await service.request("GET", "/metrics")).text  # OBS-1: the attempts are counted
    org = service.org.org_id
    assert f'mcpyard_webhook_deliveries_total{{org="{org}",result="retried"}} 1.0' in scraped
    assert f'mcpyard_webhook_deliveries_total{{org="{org}",result="delivered"}} 1.0' in scraped


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_receiver_always_failing_ends_failed_after_the_bounded_attempts(
    service: Service, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """503 on every attempt: three attempts (the test's setting), then failed, each attempt in the log."""
    receiver.always = 503
    await ask_first_write(service, upstream)
    created = await add_hook(service, hook_url, events=["approval_waiting"])
    await call(service, "tools__write", {"note": NOTE}, expect=202)
    await receiver.wait_for(FAST.attempts)
    delivery = await ended(service, created["id"], "failed")
    assert delivery["attempts"] == FAST.attempts
    assert [item["status"] for item in delivery["tries"]] == [503] * FAST.attempts
    assert delivery["finished_at"] is not None
    assert delivery["next_at"] is None
    assert len(receiver.got) == FAST.attempts, "no attempt past the bound"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_4xx_answer_is_final_at_once(
    service: Service, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """A receiver refusing the request (404, 401…) will refuse it again: not tried again."""
    receiver.always = 404
    await ask_first_write(service, upstream)
    created = await add_hook(service, hook_url, events=["approval_waiting"])
    await call(service, "tools__write", {"note": NOTE}, expect=202)
    delivery = await ended(service, created["id"], "failed")
    assert (delivery["attempts"], delivery["last_status"]) == (1, 404)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://192.168.0.10/hook",
        "http://[fd00::1]/hook",
        "ftp://hooks.example.com/x",
        "https://user:pass@hooks.example.com/x",
    ],
)
async def test_net1_a_webhook_url_the_outbound_guard_forbids_is_refused_with_the_reason(
    service: Service, url: str
) -> None:
    """NET-1: private, link-local (metadata), unique-local addresses, other schemes and user info are refused."""
    refused = await service.request("POST", "/api/v1/webhooks", json={"url": url})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == "url_refused"
    assert "refused" in error["message"]
    assert await service.get("/api/v1/webhooks") == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"url": "https://hooks.example.com/x", "events": ["everything"]}, "`events` must be"),
        ({"url": "https://hooks.example.com/x", "events": []}, "`events` must be"),
        ({"url": "https://hooks.example.com/x", "include_arguments": "yes"}, "`include_arguments`"),
        ({"url": ""}, "`url`"),
    ],
)
async def test_api6_a_webhook_with_a_wrong_field_is_refused_naming_it(
    service: Service, body: dict[str, Any], words: str
) -> None:
    refused = await service.request("POST", "/api/v1/webhooks", json=body)
    assert refused.status_code == 422, refused.text
    assert words in refused.json()["error"]["message"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_org1_only_owners_and_admins_manage_webhooks(service: Service, hook_url: str) -> None:
    """ORG-1: a member may neither see, add nor delete a webhook; an admin may."""
    member = await service.add_member("member@acme.test")
    admin = await service.add_member("admin@acme.test", "admin")
    created = await add_hook(service, hook_url, token=admin)
    for method, path in (
        ("GET", "/api/v1/webhooks"),
        ("POST", "/api/v1/webhooks"),
        ("DELETE", f"/api/v1/webhooks/{created['id']}"),
        ("GET", f"/api/v1/webhooks/{created['id']}/deliveries"),
    ):
        body = {"url": hook_url} if method == "POST" else None
        answer = await service.request(method, path, token=member, json=body)
        assert answer.status_code == 403, (method, path, answer.text)
    deleted = await service.request("DELETE", f"/api/v1/webhooks/{created['id']}", token=admin)
    assert deleted.status_code == 204
    assert await service.get("/api/v1/webhooks") == []


async def test_another_organizations_webhook_is_not_found(service: Service, hook_url: str) -> None:
    """THREATS: every id reached through the caller's organization; another's answers 404, never its data."""
    created = await add_hook(service, hook_url)
    other = await service.add_org("globex", "owner@globex.test")
    assert await service.get("/api/v1/webhooks", token=other.owner_token) == []
    for method, path in (
        ("GET", f"/api/v1/webhooks/{created['id']}/deliveries"),
        ("DELETE", f"/api/v1/webhooks/{created['id']}"),
    ):
        answer = await service.request(method, path, token=other.owner_token)
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.json()["error"]["code"] == "not_found"
    [still] = await service.get("/api/v1/webhooks")
    assert still["id"] == created["id"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_net1_the_address_is_checked_again_at_each_delivery(
    database_url: str, home: Home, upstream: str, receiver: Receiver, hook_url: str
) -> None:
    """NET-1: a name that resolved to an address the guard allows when the webhook was added, and to a private one
    when a delivery goes, is refused then: the delivery fails at once, naming why, and nothing reaches anyone."""
    port = hook_url.split(":")[2].split("/", maxsplit=1)[0]
    resolver = MemoryResolver({"hooks.acme-corp.net": ["127.0.0.1"]})
    guard = EgressGuard(dev=True, resolver=resolver)
    async with served_service(database_url, home.data_home, guard=guard, webhooks=FAST) as service:
        await ask_first_write(service, upstream)
        created = await add_hook(service, f"http://hooks.acme-corp.net:{port}/hook")
        resolver.then("hooks.acme-corp.net", ["10.0.0.7"])
        await call(service, "tools__write", {"note": NOTE}, expect=202)
        delivery = await ended(service, created["id"], "failed")
    assert delivery["attempts"] == 1
    assert "private address" in delivery["last_error"]
    assert receiver.got == []
