"""The agent loop: model → tool calls → the host's pipeline → results → model, until it answers or a limit (MOD-2).

One turn is `run_turn(host, model, messages, …)`. Every tool call goes through `host.call`, so
every rule of the pipeline holds (policy, approvals, files, cache, caps, fence, redaction, the
record); the loop adds only what a turn needs: the tools the model may call (a name it was not
offered is refused here, never looked up, and a tool whose definition changed after the model was
offered it is refused `tool_changed` by the host: the model decided on what it read), calls asked
together run concurrently, a limit on calls per turn and on the turn's time, and events for the face
as things happen.

Parking, the seam the organization service resumes turns through: an approver that cannot
answer now raises `ParkCall` (a `Declined` with code `waiting_for_approval` and the approval's
id). The loop lets the other calls of that reply finish, then ends the turn `parked`: its
`TurnState` (the messages so far, the calls made, and the calls still waiting) is plain JSON
(`to_json` / `TurnState.from_json`), so it can be stored and picked up by any process. When the
approval is decided, `resume_turn(host, model, state, {call_id: result})` gives the model each
waiting call's result (the approved run's, or the refusal) and the turn goes on.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import anyio

from mcpyard.agent._clock import running
from mcpyard.agent._state import Turn, TurnLimits, TurnState, TurnStatus
from mcpyard.connect import ProgressFn
from mcpyard.errors import ModelError
from mcpyard.model import (
    ApprovalEvent,
    ErrorEvent,
    Event,
    EventSink,
    Message,
    Model,
    ModelTools,
    ParkedEvent,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    ToolFormat,
    ToolProgressEvent,
    ToolResultEvent,
    ToolSearchEvent,
    TurnEndEvent,
    sendable_call,
    sendable_text,
)
from mcpyard.ops import tracing
from mcpyard.pipeline import FIND_TOOLS, CallResult, watching_progress
from mcpyard.policy import Answer, ApprovalCard, Approver, Declined

__all__ = [
    "PARKED",
    "CallApprover",
    "ParkCall",
    "Turn",
    "TurnHost",
    "TurnLimits",
    "TurnState",
    "TurnStatus",
    "resume_turn",
    "run_turn",
]

DEFAULT_LIMITS = TurnLimits()
PARKED = "waiting_for_approval"
PROGRESS_EVERY_SECS = 0.5
"""A call's progress reaches the turn's events at most this often."""
"""The refusal code of a call parked on an approval."""


class ParkCall(Declined):
    """Raised by an approver that parks the call on an approval to be decided later (the organization's inbox)."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(PARKED, f"waiting for approval {approval_id}")
        self.approval_id = approval_id


@runtime_checkable
class CallApprover(Protocol):
    """An approver that needs the call itself, not only its card: the organization's inbox saves the exact
    arguments of a call it parks, and which turn and call it was. The loop asks it for each call's approver."""

    def for_call(self, call: ToolCall) -> Approver: ...

    async def __call__(self, card: ApprovalCard) -> Answer: ...


class TurnHost(Protocol):
    """What the loop needs of a host: `mcpyard.Host`, or a facade offering only some of its tools.

    `call` runs only on the definition with `definition_hash` (CAT-2), when given: the loop gives the one the model
    was offered (`ModelTools.hashes`). A host whose `call` does not take it is called without it.
    """

    @property
    def approver(self) -> Approver | None: ...

    def tools_for_model(self, format: ToolFormat = "mcp", *, conversation: str | None = None) -> ModelTools: ...

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        conversation: str | None = None,
        approver: Approver | None = None,
        definition_hash: str | None = None,
    ) -> CallResult: ...

    def redact_json(self, value: Any) -> Any: ...


async def run_turn(
    host: TurnHost,
    model: Model,
    messages: Sequence[Message],
    *,
    on_event: EventSink | None = None,
    limits: TurnLimits = DEFAULT_LIMITS,
    approver: Approver | None = None,
    conversation: str | None = None,
    tools: ModelTools | None = None,
) -> Turn:
    """Drive one turn until the model answers, a call parks, or a limit stops it; never raises for a failed call.

    Args:
        host: the host whose pipeline runs every call.
        model: the model (`OpenAIModel`, `AnthropicModel`, `ScriptedModel`…).
        messages: the conversation so far, ending with the user's message.
        on_event: gets each event as it happens (text as it streams, calls, approvals, the end).
        limits: calls per turn and the turn's time.
        approver: answers the cards of this turn's calls (default: the host's).
        conversation: whose result handles the calls make (default: the host session's).
        tools: what the model is offered (default: `host.tools_for_model(model.tool_format)`); a call to any
            other name is refused without reaching the host.
    """
    state = TurnState(messages=list(messages))
    return await _Loop(host, model, state, on_event, limits, approver, conversation, tools).run()


