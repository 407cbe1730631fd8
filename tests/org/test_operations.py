"""The API's operations are declared once, beside their handlers, and both its route table and its OpenAPI paths are
built from the declarations: one route per path with exactly its declared methods, a path's parameters from the path
itself, and a method declared twice on one path refused by name (API-6)."""

from __future__ import annotations

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from mcpyard.errors import Conflict, TooMany
from mcpyard.org.api import OPERATIONS
from mcpyard.org.api._operations import Operations, paths, refusal, routes
from mcpyard.org.api._schema import op
from tests.conftest import Home
from tests.org._service import running_service


async def _hello(request: Request) -> Response:
    del request
    return PlainTextResponse("hello")


def _declared() -> Operations:
    api = Operations()
    api.public("GET", "/things/{thing_id}", op("One thing", {"200": ("the thing", None)}, "404"))(_hello)
    api.public("DELETE", "/things/{thing_id}", op("Delete it", {"204": ("deleted", None)}, "404"))(_hello)
    api.public("GET", "/things", op("Every thing", {"200": ("the things", None)}, ""))(_hello)
    return api


def test_api6_one_route_per_path_with_exactly_its_declared_methods() -> None:
    built = routes(_declared().declared)
    assert [(route.path, sorted(route.methods or ())) for route in built if isinstance(route, Route)] == [
        ("/things/{thing_id}", ["DELETE", "GET", "HEAD"]),
        ("/things", ["GET", "HEAD"]),
    ]


def test_api6_the_paths_take_their_parameters_from_the_path_and_public_operations_need_no_credentials() -> None:
    document = paths(_declared().declared)
    assert document["/things/{thing_id}"]["parameters"] == [
        {"name": "thing_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
    ]
    assert "parameters" not in document["/things"]
    assert document["/things/{thing_id}"]["get"]["security"] == []
    assert set(document["/things/{thing_id}"]) == {"parameters", "get", "delete"}


def test_api6_a_method_declared_twice_on_one_path_is_refused_by_name() -> None:
    api = _declared()
    api.public("GET", "/things", op("Every thing again", {"200": ("the things", None)}, ""))(_hello)
    with pytest.raises(ValueError, match="GET /things is declared twice"):
        routes(api.declared)


def test_api6_the_service_declares_each_operation_once() -> None:
    keys = [(operation.method, operation.path) for operation in OPERATIONS]
    assert len(keys) == len(set(keys))
    assert len(keys) >= 50, "every operation of the API is gathered"
    assert ("GET", "/api/v1/openapi.json") in keys


def test_err1_a_refusal_is_one_error_object_with_its_kinds_status_and_when_to_try_again() -> None:
    waited = refusal(TooMany("rate_limited", "wait", retry_after=7))
    assert (waited.status_code, waited.headers["Retry-After"]) == (429, "7")
    conflict = refusal(Conflict("not_publishable", "no", details={"tools": []}))
    assert conflict.status_code == 409
    assert "retry-after" not in conflict.headers
    assert conflict.body == b'{"error":{"code":"not_publishable","message":"no","tools":[]}}'


@pytest.mark.anyio
async def test_api6_head_runs_the_get_operation_never_another(database_url: str, home: Home) -> None:
    """HEAD on a path that takes GET and POST answers as GET would, without a body, and never runs the POST
    (a HEAD of /api/v1/tokens makes no token)."""
    async with running_service(database_url, home.data_home) as service:
        before = await service.get("/api/v1/tokens")
        head = await service.request("HEAD", "/api/v1/tokens")
        assert (head.status_code, head.content) == (200, b"")
        assert await service.get("/api/v1/tokens") == before
