"""CALL-8 in the organization service: a call whose server answers with a task (the tasks extension) runs to its
result through `POST /api/v1/calls`, recorded like any call. The task lives in the replica that made the call:
kept in the database and taken over by another replica is still to come.

The service's API, the fixture server `tasks` over real HTTP in the test's process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._service import Service, running_service
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    if database_url.startswith("postgresql"):
        pytest.skip("the task is the host's, whatever the database: once is enough")
    async with running_service(database_url, home.data_home) as running:
        yield running


async def test_call8_a_members_call_answered_with_a_task_runs_to_its_result(service: Service) -> None:
    async with serve_http_in_process("tasks") as url:
        tools = by_tool(await register(service, url, name="jobs", token=None))
        await set_policy(service, tools["slow"], "run_freely")
        with anyio.fail_after(60):
            done = await call(service, "jobs__slow", {"seconds": 2})
        assert done["ok"] is True, done
        assert "slow done after 2 s" in done["text"]
        [used] = await service.get("/api/v1/usage", params={"group_by": "tool"})
        assert (used["key"], used["calls"], used["errors"]) == ("jobs__slow", 1, 0), "recorded like any call"
