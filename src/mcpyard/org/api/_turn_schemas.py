"""What turns look like in the OpenAPI document: the model, teammates, conversations, turns, assistants (API-6)."""

from __future__ import annotations

from typing import get_args

from mcpyard.org.api._api_questions import QUESTION
from mcpyard.org.api._schema import BOOL, NSTR, STR, S, array, enum, obj
from mcpyard.org.store import TurnRowStatus
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

__all__ = [
    "ASSISTANT",
    "ASSISTANT_BODY",
    "BODIES",
    "CALL",
    "CONVERSATION",
    "LISTED_CONVERSATION",
    "MESSAGE_BODY",
    "MODEL",
    "MODEL_BODY",
    "PREVIEWED",
    "PUBLICATION",
    "PUBLISHED_TOOL",
    "STARTED",
    "STEP",
    "TEAMMATE",
    "TEAMMATE_BODY",
    "TEAMMATE_CHANGE",
    "TRACED",
    "TURN",
    "TURN_FIELDS",
    "TURN_PROPS",
    "VISITOR",
    "VISITOR_BODY",
]


def bounded(limit: int, *, required: bool = False) -> S:
    """A string of at most `limit` characters (and at least one when `required`)."""
    return {"type": "string", "maxLength": limit, **({"minLength": 1} if required else {})}


MODEL = obj(["base_url", "model", "has_key"], base_url=NSTR, model=NSTR, has_key=BOOL)
MODEL_BODY = obj(
    ["base_url", "model"],
    base_url={"type": "string", "minLength": 1},
    model=bounded(MAX_MODEL_NAME, required=True),
    api_key={"type": "string", "minLength": 1, "maxLength": MAX_KEY, "pattern": "^[^\\r\\n]+$"},
)
TEAMMATE = obj(
    ["id", "name", "instructions", "model", "server_ids", "tools", "created_at", "deleted_at"],
    id=STR,
    name=STR,
    instructions=STR,
    model=NSTR,
    server_ids=array(STR),
    tools=array(STR),
    created_at=STR,
    deleted_at={**NSTR, "description": "when it was deleted (null: in use); a deleted one is never listed"},
)
TEAMMATE_BODY = obj(
    ["name"],
    name=bounded(MAX_TEAMMATE_NAME, required=True),
    instructions=bounded(MAX_TEAMMATE_INSTRUCTIONS),
    model={"type": ["string", "null"], "maxLength": MAX_MODEL_NAME},
    server_ids=array(STR),
)
TEAMMATE_CHANGE = {
    **obj(
        [],
        name=bounded(MAX_TEAMMATE_NAME, required=True),
        instructions=bounded(MAX_TEAMMATE_INSTRUCTIONS),
        model={
            "type": ["string", "null"],
            "maxLength": MAX_MODEL_NAME,
            "description": "null or empty: the organization's model",
        },
        server_ids={**array(STR), "description": "the whole new list of servers it may use"},
    ),
    "minProperties": 1,
}
CALL = obj(
    ["tool", "status"],
    tool=STR,
    status=enum("ran", "refused", "failed", "cached", "waiting_for_approval"),
    approval_id=STR,
    error=STR,
    handle=STR,
)
TURN_FIELDS = ["id", "conversation_id", "status", "message", "reply", "calls", "error", "created_at", "finished_at"]
TURN_PROPS = {
    "id": STR,
    "conversation_id": STR,
    "status": enum(*get_args(TurnRowStatus)),
    "message": STR,
    "reply": STR,
    "calls": array(CALL),
    "error": NSTR,
    "created_at": STR,
    "finished_at": NSTR,
    "questions": {**array(QUESTION), "description": "what its calls' servers asked (a teammate's turn)"},
}
TURN = obj(TURN_FIELDS, **TURN_PROPS)
STEP = obj(
    ["server", "tool", "arguments", "status", "error", "summary", "duration_ms", "at"],
    server=NSTR,
    tool=STR,
    arguments={"type": "object"},
    status=enum("ran", "failed", "refused", "cached", "waiting_for_approval", "running"),
    error=NSTR,
    summary=STR,
    duration_ms={"type": "number"},
    at=STR,
)
TRACED = obj([*TURN_FIELDS, "trace"], **TURN_PROPS, trace=array(STEP))
STARTED = obj(["id", "teammate_id"], id=STR, teammate_id=STR)
LISTED_CONVERSATION = obj(
    ["id", "teammate_id", "created_at", "turns", "first_message"],
    id=STR,
    teammate_id=STR,
    created_at=STR,
    turns={"type": "integer", "minimum": 0},
    first_message=STR,
)
CONVERSATION = obj(
    ["id", "teammate_id", "created_at", "turns"], id=STR, teammate_id=STR, created_at=STR, turns=array(TURN)
)
PREVIEWED = obj([*TURN_FIELDS, "left_out"], **TURN_PROPS, left_out=array(STR))
MESSAGE_BODY = obj(["message"], message=bounded(MAX_MESSAGE, required=True))
PUBLISHED_TOOL = obj(["server_id", "tool", "definition_hash"], server_id=STR, tool=STR, definition_hash=STR)
PUBLICATION = obj(
    ["id", "assistant_id", "slug", "tools", "published_by", "published_at"],
    id=STR,
    assistant_id=STR,
    slug=STR,
    tools=array(PUBLISHED_TOOL),
    published_by=STR,
    published_at=STR,
)
ASSISTANT = obj(
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
    id=STR,
    name=STR,
    slug=STR,
    instructions=STR,
    tool_ids=array(STR),
    needs_review=BOOL,
    review_reason=STR,
    publication={"oneOf": [{"type": "null"}, PUBLICATION]},
    publications=array(PUBLICATION),
    created_at=STR,
)
ASSISTANT_BODY = obj(
    ["name"],
    name=bounded(MAX_ASSISTANT_NAME, required=True),
    instructions=bounded(MAX_ASSISTANT_INSTRUCTIONS),
    tool_ids={**array(STR), "maxItems": MAX_TOOLS},
)
VISITOR = obj(["conversation", "reply", "calls", "status"], conversation=STR, reply=STR, calls=array(CALL), status=STR)
VISITOR_BODY = obj(
    ["message"], message=bounded(MAX_MESSAGE, required=True), conversation={"type": "string", "maxLength": 64}
)
BODIES = {
    "model": MODEL,
    "teammate": TEAMMATE,
    "started_conversation": STARTED,
    "listed_conversation": LISTED_CONVERSATION,
    "conversation": CONVERSATION,
    "turn_call": CALL,
    "turn": TURN,
    "trace_step": STEP,
    "traced_turn": TRACED,
    "preview": PREVIEWED,
    "published_tool": PUBLISHED_TOOL,
    "publication": PUBLICATION,
    "assistant": ASSISTANT,
    "visitor_turn": VISITOR,
}
"""The bodies the turns' operations answer with, by the name the views test pairs with a turn's view."""
