"""`mcpyard org serve` as it is deployed: processes of its own on uvicorn (API-5, ORG-2, ORG-5, NET-1, ERR-1).

Two processes on one database approve the same calls at the same moment and each call runs once; a teammate
changed or deleted through one is so at once on the other; an answer to a
server's question given through one process reaches the call the other holds; the bearer token of a registered
server, or a secret typed into a form, appears in no response and nowhere in the service's log, in any encoding the
redactor knows;
`--dev` is what lets a loopback `http` server in; a database never set up, a port in use and SIGTERM each end as
one clear line.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest

from mcpyard.secrets import forms_of
from tests._forkserver import mcpyard_command
from tests._waiting import eventually
from tests.conftest import Home
from tests.model.openai_fixture import serve_model
from tests.org._flows import TOKEN, by_tool, call, register, set_policy
from tests.org._service import KEY, Service, set_up
from tests.org.test_questions import KEY_FORM, TYPED
from tests.servers.http_runner import serve_http

pytestmark = pytest.mark.anyio

READY = "mcpyard organization service on "
STARTUP_SECONDS = 60.0
APPROVALS = 6
"""Calls parked and then approved by both processes at once: each one a race the claim must settle."""


@dataclass
class Served:
    """One `mcpyard org serve` process: its origin, and every line it wrote to standard error so far."""

    process: subprocess.Popen[str]
    origin: str
    log: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.log)


def _command(environ: dict[str, str], database_url: str, *args: str, port: int = 0) -> list[str]:
    """`python -m mcpyard org serve …`, as a fork of the worker's fork server for processes given `environ`."""
    arguments = ["org", "serve", "--database", database_url, "--port", str(port), *args]
    return mcpyard_command(environ, *arguments)


def _environ(home: Home) -> dict[str, str]:
    return {**home.environ, "MCPYARD_ORG_KEY": KEY, "PYTHONUNBUFFERED": "1"}


def said(line: str) -> str:
    """What a line of the service's standard error says: the line, or a JSON log line's message."""
    if line.startswith("{"):
        with contextlib.suppress(ValueError):
            return str(json.loads(line).get("message", line))
    return line


