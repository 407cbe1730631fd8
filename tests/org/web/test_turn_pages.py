"""Teammates, the inbox, assistants and visitors in a real browser (ORG-4 to ORG-8).

Three people at once, each in a browser context of their own: a member whose teammate's turn waits
on an ask-first call, an admin who approves it from the inbox, and an anonymous visitor of a
published assistant. The inbox and the turn update without a reload, and their event streams end
when the pages close. An owner changes and deletes a teammate from its page (a member sees no such form, and
their posts change nothing); the deleted teammate's conversations stay readable.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from playwright.async_api import Page, Route, expect

from mcpyard.secrets import forms_of
from tests.model.openai_fixture import ModelFixture
from tests.org._flows import TOKEN, by_tool, call, register, set_policy
from tests.org.web._console import Console, refreshed, refreshes

pytestmark = pytest.mark.anyio

MODEL_KEY = "sk-model-key-5f0c2b7e9a1d4c3b8e6f"


async def _tools(console: Console, upstream: str, model: ModelFixture) -> dict[str, dict[str, Any]]:
    """The fixture server registered, `lookup` run freely, `write` ask first, and the organization's model set."""
    tools = by_tool(await register(console.api, upstream))
    await set_policy(console.api, tools["lookup"], "run_freely")
    await set_policy(console.api, tools["write"], "ask_first")
    answer = await console.api.request(
        "PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "scripted", "api_key": MODEL_KEY}
    )
    assert answer.status_code == 200, answer.text
    return tools


async def _streams_end(console: Console, *pages: Page) -> None:
    for page in pages:
        await page.context.close()
    live = console.app.state.org.live
    with anyio.fail_after(10):
        await live.wait_for(0)


def _never_shown(console: Console, *secrets: str) -> None:
    everything = "\n".join(console.seen)
    for secret in secrets:
        for form in forms_of(secret):
            assert form not in everything, f"a form of a secret reached a page: {form!r}"


