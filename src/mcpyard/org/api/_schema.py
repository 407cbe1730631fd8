"""The building blocks of the OpenAPI document: schema helpers, the error body, an operation object."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ANY_OBJ",
    "BOOL",
    "ERROR",
    "NOBJ",
    "NSTR",
    "STR",
    "S",
    "array",
    "enum",
    "obj",
    "op",
    "path",
    "query",
]

S = dict[str, Any]
"""A schema, or any part of the document."""


def obj(required: list[str], **properties: S) -> S:
    return {"type": "object", "required": required, "properties": properties}


def enum(*values: str) -> S:
    return {"type": "string", "enum": list(values)}


STR: S = {"type": "string"}
NSTR: S = {"type": ["string", "null"]}
BOOL: S = {"type": "boolean"}
ANY_OBJ: S = {"type": "object"}
NOBJ: S = {"type": ["object", "null"]}
ERROR = obj(["error"], error=obj(["code", "message"], code=STR, message=STR))

REASONS = {
    "400": "the body is not a JSON object",
    "401": "no valid API token or session",
    "403": "the caller's role may not do this (or a session's request without its CSRF token)",
    "404": "no such object in the caller's organization",
    "409": "in conflict with the object's state",
    "410": "given once already",
    "429": "too many requests: wait the seconds `Retry-After` says",
    "413": "the body is over 1 MiB",
    "415": "the body is not sent as application/json",
    "422": "a field is missing, unknown or cannot be used",
}


def json_body(schema: S) -> S:
    return {"content": {"application/json": {"schema": schema}}}


def op(
    summary: str,
    answers: dict[str, tuple[str, S | None]],
    refusals: str,
    *,
    body: S | None = None,
    body_required: bool = True,
    params: list[S] | None = None,
    public: bool = False,
) -> S:
    """An operation: its answers (status → description and schema, None for no body) and the refusal statuses it
    can give (space-separated)."""
    responses: S = {}
    for status, (description, schema) in answers.items():
        responses[status] = {"description": description, **(json_body(schema) if schema is not None else {})}
    for status in refusals.split():
        responses[status] = {"description": REASONS[status], **json_body(ERROR)}
    operation: S = {"summary": summary, "responses": responses}
    if body is not None:
        if body.get("type") == "object" and "properties" in body:
            body = {**body, "additionalProperties": False}  # every route refuses a field it does not name
        operation["requestBody"] = {"required": body_required, **json_body(body)}
    if params:
        operation["parameters"] = params
    if public:
        operation["security"] = []
    return operation


def path(name: str) -> S:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}


def query(name: str, schema: S) -> S:
    return {"name": name, "in": "query", "required": False, "schema": schema}


def array(schema: S) -> S:
    return {"type": "array", "items": schema}
