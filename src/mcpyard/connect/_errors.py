"""Turning connection failures into one readable reason for the status page."""

from __future__ import annotations

import httpx2
from mcp.shared.exceptions import MCPError

__all__ = ["describe_failure", "leaf_exception"]


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException, *, command: str | None = None, url: str | None = None) -> str:
    """A one-line reason naming the problem and, where possible, the fix."""
    exc = leaf_exception(exc)
    if isinstance(exc, FileNotFoundError) and command is not None:
        return f"command not found: {command!r} (is it installed and on PATH? check `command`)"
    if isinstance(exc, PermissionError) and command is not None:
        return f"cannot run {command!r}: permission denied (is it executable?)"
    if isinstance(exc, NotADirectoryError | IsADirectoryError) and command is not None:
        return f"cannot start {command!r}: {exc.strerror or exc} (check `command` and `cwd`)"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {url}: {exc or 'connection failed'} (is the server running?)"
    if isinstance(exc, httpx2.TimeoutException):
        return f"{url} did not answer in time"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"{url} answered HTTP {exc.response.status_code}"
    if isinstance(exc, httpx2.HTTPError):
        return f"HTTP error talking to {url}: {exc}"
    if isinstance(exc, MCPError):
        return f"the server refused the connection: {exc.message} (MCP error {exc.code})"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