async def resume_turn(
    host: TurnHost,
    model: Model,
    state: TurnState,
    decided: Mapping[str, CallResult],
    *,
    on_event: EventSink | None = None,
    limits: TurnLimits = DEFAULT_LIMITS,
    approver: Approver | None = None,
    conversation: str | None = None,
    tools: ModelTools | None = None,
) -> Turn:
    """Go on with a parked turn: each waiting call's result (by call id) goes to the model, and the turn continues.

    A waiting call with no result in `decided` stays waiting: the turn stays parked, nothing is asked of the model.
    """
    loop = _Loop(host, model, TurnState(list(state.messages), state.calls, dict(state.waiting)), on_event, limits)
    loop.approver, loop.conversation, loop.offered = approver, conversation, tools
    for call_id, result in decided.items():
        waiting = loop.state.waiting.pop(call_id, None)
        if waiting is not None:
            call = waiting[0]
            loop.state.messages.append(Message.tool(call, result.text, is_error=not result.ok))
            await loop.emit(ToolResultEvent(call.id, call.name, result.ok, result.error, result))
            loop.results.append((call, result))
    if loop.state.waiting:
        return await loop.end("parked")
    return await loop.run()


class _Loop:
    def __init__(
        self,
        host: TurnHost,
        model: Model,
        state: TurnState,
        on_event: EventSink | None,
        limits: TurnLimits,
        approver: Approver | None = None,
        conversation: str | None = None,
        tools: ModelTools | None = None,
    ) -> None:
        self.host, self.model, self.state, self.on_event, self.limits = host, model, state, on_event, limits
        self.approver, self.conversation, self.offered = approver, conversation, tools
        self.binds = _takes_definition_hash(host)
        self.results: list[tuple[ToolCall, CallResult]] = []
        self.finished: dict[str, CallResult] = {}
        """Results of the last reply's calls as they come; they go into the messages in the calls' order."""
        self.reply = ""

    async def emit(self, event: Event) -> None:
        if self.on_event is not None:
            await self.on_event(event)

    async def end(self, status: TurnStatus, error: ErrorEvent | None = None) -> Turn:
        self.state.status = status
        if error is not None:
            await self.emit(error)
        await self.emit(TurnEndEvent(self.state.calls, status))
        return Turn(self.state, self.reply, tuple(self.results))

    async def run(self) -> Turn:
        if not tracing.active():
            return await self._run()
        # With tracing on, a turn is a span (OBS-1), and each of its calls a child of it.
        with tracing.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}) as span:
            turn = await self._run()
            span.set_attributes({"mcpyard.turn.status": turn.status, "mcpyard.turn.calls": self.state.calls})
            return turn

    async def _run(self) -> Turn:
        deadline = self.limits.max_seconds
        # Its calls may pause it while a person answers (`current_turn_clock`).
        with anyio.move_on_after(deadline if deadline is not None else float("inf")) as scope, running(scope):
            return await self._steps()
        self._answer_unanswered("the turn's time limit was reached before this call ended")
        message = f"the turn stopped: it took longer than its limit of {deadline:g} s"
        return await self.end("time_limit", ErrorEvent("time_limit", message))

    def _tools(self) -> ModelTools:
        """What the model is offered for its next reply: as given, or the host's (which grows as tools are found)."""
        if self.offered is not None:
            return self.offered
        return self.host.tools_for_model(self.model.tool_format, conversation=self.conversation)

    async def _steps(self) -> Turn:
        while True:
            tools = self._tools()
            try:
                reply = await self.model.complete(self.state.messages, tools, on_text=self._text)
            except ModelError as exc:
                return await self.end("model_error", ErrorEvent("model_error", str(exc)))
            text = sendable_text(reply.text)  # a lone surrogate would fail every later request, page and row
            if not reply.tool_calls:
                self.reply = text
                self.state.messages.append(Message.assistant(text))
                return await self.end("done")
            calls = tuple(self._catalog_call(sendable_call(call), tools) for call in reply.tool_calls)
            self.state.messages.append(Message.assistant(text, calls))
            room = max(0, self.limits.max_calls - self.state.calls)
            allowed, beyond = calls[:room], calls[room:]
            self.state.calls += len(allowed)
            async with anyio.create_task_group() as tg:
                for call in allowed:
                    tg.start_soon(self._one, call, tools)
            for call in beyond:
                message = f"not run: this turn may make at most {self.limits.max_calls} tool calls"
                self.finished[call.id] = CallResult.refusal("call_limit", message, tool=call.name)
                await self.emit(ToolResultEvent(call.id, call.name, False, {"code": "call_limit", "message": message}))
            self._answer_unanswered(None)
            if self.state.waiting:
                return await self.end("parked")
            if beyond:
                message = f"the turn stopped at its limit of {self.limits.max_calls} tool calls"
                return await self.end("call_limit", ErrorEvent("call_limit", message))

    async def _text(self, text: str) -> None:
        await self.emit(TextEvent(sendable_text(text)))

    def _catalog_call(self, call: ToolCall, tools: ModelTools) -> ToolCall:
        """The call with its catalog name, when the model called a tool it was offered under another name."""
        name = tools.catalog_name(call.name)
        if name is None or name == call.name:
            return call
        return ToolCall(call.id, name, call.arguments, call.problem, given=call.model_name)

    async def _one(self, call: ToolCall, tools: ModelTools) -> None:
        arguments = dict(call.arguments)
        await self.emit(ToolCallEvent(call.id, call.name, self.host.redact_json(arguments)))
        if call.model_name not in tools.names:
            result = CallResult.refusal("unknown_tool", f"unknown tool {call.model_name!r}: it was not offered")
        elif call.problem is not None:
            result = CallResult.refusal("invalid_arguments", f"{call.name}: {call.problem}", tool=call.name)
        else:
            # Bound to the definition the model read (a host that cannot take it is called as before).
            bound: dict[str, Any] = {"definition_hash": tools.definition_hash(call.name)} if self.binds else {}
            with watching_progress(self._progress_of(call)):
                result = await self.host.call(
                    call.name, arguments, conversation=self.conversation, approver=self._approver_for(call), **bound
                )
        if result.error is not None and result.error["code"] == PARKED and call.id in self.state.waiting:
            return  # its result comes with `resume_turn`
        self.finished[call.id] = result
        await self.emit(ToolResultEvent(call.id, call.name, result.ok, result.error, result))
        if call.name == FIND_TOOLS and result.ok:
            query = str(arguments.get("query", ""))
            await self.emit(ToolSearchEvent(self.host.redact_json(query), _found_in(result)))

    def _progress_of(self, call: ToolCall) -> ProgressFn:
        """The call's progress as events, at most one each `PROGRESS_EVERY_SECS` (a server may send thousands)."""
        last = -PROGRESS_EVERY_SECS

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            nonlocal last
            now = anyio.current_time()
            if now - last >= PROGRESS_EVERY_SECS:
                last = now
                await self.emit(ToolProgressEvent(call.id, call.name, progress, total, message))

        return on_progress

    def _answer(self, call: ToolCall, result: CallResult) -> None:
        self.state.messages.append(Message.tool(call, result.text, is_error=not result.ok))
        self.results.append((call, result))

    def _answer_unanswered(self, why: str | None) -> None:
        """The last reply's results into the messages, in the order of its calls; with `why`, a refusal saying
        so for each call that has none (the model's API wants an answer to every call but a parked one)."""
        messages = self.state.messages
        at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None)
        if at is None:
            return
        last = messages[at]
        # Only the answers after it: a model may give a call the id of one in an earlier reply ("call_1" every time).
        answered = {m.tool_call_id for m in messages[at + 1 :] if m.role == "tool"}
        for call in last.tool_calls:
            if call.id in answered or call.id in self.state.waiting:
                continue
            result = self.finished.pop(call.id, None)
            if result is None and why is not None:
                result = CallResult.refusal("time_limit", f"{call.name}: {why}", tool=call.name)
            if result is not None:
                self._answer(call, result)
        self.finished.clear()

    def _approver_for(self, call: ToolCall) -> Approver | None:
        inner = self.approver or self.host.approver
        if inner is None:
            return None
        if isinstance(inner, CallApprover):
            inner = inner.for_call(call)
        return _Telling(self, call, inner)


