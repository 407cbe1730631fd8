"""The organization's API answers as its own document says: schemathesis sends generated requests, valid and
invalid, to every operation of `/api/v1/openapi.json` on the service served by uvicorn, as the owner of an
organization with a registered server, so the deep paths get real ids too. No answer is a 5xx; every status is one
the document lists for that operation, and every body matches its schema (API-6, ERR-1)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CheckFunction
from schemathesis.core.result import Ok
from starlette.routing import Route

from mcpyard.org.api._openapi import openapi_document
from tests.conftest import Home
from tests.org._flows import by_tool, call, register, set_policy
from tests.org._served import served_service
from tests.org._service import Service, running_service
from tests.servers.http_runner import serve_http

pytestmark = pytest.mark.anyio

EXAMPLES = 20
"""Generated requests per operation and mode: enough to find what a document hides, few enough for a minute or two.
Derandomized: each run sends the same requests, so a failure is one anyone can run again."""
CHECKS: list[CheckFunction] = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_headers_conformance,
    schemathesis.checks.response_schema_conformance,
]
NEGATIVE_CHECKS: list[CheckFunction] = [*CHECKS, schemathesis.checks.negative_data_rejection]
LAST = {"PATCH": 1, "DELETE": 2}
"""Operations that change or remove what the others need run after them: edits, then deletions."""
SHARDS = 4
"""The operations are shared among this many tests, each with a service of its own, so that workers share them."""


async def _real_ids(service: Service, upstream: str, asking: str) -> dict[str, dict[str, str]]:
    """Give the organization something behind every path: a server, its tools, calls waiting, a stored result, a
    server's question, a spare token, a spare member; the ids each operation's path parameters may take (`*` for
    every operation)."""
    server = await register(service, upstream)
    tools = by_tool(server)
    await set_policy(service, tools["write"], "ask_first")
    await set_policy(service, tools["big"], "run_freely")
    await set_policy(service, tools["lookup"], "run_freely")
    to_approve = (await call(service, "tools__write", {"note": "approve me"}, expect=202))["approval"]["id"]
    to_decline = (await call(service, "tools__write", {"note": "decline me"}, expect=202))["approval"]["id"]
    handle = (await call(service, "tools__big", {"size": 100_000}))["handle"]
    assert handle, "a long result is kept by handle"
    spare = await service.post("/api/v1/tokens", {"label": "spare"}, expect=201)
    body = {"email": "spare@acme.test", "role": "member", "password": "correct horse battery staple"}
    spare_member = await service.post("/api/v1/members", body, expect=201)
    sign_up = by_tool(await register(service, asking, name="asks", token=None))["sign_up"]
    await set_policy(service, sign_up, "run_freely")
    question = (await call(service, "asks__sign_up", expect=202))["question"]["id"]
    return {
        "*": {
            "server_id": server["id"],
            "tool_id": tools["lookup"]["id"],
            "handle": handle,
            "token_id": spare["id"],
            "question_id": question,
            "member_id": spare_member["id"],
        },
        "POST /api/v1/approvals/{approval_id}/approve": {"approval_id": to_approve},
        "POST /api/v1/approvals/{approval_id}/decline": {"approval_id": to_decline},
    }


def _check_operation(operation: Any, mode: GenerationMode, origin: str, ids: Mapping[str, str]) -> Callable[[], None]:
    """A hypothesis test of one operation in one mode; in the positive mode, about half the requests name real ids."""
    checks = NEGATIVE_CHECKS if mode is GenerationMode.NEGATIVE else CHECKS

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode), real=st.booleans())
    def check(case: Any, real: bool) -> None:
        if real and mode is GenerationMode.POSITIVE and case.path_parameters:
            case.path_parameters = {name: ids.get(name, value) for name, value in case.path_parameters.items()}
        response = case.call(base_url=origin, timeout=60)
        case.validate_response(response, checks=checks)

    return check


def _run(
    origin: str, token: str, ids: dict[str, dict[str, str]], shard: int, modes: Sequence[GenerationMode]
) -> list[str]:
    """Every `SHARDS`th operation from the `shard`th, in `modes` (edits and deletions last); what failed, one entry per
    operation and mode."""
    schema = schemathesis.openapi.from_url(f"{origin}/api/v1/openapi.json", timeout=30)
    # A header the configuration gives is sent as it is, in both modes: every request is the owner's.
    schema.config.update(headers={"Authorization": f"Bearer {token}"})
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"schemathesis cannot read an operation of the document: {result.err()}"
        operations.append(result.ok())
    operations.sort(key=lambda operation: (LAST.get(operation.method.upper(), 0), operation.path, operation.method))
    failures: list[str] = []
    for operation in operations[shard::SHARDS]:
        label = f"{operation.method.upper()} {operation.path}"
        for mode in modes:
            try:
                _check_operation(operation, mode, origin, {**ids["*"], **ids.get(label, {})})()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, f"{label}: no valid request could be made"
                continue  # nothing of it can be made invalid (no parameters, no body): no negative requests
            # Every operation is tried; all that failed are reported together. Schemathesis raises its findings as
            # a `BaseExceptionGroup` of check failures (a worker thread: no cancellation to let through here).
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{label} ({mode.value}): {exc}")
    return failures


# A quarter of the operations, a bounded number of generated requests each: about twenty seconds on a quiet
# core, and more on a worker sharing its core with others; the suite's two-minute limit is for a stuck test.
@pytest.mark.long
@pytest.mark.timeout(300)
@pytest.mark.parametrize("shard", range(SHARDS))
async def test_api6_every_operation_answers_as_the_openapi_document_says(
    database_url: str, home: Home, upstream: str, shard: int
) -> None:
    async with (
        serve_http("elicits", "streamable-http") as asking,
        served_service(database_url, home.data_home) as service,
    ):
        ids = await _real_ids(service, upstream, asking)
        origin = str(service.client.base_url).rstrip("/")
        # Requests the document refuses are refused by the API's checks before any query: the negative mode runs on one
        # database. The positive one runs on both (what PostgreSQL stores differs: a NUL in a text, say).
        modes = [GenerationMode.POSITIVE]
        if not database_url.startswith("postgresql"):
            modes.append(GenerationMode.NEGATIVE)
        failures = await anyio.to_thread.run_sync(_run, origin, service.org.owner_token, ids, shard, modes)
    assert not failures, "\n\n".join(failures)


async def test_api6_the_document_names_exactly_the_operations_the_api_routes(database_url: str, home: Home) -> None:
    """Schemathesis sends requests only to what the document names, and a named operation with no route would answer
    404 as if its id were unknown: the routes under `/api/v1` and `/public` and the document's operations are the
    same set (API-6)."""
    async with running_service(database_url, home.data_home) as service:
        assert service.app is not None
        routes = [route for route in service.app.router.routes if isinstance(route, Route)]
    routed = {
        (method.lower(), route.path)
        for route in routes
        if route.path.startswith(("/api/", "/public/"))
        for method in route.methods or ()
        if method != "HEAD"  # Starlette adds it to every GET
    }
    documented = {
        (method, path)
        for path, item in openapi_document()["paths"].items()
        for method in item
        if method in ("get", "put", "post", "delete", "patch")
    }
    assert routed == documented, {"not documented": routed - documented, "not routed": documented - routed}
