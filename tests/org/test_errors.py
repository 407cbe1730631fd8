"""The organization's refusals are one tree under `mcpyard.errors.ServiceError`: each kind is one HTTP status, the
service's own refusals are kinds of it, and the API answers each with its kind's status and one error object
(ERR-1, API-6)."""

from __future__ import annotations

import inspect
import pkgutil
from collections.abc import AsyncIterator
from importlib import import_module

import httpx2
import pytest

import mcpyard.org
from mcpyard import errors
from mcpyard.errors import (
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    NotSignedIn,
    ServiceError,
    Unavailable,
    Unreadable,
    UnsupportedMedia,
)
from mcpyard.org.services import COOKIE
from tests.conftest import Home
from tests.org._service import Service, running_service, service_app

KINDS = [
    kind
    for kind in (getattr(errors, name) for name in errors.__all__)
    if isinstance(kind, type) and issubclass(kind, ServiceError) and kind is not ServiceError
]


def _org_refusals() -> list[type[ServiceError]]:
    """Every kind of refusal a module of the organization service defines for itself."""
    found: list[type[ServiceError]] = []
    for module in pkgutil.walk_packages(mcpyard.org.__path__, "mcpyard.org."):
        if ".migrations" in module.name:
            continue  # revision scripts, run by alembic only
        for _, value in inspect.getmembers(import_module(module.name), inspect.isclass):
            if issubclass(value, ServiceError) and value.__module__ == module.name:
                found.append(value)
    return found


def test_err1_each_kind_of_refusal_is_one_status() -> None:
    statuses = [kind.status for kind in KINDS]
    assert len(KINDS) >= 11
    assert len(set(statuses)) == len(statuses), "two kinds answer with one status: one of them is not needed"
    assert all(400 <= status < 500 for status in statuses if status != Unavailable.status), statuses


def test_err1_the_services_own_refusals_are_kinds_of_the_tree() -> None:
    own = _org_refusals()
    assert own, "the walk found none: the sign-in throttle and the assistants' rate limit define one each"
    for refusal in own:
        kind = next(base for base in refusal.__mro__ if base in KINDS)
        assert refusal.status == kind.status, refusal


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


@pytest.mark.anyio
async def test_api6_the_api_answers_each_kind_with_its_status_and_one_error_object(service: Service) -> None:
    def typed(media: str) -> dict[str, str]:
        return {**service.headers(), "Content-Type": media}

    member = await service.add_member("member@acme.test")
    [owner] = [one for one in await service.get("/api/v1/members") if one["role"] == "owner"]
    answers = {
        NotSignedIn: await service.client.get("/api/v1/servers"),
        Forbidden: await service.request("GET", "/api/v1/audit", token=member),
        NotFound: await service.request("GET", "/api/v1/servers/no-such-server"),
        Conflict: await service.request("PATCH", f"/api/v1/members/{owner['id']}", json={"role": "member"}),
        Invalid: await service.request("POST", "/api/v1/servers", json={}),
        Unreadable: await service.client.post(
            "/api/v1/servers", content=b"{not json", headers=typed("application/json")
        ),
        UnsupportedMedia: await service.client.post("/api/v1/session", content=b"{}", headers=typed("text/plain")),
    }
    for kind, answer in answers.items():
        assert answer.status_code == kind.status, (kind.__name__, answer.text)
        error = answer.json()["error"]
        assert set(error) >= {"code", "message"}, (kind.__name__, error)
        assert error["message"], kind.__name__


@pytest.mark.anyio
async def test_err1_a_request_while_the_service_is_not_serving_is_503_and_reads_nothing(
    database_url: str, home: Home
) -> None:
    """Before its lifespan opened the service (or after it closed), every route answers 503, the API with one
    error object and a page as a page; nothing is counted or read (a sign-in is not a failed attempt)."""
    app = service_app(database_url, home.data_home)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://org.test") as client:
        api = await client.get("/api/v1/servers", headers={"Authorization": "Bearer anything"})
        login = await client.post("/api/v1/login", json={"email": "a@b.test", "password": "x" * 12})
        page = await client.get("/servers", headers={"Accept": "text/html", "Cookie": f"{COOKIE}=anything"})
    for answer in (api, login):
        assert answer.status_code == Unavailable.status, answer.text
        assert answer.json()["error"]["code"] == "unavailable"
    assert page.status_code == Unavailable.status
    assert "not serving" in page.text
    assert "Traceback" not in page.text
