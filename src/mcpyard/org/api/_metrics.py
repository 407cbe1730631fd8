"""`/metrics` for the organization service (OBS-1, API-8): Prometheus text, for one organization or for the operator.

On the service's own port, `/metrics` takes an owner's or admin's API token and shows only their
organization's series (another organization's servers and tools are not theirs to see). The
operator's listener (`mcpyard org serve --metrics-port`) shows every organization's, and asks for
nothing: it listens on loopback unless told otherwise, for a scraper on the same machine or network.

What waits in the inboxes and where the servers stand are read from the database when scraped, so
every replica reports the same numbers for them.
"""

from __future__ import annotations

from sqlalchemy import func, select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpyard.errors import ServiceError
from mcpyard.ops import APPROVALS_WAITING, CONTENT_TYPE, QUESTIONS_WAITING, exposition, set_servers, set_waiting
from mcpyard.org._caller import ADMINS, require
from mcpyard.org.api._operations import Running, opened, refusal, running
from mcpyard.org.store import Approval, Question, RegisteredServer

__all__ = ["metrics_app", "metrics_routes"]


async def _read_gauges(service: Running, org_id: str | None) -> None:
    """The waiting approvals and questions, and the servers' states, as the database has them now."""
    approvals = select(Approval.org_id, func.count()).where(Approval.status == "pending")
    questions = select(Question.org_id, func.count()).where(Question.status == "pending")
    servers = select(RegisteredServer.org_id, RegisteredServer.state).where(RegisteredServer.state != "deleted")
    if org_id is not None:
        approvals = approvals.where(Approval.org_id == org_id)
        questions = questions.where(Question.org_id == org_id)
        servers = servers.where(RegisteredServer.org_id == org_id)
    async with service.service.db.begin() as session:
        waiting: dict[str, int] = dict((await session.execute(approvals.group_by(Approval.org_id))).all())
        asked: dict[str, int] = dict((await session.execute(questions.group_by(Question.org_id))).all())
        states: dict[str, list[str]] = {}
        for org, state in await session.execute(servers):
            states.setdefault(org, []).append(state)
    set_waiting(APPROVALS_WAITING, waiting if org_id is None else {org_id: waiting.get(org_id, 0)})
    set_waiting(QUESTIONS_WAITING, asked if org_id is None else {org_id: asked.get(org_id, 0)})
    for org, found in states.items() if org_id is None else [(org_id, states.get(org_id, []))]:
        set_servers(found, org=org)


async def organization_metrics(request: Request) -> Response:
    """One organization's series, for its owners and admins."""
    try:
        service = running(request)
        caller = await service.authenticate(request)
        require(caller, *ADMINS)
    except ServiceError as exc:
        return refusal(exc)
    await _read_gauges(service, caller.org_id)
    return Response(exposition(caller.org_id), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})


def metrics_routes() -> list[Route]:
    return [Route("/metrics", organization_metrics, methods=["GET"])]


def metrics_app(main: Starlette) -> Starlette:
    """The operator's listener: every organization's series at `/metrics`, nothing else."""

    async def every_organization(request: Request) -> Response:
        del request
        try:
            service = opened(getattr(main.state, "running", None))
        except ServiceError as exc:
            return refusal(exc)
        await _read_gauges(service, None)
        return Response(exposition(), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})

    return Starlette(routes=[Route("/metrics", every_organization, methods=["GET"])])
