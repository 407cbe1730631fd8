"""A server's question to the user (elicitation, form or URL mode), the answer, and who answers it.

An `Elicitor` is any `async (request) -> ElicitationAnswer`, the twin of an approver: the
console asks the person at the terminal, a test answers from a script, the organization
service parks it in an inbox. The request it gets is already cleaned and redacted (SEC-3);
mcpyard completes an accepted form with its defaults and checks it against the form before
anything goes back to the server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpyard.elicitation._answers import check_content, defaults_of
from mcpyard.elicitation._field import FieldValue, FormField
from mcpyard.elicitation._form import form_fields
from mcpyard.errors import ElicitationRefused

__all__ = [
    "MAX_URL",
    "MESSAGE_LIMIT",
    "ElicitationAction",
    "ElicitationAnswer",
    "ElicitationMode",
    "ElicitationRequest",
    "Elicitor",
    "ScriptedElicitor",
    "answer_for_server",
    "check_url",
    "request_from_params",
]

ElicitationMode = Literal["form", "url"]
ElicitationAction = Literal["accept", "decline", "cancel"]
MESSAGE_LIMIT = 4000
MAX_URL = 2048
_LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A server's question, as a person should see it: who asks, why, and the form or the URL."""

    server: str
    """The id of the server that asks."""
    message: str
    """The server's words (cleaned, redacted, cut): what it asks for and why."""
    mode: ElicitationMode
    fields: tuple[FormField, ...] = ()
    """Form mode: the fields, in the schema's order."""
    url: str | None = None
    """URL mode: the address the server wants the person to open (checked; mcpyard never opens it)."""
    site: str | None = None
    """URL mode: the URL's host as plain ASCII (an international name as punycode), to show apart."""
    tool: str | None = None
    """The model-facing name of the tool whose call asks, when known."""

    @property
    def asks_for_secrets(self) -> bool:
        """A form field looks like a secret: MCP says servers should ask for those through a URL."""
        return any(f.secret for f in self.fields)

    def defaults(self) -> dict[str, FieldValue]:
        """The content of an answer that leaves every field empty."""
        return defaults_of(self.fields)

    def check(self, content: Mapping[str, Any] | None) -> tuple[dict[str, FieldValue], list[str]]:
        """An accepted form's content completed with defaults and checked: `(content, problems)`."""
        return check_content(self.fields, content)

    def lines(self) -> list[str]:
        """The question as plain lines, for a console or a log (no value typed into it is ever among them)."""
        during = f", during {self.tool}" if self.tool else ""
        out = [f"server {self.server} asks{during}:", *self.message.splitlines()]
        if self.mode == "url":
            out += [f"it asks you to open: {self.url}", f"site: {self.site}", "mcpyard does not open it for you"]
            return out
        for f in self.fields:
            need = "required" if f.required else "optional"
            default = "" if f.default is None or f.secret else f", default {_shown_default(f)}"
            out.append(f"- {f.title} ({f.describe()}; {need}{default})")
        if self.asks_for_secrets:
            out.append(
                "this form asks for something secret: what you type is not shown or logged, but the server "
                "receives it (MCP says servers should ask for secrets on a page of their own)"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "tool": self.tool, "mode": self.mode, "message": self.message}
        if self.mode == "url":
            out |= {"url": self.url, "site": self.site}
        else:
            out["fields"] = [f.to_json() for f in self.fields]
        return out


def _shown_default(f: FormField) -> str:
    titles = {choice.value: choice.title for choice in f.choices}
    value = f.default
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(titles.get(item, item) for item in value) or "none"
    return titles.get(str(value), str(value))


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """A person's answer: accept (with the form's content; for a URL, consent to open it), decline or cancel."""

    action: ElicitationAction
    content: Mapping[str, Any] | None = None
    """Accepted form mode: the values by field name; fields left out take their defaults."""

    @classmethod
    def accept(cls, content: Mapping[str, Any] | None = None) -> ElicitationAnswer:
        return cls("accept", dict(content or {}))

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationAnswer:
        return cls("cancel")


