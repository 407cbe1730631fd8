"""The deployment recipe of docs/deploy.md, followed step by step: PostgreSQL, `mcpyard org init`, two replicas started
by deploy/entrypoint.sh, Debian's haproxy with deploy/haproxy.cfg in front; register and call through the balancer,
over the API and in an MCP session (kept on its replica); stop a replica while calls go on, start it again; rotate the
sealing key across both replicas without a failed call (ORG-9, ORG-10, API-8).

Everything runs on 127.0.0.1 with free ports; the recipe's files are used as committed, their addresses given in the
environment as the compose file gives them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests._waiting import eventually
from tests.conftest import Home
from tests.org._flows import TOKEN
from tests.servers.http_runner import free_port, listening_process

pytestmark = [pytest.mark.anyio, pytest.mark.empty_database]

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
READY = "mcpyard organization service on "
PASSWORD = "correct horse battery staple"
STARTUP_SECONDS = 60
MAX_CALLS = 3000
"""The calls made while a replica stops and starts again, at most (the loop ends sooner once it is back)."""


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


@dataclass
class _Running:
    """A replica's process, run by a task of the deployment's own: stopped by setting `stop`."""

    stop: anyio.Event = field(default_factory=anyio.Event)
    ended: anyio.Event = field(default_factory=anyio.Event)


class Deployment:
    """What the recipe sets up: the database, the key(s), the replicas and the balancer.

    Each process runs in a task of the deployment's task group, so a replica started in one step and
    stopped in another keeps its own scope."""

    def __init__(self, home: Home, database: str, tg: TaskGroup) -> None:
        self.home, self.database, self.tg = home, database, tg
        self.ports = {"r1": free_port(), "r2": free_port(), "lb": free_port(), "stats": free_port()}
        self.running: dict[str, _Running] = {}

    def env(self, key: str, **more: str) -> dict[str, str]:
        bin_folder = str(Path(sys.executable).parent)
        return {
            "PATH": f"{bin_folder}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home.root),
            "MCPYARD_CONFIG_HOME": str(self.home.config_home),
            "MCPYARD_ORG_DATABASE": self.database,
            "MCPYARD_ORG_KEY": key,
            **more,
        }

    async def _run(
        self, name: str, command: list[str], env: dict[str, str], ready: str | None, *, task_status: TaskStatus[None]
    ) -> None:
        running = self.running[name] = _Running()
        try:
            async with listening_process(
                command, port=self.ports[name], env=env, startup_seconds=STARTUP_SECONDS, ready=ready
            ):
                task_status.started()
                await running.stop.wait()
        finally:
            running.ended.set()

    async def start_replica(self, name: str, key: str) -> None:
        """`deploy/entrypoint.sh` for one replica: migrate (once, whoever is first), then serve."""
        env = self.env(
            key,
            MCPYARD_HOST="127.0.0.1",
            MCPYARD_PORT=str(self.ports[name]),
            MCPYARD_ORG_DEV="1",  # the test's MCP server is plain http on this machine
            MCPYARD_DATA_HOME=str(self.home.root / name),
        )
        await self.tg.start(self._run, name, ["sh", str(ENTRYPOINT)], env, READY)

    async def stop_replica(self, name: str) -> None:
        """SIGTERM, as an orchestrator stops a replica: it ends its requests in flight first."""
        running = self.running.pop(name)
        running.stop.set()
        await running.ended.wait()

    async def start_balancer(self) -> None:
        env = {
            "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/bin"),
            "MCPYARD_LB_BIND": f"127.0.0.1:{self.ports['lb']}",
            "MCPYARD_REPLICA1": f"127.0.0.1:{self.ports['r1']}",
            "MCPYARD_REPLICA2": f"127.0.0.1:{self.ports['r2']}",
            "MCPYARD_LB_STATS": f"127.0.0.1:{self.ports['stats']}",
        }
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        await self.tg.start(self._run, "lb", [haproxy, "-db", "-f", str(HAPROXY_CFG)], env, None)

    async def up(self, *names: str) -> bool:
        """Whether haproxy's own health checks see exactly these replicas up."""
        async with httpx2.AsyncClient(trust_env=False) as client:
            stats = await client.get(f"http://127.0.0.1:{self.ports['stats']}/stats;csv")
        rows = [row.split(",") for row in stats.text.splitlines() if row.startswith("replicas,replica")]
        up = {row[1] for row in rows if row[17] == "UP"}  # the CSV's 18th column is the server's status
        return up == {f"replica{name[1]}" for name in names}


@asynccontextmanager
async def _deployment(home: Home, database_url: str) -> AsyncIterator[Deployment]:
    async with anyio.create_task_group() as tg:
        deployment = Deployment(home, database_url.replace("postgresql+psycopg://", "postgresql://"), tg)
        try:
            yield deployment
        finally:
            for name in list(deployment.running):
                await deployment.stop_replica(name)


