"""Whether the service answers and whether it can serve: `/healthz` and `/readyz`, for load balancers (API-8).

`/healthz` says the process answers. `/readyz` says the replica can serve now: the database
answers, and the sealing key is usable and holds every key the stored secrets were sealed with (a
replica started with an old key during a rotation is not ready). It also says whether the replica
hears the others' announcements (PostgreSQL); a replica that does not still serves correctly (it
reads the change counter before each call), so that alone never makes it unready. A replica told
to stop with a drain time (`mcpyard org serve --drain`) is not ready from then on, while it still
serves every request it is sent: the load balancer takes it out before it stops listening.
"""

from __future__ import annotations

import anyio
from sqlalchemy import select, text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import ConfigError, ServiceError
from mcpyard.org.api._operations import running
from mcpyard.org.services import CredentialSealer
from mcpyard.org.store import Credential, ModelSetting, Question, reading

__all__ = ["health_routes", "stop_being_ready"]

CHECK_SECONDS = 5.0
"""How long `/readyz` waits for the database before it says it is not ready."""
_PROBE = b"mcpyard readiness probe"


def stop_being_ready(app: Starlette) -> None:
    """From now on `/readyz` answers 503 (`stopping`): the replica is about to stop, and still serves meanwhile."""
    app.state.stopping = True


async def healthz(request: Request) -> Response:
    del request
    return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})


async def readyz(request: Request) -> Response:
    if getattr(request.app.state, "stopping", False):
        return _answer({"stopping": "this replica is stopping; it serves what it is sent until it stops listening"})
    checks: dict[str, str] = {}
    try:
        service = running(request).service
    except ServiceError as exc:
        return _answer({"service": exc.message})
    try:
        with anyio.fail_after(CHECK_SECONDS):
            async with reading(service.db) as session:
                await session.execute(text("SELECT 1"))
                in_use = set(await session.scalars(select(Credential.key_id).distinct()))
                for sealed in (ModelSetting.key_id, Question.key_id):  # a model's key; an answer waiting for its call
                    in_use |= {kid for kid in await session.scalars(select(sealed).distinct()) if kid}
        checks["database"] = "ok"
    except TimeoutError:
        return _answer({"database": f"did not answer within {CHECK_SECONDS:g} s"})
    except Exception as exc:  # whatever the driver raises: named by its kind only (never a URL or a password)
        return _answer({"database": f"not usable ({type(exc).__name__})"})
    problem = _key_problem(service.sealer, in_use)
    if problem is not None:
        return _answer({**checks, "key": problem})
    checks["key"] = "ok"
    checks["replicas"] = service.hosts.hearing
    return _answer(checks, ready=True)


def _key_problem(sealer: CredentialSealer, in_use: set[str]) -> str | None:
    """Why the sealing key is not usable: it does not load or open what it seals, or misses a key in use."""
    try:
        opened = sealer.unseal(*sealer.seal("probe", context=_PROBE), context=_PROBE)
    except ConfigError as exc:
        return exc.message
    if opened != "probe":
        return "the sealing key does not open what it sealed"
    missing = sorted(kid for kid in in_use if not sealer.holds(kid))
    if missing:
        return (
            f"secrets in the database were sealed with key {', '.join(missing)}, which this replica does not hold: "
            "give it every key (MCPYARD_ORG_KEY=NEW,OLD while rotating)"
        )
    return None


def _answer(checks: dict[str, str], *, ready: bool = False) -> JSONResponse:
    body = {"status": "ok" if ready else "unavailable", "checks": checks}
    return JSONResponse(body, status_code=200 if ready else 503, headers={"Cache-Control": "no-store"})


def health_routes() -> list[Route]:
    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]
