"""The stages of a call, in order; each takes the call and returns it, enriched, or a refusal (CALL-1 to CALL-7).

check_sendable → resolve (in `_resolve.py`) → validate → decide → read files → cache lookup → ask → recheck →
dispatch → shape.
`record` (in `_run.py`) ends every call, whatever happened.
"""

from __future__ import annotations

import base64
import functools
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from mcpyard.catalog import clean_and_redact, clean_and_redact_json
from mcpyard.connect import sendable_problem, unsendable_text
from mcpyard.elicitation import elicitor_input
from mcpyard.errors import CallError, ServerError
from mcpyard.files import FileRefused, read_local_file
from mcpyard.pipeline._cache import cache_key
from mcpyard.pipeline._call import Call, Refusal
from mcpyard.pipeline._shape import ShapeContext, shape_result
from mcpyard.pipeline._validate import check_arguments
from mcpyard.policy import (
    ApprovalCard,
    CallFacts,
    Declined,
    FileFacts,
    HookSpawn,
    decide,
    preview_arguments,
    run_hooks,
)

if TYPE_CHECKING:
    from mcpyard import HostView
    from mcpyard.connect import InputRelay
    from mcpyard.pipeline._session import Session

__all__ = [
    "ask",
    "check_sendable",
    "decide_call",
    "dispatch",
    "look_up_cache",
    "read_files",
    "recheck",
    "shape",
    "validate",
]