@contextmanager
def spawned(home: Home, database_url: str, *args: str, environ: dict[str, str] | None = None) -> Iterator[Served]:
    """Start the service, wait for the line naming its address; stop it (SIGTERM, then SIGKILL) at the end."""
    env = {**_environ(home), **(environ or {})}
    process = subprocess.Popen(
        _command(env, database_url, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=home.workspace,
    )
    log: list[str] = []
    ready = threading.Event()
    origin: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line.rstrip("\n"))
            if (text := said(line)).startswith(READY) and not origin:
                origin.append(text[len(READY) :].strip().removesuffix("/api/v1"))
                ready.set()
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        ready.wait(STARTUP_SECONDS)
        assert origin, f"the service did not start: {log}"
        yield Served(process, origin[0], log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        reader.join(10)
        if process.stderr is not None:
            process.stderr.close()


@asynccontextmanager
async def services(
    home: Home, database_url: str, count: int, *args: str, environ: dict[str, str] | None = None
) -> AsyncIterator[list[tuple[Served, Service]]]:
    """The organization `acme` set up, `count` service processes on its database, and a client for each; the
    clients share one list of every response they read."""
    org = await set_up(database_url)
    responses: list[str] = []
    with contextlib.ExitStack() as processes:
        served = [processes.enter_context(spawned(home, database_url, *args, environ=environ)) for _ in range(count)]
        async with contextlib.AsyncExitStack() as clients:
            services = []
            for one in served:
                client = httpx2.AsyncClient(base_url=one.origin, timeout=60, trust_env=False)
                await clients.enter_async_context(client)
                services.append(Service(client, org, database_url, home.data_home, responses))
            yield list(zip(served, services, strict=True))


@pytest.mark.long
async def test_org5_two_processes_approving_the_same_calls_at_once_run_each_once(
    home: Home, database_url: str, upstream: str
) -> None:
    async with services(home, database_url, 2, "--dev") as [(_, first), (_, second)]:
        tools = by_tool(await register(first, upstream))
        await set_policy(first, tools["write"], "ask_first")
        await set_policy(first, tools["writes"], "run_freely")
        parked = [
            (await call(second, "tools__write", {"note": f"note {n}"}, expect=202))["approval"]["id"]
            for n in range(APPROVALS)
        ]
        outcomes: dict[str, list[Any]] = {approval: [] for approval in parked}

        async def approve(service: Service, approval: str, ready: anyio.Event, start: anyio.Event) -> None:
            ready.set()
            await start.wait()
            outcomes[approval].append(await service.request("POST", f"/api/v1/approvals/{approval}/approve"))

        for approval in parked:
            start, ready = anyio.Event(), [anyio.Event(), anyio.Event()]
            async with anyio.create_task_group() as tg:
                tg.start_soon(approve, first, approval, ready[0], start)
                tg.start_soon(approve, second, approval, ready[1], start)
                with anyio.fail_after(10):  # both are waiting at the line: they go together
                    for each in ready:
                        await each.wait()
                start.set()
        for approval, responses in outcomes.items():
            statuses = sorted(response.status_code for response in responses)
            assert statuses == [200, 409], (approval, [response.text for response in responses])
            lost = next(response for response in responses if response.status_code == 409)
            assert lost.json()["error"]["code"] == "already_decided"
        for service in (first, second):
            ran = await call(service, "tools__writes")
            assert ran["content"][0]["text"] == str(APPROVALS), "every approved call ran exactly once"
        done = await first.get("/api/v1/approvals", params={"status": "done"})
        assert sorted(row["id"] for row in done) == sorted(parked)


async def test_org2_the_servers_token_is_in_no_response_and_nowhere_in_the_log(
    home: Home, database_url: str, upstream: str
) -> None:
    async with services(home, database_url, 1, "--dev") as [(served, service)]:
        tools = by_tool(await register(service, upstream))
        await set_policy(service, tools["whoami"], "run_freely")
        leaked = await call(service, "tools__whoami")
        assert leaked["ok"] is True
        await service.post(f"/api/v1/servers/{tools['whoami']['server_id']}/refresh")
        wrong = await service.request(
            "POST", "/api/v1/servers", json={"name": "again", "url": upstream, "bearer_token": TOKEN + "-wrong"}
        )
        assert wrong.status_code == 201, wrong.text
        assert wrong.json()["state"] != "connected", "the server refuses a wrong token"
        assert wrong.json()["last_error"]
        [alert] = await service.get("/api/v1/alerts", params={"open": "true"})
        assert alert["server_id"] == wrong.json()["id"]
        for path in ("/api/v1/servers", "/api/v1/tools", "/api/v1/audit", "/api/v1/alerts", "/api/v1/openapi.json"):
            await service.get(path)
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(30) == 0
    everything = "\n".join([*service.responses, served.text()])
    for secret in (TOKEN, TOKEN + "-wrong", KEY):
        for form in forms_of(secret):
            assert form not in everything, f"a form of a secret reached a response or the log: {form!r}"


async def test_org5_sec2_an_answer_given_through_another_process_reaches_the_call_held_by_the_first(
    home: Home, database_url: str
) -> None:
    """The process holding a call learns of an answer given through another one on the same database; what was
    typed into a secret field is in no response and nowhere in either log; a process that stops with a question
    pending leaves it expired, never pending forever."""
    async with (
        serve_http("elicits", "streamable-http") as asking,
        services(home, database_url, 2, "--dev") as [(holding, first), (other, second)],
    ):
        for tool in by_tool(await register(first, asking, name="asks", token=None)).values():
            await set_policy(first, tool, "run_freely")
        parked = await call(first, "asks__ask_form", {"message": "Your key", "schema": KEY_FORM}, expect=202)
        question = f"/api/v1/questions/{parked['question']['id']}"
        [pending] = await second.get("/api/v1/questions", params={"status": "pending"})
        assert pending["id"] == parked["question"]["id"], "every process sees the question"
        answered = await second.post(f"{question}/answer", {"action": "accept", "content": {"api_key": TYPED}})
        assert answered["status"] == "accepted"
        again = await first.request("POST", f"{question}/answer", json={"action": "cancel"})
        assert again.status_code == 409

        async def ended() -> bool:
            return (await first.get(question))["result"] is not None

        # The call is held by the first process, which writes its result when it ends: no event reaches this test.
        await eventually(ended, within=30, what="the first process's call to end with the answer")
        result = (await first.get(question))["result"]
        assert result["ok"] is True, result
        assert '"api_key": "%typed secret%"' in result["content"][0]["text"]

        waiting = await call(first, "asks__sign_up", expect=202)
        holding.process.send_signal(signal.SIGTERM)
        assert holding.process.wait(30) == 0
        left = await second.get(f"/api/v1/questions/{waiting['question']['id']}")
        assert left["status"] == "expired", left
        assert "its call ended" in left["why"]
        other.process.send_signal(signal.SIGTERM)
        assert other.process.wait(30) == 0
    everything = "\n".join([*first.responses, holding.text(), other.text()])
    for form in forms_of(TYPED):
        assert form not in everything, f"a form of the typed secret reached a response or a log: {form!r}"


async def test_net1_without_dev_a_loopback_http_server_is_refused(home: Home, database_url: str, upstream: str) -> None:
    async with services(home, database_url, 1) as [(_, service)]:
        refused = await service.request("POST", "/api/v1/servers", json={"name": "local", "url": upstream})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "url_refused"
        assert await service.get("/api/v1/servers") == []


def _serve(home: Home, database_url: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(_environ(home), database_url, *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_environ(home),
        cwd=home.workspace,
        timeout=timeout,
        check=False,
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("mcpyard: error: ")
    return line


def test_err1_serving_a_database_never_set_up_is_one_line_that_says_to_run_init(home: Home) -> None:
    url = f"sqlite:///{home.root / 'never.db'}"
    line = _one_error_line(_serve(home, url, "--dev"))
    assert "mcpyard org init" in line


async def test_err1_a_port_in_use_is_one_line_that_names_it(home: Home, database_url: str) -> None:
    await set_up(database_url)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = await anyio.run_process(
            _command(_environ(home), database_url, "--dev", port=port),
            env=_environ(home),
            cwd=home.workspace,
            check=False,
        )
    completed = subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())
    line = _one_error_line(completed)
    assert f"127.0.0.1:{port}" in line
    assert "--port" in line


async def test_api5_sigterm_stops_the_service_in_order_and_it_exits_zero(home: Home, database_url: str) -> None:
    async with services(home, database_url, 1, "--dev") as [(served, service)]:
        assert await service.get("/api/v1/servers") == []
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(30) == 0
    assert "Traceback" not in served.text()
    assert served.log[-1] == "mcpyard organization service stopped"


async def test_api5_api8_with_a_drain_sigterm_first_takes_it_out_of_readiness_while_it_still_serves(
    home: Home, database_url: str
) -> None:
    """API-5, API-8: behind a balancer, a replica told to stop says so on /readyz and goes on serving what it is
    sent until its drain ends (a balancer closing connections it had just reused is what lost requests); a second
    SIGTERM stops it at once; a drain runs out on its own."""
    async with services(home, database_url, 1, "--dev", "--drain", "120") as [(served, service)]:
        assert (await service.request("GET", "/readyz")).status_code == 200
        served.process.send_signal(signal.SIGTERM)

        async def not_ready() -> bool:
            return (await service.request("GET", "/readyz")).status_code == 503

        await eventually(not_ready, within=30, what="/readyz says the replica is stopping")
        answer = (await service.request("GET", "/readyz")).json()
        assert answer["status"] == "unavailable"
        assert "stopping" in answer["checks"]["stopping"]
        assert await service.get("/api/v1/servers") == [], "requests are still served while it drains"
        assert (await service.request("GET", "/healthz")).status_code == 200
        assert served.process.poll() is None
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(30) == 0
    assert "stopping in 120 s" in served.text()
    assert served.log[-1] == "mcpyard organization service stopped"
    with spawned(home, database_url, "--dev", "--drain", "0.5") as served:
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(30) == 0
    assert "Traceback" not in served.text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--drain", "-1"), "--drain takes 0 to 300 seconds, not -1"),
        (("--drain", "86400"), "--drain takes 0 to 300 seconds, not 86400"),
        (("--log-format", "xml"), "unknown log format 'xml': use text or json"),
        (("--demo",), "--demo runs on a temporary database of its own; leave out --database"),
    ],
)
async def test_api5_err1_an_option_out_of_bounds_is_one_line(home: Home, args: tuple[str, ...], said: str) -> None:
    """API-5, ERR-1: refused before anything starts, in one line that says what it takes (it was a traceback)."""
    done = await anyio.run_process(
        _command(_environ(home), "sqlite:///unused.db", *args), cwd=home.workspace, check=False
    )
    assert (done.returncode, done.stderr.decode()) == (2, f"mcpyard: error: {said}\n")


