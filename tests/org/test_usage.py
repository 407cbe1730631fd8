"""Usage (API-8, ORG-11): `GET /api/v1/usage` sums the organization's calls in a period by member (email), server
(name), tool (the name the model sees) or UTC day: calls, errors, seconds and result bytes, from the calls' records.
Owners and admins only; a bad period or grouping is a clear 422. Served on 127.0.0.1, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with served_service(database_url, home.data_home) as served:
        yield served


def _bytes(*answers: dict[str, Any]) -> int:
    """What the calls' records count of their results: the UTF-8 bytes of each result's text."""
    return sum(len(str(answer["text"]).encode()) for answer in answers)


async def _usage(service: Service, token: str | None = None, **params: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await service.get("/api/v1/usage", params=params, token=token)
    return rows


async def test_api8_org11_usage_sums_calls_errors_and_bytes_by_member_server_tool_and_day(
    service: Service, upstream: str
) -> None:
    tools = by_tool(await register(service, upstream))
    for name in ("lookup", "big"):
        await set_policy(service, tools[name], "run_freely")
    await set_policy(service, tools["destroy"], "off")
    member = await service.add_member("member@acme.test")
    owners = [await call(service, "tools__lookup", {"key": key}) for key in ("a", "bb")]
    big = await call(service, "tools__big", {"size": 1234}, token=member)
    refused = await call(service, "tools__destroy", {"target": "x"}, token=member)
    assert refused["error"]["code"] == "policy_off"

    by_member = await _usage(service, group_by="member")
    assert [(row["key"], row["calls"], row["errors"]) for row in by_member] == [
        ("member@acme.test", 2, 1),
        ("owner@acme.test", 2, 0),
    ]
    assert by_member[0]["bytes"] == _bytes(big, refused)
    assert by_member[1]["bytes"] == _bytes(*owners)
    assert all(isinstance(row["seconds"], float) and row["seconds"] >= 0 for row in by_member)

    by_tool_name = {row["key"]: row for row in await _usage(service, group_by="tool")}
    assert {key: (row["calls"], row["errors"]) for key, row in by_tool_name.items()} == {
        "tools__lookup": (2, 0),
        "tools__big": (1, 0),
        "tools__destroy": (1, 1),
    }
    assert by_tool_name["tools__big"]["bytes"] == _bytes(big)
    assert by_tool_name["tools__big"]["bytes"] >= 1234

    [server] = await _usage(service, group_by="server")
    assert (server["key"], server["calls"], server["errors"]) == ("tools", 4, 1)
    assert server["bytes"] == _bytes(*owners, big, refused)

    today = datetime.now(UTC).date()
    by_day = await _usage(service, group_by="day", since=str(today), until=str(today))
    assert [(row["key"], row["calls"], row["errors"]) for row in by_day] == [(str(today), 4, 1)]
    assert await _usage(service, group_by="day") == by_day, "the last 30 days by default"
    yesterday = str(today - timedelta(days=1))
    assert await _usage(service, since=yesterday, until=yesterday) == [], "a period before the calls has none"


async def test_api8_only_owners_and_admins_read_usage(service: Service) -> None:
    member = await service.add_member("member@acme.test")
    admin = await service.add_member("admin@acme.test", "admin")
    assert (await service.request("GET", "/api/v1/usage", token=member)).status_code == 403
    assert await _usage(service, admin) == []


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"group_by": "planet"}, "group_by"),
        ({"group_by": ""}, "group_by"),
        ({"since": "last tuesday"}, "since"),
        ({"until": "2026-13-01"}, "until"),
        ({"since": "2026-12-05", "until": "2026-12-01"}, "since"),
        ({"since": "2024-01-01", "until": "2026-01-01"}, "366 days"),
        ({"until": "0001-01-01"}, "years"),
        ({"since": "9999-12-31T23:00:00-05:00"}, "since"),
    ],
)
async def test_api8_a_bad_period_or_grouping_is_refused_naming_it(
    service: Service, params: dict[str, str], named: str
) -> None:
    refused = await service.request("GET", "/api/v1/usage", params=params)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "invalid_request"
    assert named in refused.json()["error"]["message"]
