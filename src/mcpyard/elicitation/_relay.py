"""A host's elicitor as the answer to a server's `elicitation/create` during a call (the call's input relay)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpyard.elicitation._request import Elicitor, answer_for_server, request_from_params
from mcpyard.errors import ElicitationRefused

__all__ = ["ELICIT", "AskFn", "elicitor_input"]

ELICIT = "elicitation/create"
_INVALID_REQUEST = -32600
_INVALID_PARAMS = -32602

AskFn = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""`(method, params) -> result`, both in wire form: the shape of `mcpyard.connect.InputFn`."""


def elicitor_input(
    elicitor: Elicitor, server: str, tool: str | None = None, typed_secrets: list[str] | None = None
) -> AskFn:
    """An `InputFn` (`(method, params) -> result`, wire form) that puts a server's questions to `elicitor`.

    What cannot be asked (a form that is not flat, a URL that is not https) and an answer that does not
    fit its form go back to the server as an error saying why; a value never does. What was typed into
    a secret-looking field is added to `typed_secrets`, so the call's result can be redacted of it.
    """

    async def ask(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        from mcp.shared.exceptions import MCPError

        if method != ELICIT:
            raise MCPError(_INVALID_REQUEST, f"mcpyard does not answer {method} for this call")
        try:
            request = request_from_params(server, params, tool=tool)
            answer = answer_for_server(request, await elicitor(request))
            if typed_secrets is not None:
                content = answer.get("content") or {}
                secret = {item.name for item in request.fields if item.secret}
                typed_secrets.extend(str(value) for key, value in content.items() if key in secret and value)
            return answer
        except ElicitationRefused as exc:
            raise MCPError(_INVALID_PARAMS, f"mcpyard did not ask the user: {exc.message}") from None

    return ask
