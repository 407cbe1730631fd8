"""Every core action of the console works with JavaScript off: forms post, the service redirects (ORG-1 to ORG-6)."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.model.openai_fixture import ModelFixture
from tests.org._flows import TOKEN, by_tool, register, set_policy
from tests.org.web._console import Console

pytestmark = pytest.mark.anyio


async def test_org1_org2_org3_an_owner_signs_in_registers_sets_a_policy_adds_a_member_and_makes_a_token_without_script(
    console: Console, upstream: str
) -> None:
    page = await console.sign_in("owner@acme.test", javascript=False)
    await page.get_by_label("Name").fill("tools")
    await page.get_by_label("Streamable HTTP URL").fill(upstream)
    await page.get_by_label("Bearer token (optional)").fill(TOKEN)
    await page.get_by_role("button", name="Add server").click()
    await expect(page.locator(".notice")).to_contain_text("tools is registered (connected")
    await page.get_by_role("link", name="Tools & policies").click()
    row = page.locator("tr", has=page.get_by_role("link", name="tools__lookup"))
    await row.get_by_label("Policy of tools__lookup").select_option("run_freely")
    await row.get_by_role("button", name="Set").click()
    await expect(page.locator(".notice")).to_have_text("tools__lookup: Run freely.")
    await page.get_by_role("link", name="MCP servers").click()
    await page.get_by_role("link", name="tools", exact=True).click()
    await page.get_by_label("Name").fill("kit")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator(".notice")).to_have_text("kit is saved.")
    await expect(page.locator("tbody")).to_contain_text("kit__lookup")
    await expect(page.locator("dl.facts")).to_contain_text("kept sealed (never shown)")

    await page.get_by_role("link", name="Members & tokens").click()
    await page.get_by_label("Email").fill("new@acme.test")
    await page.locator("form[action='/members']").get_by_label("Role").select_option("admin")
    await page.get_by_label("Password").fill("another long passphrase")
    await page.get_by_role("button", name="Add member").click()
    await expect(page.locator(".notice")).to_have_text("new@acme.test is added, as admin.")
    await page.get_by_label("Label").fill("ci")
    await page.get_by_role("button", name="Make a token").click()
    shown = await page.locator("#new-token").text_content()
    assert shown is not None
    assert len(shown) > 30
    await console.look(page, "members")
    me = await console.api.get("/api/v1/me", token=shown)
    assert me["email"] == "owner@acme.test", "the token shown works"
    await page.goto("/members")
    assert shown not in await page.content(), "a token is shown once, never again"
    await page.get_by_role("button", name="Revoke").first.click()
    await expect(page.locator(".notice")).to_contain_text("The token is revoked")

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.locator(".notice")).to_have_text("You are signed out.")
    await page.goto("/servers")
    await expect(page).to_have_url(f"{console.origin}/login?next=/servers")


async def test_org5_org6_a_member_asks_approves_their_own_call_and_a_visitor_chats_without_script(
    model: ModelFixture, console: Console, upstream: str
) -> None:
    tools = by_tool(await register(console.api, upstream))
    await set_policy(console.api, tools["lookup"], "run_freely")
    await set_policy(console.api, tools["write"], "ask_first")
    await console.api.request("PUT", "/api/v1/model", json={"base_url": model.base_url, "model": "m", "api_key": "k"})
    teammate = await console.api.post(
        "/api/v1/teammates", {"name": "helper", "server_ids": [tools["lookup"]["server_id"]]}, expect=201
    )
    await console.api.add_member("member@acme.test")
    page = await console.sign_in("member@acme.test", javascript=False)
    await page.goto(f"/teammates/{teammate['id']}")
    await page.get_by_role("button", name="New conversation").click()
    model.replies.extend([{"tool_calls": [{"name": "tools__write", "arguments": {"note": "n1"}}]}, {"text": "Done."}])
    await page.get_by_label("Message").fill("write n1")
    await page.get_by_role("button", name="Send").click()
    card = page.get_by_role("article", name="Approval for tools__write")
    await expect(card).to_contain_text('"note": "n1"')
    await card.get_by_role("button", name="Approve").click()
    await expect(page.locator(".notice")).to_have_text("Approved: it ran once.")
    await console.api.settled()
    await page.reload()
    await expect(page.locator(".message.reply")).to_contain_text("Done.")

    assistant = await console.api.post(
        "/api/v1/assistants", {"name": "Desk", "tool_ids": [tools["lookup"]["id"]]}, expect=201
    )
    published = await console.api.post(f"/api/v1/assistants/{assistant['id']}/publish")
    visitor = await console.page(javascript=False)
    await visitor.goto(f"/a/{published['slug']}")
    model.replies.extend([{"text": "Hello, visitor."}, {"text": "Still here."}])
    await visitor.get_by_label("Message").fill("hi")
    await visitor.get_by_role("button", name="Send").click()
    await expect(visitor.locator(".message.reply")).to_have_text("Desk Hello, visitor.")
    await visitor.get_by_label("Message").fill("again")
    await visitor.get_by_role("button", name="Send").click()
    await expect(visitor.locator(".message.reply")).to_have_count(2)
    assert console.errors() == []
