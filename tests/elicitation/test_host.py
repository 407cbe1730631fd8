"""A host's elicitor answers its servers' questions during calls, in both eras (API-1 elicitation, SEC-2, SEC-3).

The fixture server `elicits` asks over stdio in the new era's way (an input-required result
answered within the call) and over SSE in the handshake era's way (a request of its own).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpyard import ElicitationAnswer, Host
from mcpyard.elicitation import ScriptedElicitor
from mcpyard.policy import ScriptedApprover
from tests.conftest import Home, body, fixture_server
from tests.servers.http_runner import serve_http

pytestmark = pytest.mark.anyio

PASSWORD = "correct-horse-battery-9d1f"
SECRET = "elicit-secret-5b7e20"


@asynccontextmanager
async def elicits(home: Home, era: str, **options: Any) -> AsyncIterator[Host]:
    """A host over the `elicits` fixture: `new` over stdio, `http` (new era) over streamable HTTP,
    `handshake` over SSE."""
    if era == "http":
        async with serve_http("elicits", "streamable-http") as url:
            config = home.write_config({"e": {"url": url, "headers": {"X-Api-Token": SECRET}}}, mode="auto")
            async with home.open(config, **options) as host:
                yield host
        return
    if era == "new":
        entry = fixture_server("elicits")
        entry["env"] = {"FIXTURE_TOKEN": SECRET}
        config = home.write_config({"e": entry}, mode="auto")
        async with home.open(config, **options) as host:
            yield host
        return
    async with serve_http("elicits", "sse") as url:
        config = home.write_config({"e": {"url": url, "headers": {"X-Api-Token": SECRET}}}, mode="auto")
        async with home.open(config, **options) as host:
            yield host


def said(text: str) -> tuple[str, Any]:
    """The fixture's `action=… content=…` line, as (action, content)."""
    action, _, content = text.partition(" content=")
    return action.removeprefix("action="), json.loads(content)


ERAS = pytest.mark.parametrize("era", ["new", "handshake"])


