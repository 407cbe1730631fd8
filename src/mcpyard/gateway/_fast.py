"""Tool calls taken off the wire as parsed JSON: the forwarding fast path of a face's fronts.

The SDK's server stack costs about as much per call as the call itself (a memory stream, a
task, cancel scopes, the request rebuilt as models and the result serialized through them),
so a `tools/call` from a client the SDK path has already served is read here, as JSON, run
through the same pipeline (`ToolFace.run_offered`: the same rules, records and result shaping)
and answered at once, shaped by the SDK's own serializer. `FastPath` decides and answers;
`_fast_stdio.py` is the stdio front's side, `_fast_http.py` the HTTP front's.

Only what the SDK path would answer the same way comes here. A call is taken when:

- its `_meta` is exactly one a call the SDK path served for the same requester carried (the
  same protocol version, client and capabilities: the SDK accepted them), within the last
  `REFRESH_SECS`, and that call's client answers no questions (no sampling or elicitation
  declared: a downstream server's question goes to the console's elicitor, or is refused, as on
  the SDK path), takes no tasks, and asked for no progress (a progress token in `_meta` makes it
  differ);
- it names a tool, with an object of arguments, and nothing else;
- no trace is being recorded (a span per request is the SDK's).

Everything else (and every other method) goes to the SDK path as before. On stdio, log
messages a server sends during a taken call reach the client at its level, related to the
call; a `notifications/cancelled` naming a taken call cancels it, and then, as on the SDK path,
no answer is sent; when the client closes its input, taken calls still running are cancelled
and answered `Connection closed`, as the SDK's path answers its own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Protocol

import anyio
import anyio.abc
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import allowed_log_levels
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from mcpyard.connect import InputFn, InputRelay, LogFn, ProgressFn
from mcpyard.gateway._context import error_result, input_relay, plain_wire_result, wire_result
from mcpyard.ops import tracing
from mcpyard.pipeline import CallResult

__all__ = ["CLOSE_SECS", "Face", "FastPath", "Taken", "Write", "cancelled_call", "error_answer"]

_log = logging.getLogger("mcpyard.gateway")

Write = Callable[[bytes], Awaitable[None]]
"""Where serialized messages go: a front's writer, or a call's log messages."""
SEEN = 64
"""Calls on their way through the SDK path whose `_meta` is kept, to arm the fast path once they run."""
ARMED = 16
"""Distinct `_meta` values (in effect, clients) the fast path is armed for at once; the oldest goes first."""
REFRESH_SECS = 60.0
"""How long a call through the SDK's path arms the fast path: then the next call goes through the SDK again (what
the SDK keeps of the session, its idle clock, stays fresh; a session it ended is not served past this)."""
CLOSE_SECS = 2.0
"""How long calls cancelled by the end of the client's input may take to answer so."""
_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS_KEYS = frozenset({"name", "arguments", "_meta"})


class Face(Protocol):
    """What the fast path uses of its face (`ToolFace`)."""

    @property
    def server(self) -> Server[Any]: ...
    @property
    def task_group(self) -> anyio.abc.TaskGroup | None: ...
    async def offer(self, ctx: ServerRequestContext[Any]) -> Any: ...
    async def run_offered(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        *,
        on_progress: ProgressFn | None,
        on_log: LogFn | None,
        on_input: InputRelay,
    ) -> CallResult: ...
    def log_to(self, ctx: ServerRequestContext[Any], related: str | None = None) -> LogFn: ...
    def wants_log(self, ctx: ServerRequestContext[Any], level: types.LoggingLevel) -> bool: ...
    def fallback_input(self, ctx: ServerRequestContext[Any], name: str) -> InputFn | None: ...
    def redact(self, text: str) -> str: ...


@dataclass(frozen=True, slots=True)
class _Armed:
    ctx: ServerRequestContext[Any]
    """The context of the SDK-path call that armed it: the same requester, client and capabilities."""
    version: str
    log_levels: frozenset[str]
    """The levels of log messages its client takes during a call (the SDK's rule for the era and `_meta`)."""
    at: float
    """When (the event loop's clock): calls are taken for `REFRESH_SECS` after it, then one goes the SDK's path."""


class Taken(NamedTuple):
    """A tool call the fast path takes (a tuple: one is made per call)."""

    armed: _Armed
    request_id: int | str
    offered: str
    """The tool's name as the client was offered it."""
    arguments: dict[str, Any]
    request: Any
    """What the transport says of this request (the HTTP request), or None to keep the armed call's."""


_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
_COMPACT = json.JSONEncoder(separators=(",", ":")).encode
"""`json.dumps` with these options, without building an encoder per call."""