async def _init(deployment: Deployment, key: str) -> str:
    """Step 2: `mcpyard org init`: the schema, the organization and its owner; the owner's API token."""
    done = await anyio.run_process(
        [sys.executable, "-m", "mcpyard", "org", "init", "--org", "acme", "--owner", "owner@example.com", "--json"],
        input=f"{PASSWORD}\n".encode(),
        env=deployment.env(key, MCPYARD_DATA_HOME=str(deployment.home.root / "admin")),
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    token: str = json.loads(done.stdout)["api_token"]
    return token


class Caller:
    """Calls through the balancer, one after another, until told to stop; every answer kept."""

    def __init__(self, client: httpx2.AsyncClient) -> None:
        self.client = client
        self.failures: list[str] = []
        self.calls = 0
        self.stop = anyio.Event()

    async def run(self) -> None:
        while not self.stop.is_set() and self.calls < MAX_CALLS:
            try:
                answer = await self.client.post("/api/v1/calls", json={"tool": "tools__whoami", "arguments": {}})
                body: Any = answer.json()
                if answer.status_code != 200 or body.get("ok") is not True:
                    self.failures.append(answer.text[:300])
            except httpx2.HTTPError as exc:
                self.failures.append(repr(exc))
            self.calls += 1


@pytest.mark.long
@pytest.mark.timeout(480)  # nine replica stops of 3 s drains, restarts behind haproxy's checks: 2 min, more when busy
async def test_org9_the_deployment_recipe_serves_through_the_balancer_and_survives_a_replica_stopping(
    database_url: str, home: Home, upstream: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("the recipe is for PostgreSQL")
    old = _key()
    async with _deployment(home, database_url) as deployment:
        owner = await _init(deployment, old)
        await deployment.start_replica("r1", old)
        await deployment.start_replica("r2", old)
        await deployment.start_balancer()
        # haproxy's checks are its own: its status page says when both replicas are in.
        await eventually(lambda: deployment.up("r1", "r2"), within=30, what="haproxy sees both replicas ready")
        headers = {"Authorization": f"Bearer {owner}"}
        base = f"http://127.0.0.1:{deployment.ports['lb']}"
        async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=60, trust_env=False) as client:
            registered = await client.post(
                "/api/v1/servers", json={"name": "tools", "url": upstream, "bearer_token": TOKEN}
            )
            assert registered.status_code == 201, registered.text
            whoami = next(tool for tool in registered.json()["tools"] if tool["tool"] == "whoami")
            policy = {"policy": "run_freely", "definition_hash": whoami["definition_hash"]}
            assert (await client.put(f"/api/v1/tools/{whoami['id']}/policy", json=policy)).status_code == 200
            for _ in range(10):  # round robin: both replicas answer, each one the same
                ran = await client.post("/api/v1/calls", json={"tool": "tools__whoami", "arguments": {}})
                assert ran.json()["ok"] is True, ran.text
            # An MCP session lives on the replica that opened it: the balancer keeps its requests there.
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60, trust_env=False) as http,
                Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as session,
            ):
                for _ in range(4):
                    assert "tools__whoami" in {tool.name for tool in (await session.list_tools()).tools}
                    assert not (await session.call_tool("tools__whoami", {})).is_error

            caller = Caller(client)
            async with anyio.create_task_group() as tg:
                tg.start_soon(caller.run)
                await deployment.stop_replica("r1")
                await eventually(lambda: deployment.up("r2"), within=30, what="haproxy takes replica 1 out")
                await deployment.start_replica("r1", old)
                await eventually(lambda: deployment.up("r1", "r2"), within=30, what="haproxy takes replica 1 back")
                caller.stop.set()
            assert caller.failures == [], caller.failures[:3]
            assert caller.calls > 10

            # The sealing key, rotated without downtime: each step restarts one replica at a time.
            new = _key()
            caller = Caller(client)
            async with anyio.create_task_group() as tg:
                tg.start_soon(caller.run)
                for keys in (f"{old},{new}", f"{new},{old}"):  # first every replica opens both, then NEW seals
                    for name in ("r1", "r2"):
                        await deployment.stop_replica(name)
                        await deployment.start_replica(name, keys)
                        await eventually(lambda: deployment.up("r1", "r2"), within=30, what=f"{name} back")
                rotated = await anyio.run_process(
                    [sys.executable, "-m", "mcpyard", "org", "rotate-key"],
                    env=deployment.env(f"{new},{old}", MCPYARD_DATA_HOME=str(deployment.home.root / "admin")),
                    check=False,
                )
                assert rotated.returncode == 0, rotated.stderr.decode()
                for name in ("r1", "r2"):  # the old key is no longer used: each replica drops it
                    await deployment.stop_replica(name)
                    await deployment.start_replica(name, new)
                    await eventually(lambda: deployment.up("r1", "r2"), within=30, what=f"{name} back on NEW")
                caller.stop.set()
            assert caller.failures == [], caller.failures[:3]
            ran = await client.post("/api/v1/calls", json={"tool": "tools__whoami", "arguments": {}})
            assert ran.json()["ok"] is True, "the server's token, sealed again with the new key, still reaches it"
            assert "authorization: [header Authorization]" in ran.json()["text"]


def test_the_recipes_files_are_the_ones_the_docs_and_the_container_use() -> None:
    docs = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    compose = (ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8")
    assert "deploy/entrypoint.sh" in docs
    assert "deploy/haproxy.cfg" in docs
    assert 'ENTRYPOINT ["/app/entrypoint.sh"]' in dockerfile
    assert "COPY deploy/entrypoint.sh /app/entrypoint.sh" in dockerfile
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg" in compose
    checked = subprocess.run(
        ["haproxy", "-c", "-f", str(HAPROXY_CFG)],
        env={
            "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/bin"),
            "MCPYARD_LB_BIND": "127.0.0.1:1",
            "MCPYARD_REPLICA1": "127.0.0.1:2",
            "MCPYARD_REPLICA2": "127.0.0.1:3",
            "MCPYARD_LB_STATS": "127.0.0.1:4",
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
