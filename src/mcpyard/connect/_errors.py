"""Turning connection failures into one readable reason for the status page."""

from __future__ import annotations

import re
import shutil

import httpx2
import pydantic
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.exceptions import MCPError

from mcpyard.auth import SignInError
from mcpyard.config import shown_url
from mcpyard.connect._guarded import refused_size
from mcpyard.errors import McpyardError

__all__ = ["MessageTooLong", "describe_failure", "leaf_exception", "public_url", "too_large", "unreadable_message"]

_SDK_PARSE_FAILURES = ("Failed to parse JSON response", "Failed to parse SSE message")
"""How the SDK words a response it could not parse, answered to the request in its place."""
_INVALID_JSON = re.compile(r"Invalid JSON: [^\[\n]{0,200}")
_PARSE_ERROR = -32700


class MessageTooLong(ValueError):
    """A stdio server's message grew past the most mcpyard reads as one: it is flooding, not answering."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a message over {limit:,} bytes")
        self.limit = limit


def public_url(url: str | None) -> str:
    """The server's URL as people may read it (`shown_url`: no query, user info or key in its path; SEC-2)."""
    return shown_url(url, marked=False) if url else "the server"


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException, *, command: str | None = None, url: str | None = None) -> str:
    """A one-line reason naming the problem and, where possible, the fix."""
    exc = leaf_exception(exc)
    url = public_url(url)
    if isinstance(exc, McpyardError):
        return exc.message  # the outbound guard's refusals say what was refused and why (NET-1)
    if isinstance(exc, httpx2.HTTPError | MCPError) and (limit := refused_size(str(exc))) is not None:
        return too_large(limit, url)
    if isinstance(exc, FileNotFoundError) and command is not None:
        words = command.split()
        if len(words) > 1 and shutil.which(words[0]) is not None:  # a whole command line, as typed in a terminal
            return (
                f"command not found: {command!r}: `command` holds the program and its arguments in one string; "
                "put the program alone in `command` and each argument in `args`"
            )
        if command.startswith("~"):  # no shell runs the command: nothing reads `~` as the home folder
            return (
                f"command not found: {command!r}: `~` is not your home folder in `command` (no shell starts the "
                "server); write ${HOME} in its place"
            )
        return f"command not found: {command!r} (is it installed and on PATH? check `command`)"
    if isinstance(exc, PermissionError) and command is not None:
        return f"cannot run {command!r}: permission denied (is it executable?)"
    if isinstance(exc, NotADirectoryError | IsADirectoryError) and command is not None:
        return f"cannot start {command!r}: {exc.strerror or exc} (check `command` and `cwd`)"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {url}: {_first_line(exc, 'connection failed')} (is the server running?)"
    if isinstance(exc, httpx2.TimeoutException):
        return f"{url} did not answer in time"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"{url} answered HTTP {exc.response.status_code}"
    if isinstance(exc, httpx2.HTTPError):
        return f"HTTP error talking to {url}: {type(exc).__name__}"
    if isinstance(exc, SignInError):
        return f"sign-in did not complete: {exc}"
    if isinstance(exc, OAuthFlowError | OAuthTokenError | OAuthRegistrationError):
        return f"sign-in failed: {_first_line(exc, type(exc).__name__)}"
    if isinstance(exc, MCPError) and exc.code == _PARSE_ERROR and exc.message.startswith(_SDK_PARSE_FAILURES):
        return unreadable_message(exc.message)
    if isinstance(exc, MCPError):
        return f"the server refused the connection: {exc.message} (MCP error {exc.code})"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    return f"{type(exc).__name__}: {_first_line(exc, type(exc).__name__)}"[:500]


def _first_line(exc: BaseException, fallback: str) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else fallback


def too_large(limit: int, what: str = "the server") -> str:
    """Why a response over the outbound guard's cap was refused (NET-2)."""
    return f"{what} sent a response over {limit:,} bytes (the limit for one message); mcpyard refused it"


def unreadable_message(problem: BaseException | str) -> str:
    """Why a message the server sent could not be read, in words that never quote it (THREATS: Robustness)."""
    if isinstance(problem, MessageTooLong):
        limit_text = f"over {problem.limit:,} bytes (the limit for one message)"
        return f"the server sent a message {limit_text}; mcpyard stopped talking to it"
    if (limit := refused_size(str(problem))) is not None:
        return f"{too_large(limit)} and stopped talking to it"
    if isinstance(problem, pydantic.ValidationError):
        errors = problem.errors(include_url=False, include_input=False, include_context=False)
        first = errors[0] if errors else None
        detail = str(first["msg"])[:200] if first is not None else "unreadable"
        invalid_json = first is not None and first["type"] == "json_invalid"
    else:
        text = str(problem)
        found = _INVALID_JSON.search(text)
        detail = found.group(0).strip() if found else (text.splitlines() or [type(problem).__name__])[0][:200]
        invalid_json = found is not None
    if "recursion limit" in detail:
        what = "a message nested too deeply to read"
    elif invalid_json:
        what = "a message that is not valid JSON"
    else:
        what = "a message that is not valid JSON-RPC"
    return f"the server sent {what} ({detail}); mcpyard stopped talking to it (report it to its maintainers)"