async def check_sendable(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Arguments that cannot be sent (a lone surrogate, NaN, too deep, too large) are refused before anything else.

    Encoding happens inside the server's connection, which every caller shares: it must never fail there.
    """
    del view, session
    if (problem := sendable_problem(call.request.arguments)) is None:
        return call
    call.unsendable = True
    name = call.request.name
    shown = name if unsendable_text(name) is None else ascii(name)
    return Refusal("invalid_arguments", f"{shown}: arguments cannot be sent: {problem}; nothing was sent")


async def validate(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """The arguments must match the tool's input schema; the server is not called otherwise (CALL-1).

    A costly schema is checked in a worker thread, within a budget: it never holds up the host.
    """
    del view, session
    entry, _ = call.target()
    try:
        await check_arguments(entry, call.request.arguments)
    except CallError as exc:
        return Refusal(exc.code, exc.message)
    return call


async def decide_call(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Whether the call may run, must ask or is refused: rules, reviewed policy, mode, annotations (POL)."""
    entry, spec = call.target()
    arguments = call.request.arguments
    redactor = view.redactor
    facts = CallFacts(
        name=entry.name,
        base_name=entry.base_name if entry.base_name != entry.name else None,
        contested=entry.contested,
        read_only=entry.read_only,
        destructive=entry.destructive,
        trust_annotations=spec.trust_annotations,
        sends_files=bool(entry.file_params) and any(isinstance(arguments.get(p), str) for p in entry.file_params),
        sends_secret=bool(redactor) and redactor.contains(json.dumps(arguments, ensure_ascii=False, default=str)),
        policy=view.policies.policy(entry.server, entry.tool, entry.definition_hash),
    )
    decision = decide(facts, session.mode, view.rules, session.session_allows)
    if decision.verdict == "refuse":
        return Refusal(decision.code, f"{entry.name} refused: {decision.reason}")
    call.facts, call.decision = facts, decision
    return call


async def read_files(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Read every file parameter once, before approval: these bytes are what is sent (FILE-1 to FILE-3)."""
    del session
    entry, spec = call.target()
    arguments = call.request.arguments
    call.sent = arguments
    params = [param for param in entry.file_params if isinstance(arguments.get(param), str)]
    if not params:
        return call
    sent = dict(arguments)
    for param in params:
        reader = functools.partial(
            read_local_file,
            arguments[param],
            workspace=view.workspace,
            grants=view.settings.grants,
            max_bytes=spec.max_file_bytes,
        )
        try:
            file = await anyio.to_thread.run_sync(reader)
        except FileRefused as exc:
            return Refusal(exc.code, f"{entry.name}: {param}: {exc.message}")
        call.files = {**call.files, param: file}
        sent[param] = base64.b64encode(file.data).decode("ascii")
    call.sent = sent
    return call


async def look_up_cache(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """An idempotent tool's earlier result for the same arguments and file contents (CALL-6)."""
    del view
    entry, spec = call.target()
    cache = session.cache
    if entry.idempotent and spec.trust_annotations:
        digests = {param: file.sha256 for param, file in call.files.items()}
        call.cache_key = cache_key(entry.server, entry.tool, call.sent, digests)
        call.cached = cache.get(call.cache_key)
    call.generation = cache.generation(entry.server)
    return call


async def ask(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Run the pre_call hooks, settle the decision with their answer, and show the card if it still asks (APR-1)."""
    entry, facts, decision = call.decided()
    if view.settings.hooks:
        hook = await _run_hooks(view, call, session.start_hooks)
        if hook == "allow" and entry.contested:
            hook = None  # like an allow rule, a hook's allow applies to neither of two tools that want one name
        if hook is not None:
            facts = call.facts = replace(facts, hook=hook)
            decision = call.decision = decide(facts, session.mode, view.rules, session.session_allows)
            if decision.verdict == "refuse":
                return Refusal(decision.code, f"{entry.name} refused: {decision.reason}")
    if decision.verdict != "ask":
        return call
    approver = call.request.approver or session.approver
    if approver is None:
        return Refusal(
            "approval_required",
            f"{entry.name} needs approval: {decision.reason}; no one can approve it here: "
            "run it where a person can answer the card, or allow it with a rule or another mode",
        )
    try:
        answer = call.answer = await approver(_card(view, call))
    except Declined as declined:  # the approver's own words: why it would not approve
        return Refusal(declined.code, f"{entry.name}: {declined.message}")
    if answer == "session" and decision.session_allowed:
        session.session_allows.add(entry.name)
    elif answer not in ("once", "session"):
        return Refusal("denied", f"{entry.name} was not approved; nothing was sent")
    return call


async def _run_hooks(view: HostView, call: Call, spawn: HookSpawn | None) -> Any:
    """The user's pre_call hooks, given the call as JSON: tool, server, arguments, files (POL-6)."""
    entry, _ = call.target()
    files = [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in call.files.values()]
    payload = {
        "tool": entry.name,
        "server": entry.server,
        "server_tool": entry.tool,
        "arguments": view.redactor.redact_json(dict(call.request.arguments)),
        "files": files,
    }
    return await run_hooks(
        view.settings.hooks,
        name=entry.name,
        file_paths=[f.path for f in call.files.values()],
        payload=payload,
        cwd=view.workspace,
        environ=view.environ,
        spawn=spawn,
        also_named=(entry.base_name,) if entry.base_name and entry.base_name != entry.name else (),
    )


def _card(view: HostView, call: Call) -> ApprovalCard:
    (entry, spec), (_, _, decision) = call.target(), call.decided()
    redactor = view.redactor
    facts = {param: FileFacts(file.path, file.size, file.sha256) for param, file in call.files.items()}
    return ApprovalCard(
        tool=entry.name,
        server=entry.server,
        server_tool=entry.tool,
        # Redacted before the preview is cut, so no part of a secret is shown.
        arguments_preview=redactor.redact(preview_arguments(redactor.redact_json(dict(call.request.arguments)), facts)),
        annotations=entry.annotations,
        reason=decision.reason,
        files=tuple(facts.values()),
        offers_session=decision.session_allowed,
        destructive=entry.destructive and spec.trust_annotations,
        cached=call.cached is not None,
    )


async def recheck(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """After a card, run exactly what was approved: a tool that changed or is no longer allowed is refused (APR-2).

    The card may have been open for minutes, so this reads the view the host published last.
    """
    if call.answer is None:
        return call
    entry, facts, _ = call.decided()
    view = view.newest()
    current = view.catalog.get(entry.name)
    if current is None or current.definition_hash != entry.definition_hash:
        return Refusal(
            "tool_changed", f"{entry.name} changed or left while its card was open; nothing was sent; call it again"
        )
    policy = view.policies.policy(current.server, current.tool, current.definition_hash)
    if decide(replace(facts, policy=policy), session.mode, view.rules, ()).verdict == "refuse":
        return Refusal("denied", f"{current.name} is no longer allowed; nothing was sent")
    spec, connection = view.specs.get(current.server), view.connections.get(current.server)
    if spec is None or connection is None:
        return Refusal("server_unavailable", f"server {current.server!r} is not running; nothing was sent")
    call.spec, call.connection = spec, connection  # the server as it is now, should it have restarted
    if call.cached is not None and session.cache.generation(entry.server) != call.generation:
        # A call that may change the server got there while the card was open (APR-3).
        return Refusal(
            "stale_cache",
            f"{entry.name}: the server may have changed while this call waited for approval, so its "
            "earlier result was not given and nothing was sent; call the tool again",
        )
    return call


async def dispatch(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Send the call, unless the cache answers it; timeouts, cancellation and progress as CALL-2 says."""
    entry, spec = call.target()
    if call.cached is not None:
        return call
    cache = session.cache
    if not (entry.read_only and not entry.destructive and spec.trust_annotations):
        # Any call that may change the server forgets its results, whether it succeeds or not (CALL-6).
        cache.forget_server(entry.server)
    before = cache.generation(entry.server)
    request = call.request
    try:
        call.raw = await call.target_connection().call(
            entry.tool,
            call.sent,
            timeout_secs=spec.call_timeout_secs,
            on_progress=_redacted_progress(view, request.progress),
            on_log=_redacted_log(view, request.on_log),
            on_input=_redacted_input(view, _input_relay(session, call)),
        )
    except ServerError as exc:
        call.server_error = exc.text
        return call
    except CallError as exc:
        return Refusal(exc.code, exc.message, sent=exc.code != "server_unavailable")
    # A change that reached the server while this call was out makes its answer stale: not kept.
    if call.cache_key is not None and not call.raw.is_error and cache.generation(entry.server) == before:
        cache.put(call.cache_key, entry.server, call.raw)
    return call


def _redacted_progress(view: HostView, on_progress: Any) -> Any:
    """A progress message is server text like any other: cleaned, then redacted, before it reaches anyone (SEC-3)."""
    if on_progress is None:
        return None
    redact = view.redactor.redact

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        await on_progress(progress, total, clean_and_redact(message, redact) if message else message)

    return forward


def _redacted_log(view: HostView, on_log: Any) -> Any:
    """Log messages are server text like any other: cleaned, then redacted, before they reach anyone (SEC-3)."""
    if on_log is None:
        return None
    redact = view.redactor.redact_json

    async def forward(params: types.LoggingMessageNotificationParams) -> None:
        data = clean_and_redact_json(params.model_dump(by_alias=True, exclude_none=True, mode="json"), redact)
        await on_log(types.LoggingMessageNotificationParams.model_validate(data))

    return forward


TYPED_SECRET = "%typed secret%"
"""What stands in a result for a value the user typed into a secret-looking field of the server's form."""


def _input_relay(session: Session, call: Call) -> InputRelay | None:
    """Where the server's questions during this call go: the caller's relay, else the elicitor, if any.

    A relay that cannot ask (a gateway client that takes no such requests) gives way to the elicitor.
    """
    relay = call.request.on_input
    elicitor = call.request.elicitor or session.elicitor
    if elicitor is None or (relay is not None and relay.ask is not None):
        return relay
    from mcpyard.connect import InputRelay  # the SDK comes with it: imported only when a call needs it

    entry, _ = call.target()
    audience = relay.audience if relay is not None else "host"  # the library's own calls, as `CallChannel` names them
    ask = elicitor_input(elicitor, entry.server, entry.name, call.typed_secrets)
    return InputRelay(audience=audience, ask=ask)


def _redacted_input(view: HostView, relay: Any) -> Any:
    """A server's sampling or elicitation request is server text too: cleaned and redacted before it is sent on."""
    if relay is None or relay.ask is None:
        return relay
    ask_client = relay.ask
    redact = view.redactor.redact_json

    async def forward(method: str, params: Any) -> Any:
        return await ask_client(method, clean_and_redact_json(dict(params), redact))

    return replace(relay, ask=forward)


async def shape(view: HostView, session: Session, call: Call) -> Call | Refusal:
    """Turn what came back into what the model reads: file lines, cap and store, redaction, fence (CALL-4 to CALL-7)."""
    entry, _ = call.target()
    context = ShapeContext(
        conversation=call.request.conversation,
        marker=session.marker,
        max_bytes=view.settings.max_result_bytes,
        max_stored_bytes=view.settings.max_stored_result_bytes,
        store=session.store,
        files=tuple(call.files.values()),
        cached=call.cached is not None,
        redactor=view.redactor.with_secrets((TYPED_SECRET, value) for value in call.typed_secrets)
        if call.typed_secrets
        else view.redactor,
    )
    if call.server_error is not None:
        # The server's error text is external data like any result: echoes replaced, redacted, capped, fenced.
        failed = types.CallToolResult(content=[types.TextContent(type="text", text=call.server_error)], is_error=True)
        shaped = await shape_result(entry, failed, context)
        message = shaped.error["message"] if shaped.error else call.server_error
        call.result = replace(shaped, error={"code": "server_error", "message": message})
        return call
    raw = call.cached if call.cached is not None else call.raw
    if raw is None:
        raise RuntimeError("the call was not dispatched: stages run in order")
    call.result = await shape_result(entry, raw, context)
    return call