async def test_org4_org5_a_members_turn_waits_on_an_ask_first_call_and_an_admin_approves_it_live_from_the_inbox(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    await _tools(console, upstream, model)
    await console.api.add_member("member@acme.test")

    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="Teammates").click()
    await owner.get_by_label("Name").fill("helper")
    await owner.get_by_label("Instructions").fill("Be brief.")
    await owner.get_by_label("tools").check()
    await owner.get_by_role("button", name="Create teammate").click()
    await expect(owner.locator(".notice")).to_have_text("helper is ready.")
    await expect(owner.locator("dl.facts")).to_contain_text("tools__write")
    await owner.get_by_role("link", name="Inbox").click()
    await expect(owner.locator("#inbox-empty")).to_be_visible()
    await expect(owner.locator("body[data-live=open]")).to_have_count(1)

    member = await console.sign_in("member@acme.test")
    await member.get_by_role("link", name="Teammates").click()
    await member.get_by_role("link", name="helper").click()
    await member.get_by_role("button", name="New conversation").click()
    model.replies.extend(
        [
            {"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "k1"}}]},
            {"tool_calls": [{"name": "tools__write", "arguments": {"note": "hello <b>there</b>"}}]},
            {"text": "Wrote it."},
        ]
    )
    await member.get_by_label("Message").fill("note hello")
    await member.get_by_role("button", name="Send").click()
    card = member.get_by_role("article", name="Approval for tools__write")
    await expect(card).to_contain_text("hello <b>there</b>")
    await expect(member.locator("table.trace")).to_contain_text("tools__lookup")
    await console.look(member, "conversation-waiting")

    # The admin's inbox shows the call without a reload: server, tool, redacted arguments, who asked.
    pending = owner.get_by_role("article", name="Approval for tools__write")
    await expect(pending).to_contain_text("member@acme.test")
    await expect(pending).to_contain_text("tools")
    await expect(pending).to_contain_text('"note": "hello <b>there</b>"')
    await console.look(owner, "inbox")
    await pending.get_by_role("button", name="Approve").click()
    await expect(owner.locator(".notice")).to_have_text("Approved: it ran once.")
    await expect(owner.get_by_role("article", name="Approval for tools__write")).to_contain_text("wrote hello")
    assert await owner.locator("main b").count() == 0, "arguments and results are text, never markup"

    # The member's page goes on by itself: the approved call ran, the model answered.
    reply = member.locator(".message.reply")
    await expect(reply).to_contain_text("Wrote it.")
    await expect(member.get_by_role("article", name="Approval for tools__write")).to_have_count(0)
    await expect(member.get_by_label("Message")).to_be_enabled()
    assert await member.locator("main b").count() == 0
    await console.look(member, "conversation")
    # Followed by its address: a click can land in the instant the live part holding the link is replaced.
    trace_link = await member.get_by_role("link", name="Turn trace").get_attribute("href")
    assert trace_link is not None
    await member.goto(trace_link)
    trace = member.locator("table.trace tbody tr")
    await expect(trace).to_have_count(3)
    await expect(trace.nth(0)).to_contain_text("tools__lookup")
    await expect(member.locator("dl.facts")).to_contain_text("Wrote it.")
    await console.look(member, "turn-trace")

    await _streams_end(console, owner, member)
    assert console.errors() == []
    _never_shown(console, TOKEN, MODEL_KEY, console.api.org.owner_token)


async def test_org6_an_assistant_is_published_with_its_refusals_listed_and_a_visitor_uses_it_anonymously(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = await _tools(console, upstream, model)
    mixed = await console.api.post(
        "/api/v1/assistants", {"name": "Mixed", "tool_ids": [tools["lookup"]["id"], tools["write"]["id"]]}, expect=201
    )
    owner = await console.sign_in("owner@acme.test")
    await owner.goto(f"/assistants/{mixed['id']}")
    await owner.get_by_role("button", name="Publish").click()
    refusals = owner.get_by_role("alert", name="Why it was not published")
    await expect(refusals).to_contain_text("tools__write: ask first")
    await console.look(owner)

    await owner.get_by_role("link", name="Assistants").click()
    await owner.get_by_label("Name").fill("Key desk")
    await owner.get_by_label("tools__lookup").check()
    await expect(owner.get_by_label("tools__write")).to_have_count(0)
    await owner.get_by_role("button", name="Save assistant").click()
    await expect(owner.locator(".notice")).to_have_text("Key desk is saved.")
    model.replies.extend(
        [{"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "p"}}]}, {"text": "p is set."}]
    )
    await owner.get_by_label("Message").fill("what is p?")
    await owner.get_by_role("button", name="Try it").click()
    await expect(owner.get_by_role("article", name="Preview")).to_contain_text("p is set.")
    await owner.get_by_role("button", name="Publish").click()
    await expect(owner.locator(".notice")).to_contain_text("Published: visitors can use it at /a/")
    await expect(owner.locator("table tbody tr")).to_contain_text("lookup")
    await console.look(owner, "assistant")
    slug = (await owner.get_by_role("link", name="/a/").text_content() or "").removeprefix("/a/")

    visitor = await console.page()
    await visitor.goto(f"/a/{slug}")
    await expect(visitor.locator("h1")).to_have_text("Key desk")
    model.replies.extend(
        [
            {"tool_calls": [{"name": "tools__lookup", "arguments": {"key": "q"}}]},
            {"text": "<i>q</i> is value of q."},
            {"text": "Anything else?"},
        ]
    )
    await visitor.get_by_label("Message").fill("what is q?")
    await visitor.get_by_role("button", name="Send").click()
    await expect(visitor.locator(".message.reply")).to_have_text("Key desk <i>q</i> is value of q.")
    await visitor.get_by_label("Message").fill("thanks")
    await visitor.get_by_role("button", name="Send").click()
    await expect(visitor.locator(".message.reply")).to_have_count(2)
    await expect(visitor.locator(".message.reply").last).to_contain_text("Anything else?")
    assert await visitor.locator("main i").count() == 0, "a model's reply is text, never markup"
    await console.look(visitor, "visitor")

    await _streams_end(console, owner, visitor)
    assert console.errors() == []
    _never_shown(console, TOKEN, MODEL_KEY, console.api.org.owner_token)


async def test_org8_deleting_a_server_names_the_selections_it_affects_and_its_assistant_needs_review(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = await _tools(console, upstream, model)
    assistant = await console.api.post(
        "/api/v1/assistants", {"name": "Key desk", "tool_ids": [tools["lookup"]["id"]]}, expect=201
    )
    await console.api.post(f"/api/v1/assistants/{assistant['id']}/publish")
    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="tools", exact=True).click()
    await owner.get_by_role("link", name="Delete…").click()
    await expect(owner.locator("ul.selections")).to_contain_text("assistant Key desk")
    await console.look(owner, "server-delete")
    await owner.get_by_role("button", name="Delete tools").click()
    await expect(owner.locator(".notice")).to_have_text("tools is deleted; its tools stopped.")
    await owner.get_by_role("link", name="Assistants").click()
    await expect(owner.locator(".cards")).to_contain_text("Key desk needs review")
    await owner.get_by_role("link", name="Key desk").click()
    await expect(owner.get_by_role("alert")).to_contain_text("Needs review")
    await owner.get_by_role("link", name="Alerts").click()
    await expect(owner.locator("#alerts")).to_contain_text("Key desk")
    await console.look(owner, "alerts")
    await _streams_end(console, owner)
    assert console.errors() == []


async def test_org7_a_turn_the_model_could_not_answer_says_so_and_the_conversation_goes_on(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = await _tools(console, upstream, model)
    teammate = await console.api.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
    )
    page = await console.sign_in("owner@acme.test", javascript=False)
    await page.goto(f"/teammates/{teammate['id']}")
    await page.get_by_role("button", name="New conversation").click()
    model.replies.extend([{"status": 400, "error": "the endpoint refused"}, {"text": "Back again."}])
    await page.get_by_label("Message").fill("hello?")
    await page.get_by_role("button", name="Send").click()
    await expect(page.locator(".turn-ended")).to_contain_text("The model could not answer.")
    await expect(page.locator(".working")).to_have_count(0)
    await page.get_by_label("Message").fill("and now?")
    await page.get_by_role("button", name="Send").click()
    await expect(page.locator(".message.reply")).to_have_text("helper Back again.")
    _never_shown(console, TOKEN, MODEL_KEY)


async def test_org4_an_owner_changes_and_deletes_a_teammate_from_its_page_and_a_members_post_changes_nothing(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = await _tools(console, upstream, model)
    more = by_tool(await register(console.api, upstream, "more"))
    await set_policy(console.api, more["lookup"], "run_freely")
    teammate = await console.api.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
    )
    page = f"/teammates/{teammate['id']}"
    await console.api.add_member("member@acme.test")

    member = await console.sign_in("member@acme.test")
    await member.goto(page)
    await member.get_by_role("button", name="New conversation").click()
    await member.wait_for_url(re.compile(r"/conversations/"))
    conversation = member.url
    await member.goto(page)
    await expect(member.locator("#edit-teammate")).to_have_count(0)
    await expect(member.get_by_role("link", name=re.compile("Delete"))).to_have_count(0)
    csrf = await member.locator("input[name=csrf_token]").first.get_attribute("value")
    assert csrf
    for path, form in (
        (f"{page}/edit", {"name": "mine", "server_ids": more["lookup"]["server_id"]}),
        (f"{page}/delete", {}),
    ):
        await member.request.post(path, form={**form, "csrf_token": csrf})
    assert await console.api.get(f"/api/v1/teammates/{teammate['id']}") == teammate, "a member's posts changed nothing"

    owner = await console.sign_in("owner@acme.test")
    await owner.goto(page)
    editing = owner.locator("#edit-teammate")
    await editing.get_by_label("Name").fill("writer")
    await editing.get_by_label("Instructions").fill("Be thorough.")
    await editing.get_by_label("tools", exact=True).uncheck()
    await editing.get_by_label("more", exact=True).check()
    await editing.get_by_role("button", name="Save changes").click()
    await expect(owner.locator(".notice")).to_have_text("writer is saved.")
    await expect(owner.locator("dl.facts")).to_contain_text("more__lookup")
    await expect(owner.locator("dl.facts")).not_to_contain_text("tools__lookup")
    changed = await console.api.get(f"/api/v1/teammates/{teammate['id']}")
    assert (changed["name"], changed["instructions"]) == ("writer", "Be thorough.")
    assert changed["server_ids"] == [more["lookup"]["server_id"]]

    await owner.get_by_role("link", name="Delete writer…").click()
    await expect(owner.locator("main")).to_contain_text("pending approvals are declined")
    await owner.get_by_role("button", name="Delete writer").click()
    await expect(owner.locator(".notice")).to_have_text("writer is deleted; its conversations stay readable.")
    await expect(owner.get_by_role("link", name="writer")).to_have_count(0)
    assert await console.api.get("/api/v1/teammates") == []

    await member.goto(conversation)
    await expect(member.locator("main")).to_contain_text("writer was deleted")
    await expect(member.get_by_role("button", name="Send")).to_have_count(0)
    await member.goto(page)
    await expect(member.locator("#teammate-deleted")).to_be_visible()
    await expect(member.locator("main")).to_contain_text("(no message yet)")
    assert console.errors() == []


async def test_org5_a_message_being_typed_stays_while_a_change_elsewhere_refreshes_the_conversation(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    """The conversation listens to the inbox too: another call waiting there (the owner's, through the API) fetches its
    part again. Nothing in it changed, so nothing of it is replaced: the message being typed, and the focus, are as the
    owner left them."""
    tools = await _tools(console, upstream, model)
    await console.api.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
    )
    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="Teammates").click()
    await owner.get_by_role("link", name="helper").click()
    await owner.get_by_role("button", name="New conversation").click()
    await expect(owner.locator("body[data-live=open]")).to_have_count(1)
    message = owner.get_by_label("Message")
    await message.fill("half a thou")

    before = await refreshes(owner)
    await call(console.api, "tools__write", {"note": "elsewhere"}, expect=202)
    await refreshed(owner, before + 1)
    await expect(message).to_have_value("half a thou")
    await expect(message).to_be_focused()
    await message.press_sequentially("ght")
    await expect(message).to_have_value("half a thought")
    assert not console.errors()


async def test_org5_an_inbox_update_answered_late_never_puts_back_what_it_showed_before(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    """Two calls arrive in the inbox one after the other, and the page's fetch for the first is answered late: held
    here until the second's fetch is answered, or for 3 s once the page was told of the second call. The inbox
    ends showing both. (Fetches overlapped: the late answer was put in last, and the second call vanished from the
    page until the next change.)"""
    await _tools(console, upstream, model)
    owner = await console.sign_in("owner@acme.test")
    await owner.get_by_role("link", name="Inbox").click()
    await expect(owner.locator("body[data-live=open]")).to_have_count(1)
    first_asked, second_answered = anyio.Event(), anyio.Event()
    fetches = 0

    async def hold_the_first(route: Route) -> None:
        nonlocal fetches
        fetches += 1
        response = await route.fetch()
        if fetches == 1:
            first_asked.set()
            await owner.wait_for_function("() => window.changesSeen >= 1")  # the second call announced to the page
            with anyio.move_on_after(3):  # each stream looks for changes every second: the script's may see it later
                await second_answered.wait()
            await route.fulfill(response=response)
        else:
            await route.fulfill(response=response)
            second_answered.set()

    await owner.route(re.compile(r"/inbox$"), hold_the_first)
    approvals = owner.get_by_role("article", name="Approval for tools__write")
    await call(console.api, "tools__write", {"note": "alpha"}, expect=202)
    with anyio.fail_after(20):
        await first_asked.wait()
    # A stream of the page's own, beside the script's, counts the changes announced from now on.
    await owner.evaluate(_COUNT_CHANGES)
    await call(console.api, "tools__write", {"note": "bravo"}, expect=202)
    await refreshed(owner, 2)
    await expect(approvals.filter(has_text="bravo")).to_have_count(1)
    await expect(approvals.filter(has_text="alpha")).to_have_count(1)
    assert not console.errors()


_COUNT_CHANGES = """() => new Promise((opened) => {
  window.changesSeen = 0;
  const source = new EventSource("/events?topics=inbox");
  source.addEventListener("change", () => { window.changesSeen += 1; });
  source.addEventListener("open", () => opened());
})"""