@ERAS
async def test_api1_an_elicitor_answers_a_form_and_fields_left_empty_take_their_defaults(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor(
        answers=[ElicitationAnswer.accept({"name": "Ada", "email": "ada@example.org", "age": 36})]
    )
    async with elicits(home, era, elicitor=elicitor) as host:
        [server] = host.status().servers
        assert server.state == "connected", server.reason
        result = await host.call("e__sign_up", {})
        assert result.ok, result.text
    assert said(body(result)) == (
        "accept",
        {"age": 36, "email": "ada@example.org", "name": "Ada", "newsletter": False, "plan": "free", "score": 2.5},
    )
    [request] = elicitor.requests
    assert (request.server, request.tool, request.mode) == ("e", "e__sign_up", "form")
    assert request.message == "Sign up for the fixture service"
    assert [(f.name, f.kind, f.required) for f in request.fields] == [
        ("name", "string", True),
        ("email", "string", True),
        ("age", "integer", True),
        ("plan", "choice", False),
        ("newsletter", "boolean", False),
        ("score", "number", False),
        ("topics", "choices", False),
    ]


@ERAS
async def test_api1_decline_and_cancel_reach_the_server_as_they_were_given(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor(answers=[ElicitationAnswer.decline(), ElicitationAnswer.cancel()])
    async with elicits(home, era, elicitor=elicitor) as host:
        declined = await host.call("e__sign_up", {})
        cancelled = await host.call("e__sign_up", {})
    assert said(body(declined)) == ("decline", None)
    assert said(body(cancelled)) == ("cancel", None)


async def test_api1_without_an_elicitor_elicitation_is_not_declared(home: Home) -> None:
    async with elicits(home, "new") as host:
        result = await host.call("e__sign_up", {})
    assert body(result) == "the client declared no elicitation"


async def test_api1_a_calls_own_elicitor_answers_in_place_of_the_hosts(home: Home) -> None:
    hosts, own = ScriptedElicitor(), ScriptedElicitor.always(ElicitationAnswer.cancel())
    async with elicits(home, "new", elicitor=hosts) as host:
        result = await host.call("e__sign_up", {}, elicitor=own)
    assert said(body(result)) == ("cancel", None)
    assert (len(hosts.requests), len(own.requests)) == (0, 1)


@ERAS
async def test_err1_an_answer_that_does_not_fit_the_form_never_reaches_the_server(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor(answers=[ElicitationAnswer.accept({"name": "A", "email": "nope", "age": 12})])
    async with elicits(home, era, elicitor=elicitor) as host:
        result = await host.call("e__sign_up", {})
    assert "action=" not in result.text
    assert "the answer does not fit the form" in result.text, result.text
    assert "Your name: must have at least 2 characters" in result.text
    assert "email: must be an email address" in result.text
    assert "age: must be at least 18" in result.text


@ERAS
async def test_err1_a_form_mcpyard_cannot_show_is_refused_without_asking(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor.always(ElicitationAnswer.accept())
    nested = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    async with elicits(home, era, elicitor=elicitor) as host:
        result = await host.call("e__ask_form", {"message": "where?", "schema": nested})
    assert elicitor.requests == []
    assert "mcpyard did not ask the user: field 'address' is of type 'object'" in result.text, result.text


@ERAS
async def test_a_url_request_is_shown_checked_and_the_consent_goes_back(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor.always(ElicitationAnswer.accept())
    async with elicits(home, era, elicitor=elicitor) as host:
        accepted = await host.call("e__ask_url", {"message": "Pay here", "url": "https://pay.example/checkout/1"})
        refused = await host.call("e__ask_url", {"message": "Pay here", "url": "http://pay.example/checkout/1"})
    assert said(body(accepted)) == ("accept", None)
    [request] = elicitor.requests
    assert (request.mode, request.url, request.site, request.fields) == (
        "url",
        "https://pay.example/checkout/1",
        "pay.example",
        (),
    )
    assert "mcpyard did not ask the user: the URL must be https" in refused.text, refused.text


@ERAS
async def test_sec3_the_question_an_elicitor_reads_is_cleaned_and_redacted(home: Home, era: str) -> None:
    elicitor = ScriptedElicitor.always(ElicitationAnswer.decline())
    schema = {"type": "object", "properties": {"f": {"type": "string", "title": f"the \x1b[31m{SECRET}"}}}
    # A call whose arguments carry a secret value always asks (POL-2): approved once here.
    async with elicits(home, era, elicitor=elicitor, approver=ScriptedApprover.always("once")) as host:
        result = await host.call("e__ask_form", {"message": f"give me {SECRET}\u202e!", "schema": schema})
    assert result.ok, result.text
    [request] = elicitor.requests
    label = "${env:FIXTURE_TOKEN}" if era == "new" else "[header X-Api-Token]"
    assert request.message == f"give me {label}!"
    assert request.fields[0].title == f"the {label}"
    assert SECRET not in repr(request)


@pytest.mark.parametrize("era", ["new", "http", "handshake"])
async def test_sec2_a_password_typed_into_a_form_is_never_logged_or_recorded(
    home: Home, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    elicitor = ScriptedElicitor(answers=[ElicitationAnswer.accept({"username": "ada", "password": PASSWORD})])
    with caplog.at_level(logging.DEBUG):
        async with elicits(home, era, elicitor=elicitor) as host:
            result = await host.call("e__sign_in", {})
            history = host.history()
    assert body(result) == "action=accept user=ada password_length=26"
    [request] = elicitor.requests
    assert [f.secret for f in request.fields] == [False, True]
    assert PASSWORD not in caplog.text
    assert all(PASSWORD not in repr(record) for record in history)
    assert PASSWORD not in result.text


async def test_api1_an_elicitor_declares_elicitation_but_not_sampling(home: Home) -> None:
    config = home.write_config({"conf": fixture_server("conformance_server")}, mode="auto")
    async with home.open(config, elicitor=ScriptedElicitor.always(ElicitationAnswer.accept())) as host:
        sampled = await host.call("conf__test_sampling", {"prompt": "hi"})
        elicited = await host.call("conf__test_elicitation_sep1034_defaults", {})
    assert not sampled.ok
    assert "The client does not support sampling" in sampled.text, sampled.text
    assert elicited.ok, elicited.text
    assert '"name": "John Doe"' in elicited.text


@ERAS
async def test_sec2_a_server_echoing_what_was_typed_into_a_secret_field_shows_the_model_a_label(
    home: Home, era: str
) -> None:
    schema = {
        "type": "object",
        "properties": {"pin": {"type": "string", "format": "password"}, "note": {"type": "string"}},
    }
    elicitor = ScriptedElicitor(answers=[ElicitationAnswer.accept({"pin": PASSWORD, "note": "plain words"})])
    async with elicits(home, era, elicitor=elicitor) as host:
        result = await host.call("e__ask_form", {"message": "pin?", "schema": schema})
        history = host.history()
    assert result.ok, result.text
    assert '"note": "plain words"' in result.text, "what was not secret reads as it was typed"
    assert '"pin": "%typed secret%"' in result.text
    assert PASSWORD not in json.dumps([result.text, result.content, result.structured], default=str)
    assert all(PASSWORD not in repr(record) for record in history)
