"""The one error tree of mcpyard.

Every error mcpyard raises on purpose derives from `McpyardError`, carries structured
data, and has a message that says what went wrong and what to do::

    McpyardError
    ├── ConfigError            a source cannot be used at all (nothing starts until fixed)
    ├── UsageError             a command line or API argument is wrong
    ├── StateError             the host cannot do that now (reload during a call, closed host)
    ├── ModelError             a model's endpoint failed: unreachable, refused the request, or
    │                          answered in a shape that cannot be read (`model_error`, MOD-3)
    ├── ElicitationRefused     a server's question cannot be put to a person (a form that is not
    │                          flat primitive fields, a URL mcpyard will not show) or an answer does
    │                          not fit its form; the server is answered with this error, never
    │                          with a value
    ├── CallError              a tool call was refused or failed before a result existed
    │   │                      (`code` is the `CallResult.error.code` the model sees)
    │   ├── ServerError        the server answered the call with a protocol error; its text is
    │   │                      the server's, and is shaped (fenced, capped, redacted) like a result
    │   └── UrlRefused         the outbound guard will not connect to a URL (`url_refused`): its
    │                          scheme, user info, host, the addresses its name resolves to, or a
    │                          redirect it answered with
    └── ServiceError           the organization service refuses a request (`code`, `message`,
        │                      `details`: the API's error object); each kind is one HTTP status
        │                      (its `status`), the same from the API and the pages
        ├── Unreadable         400 the request's body is not what it must be (not JSON)
        ├── LengthRequired     411 the body's length is not given
        ├── UnsupportedMedia   415 the body is not `application/json`
        ├── TooLarge           413 the body is over its limit
        ├── NotSignedIn        401 no valid token or session: sign in
        ├── Forbidden          403 signed in, but the caller's role may not do it
        ├── NotFound           404 no such thing in the caller's organization (or not theirs to see)
        ├── Conflict           409 the thing is not in a state that allows it (decided, taken, removed)
        ├── Invalid            422 a field is missing or wrong; the message names it and the rule
        ├── TooMany            429 too many requests from here: wait, then try again
        └── Unavailable        503 the service is not serving yet, or any more: try again in a moment

Per-server problems (a bad value, a missing command, a dead process) are not raised:
they become that server's state and reason on the status page, and the other servers
carry on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "CallError",
    "ConfigError",
    "Conflict",
    "ElicitationRefused",
    "Forbidden",
    "Gone",
    "Invalid",
    "LengthRequired",
    "McpyardError",
    "ModelError",
    "NotFound",
    "NotSignedIn",
    "ServerError",
    "ServiceError",
    "StateError",
    "TooLarge",
    "TooMany",
    "Unavailable",
    "Unreadable",
    "UnsupportedMedia",
    "UrlRefused",
    "UsageError",
]


class McpyardError(Exception):
    """Base class of every error mcpyard raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(McpyardError):
    """A configuration source cannot be used; nothing starts until it is fixed.

    Attributes:
        source: the file at fault, when there is one.
        entry: the server id or entry position at fault, when there is one.
        field: the field at fault, when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        source: Path | None = None,
        entry: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.source = source
        self.entry = entry
        self.field = field


class UsageError(McpyardError):
    """A command-line or library argument is wrong."""


class StateError(McpyardError):
    """The host cannot do that in its current state (for example, reload during a call)."""


class ModelError(McpyardError):
    """A model's endpoint failed; the turn ends with `model_error` (MOD-3).

    Attributes:
        status: the HTTP status the endpoint answered with, when it answered.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ElicitationRefused(McpyardError):
    """A server's elicitation request cannot be asked, or an answer to it cannot be sent.

    The message names the field or the URL's problem and the rule, never a value typed into the form.
    """


class CallError(McpyardError):
    """A tool call was refused or failed before the server gave a result.

    Attributes:
        code: a short stable code (`unknown_tool`, `invalid_arguments`, `server_unavailable`,
            `timeout`, `cancelled`, `approval_required`, …), the `error.code` of `CallResult`.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ServerError(CallError):
    """The server answered a call with a JSON-RPC error.

    Attributes:
        server: the server's id.
        text: the server's error message, untrusted: shaped like a result before anyone reads it.
    """

    def __init__(self, server: str, text: str) -> None:
        super().__init__("server_error", f"server {server!r} answered with an error")
        self.server = server
        self.text = text


class UrlRefused(CallError):
    """The outbound guard refuses to connect to a URL (NET-1); one message for every reason.

    Attributes:
        url: the URL as shown: scheme, host, port and path (never user info or a query).
        reason: why, in words (`it resolves to a private address`, `it is not https`…).
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            "url_refused", f"{url} is refused: {reason} (only public https servers can be reached from here)"
        )
        self.url = url
        self.reason = reason


class ServiceError(McpyardError):
    """The organization service refuses a request: raised by its service functions, answered by the API (the status
    its class maps to, and `{"error": {"code", "message", ...details}}`) and by the pages (a notice).

    Attributes:
        code: a short stable code (`invalid_request`, `not_found`, `already_decided`, …).
        details: more fields for the error object (the reason per tool of `not_publishable`).
        status: the HTTP status the API and the pages answer with; one per kind, set on each class.
    """

    status: ClassVar[int] = 400

    def __init__(self, code: str, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.details = details or {}


class Unreadable(ServiceError):
    """The request's body cannot be read as what it must be (JSON)."""

    status = 400


class LengthRequired(ServiceError):
    """The request's body came without its length."""

    status = 411


class UnsupportedMedia(ServiceError):
    """The request's body is not of the media type the service reads."""

    status = 415


class TooLarge(ServiceError):
    """The request's body is over its limit."""

    status = 413


class NotSignedIn(ServiceError):
    """No valid API token or session came with the request."""

    status = 401


class Forbidden(ServiceError):
    """The caller is signed in, but may not do this (their role, or a check such as the form's CSRF token)."""

    status = 403


class NotFound(ServiceError):
    """No such thing in the caller's organization: the same answer whether it exists elsewhere or not at all."""

    status = 404


class Conflict(ServiceError):
    """The thing is not in a state that allows this: decided already, a name taken, removed, waiting."""

    status = 409


class Gone(ServiceError):
    """The thing was there and is no more: given once already (a long call's result)."""

    status = 410


class Invalid(ServiceError):
    """A field of the request is missing or wrong; the message names it and the rule."""

    status = 422


class TooMany(ServiceError):
    """Too many requests from this caller or address: it waits (`retry_after` seconds, when that is known), then
    tries again."""

    status = 429

    def __init__(self, code: str, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    """The service is not serving: it has not opened yet, or it closed (a request that came in between)."""

    status = 503
