"""The call pipeline, stage by stage: resolve → validate → decide → read files → cache → ask → dispatch → shape."""

from __future__ import annotations

import base64
import functools
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from mcpyard.catalog import Catalog, CatalogEntry
from mcpyard.config import HostSettings, Mode, ServerSpec
from mcpyard.errors import CallError, ServerError
from mcpyard.files import FileRefused, LocalFile, read_local_file
from mcpyard.pipeline._cache import IdempotentCache, cache_key
from mcpyard.pipeline._result import CallResult
from mcpyard.pipeline._shape import ShapeContext, cut_to_bytes, fence, shape_result
from mcpyard.pipeline._stages import resolve, validate_arguments
from mcpyard.pipeline._store import ResultStore
from mcpyard.policy import (
    ApprovalCard,
    Approver,
    CallFacts,
    FileFacts,
    HookAnswer,
    Pin,
    Rules,
    decide,
    preview_arguments,
    run_hooks,
)
from mcpyard.secrets import Redactor

if TYPE_CHECKING:
    from mcpyard.connect import InputRelay, LogFn, ProgressFn, Supervisor

__all__ = ["READ_RESULT", "READ_RESULT_TOOL", "CallRunner", "Session"]

READ_RESULT = "read_result"
READ_RESULT_TOOL: Mapping[str, Any] = {
    "name": READ_RESULT,
    "description": (
        "Read more of a tool result that was cut: give the handle named in the cut mark, the character "
        "offset to start at, and how many characters to read. Reports the total length."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "The handle from the cut mark."},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "length": {"type": "integer", "minimum": 1, "default": 65536},
        },
        "required": ["handle"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True},
}


@dataclass
class Session:
    """One host session's state: its mode, approver, allows, stored results and cache."""

    mode: Mode
    approver: Approver | None
    id: str = field(default_factory=lambda: secrets.token_hex(16))
    marker: str = field(default_factory=lambda: secrets.token_hex(8))
    """Random per session, so text inside a result can never close the fence (CALL-7)."""
    session_allows: set[str] = field(default_factory=set)
    store: ResultStore = field(default_factory=ResultStore)
    cache: IdempotentCache = field(default_factory=IdempotentCache)
    redactor: Redactor = field(default_factory=Redactor)
    """Secret values mcpyard sends, replaced by their names in everything that comes back (SEC-3)."""


@dataclass(frozen=True, slots=True)
class _Planned:
    entry: CatalogEntry
    spec: ServerSpec
    arguments: dict[str, Any]
    """The arguments as sent: file parameters hold the base64 of the bytes read."""
    files: tuple[LocalFile, ...]
    file_params: Mapping[str, LocalFile]


