"""A conversation as the agent loop keeps it, whatever the model API: messages and tool calls, plain JSON (MOD-2).

Tool calls carry the tool's catalog name (what `Host.call` takes); each model backend turns
these into its API's shape and back. Every value here is JSON, so a conversation (and a
turn parked on an approval) can be stored anywhere and read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpyard.connect import sendable_copy, sendable_problem, unsendable_text

__all__ = ["Message", "Role", "ToolCall", "messages_from_json", "messages_to_json", "sendable_call", "sendable_text"]

Role = Literal["system", "user", "assistant", "tool"]
_ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for.

    Attributes:
        id: the model's id for the call (its result answers this id).
        name: the tool's catalog name (`Host.call`'s); the model may have seen another (`ModelTools.names`).
        arguments: the arguments as a JSON object.
        problem: why the model's arguments could not be read as a JSON object (then `arguments` is empty), or
            cannot be sent (`sendable_call`); the call is then refused with `invalid_arguments`, so the model
            reads why.
        given: the name the model called it by, when that is not the catalog name (a provider's name limits);
            sent back to the model as such (`model_name`).
    """

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    problem: str | None = None
    given: str | None = None

    @property
    def model_name(self) -> str:
        """The name the model knows the tool by."""
        return self.given or self.name

    def arguments_json(self) -> str:
        """The arguments as the compact JSON a model API carries them in."""
        return json.dumps(dict(self.arguments), ensure_ascii=False, separators=(",", ":"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}
        if self.problem is not None:
            out["problem"] = self.problem
        if self.given is not None:
            out["given"] = self.given
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ToolCall:
        arguments = value.get("arguments")
        problem, given = value.get("problem"), value.get("given")
        return cls(
            id=str(value["id"]),
            name=str(value["name"]),
            arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
            problem=str(problem) if problem is not None else None,
            given=str(given) if given is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation.

    Attributes:
        role: `system`, `user`, `assistant` or `tool`.
        text: what was said; for a `tool` message, exactly the `CallResult.text` the model reads.
        tool_calls: an assistant message's tool calls.
        tool_call_id: the call a `tool` message answers.
        name: the catalog name of the tool a `tool` message answers.
        is_error: a `tool` message reporting a failed or refused call.
    """

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolCall] = ()) -> Message:
        return cls("assistant", text, tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, text: str, *, is_error: bool = False) -> Message:
        return cls("tool", text, tool_call_id=call.id, name=call.name, is_error=is_error)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "text": self.text}
        if self.tool_calls:
            out["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        if self.is_error:
            out["is_error"] = True
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Message:
        """A message as `to_json` wrote it.

        Raises:
            ValueError: its role is not one of the roles.
            TypeError: its tool calls are not a list.
        """
        role = value.get("role")
        if role not in _ROLES:
            raise ValueError(f"a message's role must be one of {', '.join(_ROLES)}, not {role!r}")
        calls = value.get("tool_calls") or ()
        if not isinstance(calls, list | tuple):
            raise TypeError("a message's tool_calls must be a list")
        call_id, name = value.get("tool_call_id"), value.get("name")
        return cls(
            role=role,
            text=str(value.get("text") or ""),
            tool_calls=tuple(ToolCall.from_json(call) for call in calls),
            tool_call_id=str(call_id) if call_id is not None else None,
            name=str(name) if name is not None else None,
            is_error=bool(value.get("is_error")),
        )


def messages_to_json(messages: Iterable[Message]) -> list[dict[str, Any]]:
    return [message.to_json() for message in messages]


def messages_from_json(values: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Messages as `messages_to_json` wrote them.

    Raises:
        ValueError: one of them has no known role.
        TypeError: one of them has tool calls that are not a list.
    """
    return [Message.from_json(value) for value in values]


def sendable_text(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD: what a model wrote, made fit to show, keep and send back."""
    return text if unsendable_text(text) is None else str(sendable_copy(text))


def sendable_call(call: ToolCall) -> ToolCall:
    """A tool call the model asked for, fit to show, keep and send back to the model.

    Arguments that cannot be sent (`sendable_problem`: a lone surrogate, too deep…) become the call's
    `problem`, so it is refused with `invalid_arguments` and the model reads why; what is kept of them is
    a sendable copy. Lone surrogates in its id and names become U+FFFD.
    """
    problem, arguments = call.problem, call.arguments
    if problem is None and (why := sendable_problem(dict(arguments))) is not None:
        problem, arguments = f"its arguments cannot be sent: {why}; nothing was sent", sendable_copy(dict(arguments))
    texts = (call.id, call.name, problem, call.given)
    if arguments is call.arguments and all(text is None or unsendable_text(text) is None for text in texts):
        return call
    return ToolCall(
        sendable_text(call.id),
        sendable_text(call.name),
        arguments,
        sendable_text(problem) if problem is not None else None,
        sendable_text(call.given) if call.given is not None else None,
    )
