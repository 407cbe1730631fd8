"""Servers' questions in a real browser: the conversation shows the question its turn waits on, an admin answers it
from the inbox (live, with a password field), and the member's turn finishes by itself; with JavaScript off, a form
of every field kind is answered by posting and the call gets the typed values and the defaults (ORG-5, ORG-7, SEC-2).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from playwright.async_api import expect

from mcpyard.secrets import forms_of
from tests.model.openai_fixture import ModelFixture
from tests.org._flows import by_tool, call, register, set_policy
from tests.org.test_questions import KEY_FORM, TYPED
from tests.org.web._console import Console
from tests.servers.in_process import serve_http_in_process

pytestmark = pytest.mark.anyio


@pytest.fixture
async def asking() -> AsyncIterator[str]:
    async with serve_http_in_process("elicits", "streamable-http") as url:
        yield url


async def _asks(console: Console, asking: str, model: ModelFixture) -> dict[str, dict[str, Any]]:
    tools = by_tool(await register(console.api, asking, name="asks", token=None))
    for tool in tools.values():
        await set_policy(console.api, tool, "run_freely")
    answer = await console.api.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted"})
    assert answer.status_code == 200, answer.text
    return tools


def _never_shown(console: Console, secret: str) -> None:
    everything = "\n".join(console.seen)
    for form in forms_of(secret):
        assert form not in everything, f"a form of a secret reached a page: {form!r}"


async def test_org5_a_turn_waits_on_its_servers_question_an_admin_answers_it_from_the_inbox_and_the_turn_finishes(
    model: ModelFixture, console: Console, asking: str
) -> None:
    tools = await _asks(console, asking, model)
    await console.api.post(
        "/api/v1/teammates", {"name": "keeper", "server_ids": [tools["ask_form"]["server_id"]]}, expect=201
    )
    await console.api.add_member("member@acme.test")
    await console.api.add_member("admin@acme.test", "admin")

    admin = await console.sign_in("admin@acme.test")
    await admin.get_by_role("link", name="Inbox").click()
    await expect(admin.locator("#questions-empty")).to_be_visible()
    await expect(admin.locator("body[data-live=open]")).to_have_count(1)

    member = await console.sign_in("member@acme.test")
    await member.get_by_role("link", name="Teammates").click()
    await member.get_by_role("link", name="keeper").click()
    await member.get_by_role("button", name="New conversation").click()
    ask = {"name": "asks__ask_form", "arguments": {"message": "Your API key, please", "schema": KEY_FORM}}
    model.replies.extend([{"tool_calls": [ask]}, {"text": "Stored your key."}])
    await member.get_by_label("Message").fill("store my key")
    await member.get_by_role("button", name="Send").click()
    waiting = member.get_by_role("article", name="Question from asks")
    await expect(waiting).to_contain_text("Your API key, please")
    await expect(member.locator(".working")).to_have_text("Waiting for an answer…")
    await console.look(member, "conversation-question")

    # The admin's inbox shows it without a reload: the server, the tool, the message, a password field.
    question = admin.get_by_role("article", name="Question from asks")
    await expect(question).to_contain_text("asks__ask_form")
    await expect(question).to_contain_text("member@acme.test")
    key = question.get_by_label("API key")
    assert await key.get_attribute("type") == "password", "a secret field is typed without being shown"
    await question.get_by_label("label").fill("work")
    await key.fill(TYPED)
    await console.look(admin, "inbox-question")
    await question.get_by_role("button", name="Send answer").click()
    await expect(admin.locator(".notice")).to_have_text("Answered: the call goes on with your answer.")
    answered = admin.get_by_role("article", name="Question from asks")
    await expect(answered).to_contain_text("accepted")

    # The member's page goes on by itself: the tool got the answer, the model answered.
    await expect(member.locator(".message.reply")).to_contain_text("Stored your key.")
    await expect(member.get_by_label("Message")).to_be_enabled()
    await console.look(member, "conversation-answered")
    assert "%typed secret%" in json.dumps(model.tool_messages(-1)), "the echo of the key reaches the model as a label"
    # Followed by its address: a click can land in the instant the live part holding the link is replaced.
    trace_link = await member.get_by_role("link", name="Turn trace").get_attribute("href")
    assert trace_link is not None
    await member.goto(trace_link)
    await expect(member.locator("table.trace")).to_contain_text("asks__ask_form")
    await console.look(member)
    await console.look(admin)

    for page in (admin, member):
        await page.context.close()
    with anyio.fail_after(10):
        await console.app.state.org.live.wait_for(0)
    assert console.errors() == []
    _never_shown(console, TYPED)
    assert TYPED not in json.dumps(model.requests)


async def test_org5_without_script_a_form_of_every_kind_is_answered_and_the_server_gets_values_and_defaults(
    model: ModelFixture, console: Console, asking: str
) -> None:
    await _asks(console, asking, model)
    parked = await call(console.api, "asks__sign_up", expect=202)
    page = await console.sign_in("owner@acme.test", javascript=False)
    await page.goto("/inbox")
    question = page.get_by_role("article", name="Question from asks")
    await question.get_by_label("Your name").fill("Ada")
    await question.get_by_label("email").fill("not an email")
    await question.get_by_label("age").fill("36")
    await question.get_by_role("button", name="Send answer").click()
    await expect(page.locator(".notice")).to_contain_text("email: must be an email address")
    await expect(page.locator(".notice")).not_to_contain_text("not an email")
    question = page.get_by_role("article", name="Question from asks")
    await question.get_by_label("Your name").fill("Ada")
    await question.get_by_label("email").fill("ada@example.org")
    await question.get_by_label("age").fill("36")
    await question.get_by_label("plan").select_option("pro")
    await question.get_by_label("newsletter").select_option("yes")
    await question.get_by_label("MCP", exact=True).check()
    await question.get_by_label("AI", exact=True).check()
    await question.get_by_role("button", name="Send answer").click()
    await expect(page.locator(".notice")).to_have_text("Answered: the call goes on with your answer.")
    await console.look(page)

    with anyio.fail_after(30):
        await console.api.settled()
    done = await console.api.get(f"/api/v1/questions/{parked['question']['id']}")
    text = done["result"]["content"][0]["text"]
    assert json.loads(text.partition(" content=")[2]) == {
        "age": 36,
        "email": "ada@example.org",
        "name": "Ada",
        "newsletter": True,
        "plan": "pro",
        "score": 2.5,
        "topics": ["mcp", "ai"],
    }, "typed values as their kinds, the rest their defaults"
    assert console.errors() == []


async def test_org5_what_an_admin_types_in_a_question_stays_while_the_inbox_updates_around_it(
    model: ModelFixture, console: Console, asking: str
) -> None:
    """Another call arriving in the inbox while an admin fills a question's form: the inbox shows it without a reload,
    and the fields already filled (a secret one too), and the one being typed in, are as the admin left them."""
    await _asks(console, asking, model)
    await console.api.add_member("admin@acme.test", "admin")
    admin = await console.sign_in("admin@acme.test")
    await admin.get_by_role("link", name="Inbox").click()
    await expect(admin.locator("body[data-live=open]")).to_have_count(1)

    first = {"message": "Your API key, please", "schema": KEY_FORM}
    await call(console.api, "asks__ask_form", first, expect=202)
    question = admin.get_by_role("article", name="Question from asks").filter(has_text="Your API key, please")
    await question.get_by_label("label").fill("work")
    key = question.get_by_label("API key")
    await key.fill(TYPED[:8])

    await call(console.api, "asks__ask_form", {"message": "Another key", "schema": KEY_FORM}, expect=202)
    await expect(admin.get_by_role("article", name="Question from asks")).to_have_count(2)
    await expect(question.get_by_label("label")).to_have_value("work")
    await expect(key).to_have_value(TYPED[:8])
    await expect(key).to_be_focused()
    await key.press_sequentially(TYPED[8:])  # typing goes on where it was
    await question.get_by_role("button", name="Send answer").click()
    await expect(admin.get_by_role("status")).to_have_text("Answered: the call goes on with your answer.")
    await console.look(admin)
    assert not console.errors()
    _never_shown(console, TYPED)
