"""What a request gives as text, checked before anything runs: JSON bodies, query parameters, path parameters.

A body must be a JSON object of at most 1 MiB (the app's `BodyLimits` stops a longer one as it arrives) with
only the fields its route names: a misspelt field is refused with the nearest known one, never dropped unseen.
No text of a request (a body's keys and values at any depth, a query or path parameter) may hold a NUL
character (PostgreSQL cannot store one; no name, id or filter needs one) or a lone surrogate (half of a UTF-16
pair, which a JSON escape can make: no UTF-8 carries it, so nothing could store, send or answer it): in a path
it names nothing (404), in a query parameter or a body it is refused (422) naming where. Tool arguments are
the exception: they are JSON, sent on as they are and checked where they are sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any

from starlette.requests import Request

from mcpyard.config import nearest
from mcpyard.errors import Invalid, NotFound, TooLarge, Unreadable
from mcpyard.org._words import code_span

__all__ = [
    "MAX_BODY_BYTES",
    "body_problem",
    "check_text",
    "json_body",
    "origin_of",
    "query_text",
    "text_problem",
    "unknown_fields",
]

MAX_BODY_BYTES = 1024 * 1024
_NUL = "\x00"
_NUL_MESSAGE = "text in a request must not hold a NUL character (U+0000)"
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN = 80


def origin_of(request: Request) -> str:
    """The service's origin as the request reached it (`https://mcp.example.com`): what OAuth names the issuer and
    the MCP endpoints by, and what the pages link to."""
    return f"{request.url.scheme}://{request.url.netloc}"


def text_problem(text: str) -> str | None:
    """What makes a text of a request unusable, or None: a NUL character, or a lone surrogate (half of a UTF-16
    pair: no UTF-8 can carry it, so nothing could store, send or answer it)."""
    if _NUL in text:
        return _NUL_MESSAGE
    found = _SURROGATE.search(text)
    if found is not None:
        return f"holds a lone surrogate (U+{ord(found.group()):04X}); send text as UTF-8 (a JSON escape of half a pair)"
    return None


def _shown(name: str) -> str:
    """A name the request gave, as a message may quote it (short: a key can be as long as the body)."""
    return name if len(name) <= _SHOWN else f"{name[:_SHOWN]}…"


def body_problem(value: Any, *, opaque: Collection[str] = ()) -> str | None:
    """What is wrong with the text in a body, naming where (keys and values at any depth, iteratively: bodies
    nest); None when every text is usable. The top-level fields in `opaque` are not looked into."""
    pending: list[tuple[str, Any]] = [("", value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                return f"{code_span(_shown(where))}: {problem}"
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = text_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    return f"a field name{f' in {code_span(_shown(where))}' if where else ''}: {problem}"
                if not where and key in opaque:
                    continue
                pending.append((f"{where}.{key}" if where else str(key), child))
        elif isinstance(item, list):
            pending.extend((f"{where}[{index}]", child) for index, child in enumerate(item))
    return None


def unknown_fields(given: Iterable[str], fields: Collection[str], where: str = "") -> str | None:
    """The message refusing the fields of `given` not among `fields`, each with the known one nearest to it;
    None when there is none."""
    unknown = sorted(name for name in given if name not in fields)
    if not unknown:
        return None
    prefix = f"{where}: " if where else ""
    if not fields:
        return (
            f"{prefix}this request takes no body fields; leave out {', '.join(code_span(_shown(n)) for n in unknown)}"
        )
    hints = []
    for name in unknown:
        close = nearest(name, fields)
        hints.append((code_span(_shown(name)), f"did you mean `{close}`?" if close else None))
    if len(hints) == 1:
        shown, hint = hints[0]
        return f"{prefix}unknown field {shown}; {hint or f'the fields are {_listed(fields)}'}"
    listed = ", ".join(f"{shown} ({hint})" if hint else shown for shown, hint in hints)
    return f"{prefix}unknown fields {listed}; the fields are {_listed(fields)}"


def _listed(fields: Collection[str]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(fields))


def check_text(request: Request) -> None:
    """Refuse a path holding a NUL character or a lone surrogate: it names nothing (no id has one), so 404."""
    if any(text_problem(value) for value in request.path_params.values() if isinstance(value, str)):
        raise NotFound("not_found", "nothing in your organization has that id")


def query_text(request: Request, name: str) -> str | None:
    """A query parameter's text as given (None when absent), or 422 when it holds a NUL character."""
    value = request.query_params.get(name)
    problem = text_problem(value) if value is not None else None
    if problem is not None:
        raise Invalid("invalid_request", f"`{name}`: {problem}")
    return value


async def json_body(request: Request, *, fields: Collection[str], opaque: Collection[str] = ()) -> dict[str, Any]:
    """The request's JSON object, or a 400/413/422 `ServiceError` saying what is wrong with it.

    `fields` are the names it may have (any other is refused, with the nearest known one: a misspelt field
    would otherwise be dropped unseen); no text in it may hold a NUL character or a lone surrogate, except in
    the `opaque` fields (tool arguments, sent on as they are and checked where they are sent).
    """
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise TooLarge("too_large", f"the request body is over {MAX_BODY_BYTES} bytes")
    if not body:
        return {}
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise Unreadable("invalid_json", "the request body is not valid JSON") from None
    if not isinstance(value, dict):
        raise Unreadable("invalid_json", "the request body must be a JSON object")
    problem = body_problem(value, opaque=opaque) or unknown_fields(value, fields)
    if problem is not None:
        raise Invalid("invalid_request", problem)
    return value
