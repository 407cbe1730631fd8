"""The turn operations of the organization's OpenAPI document: model, teammates, conversations, assistants (API-6)."""

from __future__ import annotations

from mcpyard.org.api._openapi_parts import BOOL, NSTR, STR, S, array, enum, obj, op, path
from mcpyard.org.api._openapi_questions import QUESTION
from mcpyard.org.turns import (
    MAX_ASSISTANT_INSTRUCTIONS,
    MAX_ASSISTANT_NAME,
    MAX_KEY,
    MAX_MESSAGE,
    MAX_MODEL_NAME,
    MAX_TEAMMATE_INSTRUCTIONS,
    MAX_TEAMMATE_NAME,
    MAX_TOOLS,
)

__all__ = ["turn_paths"]


def turn_paths() -> S:
    """The paths of turns, by path."""
    text, ntext, boolean = STR, NSTR, BOOL

    def bounded(limit: int, *, required: bool = False) -> S:
        return {"type": "string", "maxLength": limit, **({"minLength": 1} if required else {})}

    model = obj(["base_url", "model", "has_key"], base_url=ntext, model=ntext, has_key=boolean)
    model_body = obj(
        ["base_url", "model"],
        base_url={"type": "string", "minLength": 1},
        model=bounded(MAX_MODEL_NAME, required=True),
        api_key={"type": "string", "minLength": 1, "maxLength": MAX_KEY, "pattern": "^[^\\r\\n]+$"},
    )
    teammate = obj(
        ["id", "name", "instructions", "model", "server_ids", "tools", "created_at", "deleted_at"],
        id=text,
        name=text,
        instructions=text,
        model=ntext,
        server_ids=array(text),
        tools=array(text),
        created_at=text,
        deleted_at={**ntext, "description": "when it was deleted (null: in use); a deleted one is never listed"},
    )
    teammate_body = obj(
        ["name"],
        name=bounded(MAX_TEAMMATE_NAME, required=True),
        instructions=bounded(MAX_TEAMMATE_INSTRUCTIONS),
        model={"type": ["string", "null"], "maxLength": MAX_MODEL_NAME},
        server_ids=array(text),
    )
    teammate_change = {
        **obj(
            [],
            name=bounded(MAX_TEAMMATE_NAME, required=True),
            instructions=bounded(MAX_TEAMMATE_INSTRUCTIONS),
            model={
                "type": ["string", "null"],
                "maxLength": MAX_MODEL_NAME,
                "description": "null or empty: the organization's model",
            },
            server_ids={**array(text), "description": "the whole new list of servers it may use"},
        ),
        "minProperties": 1,
    }
    call = obj(
        ["tool", "status"],
        tool=text,
        status=enum("ran", "refused", "failed", "cached", "waiting_for_approval"),
        approval_id=text,
        error=text,
        handle=text,
    )
    turn_fields = ["id", "conversation_id", "status", "message", "reply", "calls", "error", "created_at", "finished_at"]
    turn_props = {
        "id": text,
        "conversation_id": text,
        "status": enum(
            "running", "waiting_for_approval", "waiting_for_answer", "done", "call_limit", "time_limit", "model_error"
        ),
        "message": text,
        "reply": text,
        "calls": array(call),
        "error": ntext,
        "created_at": text,
        "finished_at": ntext,
        "questions": {**array(QUESTION), "description": "what its calls' servers asked (a teammate's turn)"},
    }
    turn = obj(turn_fields, **turn_props)
    step = obj(
        ["server", "tool", "arguments", "status", "summary", "duration_ms", "at"],
        server=ntext,
        tool=text,
        arguments={"type": "object"},
        status=enum("ran", "failed", "refused", "cached", "waiting_for_approval"),
        error=ntext,
        summary=text,
        duration_ms={"type": "number"},
        at=text,
    )
    traced = obj([*turn_fields, "trace"], **turn_props, trace=array(step))
    listed_conversation = obj(
        ["id", "teammate_id", "created_at", "turns", "first_message"],
        id=text,
        teammate_id=text,
        created_at=text,
        turns={"type": "integer", "minimum": 0},
        first_message=text,
    )
    conversation = obj(
        ["id", "teammate_id", "created_at", "turns"], id=text, teammate_id=text, created_at=text, turns=array(turn)
    )
    previewed = obj([*turn_fields, "left_out"], **turn_props, left_out=array(text))
    message_body = obj(["message"], message=bounded(MAX_MESSAGE, required=True))
    publication = obj(
        ["id", "assistant_id", "slug", "tools", "published_by", "published_at"],
        id=text,
        assistant_id=text,
        slug=text,
        tools=array(obj(["server_id", "tool", "definition_hash"], server_id=text, tool=text, definition_hash=text)),
        published_by=text,
        published_at=text,
    )
    assistant = obj(
        [
            "id",
            "name",
            "slug",
            "instructions",
            "tool_ids",
            "needs_review",
            "review_reason",
            "publication",
            "publications",
            "created_at",
        ],
        id=text,
        name=text,
        slug=text,
        instructions=text,
        tool_ids=array(text),
        needs_review=boolean,
        review_reason=text,
        publication={"oneOf": [{"type": "null"}, publication]},
        publications=array(publication),
        created_at=text,
    )
    assistant_body = obj(
        ["name"],
        name=bounded(MAX_ASSISTANT_NAME, required=True),
        instructions=bounded(MAX_ASSISTANT_INSTRUCTIONS),
        tool_ids={**array(text), "maxItems": MAX_TOOLS},
    )
    visitor = obj(
        ["conversation", "reply", "calls", "status"], conversation=text, reply=text, calls=array(call), status=text
    )
    visitor_body = obj(
        ["message"], message=bounded(MAX_MESSAGE, required=True), conversation={"type": "string", "maxLength": 64}
    )
    return {
        "/api/v1/model": {
            "get": op("The organization's model (never its key)", {"200": ("the model", model)}, "401"),
            "put": op(
                "Set the organization's model (owner, admin): an OpenAI-compatible endpoint; the key is sealed",
                {"200": ("the model, never its key", model)},
                "400 401 403 413 422",
                body=model_body,
            ),
        },
        "/api/v1/teammates": {
            "get": op("The teammates", {"200": ("every teammate", array(teammate))}, "401"),
            "post": op(
                "Create a teammate (owner, admin) with the servers it may use",
                {"201": ("the teammate, with the tools it is offered", teammate)},
                "400 401 403 409 413 422",
                body=teammate_body,
            ),
        },
        "/api/v1/teammates/{teammate_id}": {
            "parameters": [path("teammate_id")],
            "get": op(
                "One teammate (a deleted one too, with `deleted_at`)", {"200": ("the teammate", teammate)}, "401 404"
            ),
            "patch": op(
                "Change a teammate (owner, admin): any of its name, instructions, servers and model; its next call "
                "uses what it has now. 409 `teammate_deleted` for a deleted one; 422 `unknown_server` names each "
                "server id that is not a live server of the organization",
                {"200": ("the teammate, with the tools it is offered now", teammate)},
                "400 401 403 404 409 413 422",
                body=teammate_change,
            ),
            "delete": op(
                "Delete a teammate (owner, admin), keeping its conversations, turns and traces readable: it leaves "
                "the list, takes no new conversation or turn (409 `teammate_deleted`), its turns waiting for an "
                "approval end and their pending approvals are declined",
                {"204": ("deleted", None)},
                "401 403 404 409",
            ),
        },
        "/api/v1/teammates/{teammate_id}/conversations": {
            "parameters": [path("teammate_id")],
            "get": op(
                "The caller's own conversations with a teammate, newest first",
                {"200": ("the conversations, each with its turn count and first message", array(listed_conversation))},
                "401 404",
            ),
            "post": op(
                "Start a conversation with a teammate (the caller's own)",
                {"201": ("the conversation", obj(["id", "teammate_id"], id=text, teammate_id=text))},
                "401 404 409",
            ),
        },
        "/api/v1/conversations/{conversation_id}": {
            "parameters": [path("conversation_id")],
            "get": op(
                "A conversation with a teammate and its turns, oldest first (its member's alone)",
                {"200": ("the conversation", conversation)},
                "401 404",
            ),
        },
        "/api/v1/conversations/{conversation_id}/turns": {
            "parameters": [path("conversation_id")],
            "post": op(
                "A turn: 200 when it ended, 202 when it waits for an approval (it goes on once that is decided) or "
                "for the answer to a question one of its servers asked (it goes on once that is answered)",
                {"200": ("the turn", turn), "202": ("the turn, waiting for an approval or an answer", turn)},
                "400 401 404 409 413 422",
                body=message_body,
            ),
        },
        "/api/v1/turns/{turn_id}": {
            "parameters": [path("turn_id")],
            "get": op("A turn and its trace", {"200": ("the turn", traced)}, "401 404"),
        },
        "/api/v1/assistants": {
            "get": op("The assistants", {"200": ("every assistant", array(assistant))}, "401"),
            "post": op(
                "Create an assistant (owner, admin) with a selection of tools",
                {"201": ("the assistant", assistant)},
                "400 401 403 413 422",
                body=assistant_body,
            ),
        },
        "/api/v1/assistants/{assistant_id}": {
            "parameters": [path("assistant_id")],
            "get": op("One assistant, with its publications", {"200": ("the assistant", assistant)}, "401 404"),
        },
        "/api/v1/assistants/{assistant_id}/publications": {
            "parameters": [path("assistant_id")],
            "get": op(
                "The assistant's publications, newest first",
                {"200": ("the publications", array(publication))},
                "401 404",
            ),
        },
        "/api/v1/assistants/{assistant_id}/publish": {
            "parameters": [path("assistant_id")],
            "post": op(
                "Publish the selection: 409 `not_publishable` names each tool that may not serve visitors",
                {"200": ("the publication", publication)},
                "401 403 404 409",
            ),
        },
        "/api/v1/assistants/{assistant_id}/preview": {
            "parameters": [path("assistant_id")],
            "post": op(
                "A turn as visitors would have it, with the current selection",
                {"200": ("the turn, and the tools left out", previewed)},
                "400 401 403 404 409 413 422",
                body=message_body,
            ),
        },
        "/public/assistants/{slug}/turns": {
            "parameters": [path("slug")],
            "post": op(
                "A visitor's turn of a published assistant (no credentials; at most 5 calls; rate limited)",
                {"200": ("the answer", visitor)},
                "400 404 409 413 422 429",
                body=visitor_body,
                public=True,
            ),
        },
    }