async def test_org4_org5_a_teammate_changed_or_deleted_through_one_process_is_so_at_once_on_the_other(
    home: Home, database_url: str, upstream: str
) -> None:
    with serve_model() as model:
        async with services(home, database_url, 2, "--dev") as [(_, first), (_, second)]:
            servers = [by_tool(await register(first, upstream)), by_tool(await register(first, upstream, "more"))]
            for tools in servers:
                for tool in tools.values():
                    await set_policy(first, tool, "run_freely")
            chosen = await first.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
            assert chosen.status_code == 200, chosen.text
            tools, more = (server["lookup"]["server_id"] for server in servers)
            teammate = await first.post(
                "/api/v1/teammates", {"name": "helper", "instructions": "Old ways.", "server_ids": [tools]}, expect=201
            )
            conversation = await second.post(f"/api/v1/teammates/{teammate['id']}/conversations", expect=201)
            turns = f"/api/v1/conversations/{conversation['id']}/turns"
            model.replies.extend([{"text": "one"}, {"text": "two"}])
            await second.post(turns, {"message": "hi"})

            changed = await first.request(
                "PATCH", f"/api/v1/teammates/{teammate['id']}", json={"server_ids": [more], "instructions": "New ways."}
            )
            assert changed.status_code == 200, changed.text
            await second.post(turns, {"message": "hi again"})
            offered = {tool["function"]["name"] for tool in model.requests[-1]["tools"]} - {"read_result"}
            assert offered == {f"more__{name}" for name in servers[1]}, (
                "the other process offers the new servers' tools"
            )
            assert "New ways." in json.dumps(model.requests[-1]["messages"][0])

            gone = await first.request("DELETE", f"/api/v1/teammates/{teammate['id']}")
            assert gone.status_code == 204, gone.text
            asked = len(model.requests)
            for path, body in (
                (turns, {"message": "still there?"}),
                (f"/api/v1/teammates/{teammate['id']}/conversations", {}),
            ):
                refused = await second.request("POST", path, json=body)
                assert refused.status_code == 409, refused.text
                assert refused.json()["error"]["code"] == "teammate_deleted"
            assert len(model.requests) == asked
            assert await second.get("/api/v1/teammates") == []
            assert len((await second.get(f"/api/v1/conversations/{conversation['id']}"))["turns"]) == 2
