"""The routes of servers' questions: the inbox's questions, one question, and its one answer (API-6).

Like every route, each parses, authorizes and calls a service function (`services/_answers.py`): a member
sees and answers the questions of their own calls, owners and admins every one; another
organization's question, or another member's for a member, is 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import Invalid
from mcpyard.org import services
from mcpyard.org._bodies import json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._api import Authenticate, Handler, guard
from mcpyard.org.services import OrgService

__all__ = ["question_routes"]

ANSWER_FIELDS = ("action", "content")
"""An answer's fields; its `content` is shaped by the question's own schema (checked in `services/_answers.py`)."""


def question_routes(svc: OrgService, authenticate: Authenticate) -> list[Route]:
    def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        return guard(authenticate, handler)

    async def questions(request: Request, caller: Caller) -> Response:
        status = request.query_params.get("status")
        if status is not None and status not in services.QUESTION_STATES:
            raise Invalid("invalid_request", f"`status` must be one of {', '.join(services.QUESTION_STATES)}")
        return JSONResponse(await services.list_questions(svc, caller, status))

    async def question(request: Request, caller: Caller) -> Response:
        return JSONResponse(await services.get_question(svc, caller, request.path_params["question_id"]))

    async def answer(request: Request, caller: Caller) -> Response:
        body = await json_body(request, fields=ANSWER_FIELDS)
        question_id = request.path_params["question_id"]
        answered = await services.answer_question(svc, caller, question_id, body.get("action"), body.get("content"))
        return JSONResponse(answered)

    return [
        Route("/api/v1/questions", guarded(questions), methods=["GET"]),
        Route("/api/v1/questions/{question_id}", guarded(question), methods=["GET"]),
        Route("/api/v1/questions/{question_id}/answer", guarded(answer), methods=["POST"]),
    ]