def _takes_definition_hash(host: TurnHost) -> bool:
    """Whether `host.call` takes `definition_hash` (mcpyard's hosts and facades do; a caller's own, older one may
    not, and is called as before)."""
    try:
        parameters = inspect.signature(host.call).parameters.values()
    except (TypeError, ValueError):  # no signature to read: called as before
        return False
    return any(p.name == "definition_hash" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class _Telling:
    """The approver of one call in a turn: asks the real one, tells the face the answer, notes a parked call."""

    def __init__(self, loop: _Loop, call: ToolCall, inner: Approver) -> None:
        self._loop, self._call, self._inner = loop, call, inner

    async def __call__(self, card: ApprovalCard) -> Answer:
        call = self._call
        try:
            answer = await self._inner(card)
        except ParkCall as parked:
            self._loop.state.waiting[call.id] = (call, parked.approval_id)
            await self._loop.emit(ParkedEvent(call.id, call.name, parked.approval_id))
            raise
        except Declined:
            await self._loop.emit(ApprovalEvent(call.id, call.name, card.reason, "deny"))
            raise
        await self._loop.emit(ApprovalEvent(call.id, call.name, card.reason, answer))
        return answer


def _found_in(result: CallResult) -> tuple[str, ...]:
    """The tools a `find_tools` result names, best first."""
    found = result.structured.get("found") if isinstance(result.structured, dict) else None
    return tuple(str(name) for name in found) if isinstance(found, list) else ()
