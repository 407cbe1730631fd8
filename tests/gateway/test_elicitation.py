"""A downstream server's questions (elicitation) through the gateway (GW-1, GW-2, SEC-3).

Relayed to the client whose call it is when it declared elicitation in that mode, both eras;
a question the client cannot take goes to the gateway's console when one is attached (as cards
do, GW-2), else the server is told the client cannot answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from mcpyard import ElicitationAnswer, Host
from mcpyard.elicitation import Elicitor, ScriptedElicitor
from mcpyard.gateway import Gateway
from mcpyard.gateway._rounds import elicitation_modes, unanswerable
from tests.conftest import Home, fixture_server
from tests.gateway.test_serve import text_of

pytestmark = pytest.mark.anyio

CAPS = types.ClientCapabilities
FORM, URL = types.FormElicitationCapability(), types.UrlElicitationCapability()


@pytest.mark.parametrize(
    ("capabilities", "modes"),
    [
        (None, set()),
        (CAPS(), set()),
        (CAPS(elicitation=types.ElicitationCapability()), {"form"}),
        (CAPS(elicitation=types.ElicitationCapability(form=FORM)), {"form"}),
        (CAPS(elicitation=types.ElicitationCapability(url=URL)), {"url"}),
        (CAPS(elicitation=types.ElicitationCapability(form=FORM, url=URL)), {"form", "url"}),
    ],
)
def test_gw1_the_modes_a_client_declared(capabilities: types.ClientCapabilities | None, modes: set[str]) -> None:
    assert elicitation_modes(capabilities) == modes


@pytest.mark.parametrize(
    ("method", "params", "modes", "why"),
    [
        ("elicitation/create", {"mode": "form"}, {"form"}, None),
        ("elicitation/create", {}, {"form"}, None),
        ("elicitation/create", {"mode": "url"}, {"form"}, "does not support elicitation/create in url mode"),
        ("elicitation/create", {"mode": "url"}, {"url"}, None),
        ("sampling/createMessage", {}, {"form"}, "does not support sampling/createMessage"),
    ],
)
def test_gw1_what_a_client_cannot_be_asked(
    method: str, params: dict[str, Any], modes: set[str], why: str | None
) -> None:
    found = unanswerable(method, params, frozenset({"elicitation/create"}), frozenset(modes))
    assert found == why if why is None else why in (found or "")


@asynccontextmanager
async def gateway(home: Home, elicitor: Elicitor | None = None) -> AsyncIterator[tuple[Host, Gateway]]:
    config = home.write_config({"e": fixture_server("elicits")}, mode="auto")
    async with home.open(config, relay_input=True, elicitor=elicitor) as host, anyio.create_task_group() as tg:
        served = Gateway(host, share_all=True)
        await tg.start(served.run)
        yield host, served
        tg.cancel_scope.cancel()


class Person:
    """A gateway client's elicitation callback: keeps each request, accepts forms with a name."""

    def __init__(self) -> None:
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        del context
        self.asked.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return types.ElicitResult(
            action="accept", content={"name": "Ada", "email": "ada@example.org", "age": 36, "plan": "pro"}
        )


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_gw1_a_form_and_a_url_reach_the_client_that_declared_elicitation(home: Home, era: str) -> None:
    person = Person()
    async with gateway(home) as (_, served), Client(served.server, mode=era, elicitation_callback=person) as client:
        form = await client.call_tool("e__sign_up", {})
        url = await client.call_tool("e__ask_url", {"message": "Pay", "url": "https://pay.example/1"})
    assert '"plan": "pro"' in text_of(form), text_of(form)
    assert "action=accept content=null" in text_of(url), text_of(url)
    first, second = person.asked
    assert isinstance(first, types.ElicitRequestFormParams)
    assert first.requested_schema["required"] == ["name", "email", "age"]
    assert isinstance(second, types.ElicitRequestURLParams)
    assert second.url == "https://pay.example/1"


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_gw2_a_question_the_client_cannot_take_is_asked_at_the_gateways_console(home: Home, era: str) -> None:
    console = ScriptedElicitor.always(ElicitationAnswer.cancel())
    async with gateway(home, console) as (_, served), Client(served.server, mode=era) as client:
        result = await client.call_tool("e__sign_up", {})
    assert "action=cancel" in text_of(result), text_of(result)
    [request] = console.requests
    assert (request.server, request.tool, request.mode) == ("e", "e__sign_up", "form")


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_gw2_without_a_console_the_server_hears_the_client_cannot_answer(home: Home, era: str) -> None:
    async with gateway(home) as (_, served), Client(served.server, mode=era) as client:
        result = await client.call_tool("e__sign_up", {})
    text = text_of(result)
    assert "action=" not in text
    assert "does not support elicitation/create" in text or "does not take such requests" in text, text


class Typist(Person):
    """Answers its first form with a lone surrogate in a field (what a broken terminal or client can produce)."""

    async def __call__(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        answer = await super().__call__(context, params)
        if len(self.asked) == 1 and answer.content is not None:
            return answer.model_copy(update={"content": {**answer.content, "name": "Ada\ud800"}})
        return answer


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_gw1_an_answer_that_cannot_be_sent_is_refused_and_the_servers_connection_goes_on(
    home: Home, era: str
) -> None:
    """CALL-1, ERR-1: the answer is refused before the server's shared connection, which stays healthy."""
    person = Typist()
    async with gateway(home) as (host, served), Client(served.server, mode=era, elicitation_callback=person) as client:
        with anyio.fail_after(30):
            refused = await client.call_tool("e__sign_up", {})
            again = await client.call_tool("e__sign_up", {})
        state = host.status().servers[0].state
    text = text_of(refused)
    assert "the answer cannot be sent: answer.content.name: holds a lone surrogate (U+D800)" in text, text
    assert '"plan": "pro"' in text_of(again), text_of(again)
    assert state == "connected"
