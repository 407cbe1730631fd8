"""Tool search on the teammates page in a real browser (MOD-4): an owner sets when teammates search for their tools
(saved, audited, read back by the API), a mistyped budget is refused naming the field, and a member reads the
setting without a form to change it."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.org.web._console import Console

pytestmark = pytest.mark.anyio


async def test_mod4_an_owner_sets_tool_search_on_the_teammates_page(console: Console) -> None:
    page = await console.sign_in("owner@acme.test")
    await page.get_by_role("link", name="Teammates").click()
    await expect(page.get_by_label("When")).to_have_value("auto")
    await page.get_by_label("When").select_option("always")
    await page.get_by_label("Search past this number of definitions").fill("12")
    await page.get_by_role("button", name="Save tool search").click()
    await expect(page.locator(".notice")).to_have_text("Tool search saved.")
    await expect(page.get_by_label("When")).to_have_value("always")
    await expect(page.get_by_label("Search past this number of definitions")).to_have_value("12")
    await console.look(page, "teammates-tool-search")
    assert await console.api.get("/api/v1/tool-search") == {"mode": "always", "max_tools": 12, "max_tokens": 10_000}
    [entry] = await console.api.get("/api/v1/audit", params={"action": "tool_search.set"})
    assert entry["new"]["mode"] == "always"

    # A number the browser lets through but the service cannot take: refused, naming the field, nothing changed.
    await page.get_by_label("Search past this number of definitions").fill("100001")
    await page.get_by_role("button", name="Save tool search").click()
    await expect(page.locator(".notice")).to_contain_text("max_tools must be a whole number")
    await expect(page.locator(".notice code")).to_have_text("max_tools")
    assert (await console.api.get("/api/v1/tool-search"))["max_tools"] == 12
    assert console.errors() == []


async def test_mod4_a_member_reads_the_setting_and_cannot_change_it(console: Console) -> None:
    await console.api.add_member("member@acme.test")
    page = await console.sign_in("member@acme.test")
    await page.get_by_role("link", name="Teammates").click()
    await expect(page.get_by_text("Teammates search for their tools once they have more than 40 tools")).to_be_visible()
    await expect(page.get_by_role("button", name="Save tool search")).to_have_count(0)
    token = await page.locator("input[name=csrf_token]").first.get_attribute("value")
    assert token is not None, "the page carries its CSRF token (the sign-out form)"
    response = await page.request.post("/teammates/tool-search", form={"csrf_token": token, "mode": "off"})
    assert "Tool search saved." not in await response.text()
    assert (await console.api.get("/api/v1/tool-search"))["mode"] == "auto", "the action refuses a member"