def _now() -> float:
    """The event loop's clock (what `anyio.current_time` reads, without finding the backend first)."""
    return asyncio.get_running_loop().time()


def _meta_key(meta: object) -> str | None:
    """`_meta` as a comparable text (keys sorted), or None when it cannot be one."""
    try:
        return _SORTED(meta)
    except (TypeError, ValueError, RecursionError):
        return None


def _sendable(text: str) -> bool:
    """Whether `text` holds no lone surrogate (the SDK's parser refuses a message with one in its id or name)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def cancelled_call(message: object) -> int | str | None:
    """The id of the call a `notifications/cancelled` names, as the SDK's dispatcher matches it (`"7"` is 7, `true`
    is no id), or None when `message` (parsed by the SDK's models, or why it could not be) is no such notification."""
    if isinstance(message, SessionMessage):
        message = message.message
    if not isinstance(message, types.JSONRPCNotification) or message.method != "notifications/cancelled":
        return None
    request_id = as_request_id((message.params or {}).get("requestId"))
    return None if request_id is None else coerce_request_id(request_id)


class FastPath:
    """Which tool calls a front may answer itself, and their answers.

    `requester(ctx)` says who sent a request (on stdio: the one client; over HTTP, the headers the SDK's
    checks read): calls are taken only from the requester whose call armed the path. `noted(ctx)` is the
    `_meta` (as JSON) that `accept` noted of the request of `ctx` when it did not take it (`note`), or None.
    """

    def __init__(
        self,
        face: Face,
        requester: Callable[[ServerRequestContext[Any]], Hashable],
        noted: Callable[[ServerRequestContext[Any]], str | None] | None = None,
    ) -> None:
        self._face = face
        self._requester = requester
        self._noted = noted
        self._seen: OrderedDict[tuple[Hashable, int | str], str] = OrderedDict()
        """(Requester, request id) → `_meta` key, of tool calls handed to the SDK path (without `noted`)."""
        self._armed: OrderedDict[tuple[Hashable, str], _Armed] = OrderedDict()
        self._server_info: dict[str, Any] | None = None

    def arm(self, ctx: ServerRequestContext[Any], *, eligible: bool) -> None:
        """The SDK path is running the call of `ctx`: calls with its `_meta` may take the fast path if `eligible`."""
        if ctx.request_id is None:
            return
        requester = self._requester(ctx)
        noted = self._noted
        meta = noted(ctx) if noted is not None else self._seen.pop((requester, ctx.request_id), None)
        if meta is None:
            return
        key = (requester, meta)
        version = ctx.session.protocol_version
        if not eligible or version is None:
            self._armed.pop(key, None)
            return
        levels = allowed_log_levels(version, json.loads(meta))
        self._armed[key] = _Armed(ctx, version, levels, _now())
        self._armed.move_to_end(key)
        while len(self._armed) > ARMED:
            self._armed.popitem(last=False)

    def forget(self, gone: Callable[[Hashable], bool]) -> None:
        """Requesters for whom `gone(requester)` holds left (an HTTP session ended): none of their calls are taken."""
        for key in [key for key in self._armed if gone(key[0])]:
            del self._armed[key]
        for seen in [seen for seen in self._seen if gone(seen[0])]:
            del self._seen[seen]

    def accept(
        self,
        value: object,
        requester: Hashable,
        *,
        busy: Callable[[int | str], bool] | None = None,
        request: Any = None,
        note: Callable[[str], None] | None = None,
    ) -> Taken | None:
        """The call `value` (one parsed JSON-RPC message) is, if the fast path takes it; else None (the SDK's path).

        `busy(id)`: whether a call with that id is still running (then the SDK's path answers the new one).
        A lone surrogate in the id or the tool's name makes the SDK's parser refuse the message: the SDK's path
        answers it (on stdio, not at all).
        `note(meta)`: keep a call's `_meta` with its request, for `noted` (else it is kept by requester and id).
        """
        if not isinstance(value, dict) or value.keys() != _REQUEST_KEYS or value["method"] != "tools/call":
            return None
        request_id, params = value["id"], value["params"]
        if value["jsonrpc"] != "2.0" or type(request_id) not in (int, str) or not isinstance(params, dict):
            return None
        meta = _meta_key(params.get("_meta")) if params.keys() <= _PARAMS_KEYS else None
        if meta is None:
            return None
        armed = self._armed.get((requester, meta))
        name, arguments = params.get("name"), params.get("arguments", {})
        if (
            armed is None
            or _now() - armed.at > REFRESH_SECS
            or not isinstance(name, str)
            or not _sendable(name)
            or (isinstance(request_id, str) and not _sendable(request_id))
            or not isinstance(arguments, dict)
            or (busy is not None and busy(request_id))
            or self._face.task_group is None
            or tracing.active()
        ):
            if note is not None:
                note(meta)
                return None
            self._seen[(requester, request_id)] = meta
            while len(self._seen) > SEEN:
                self._seen.popitem(last=False)
            return None
        return Taken(armed, request_id, name, arguments, request)

    async def answer(self, taken: Taken, log: Write | None = None) -> bytes:
        """Run the call (the face's pipeline) and serialize its response as the SDK's server would (an error
        response for a failure inside mcpyard, as the SDK's server answers a handler's exception).

        `log`: where a server's log messages during the call go, each as its notification (serialized), when its
        client takes them; else through the SDK's session, related to the call.
        """
        try:
            return await self._answer(taken, log)
        except Exception:  # one call's failure is not the front's
            _log.error("a tool call failed inside mcpyard\n%s", self._face.redact(traceback.format_exc()))
            failed = "the call failed inside mcpyard; please report it"
            return error_answer(taken.request_id, types.INTERNAL_ERROR, failed)

    async def _answer(self, taken: Taken, log: Write | None) -> bytes:
        face, armed = self._face, taken.armed.ctx
        # The armed call's context with this request's id and transport data: who asks is read from this request.
        request = taken.request if taken.request is not None else armed.request
        ctx = replace(armed, request_id=taken.request_id, request=request, params=None, close_sse_stream=None)
        name = (await face.offer(ctx)).names.get(taken.offered)
        result: CallResult | types.CallToolResult
        if name is None:
            result = error_result(f"no tool {taken.offered!r} is offered to you here: list the tools again")
        else:
            on_log = face.log_to(ctx, str(taken.request_id)) if log is None else _logging(face, ctx, taken, log)
            result = await self._run(ctx, name, taken.arguments, on_log)
        return self._serialize(taken.request_id, taken.armed.version, result)

    async def _run(
        self, ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any], on_log: LogFn
    ) -> CallResult | types.CallToolResult:
        face = self._face
        try:
            return await face.run_offered(
                ctx,
                name,
                arguments,
                on_progress=None,
                on_log=on_log,
                on_input=input_relay(ctx, face.fallback_input(ctx, name)),
            )
        except Exception as exc:  # one call's failure is not the face's
            _log.error("%s failed inside mcpyard\n%s", name, face.redact(traceback.format_exc()))
            return error_result(f"{name} failed inside mcpyard: {type(exc).__name__}; please report it")

    def _serialize(self, request_id: int | str, version: str, result: CallResult | types.CallToolResult) -> bytes:
        """The response, shaped as the SDK's server shapes it for `version`, with a line end."""
        dumped = plain_wire_result(result) if isinstance(result, CallResult) else None
        if dumped is None:
            wire = wire_result(result) if isinstance(result, CallResult) else result
            try:
                dumped = serialize_server_result(
                    "tools/call", version, wire.model_dump(by_alias=True, mode="json", exclude_none=True)
                )
            except ValidationError:  # as the SDK's server answers a result it cannot send
                _log.error("a tool result could not be shaped for protocol %s", version)
                return error_answer(request_id, types.INTERNAL_ERROR, "Handler returned an invalid result")
        if version in MODERN_PROTOCOL_VERSIONS:
            dumped.setdefault("resultType", "complete")
            dumped["_meta"] = {**(dumped.get("_meta") or {}), _SERVER_INFO: self._stamp()}
        text = _COMPACT({"jsonrpc": "2.0", "id": request_id, "result": dumped})
        return text.encode() + b"\n"

    def _stamp(self) -> dict[str, Any]:
        """The face's `serverInfo` stamp, made once (the SDK's property copies it on every read); only ever
        serialized, never changed."""
        if self._server_info is None:
            self._server_info = self._face.server.server_info_stamp
        return self._server_info


def _logging(face: Face, ctx: ServerRequestContext[Any], taken: Taken, log: Write) -> LogFn:
    async def on_log(message: types.LoggingMessageNotificationParams) -> None:
        if message.level in taken.armed.log_levels and face.wants_log(ctx, message.level):
            params = message.model_dump(by_alias=True, mode="json", exclude_none=True)
            notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
            await log(json.dumps(notice, separators=(",", ":")).encode())

    return on_log


def error_answer(request_id: int | str, code: int, message: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(error, separators=(",", ":")).encode() + b"\n"
