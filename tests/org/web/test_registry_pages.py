"""Servers, tools and policies in a real browser: register, set policies, review a changed tool, audit (ORG-2, ORG-3).

The changed definition holds HTML and script: every page shows it as text, and nothing of it runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from playwright.async_api import expect

from mcpyard.secrets import forms_of
from tests.auth._support import auth_server, issuer_of
from tests.org._flows import TOKEN, register
from tests.org.web._console import Console
from tests.servers.in_process import serve_http_in_process
from tests.servers.oauth_server import CC_CLIENT_ID, CC_CLIENT_SECRET

pytestmark = pytest.mark.anyio

HOSTILE = '<script>window.__owned = 1</script><img src="x" onerror="window.__owned = 2"><b>bold?</b>'


async def test_org2_org3_an_owner_registers_a_server_sets_policies_reviews_a_changed_tool_and_sees_the_audit(
    console: Console, upstream: str, definitions: Path
) -> None:
    page = await console.sign_in("owner@acme.test")
    await page.get_by_role("link", name="MCP servers").click()
    await page.get_by_label("Name").fill("tools")
    await page.get_by_label("Streamable HTTP URL").fill(upstream)
    await page.get_by_label("Bearer token (optional)").fill(TOKEN)
    await page.get_by_role("button", name="Add server").click()
    await expect(page.locator(".notice")).to_contain_text("tools is registered (connected")
    await expect(page.locator("dl.facts")).to_contain_text("kept sealed (never shown)")
    await console.look(page, "server")

    await page.get_by_role("link", name="Tools & policies").click()
    lookup = page.locator("tr", has=page.get_by_role("link", name="tools__lookup"))
    await expect(lookup).to_contain_text("read-only")
    # By keyboard: focus the selector, choose, and submit with Enter.
    await lookup.get_by_label("Policy of tools__lookup").focus()
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("ArrowUp")
    await lookup.get_by_role("button", name="Set").focus()
    await page.keyboard.press("Enter")
    await expect(page.locator(".notice")).to_have_text("tools__lookup: Run freely.")
    write = page.locator("tr", has=page.get_by_role("link", name="tools__write", exact=True))
    await write.get_by_label("Policy of tools__write").select_option("ask_first")
    await write.get_by_role("button", name="Set").click()
    await expect(page.locator(".notice")).to_have_text("tools__write: Ask first.")
    await console.look(page, "tools")

    await anyio.Path(definitions).write_text(json.dumps({"lookup": HOSTILE}), encoding="utf-8")
    await page.get_by_role("link", name="MCP servers").click()
    await page.get_by_role("link", name="tools", exact=True).click()
    await page.get_by_role("button", name="Refresh tools").click()
    await expect(page.locator(".notice")).to_contain_text("Changed, and suspended until reviewed: tools__lookup")
    await page.get_by_role("link", name="Tools & policies").click()
    changed = page.locator("tr", has=page.get_by_role("link", name="tools__lookup"))
    await expect(changed).to_contain_text("changed")
    [listed] = [tool for tool in await console.api.get("/api/v1/tools") if tool["tool"] == "lookup"]
    await expect(changed.locator(".description")).to_have_text(listed["description"])
    await expect(changed.locator(".description")).to_contain_text('onerror="window.__owned = 2"')
    await changed.get_by_role("link", name="Review the change").click()
    diff = page.get_by_role("table", name="Reviewed and current definitions side by side")
    await expect(diff.locator("tr.diff-changed")).to_have_count(1)
    await expect(diff.locator("tr.diff-changed td").first).to_contain_text('"description": "Look a key up."')
    await expect(diff.locator("tr.diff-changed td").last).to_contain_text("window.__owned = 1")
    assert await page.evaluate("window.__owned") is None, "the definition's script never ran"
    assert await page.locator("main b").count() == 0, "its HTML is text, not markup"
    await console.look(page, "tool-diff")
    await page.get_by_label("Policy").select_option("run_freely")
    await page.get_by_role("button", name="Approve this definition").click()
    await expect(page.locator(".notice")).to_have_text("tools__lookup: Run freely.")
    await expect(page.locator("dl.facts")).to_contain_text("active")

    await page.get_by_role("link", name="Audit log").click()
    await page.get_by_label("Action").fill("policy.set")
    await page.get_by_role("button", name="Filter").click()
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.first).to_contain_text("owner@acme.test")
    await expect(rows.first).to_contain_text('"policy": "run_freely"')
    await console.look(page, "audit")

    assert console.errors() == []
    everything = "\n".join(console.seen)
    for form in forms_of(TOKEN):
        assert form not in everything, "the server's token is never shown"


async def test_org2_a_server_with_client_credentials_shows_its_client_and_issuer_never_its_secret(
    console: Console,
) -> None:
    async with auth_server("--client-credentials") as url:
        page = await console.sign_in("owner@acme.test")
        await page.get_by_label("Name").fill("guarded")
        await page.get_by_label("Streamable HTTP URL").fill(url)
        await page.get_by_text("Or sign in with client credentials").click()
        await page.get_by_label("Client id").fill(CC_CLIENT_ID)
        await page.get_by_label("Client secret").fill(CC_CLIENT_SECRET)
        await page.get_by_label("Authorization server (issuer URL)").fill(issuer_of(url))
        await page.get_by_role("button", name="Add server").click()
        await expect(page.locator(".notice")).to_contain_text("guarded is registered (connected")
        facts = page.locator("dl.facts")
        await expect(facts).to_contain_text(f"client {CC_CLIENT_ID} at {issuer_of(url)}")
        await expect(facts).to_contain_text("the secret kept sealed (never shown)")
        await console.look(page)
        # Saving the form as it stands (the client id and issuer shown, no new secret) keeps the credentials.
        await page.get_by_label("Name").fill("guarded2")
        await page.get_by_role("button", name="Save").click()
        await expect(page.locator(".notice")).to_have_text("guarded2 is saved.")
        await expect(facts).to_contain_text(f"client {CC_CLIENT_ID} at {issuer_of(url)}")
        await expect(facts).to_contain_text("connected")
        await console.look(page)
    everything = "\n".join(console.seen + console.api.responses)
    assert all(form not in everything for form in forms_of(CC_CLIENT_SECRET))


async def test_org2_a_url_edited_to_another_origin_drops_the_token_says_so_and_the_other_server_never_sees_it(
    console: Console, upstream: str
) -> None:
    """The edit form: the token is never sent to the new address; entering it again with the URL sends it."""
    server = await register(console.api, upstream)
    async with serve_http_in_process("echoes_token") as elsewhere:
        page = await console.sign_in("owner@acme.test")
        await page.goto(f"/servers/{server['id']}")
        await page.get_by_label("Streamable HTTP URL").fill(elsewhere)
        await page.get_by_role("button", name="Save").click()
        await expect(page.locator(".notice")).to_contain_text("Its bearer token was dropped")
        await expect(page.locator("dl.facts")).not_to_contain_text("kept sealed")
        await console.look(page)
        await page.get_by_label("Streamable HTTP URL").fill(upstream)
        await page.get_by_label("New bearer token (leave empty to keep the current one)").fill(TOKEN)
        await page.get_by_role("button", name="Save").click()
        await expect(page.locator(".notice")).to_have_text("tools is saved.")
        await expect(page.locator("dl.facts")).to_contain_text("connected")
        await console.look(page)
        async with httpx2.AsyncClient() as client:
            seen = (await client.get(elsewhere.replace("/mcp", "/seen"))).json()
    assert seen, "the other server was reached"
    assert all(TOKEN not in header for _, header in seen), seen
    assert (await console.api.get("/api/v1/audit", params={"action": "server.update"}))[1]["new"][
        "credentials_dropped"
    ] == ["bearer_token"]
    for form in forms_of(TOKEN):
        assert not any(form in shown for shown in console.seen)
