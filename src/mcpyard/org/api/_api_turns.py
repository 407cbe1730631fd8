"""The routes of turns: the organization's model, teammates and their conversations, assistants, visitors (API-6).

Like every route, each parses, authorizes and calls a service function; visitors' routes
(`/public/…`) need no credentials and answer only what a published assistant may show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpyard.errors import ServiceError
from mcpyard.org import turns
from mcpyard.org._bodies import check_text, json_body
from mcpyard.org._caller import Caller
from mcpyard.org.api._api import Authenticate, Handler, error_response, guard
from mcpyard.org.services import OrgService

__all__ = ["turn_routes"]

MODEL_FIELDS = ("base_url", "model", "api_key")
TEAMMATE_FIELDS = ("name", "instructions", "model", "server_ids")
ASSISTANT_FIELDS = ("name", "instructions", "tool_ids")
MESSAGE_FIELDS = ("message",)
VISITOR_FIELDS = ("message", "conversation")


def turn_routes(svc: OrgService, authenticate: Authenticate, rate_limits: turns.RateLimits) -> list[Route]:
    def guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        return guard(authenticate, handler)

    async def model(request: Request, caller: Caller) -> Response:
        if request.method == "PUT":
            return JSONResponse(await turns.put_model(svc, caller, await json_body(request, fields=MODEL_FIELDS)))
        return JSONResponse(await turns.get_model(svc, caller))

    async def teammates(request: Request, caller: Caller) -> Response:
        if request.method == "POST":
            created = await turns.create_teammate(svc, caller, await json_body(request, fields=TEAMMATE_FIELDS))
            return JSONResponse(created, status_code=201)
        return JSONResponse(await turns.list_teammates(svc, caller))

    async def teammate(request: Request, caller: Caller) -> Response:
        teammate_id = request.path_params["teammate_id"]
        if request.method == "PATCH":
            await turns.update_teammate(svc, caller, teammate_id, await json_body(request, fields=TEAMMATE_FIELDS))
        elif request.method == "DELETE":
            await turns.delete_teammate(svc, caller, teammate_id)
            return Response(status_code=204)
        return JSONResponse(await turns.get_teammate(svc, caller, teammate_id))

    async def conversations(request: Request, caller: Caller) -> Response:
        teammate_id = request.path_params["teammate_id"]
        if request.method == "GET":
            return JSONResponse(await turns.list_conversations(svc, caller, teammate_id))
        await json_body(request, fields=())
        return JSONResponse(await turns.start_conversation(svc, caller, teammate_id), status_code=201)

    async def conversation(request: Request, caller: Caller) -> Response:
        return JSONResponse(await turns.get_conversation(svc, caller, request.path_params["conversation_id"]))

    async def new_turn(request: Request, caller: Caller) -> Response:
        conversation_id = request.path_params["conversation_id"]
        body = await json_body(request, fields=MESSAGE_FIELDS)
        status, turn = await turns.take_turn(svc, caller, conversation_id, body)
        return JSONResponse(turn, status_code=status)

    async def turn(request: Request, caller: Caller) -> Response:
        return JSONResponse(await turns.get_turn(svc, caller, request.path_params["turn_id"]))

    async def assistants(request: Request, caller: Caller) -> Response:
        if request.method == "POST":
            created = await turns.create_assistant(svc, caller, await json_body(request, fields=ASSISTANT_FIELDS))
            return JSONResponse(created, status_code=201)
        return JSONResponse(await turns.list_assistants(svc, caller))

    async def assistant(request: Request, caller: Caller) -> Response:
        return JSONResponse(await turns.get_assistant(svc, caller, request.path_params["assistant_id"]))

    async def publications(request: Request, caller: Caller) -> Response:
        return JSONResponse(await turns.list_publications(svc, caller, request.path_params["assistant_id"]))

    async def publish(request: Request, caller: Caller) -> Response:
        await json_body(request, fields=())
        return JSONResponse(await turns.publish(svc, caller, request.path_params["assistant_id"]))

    async def preview(request: Request, caller: Caller) -> Response:
        body = await json_body(request, fields=MESSAGE_FIELDS)
        return JSONResponse(await turns.preview(svc, caller, request.path_params["assistant_id"], body))

    async def visitor(request: Request) -> Response:
        try:
            check_text(request)
            body = await json_body(request, fields=VISITOR_FIELDS)
            client = request.client.host if request.client is not None else "unknown"
            answer = await turns.visitor_turn(svc, request.path_params["slug"], body, client, rate_limits)
            return JSONResponse(answer)
        except turns.RateLimited as exc:
            response = error_response(exc.status, exc.code, exc.message)
            response.headers["Retry-After"] = str(exc.retry_after)
            return response
        except ServiceError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.details)

    return [
        Route("/api/v1/model", guarded(model), methods=["GET", "PUT"]),
        Route("/api/v1/teammates", guarded(teammates), methods=["GET", "POST"]),
        Route("/api/v1/teammates/{teammate_id}", guarded(teammate), methods=["GET", "PATCH", "DELETE"]),
        Route("/api/v1/teammates/{teammate_id}/conversations", guarded(conversations), methods=["GET", "POST"]),
        Route("/api/v1/conversations/{conversation_id}", guarded(conversation), methods=["GET"]),
        Route("/api/v1/conversations/{conversation_id}/turns", guarded(new_turn), methods=["POST"]),
        Route("/api/v1/turns/{turn_id}", guarded(turn), methods=["GET"]),
        Route("/api/v1/assistants", guarded(assistants), methods=["GET", "POST"]),
        Route("/api/v1/assistants/{assistant_id}", guarded(assistant), methods=["GET"]),
        Route("/api/v1/assistants/{assistant_id}/publications", guarded(publications), methods=["GET"]),
        Route("/api/v1/assistants/{assistant_id}/publish", guarded(publish), methods=["POST"]),
        Route("/api/v1/assistants/{assistant_id}/preview", guarded(preview), methods=["POST"]),
        Route("/public/assistants/{slug}/turns", visitor, methods=["POST"]),
    ]