class CallRunner:
    """Runs calls against a host's live catalog and servers; knows nothing of the face that called it."""

    def __init__(
        self,
        *,
        session: Session,
        workspace: Path,
        catalog: Callable[[], Catalog],
        server: Callable[[str], Supervisor | None],
        settings: Callable[[], HostSettings],
        environ: Mapping[str, str],
        pins: Callable[[], Mapping[tuple[str, str], Pin]] = dict,
    ) -> None:
        self.session = session
        self._pins = pins
        self._environ = environ
        self._workspace = workspace
        self._catalog = catalog
        self._server = server
        self._settings = settings

    async def run(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        on_progress: ProgressFn | None = None,
        conversation: str | None = None,
        on_log: LogFn | None = None,
        on_input: InputRelay | None = None,
    ) -> CallResult:
        conversation = conversation or self.session.id
        try:
            if name == READ_RESULT:
                return self._read_result(dict(arguments or {}), conversation)
            return await self._run(name, dict(arguments or {}), on_progress, conversation, on_log, on_input)
        except CallError as exc:
            entry = self._catalog().get(name)
            message = self.session.redactor.redact(exc.message)
            return CallResult.refusal(exc.code, message, tool=name, server=entry.server if entry else None)

    async def _run(
        self,
        name: str,
        arguments: dict[str, Any],
        on_progress: ProgressFn | None,
        conversation: str,
        on_log: LogFn | None = None,
        on_input: InputRelay | None = None,
    ) -> CallResult:
        entry = resolve(self._catalog(), name)
        validate_arguments(entry, arguments)
        supervisor = self._server(entry.server)
        if supervisor is None:
            raise CallError("server_unavailable", f"server {entry.server!r} is not running")
        spec = supervisor.spec
        settings = self._settings()
        sent_files = [param for param in entry.file_params if isinstance(arguments.get(param), str)]
        facts = CallFacts(
            name=entry.name,
            read_only=entry.read_only,
            destructive=entry.destructive,
            trust_annotations=spec.trust_annotations,
            sends_files=bool(sent_files),
            sends_secret=self.session.redactor.contains(json.dumps(arguments, ensure_ascii=False, default=str)),
            **self._pinned(current=entry),
        )
        decision = decide(facts, self.session.mode, Rules(settings.allow, settings.deny), self.session.session_allows)
        if decision.verdict == "refuse":
            raise CallError(decision.code, f"{entry.name} refused: {decision.reason}")
        planned = await self._read_files(entry, spec, arguments, sent_files, settings.grants)
        verdict, reason, offers_session = decision.verdict, decision.reason, decision.session_allowed
        hook = await self._hooks(planned, settings)
        if hook == "deny":
            raise CallError("denied", f"{entry.name} refused by a pre_call hook; nothing was sent")
        if hook == "ask" and verdict == "run":
            verdict, reason, offers_session = "ask", "a pre_call hook asks for this call", False
        if hook == "allow" and verdict == "ask" and not (entry.destructive and spec.trust_annotations):
            # A hook's allow skips the card, never a destructive tool's (POL-2, POL-6).
            verdict = "run"

        cache = self.session.cache
        key = None
        if entry.idempotent and spec.trust_annotations:
            digests = {param: file.sha256 for param, file in planned.file_params.items()}
            key = cache_key(entry.server, entry.tool, arguments, digests)
        cached = cache.get(key) if key is not None else None
        generation = cache.generation(entry.server)

        if verdict == "ask":
            await self._ask(planned, reason, offers_session, cached is not None)
            self._recheck(planned)
            if cached is not None and cache.generation(entry.server) != generation:
                # A call that may change the server got there while the card was open (APR-3).
                raise CallError(
                    "stale_cache",
                    f"{entry.name}: the server may have changed while this call waited for approval, so its "
                    "earlier result was not given and nothing was sent; call the tool again",
                )

        shaping = ShapeContext(
            conversation=conversation,
            marker=self.session.marker,
            max_bytes=settings.max_result_bytes,
            store=self.session.store,
            files=planned.files,
            cached=cached is not None,
            redactor=self.session.redactor,
        )
        if cached is not None:
            return shape_result(entry, cached, shaping)
        if not (entry.read_only and not entry.destructive and spec.trust_annotations):
            # Any call that may change the server forgets its results, whether it succeeds or not (CALL-6).
            cache.forget_server(entry.server)
        before = cache.generation(entry.server)
        try:
            result = await supervisor.call(
                entry.tool,
                planned.arguments,
                timeout_secs=spec.call_timeout_secs,
                on_progress=on_progress,
                on_log=self._redacted_log(on_log),
                on_input=self._redacted_input(on_input),
            )
        except ServerError as exc:
            # The server's error text is external data like any result: echoes replaced, redacted, capped, fenced.
            failed = types.CallToolResult(content=[types.TextContent(type="text", text=exc.text)], is_error=True)
            shaped = shape_result(entry, failed, shaping)
            error = {"code": "server_error", "message": shaped.error["message"] if shaped.error else exc.message}
            return replace(shaped, error=error)
        shaped = shape_result(entry, result, shaping)
        # A change that reached the server while this call was out makes its answer stale: not kept.
        if key is not None and not result.is_error and cache.generation(entry.server) == before:
            cache.put(key, entry.server, result)
        return shaped

    def _redacted_log(self, on_log: LogFn | None) -> LogFn | None:
        """Log messages are server text like any other: redacted before they reach anyone (SEC-3)."""
        if on_log is None:
            return None
        sink = on_log

        async def forward(params: types.LoggingMessageNotificationParams) -> None:
            data = self.session.redactor.redact_json(params.model_dump(by_alias=True, exclude_none=True, mode="json"))
            await sink(types.LoggingMessageNotificationParams.model_validate(data))

        return forward

    def _redacted_input(self, relay: InputRelay | None) -> InputRelay | None:
        """A server's sampling or elicitation request is server text too: redacted before it is sent on (SEC-3)."""
        if relay is None or relay.ask is None:
            return relay
        ask = relay.ask
        redact = self.session.redactor.redact_json

        async def forward(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
            return await ask(method, redact(dict(params)))

        return replace(relay, ask=forward)

    async def _read_files(
        self,
        entry: CatalogEntry,
        spec: ServerSpec,
        arguments: dict[str, Any],
        params: Sequence[str],
        grants: Sequence[Path],
    ) -> _Planned:
        """Read every file parameter once, before approval: these bytes are what is sent (FILE-1 to FILE-3)."""
        read: dict[str, LocalFile] = {}
        for param in params:
            path = arguments[param]
            try:
                reader = functools.partial(
                    read_local_file, path, workspace=self._workspace, grants=grants, max_bytes=spec.max_file_bytes
                )
                read[param] = await anyio.to_thread.run_sync(reader)
            except FileRefused as exc:
                raise CallError(exc.code, f"{entry.name}: {param}: {exc.message}") from None
        sent = dict(arguments)
        for param, file in read.items():
            sent[param] = base64.b64encode(file.data).decode("ascii")
        return _Planned(entry, spec, sent, tuple(read.values()), read)

    def _pinned(self, *, current: CatalogEntry) -> dict[str, Any]:
        """The reviewed policy of a tool, and whether its definition is still the reviewed one (POL-5)."""
        pin = self._pins().get((current.server, current.tool))
        if pin is None:
            return {}
        return {"pin": pin.policy, "pin_current": pin.definition_hash == current.definition_hash}

    async def _hooks(self, planned: _Planned, settings: HostSettings) -> HookAnswer | None:
        """Ask the user's pre_call hooks, with the call as JSON: tool, server, arguments, files (POL-6)."""
        if not settings.hooks:
            return None
        entry = planned.entry
        files = [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in planned.files]
        shown = {**planned.arguments, **{param: f.path for param, f in planned.file_params.items()}}
        payload = {
            "tool": entry.name,
            "server": entry.server,
            "server_tool": entry.tool,
            "arguments": self.session.redactor.redact_json(shown),
        }
        return await run_hooks(
            settings.hooks,
            name=entry.name,
            file_paths=[f.path for f in planned.files],
            payload={**payload, "files": files},
            cwd=self._workspace,
            environ=self._environ,
        )

    async def _ask(self, planned: _Planned, reason: str, offers_session: bool, cached: bool) -> None:
        """Show the card (APR-1); refuse when no one can answer it."""
        entry = planned.entry
        approver = self.session.approver
        if approver is None:
            raise CallError(
                "approval_required",
                f"{entry.name} needs approval ({reason}) and no one can approve it here; "
                "run it where a person can answer the card, or allow it with a rule or another mode",
            )
        original = {param: file.path for param, file in planned.file_params.items()}
        card = ApprovalCard(
            tool=entry.name,
            server=entry.server,
            server_tool=entry.tool,
            arguments_preview=self.session.redactor.redact(
                preview_arguments(
                    # Redacted before the preview is cut, so no part of a secret is shown.
                    self.session.redactor.redact_json({**planned.arguments, **original}),
                    {
                        param: FileFacts(file.path, file.size, file.sha256)
                        for param, file in planned.file_params.items()
                    },
                )
            ),
            annotations=entry.annotations,
            reason=reason,
            files=tuple(FileFacts(file.path, file.size, file.sha256) for file in planned.files),
            offers_session=offers_session,
            destructive=entry.destructive and planned.spec.trust_annotations,
            cached=cached,
        )
        answer = await approver(card)
        if answer == "session" and offers_session:
            self.session.session_allows.add(entry.name)
        elif answer not in ("once", "session"):
            raise CallError("denied", f"{entry.name} was not approved; nothing was sent")

    def _recheck(self, planned: _Planned) -> None:
        """Run exactly what was approved: a tool that changed meanwhile is refused (APR-2)."""
        current = self._catalog().get(planned.entry.name)
        if current is None or current.definition_hash != planned.entry.definition_hash:
            raise CallError(
                "tool_changed",
                f"{planned.entry.name} changed or left while its card was open; nothing was sent; call it again",
            )
        settings = self._settings()
        facts = CallFacts(
            name=current.name,
            read_only=current.read_only,
            destructive=current.destructive,
            trust_annotations=planned.spec.trust_annotations,
            sends_files=bool(planned.files),
            **self._pinned(current=current),
        )
        if decide(facts, self.session.mode, Rules(settings.allow, settings.deny), ()).verdict == "refuse":
            raise CallError("denied", f"{current.name} is no longer allowed; nothing was sent")

    def _read_result(self, arguments: dict[str, Any], conversation: str) -> CallResult:
        """The built-in `read_result(handle, offset, length)` (CALL-4)."""
        handle = arguments.get("handle")
        offset = arguments.get("offset", 0)
        length = arguments.get("length", self._settings().max_result_bytes)
        if not isinstance(handle, str) or not isinstance(offset, int) or not isinstance(length, int):
            raise CallError("invalid_arguments", "read_result takes handle (string), offset and length (integers)")
        if offset < 0 or length < 1:
            raise CallError("invalid_arguments", "read_result: offset must be ≥ 0 and length ≥ 1")
        limit = self._settings().max_result_bytes
        stored = self.session.store.read(conversation, handle, offset, min(length, limit))
        if stored is None:
            raise CallError("unknown_handle", f"no stored result {handle!r} in this conversation")
        server, window = stored
        shown = cut_to_bytes(window.text, limit)  # the cap holds for windows too (CALL-4)
        end = window.offset + len(shown)
        more = f"; more from offset {end}" if end < window.total else "; that is the end"
        body = f"{shown}\n[read_result: characters {window.offset}–{end} of {window.total}{more}]"
        text = fence(body, server=server, marker=self.session.marker)
        return CallResult(
            ok=True, text=text, content=[{"type": "text", "text": shown}], tool=READ_RESULT, server=server
        )
