"""The official conformance suite's server scenarios against the organization's `/mcp` (ORG-10, API-7).

The service is served for real on 127.0.0.1 (SQLite), with the fixture server `org_tools` registered and its
tools reviewed. The suite has no way to send a bearer token, so the app is served behind `with_bearer`, which adds
the owner's API token to each HTTP request that carries none; everything else (Host, Origin, the body, the
streams) reaches `/mcp` as the suite sent it.

Each scenario that applies to an endpoint offering an organization's reviewed tools must pass and run at least one
check. The scenarios that do not apply are listed in `org_server_not_applicable.json`, each with its reason: most call
the suite's own fixture tools by their bare names, or read resources and prompts, which the endpoint does not offer.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.conformance.test_client import ANSI, RESULT, suite
from tests.conformance.test_server import SCENARIOS
from tests.conftest import Home
from tests.org._flows import register, set_policy
from tests.org._served import serving
from tests.org._service import Service, service_app, set_up

pytestmark = [pytest.mark.anyio, pytest.mark.conformance]

HERE = Path(__file__).resolve().parent
NOT_APPLICABLE: dict[str, str] = json.loads((HERE / "org_server_not_applicable.json").read_text())
SCENARIO_SECONDS = 120


def with_bearer(app: ASGIApp, token: str) -> ASGIApp:
    """`app`, with `Authorization: Bearer <token>` on each HTTP request that has no `Authorization` header."""

    async def bearer(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not any(name == b"authorization" for name, _ in scope["headers"]):
            scope = {**scope, "headers": [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]}
        await app(scope, receive, send)

    return bearer


@pytest.fixture
async def endpoint(tmp_path: Path, home: Home, upstream: str) -> AsyncIterator[str]:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'org.db'}"
    org = await set_up(database_url)
    app = service_app(database_url, home.data_home)
    async with serving(with_bearer(app, org.owner_token)) as origin:
        async with httpx2.AsyncClient(base_url=origin, timeout=60, trust_env=False) as client:
            service = Service(client, org, database_url, home.data_home, app=app)
            server = await register(service, upstream)
            for tool in server["tools"]:
                await set_policy(service, tool, "run_freely")
        yield f"{origin}/mcp"


def test_the_not_applicable_list_names_real_scenarios_with_reasons() -> None:
    assert set(NOT_APPLICABLE) <= set(SCENARIOS)
    assert all(reason.strip() for reason in NOT_APPLICABLE.values())


async def test_org10_the_conformance_suite_passes_against_the_mcp_endpoint(endpoint: str) -> None:
    conformance, node_bin = suite()
    environment = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    outcomes: dict[str, str] = {}
    applicable = [scenario for scenario in SCENARIOS if scenario not in NOT_APPLICABLE]
    assert len(applicable) >= 6, "the scenarios about the protocol itself apply to any server"
    for scenario in applicable:
        with anyio.fail_after(SCENARIO_SECONDS):
            done = await anyio.run_process(
                [str(conformance), "server", "--url", endpoint, "--scenario", scenario],
                env=environment,
                cwd=conformance.parent.parent.parent,
                check=False,
            )
        output = ANSI.sub("", (done.stdout + done.stderr).decode(errors="replace"))
        counts = RESULT.findall(output)
        passed, total = (int(n) for n in counts[-1]) if counts else (0, 0)
        clean = bool(counts) and passed == total and total > 0 and "0 failed" in output
        if not clean:
            outcomes[scenario] = f"{passed}/{total} checks passed:\n{output[-2000:]}"
    assert not outcomes, "\n\n".join(f"{scenario}: {said}" for scenario, said in outcomes.items())
