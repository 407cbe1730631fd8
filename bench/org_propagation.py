"""How soon a change made through one replica of the organization service holds on another (ORG-9), on SQLite and on
PostgreSQL, measured in one run.

Two replicas (the service's own app twice, each with its own lifespan and memory, nothing shared but the database) of
one organization, one MCP server (`bench/server.py` over streamable HTTP) registered with `echo` allowed. Each round,
replica B turns `echo` off (or on again) and, at once, replica A calls it:

- **change to effect**: from B's answer to A's answer, which must reflect the change every time (a stale answer is
  counted and fails the run: there must be none);
- **announced** (PostgreSQL): from B's answer until A's host has caught up by itself, without a call (B's change is
  announced with `NOTIFY`; A hears it and brings its host in step in the background).

Run: `.venv/bin/python bench/org_propagation.py [--rounds 200] [--databases sqlite,postgresql]`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import httpx2

from _common import BENCH, PYTHON, SERVER_SCRIPT, load_line, percentile, print_table, temp_home
from gateway import Spawned, free_port, wait_for_port

REPO = BENCH.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TOOL = "bench__echo"


async def measure(database: str, url: str, server_url: str, folder: Path, rounds: int) -> list[str]:
    from tests.org._service import service_app, set_up

    from mcpyard.org.services import OrgService
    from mcpyard.org.store import open_database, revision_of

    org = await set_up(url)
    async with contextlib.AsyncExitStack() as stack:
        clients, services = [], []
        for name in "ab":
            app = service_app(
                url, folder / name, environ={"MCPYARD_ORG_KEY": base64.b64encode(os.urandom(32)).decode()}
            )
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx2.ASGITransport(app=app)
            headers = {"Authorization": f"Bearer {org.owner_token}"}
            client = await stack.enter_async_context(
                httpx2.AsyncClient(transport=transport, base_url="http://org.test", headers=headers, timeout=60)
            )
            service = app.state.org.service
            assert isinstance(service, OrgService)
            clients.append(client)
            services.append(service)
        a, b = clients
        registered = (await b.post("/api/v1/servers", json={"name": "bench", "url": server_url})).json()
        [echo] = [tool for tool in registered["tools"] if tool["name"] == TOOL]
        body = {"tool": TOOL, "arguments": {"text": "x"}}
        await b.put(
            f"/api/v1/tools/{echo['id']}/policy",
            json={"policy": "run_freely", "definition_hash": echo["definition_hash"]},
        )
        assert (await a.post("/api/v1/calls", json=body)).json()["ok"] is True
        effect: list[float] = []
        announced: list[float] = []
        stale = 0
        db = await stack.enter_async_context(open_database(url))
        for number in range(rounds):
            policy = "off" if number % 2 == 0 else "run_freely"
            await b.put(
                f"/api/v1/tools/{echo['id']}/policy",
                json={"policy": policy, "definition_hash": echo["definition_hash"]},
            )
            changed = time.perf_counter()
            if database == "postgresql":
                async with db.sessions.begin() as session:
                    wanted = await revision_of(session, org.org_id)
                with anyio.fail_after(10):
                    await services[0].hosts.in_step(org.org_id, wanted)
                announced.append((time.perf_counter() - changed) * 1000)
                changed = time.perf_counter()
            answer = (await a.post("/api/v1/calls", json=body)).json()
            effect.append((time.perf_counter() - changed) * 1000)
            if answer["ok"] is (policy == "off"):
                stale += 1
        if stale:
            raise SystemExit(f"{database}: {stale} of {rounds} calls did not reflect the change just made")

    def quantiles(values: list[float]) -> str:
        return f"{percentile(values, 50):.1f} / {percentile(values, 99):.1f}" if values else "—"

    return [database, str(rounds), "0", quantiles(effect), quantiles(announced)]


async def main(args: argparse.Namespace) -> None:
    print(load_line(), flush=True)
    rows = []
    with temp_home() as home:
        port = free_port()
        log = home.root / "server.log"
        with log.open("wb") as err:
            process = subprocess.Popen(  # noqa: ASYNC220 (once, before anything is measured)
                [PYTHON, str(SERVER_SCRIPT), "--port", str(port)], stdout=err, stderr=err, env=home.environ
            )
        try:
            await wait_for_port(Spawned("server", process, log), port)
            server_url = f"http://127.0.0.1:{port}/mcp"
            for database in args.databases:
                folder = home.root / database
                folder.mkdir()
                if database == "sqlite":
                    rows.append(
                        await measure(database, f"sqlite:///{folder / 'org.db'}", server_url, folder, args.rounds)
                    )
                    continue
                from tests.org._postgres import TemporaryCluster

                cluster = await anyio.to_thread.run_sync(TemporaryCluster.start)
                try:
                    rows.append(await measure(database, cluster.url(), server_url, folder, args.rounds))
                finally:
                    cluster.stop()
                    cluster.remove()
        finally:
            process.terminate()
            process.wait(10)
    print()
    print_table(
        ["database", "rounds", "stale calls", "change to effect ms (p50 / p99)", "announced ms (p50 / p99)"], rows
    )
    print(load_line())


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--databases", type=lambda text: text.split(","), default=["sqlite", "postgresql"])
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse())
