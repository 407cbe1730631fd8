"""A misspelt field is refused, never dropped unseen (API-6, ERR-1): every operation of the API document that takes
a body answers a misspelt field with 422 naming it and the field it meant, and changes nothing; the operations that
take no body refuse one with fields; nested objects of fixed shape (client credentials) do the same."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpyard.org.api._openapi import openapi_document
from tests.conftest import Home
from tests.org._service import Service, running_service

pytestmark = pytest.mark.anyio

_PARAM = re.compile(r"\{[^}]+\}")
LISTS = ("/api/v1/servers", "/api/v1/teammates", "/api/v1/assistants", "/api/v1/members", "/api/v1/tokens")


@pytest.fixture
async def service(database_url: str, home: Home) -> AsyncIterator[Service]:
    async with running_service(database_url, home.data_home) as running:
        yield running


def _operations(with_body: bool) -> list[tuple[str, str, list[str]]]:
    """(method, path, the body's field names) of every operation that takes a body (or, else, of every POST,
    PUT or PATCH that takes none), read from the document, so a new endpoint is tried without being listed here."""
    found = []
    for path, item in openapi_document()["paths"].items():
        for method, operation in item.items():
            if method not in ("post", "put", "patch"):
                continue
            body = operation.get("requestBody")
            if (body is not None) != with_body:
                continue
            schema = body["content"]["application/json"]["schema"] if body else {}
            found.append((method.upper(), path, sorted(schema.get("properties", {}))))
    return found


def _misspelt(name: str) -> str:
    """`name` with its last-but-one letter dropped, as a hurried hand types it (`bearer_token` → `bearer_tokn`)."""
    return name[:-2] + name[-1]


async def _state(service: Service) -> list[Any]:
    return [await service.get(path) for path in (*LISTS, "/api/v1/audit", "/api/v1/model")]


WITH_BODY = _operations(with_body=True)


@pytest.mark.parametrize(("method", "path", "fields"), WITH_BODY, ids=[f"{m} {p}" for m, p, _ in WITH_BODY])
async def test_api6_every_body_refuses_a_misspelt_field_naming_it_and_the_field_it_meant(
    service: Service, method: str, path: str, fields: list[str]
) -> None:
    assert fields, f"{method} {path}: the document names no field of its body"
    meant = max(fields, key=len)
    wrong = _misspelt(meant)
    before = await _state(service)
    response = await service.request(method, _PARAM.sub("nothing", path), json={wrong: "x"})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"] == f"unknown field `{wrong}`; did you mean `{meant}`?"
    assert await _state(service) == before, "nothing changed"


@pytest.mark.parametrize(
    ("path", "body", "wrong", "meant"),
    [
        (
            "/api/v1/servers",
            {"name": "tools", "url": "http://127.0.0.1:1/mcp", "bearer_tokn": "s"},
            "bearer_tokn",
            "bearer_token",
        ),
        ("/api/v1/teammates", {"name": "helper", "server_idz": []}, "server_idz", "server_ids"),
        ("/api/v1/calls", {"tool": "tools__lookup", "argumnets": {"q": 1}}, "argumnets", "arguments"),
        ("/api/v1/tokens", {"lable": "ci"}, "lable", "label"),
    ],
)
async def test_api6_the_misspellings_that_were_dropped_are_refused_with_the_rest_of_the_body_valid(
    service: Service, path: str, body: dict[str, Any], wrong: str, meant: str
) -> None:
    before = await _state(service)
    response = await service.request("POST", path, json=body)
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert message == f"unknown field `{wrong}`; did you mean `{meant}`?"
    assert await _state(service) == before, "nothing was made"


NO_BODY = _operations(with_body=False)


@pytest.mark.parametrize(("method", "path", "fields"), NO_BODY, ids=[f"{m} {p}" for m, p, _ in NO_BODY])
async def test_api6_an_operation_without_a_body_refuses_one_with_fields(
    service: Service, method: str, path: str, fields: list[str]
) -> None:
    assert fields == []
    response = await service.request(method, _PARAM.sub("nothing", path), json={"reason": "x"})
    assert response.status_code == 422, response.text
    assert "`reason`" in response.json()["error"]["message"]


async def test_api6_client_credentials_refuse_a_misspelt_field(service: Service) -> None:
    body = {
        "name": "tools",
        "url": "http://127.0.0.1:1/mcp",
        "client_credentials": {"client_id": "a", "client_secrt": "b", "issuer": "http://127.0.0.1:1"},
    }
    response = await service.request("POST", "/api/v1/servers", json=body)
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert message == "client_credentials: unknown field `client_secrt`; did you mean `client_secret`?"
    assert await service.get("/api/v1/servers") == []


def test_api6_the_document_says_every_body_takes_only_its_fields() -> None:
    for method, path, _ in WITH_BODY:
        operation = openapi_document()["paths"][path][method.lower()]
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert schema.get("additionalProperties") is False, f"{method} {path}"