Elicitor = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""Any `async (request) -> ElicitationAnswer`: the console asks a person, the organization service parks
the question in its inbox, a test answers from a script. With none, mcpyard declares no elicitation."""


@dataclass
class ScriptedElicitor:
    """Answers from a list, in order, then its default, and keeps every request it saw: for tests and scripts."""

    answers: list[ElicitationAnswer] = field(default_factory=list)
    default: ElicitationAnswer = field(default_factory=ElicitationAnswer.decline)
    requests: list[ElicitationRequest] = field(default_factory=list)

    @classmethod
    def always(cls, answer: ElicitationAnswer) -> ScriptedElicitor:
        return cls(default=answer)

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else self.default


def check_url(url: str) -> tuple[str, str]:
    """A URL mode address that may be shown to a person: `(url, site)`, the site's host in ASCII.

    Only https, or http to this machine; no user info (`https://bank.example@evil.example`), no
    spaces or control characters, no leading `-`, at most 2,048 characters. mcpyard never opens it.

    Raises:
        ElicitationRefused: the URL is not one to show, and why.
    """
    import httpx2

    if len(url) > MAX_URL:
        raise ElicitationRefused(f"the URL has {len(url)} characters; mcpyard shows at most {MAX_URL}")
    if url.startswith("-") or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise ElicitationRefused("the URL holds spaces or control characters, or starts with '-'")
    try:
        parsed = httpx2.URL(url)
    except Exception:  # httpx2's parse errors (InvalidURL) carry no data worth keeping
        raise ElicitationRefused("the URL cannot be read") from None
    host = parsed.host
    if parsed.scheme not in ("https", "http") or not host:
        raise ElicitationRefused("the URL must be an https address")
    if parsed.userinfo:
        raise ElicitationRefused("the URL holds a user name or password before its host")
    if parsed.scheme == "http" and not _loopback(host):
        raise ElicitationRefused("the URL must be https (plain http only to this machine)")
    site = parsed.raw_host.decode("ascii", "replace")
    return url, site


def _loopback(host: str) -> bool:
    if host.casefold() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def request_from_params(server: str, params: Mapping[str, Any], *, tool: str | None = None) -> ElicitationRequest:
    """The request a person is shown, from `elicitation/create` params in wire form (already cleaned and redacted).

    Raises:
        ElicitationRefused: a mode mcpyard does not know, a form it cannot show, a URL it will not show.
    """
    message = params.get("message")
    text = message if isinstance(message, str) else ""
    if len(text) > MESSAGE_LIMIT:
        text = text[:MESSAGE_LIMIT] + f"… (cut: {len(text)} characters in all)"
    mode = params.get("mode", "form")
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str):
            raise ElicitationRefused("a URL mode request must carry a url")
        checked, site = check_url(url)
        return ElicitationRequest(server=server, message=text, mode="url", url=checked, site=site, tool=tool)
    if mode != "form":
        raise ElicitationRefused(f"mcpyard knows the form and url modes of elicitation, not {str(mode)[:40]!r}")
    fields = form_fields(params.get("requestedSchema"))
    return ElicitationRequest(server=server, message=text, mode="form", fields=fields, tool=tool)


def answer_for_server(request: ElicitationRequest, answer: ElicitationAnswer) -> dict[str, Any]:
    """The `ElicitResult` in wire form: an accepted form completed with its defaults and checked first.

    Raises:
        ElicitationRefused: the accepted content does not fit the form (the problems name fields and
            rules, never values); nothing is sent but this error.
    """
    if not isinstance(answer, ElicitationAnswer) or answer.action not in ("accept", "decline", "cancel"):
        raise ElicitationRefused("the elicitor answered with something other than an ElicitationAnswer")
    if answer.action != "accept":
        return {"action": answer.action}
    if request.mode == "url":
        return {"action": "accept"}
    content, problems = request.check(answer.content)
    if problems:
        raise ElicitationRefused("the answer does not fit the form: " + "; ".join(problems[:10]))
    return {"action": "accept", "content": content}
