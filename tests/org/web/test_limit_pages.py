"""The limits and usage pages in a real browser (ORG-11, API-8): an owner sets the limits (saved, audited, in force
for the next call) and reads the usage, a bar per day drawn without script and tables by member, server and tool;
a member sees neither."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.org._flows import by_tool, call, register, set_policy
from tests.org.web._console import Console

pytestmark = pytest.mark.anyio


async def test_org11_an_owner_sets_limits_on_the_limits_page_and_they_hold_at_the_next_call(
    console: Console, upstream: str
) -> None:
    await set_policy(console.api, by_tool(await register(console.api, upstream))["lookup"], "run_freely")
    page = await console.sign_in("owner@acme.test")
    await page.get_by_role("link", name="Limits").click()
    await page.get_by_label("Each member: calls per minute").fill("1")
    await page.get_by_label("Each teammate: calls per day").fill("500")
    await page.get_by_role("button", name="Save limits").click()
    await expect(page.locator(".notice")).to_have_text("Limits saved.")
    await expect(page.get_by_label("Each member: calls per minute")).to_have_value("1")
    await console.look(page, "limits")
    limits = await console.api.get("/api/v1/limits")
    assert limits["member_per_minute"] == 1
    assert limits["teammate_per_day"] == 500
    assert limits["token_per_day"] is None, "an empty field is no limit"
    [entry] = await console.api.get("/api/v1/audit", params={"action": "limits.set"})
    assert entry["new"]["member_per_minute"] == 1
    assert (await call(console.api, "tools__lookup", {"key": "k"}))["ok"] is True
    over = await console.api.request("POST", "/api/v1/calls", json={"tool": "tools__lookup", "arguments": {}})
    assert over.status_code == 429

    await page.get_by_label("Each member: calls per minute").fill("")
    await page.get_by_role("button", name="Save limits").click()
    await expect(page.locator(".notice")).to_have_text("Limits saved.")
    assert (await console.api.get("/api/v1/limits"))["member_per_minute"] is None
    assert console.errors() == []


async def test_api8_an_owner_reads_the_usage_page_with_a_bar_per_day_and_tables(
    console: Console, upstream: str
) -> None:
    tools = by_tool(await register(console.api, upstream))
    await set_policy(console.api, tools["lookup"], "run_freely")
    await set_policy(console.api, tools["destroy"], "off")
    for key in ("a", "b"):
        await call(console.api, "tools__lookup", {"key": key})
    await call(console.api, "tools__destroy", {"target": "x"})
    page = await console.sign_in("owner@acme.test")
    await page.get_by_role("link", name="Usage").click()
    await expect(page.locator("h1")).to_have_text("Usage")
    await expect(page.locator(".chart svg g.day")).to_have_count(31)
    await expect(page.locator(".chart svg title").last).to_contain_text("3 calls, 1 errors")
    member_row = page.locator("table.usage").first.locator("tr", has_text="owner@acme.test")
    await expect(member_row.locator("td").nth(1)).to_have_text("3")
    await expect(member_row.locator("td").nth(2)).to_have_text("1")
    await expect(page.locator("table.usage").nth(1).locator("tr", has_text="tools")).to_have_count(1)
    await expect(
        page.locator("table.usage").nth(2).locator("tr", has_text="tools__lookup").locator("td").nth(1)
    ).to_have_text("2")
    await console.look(page, "usage")
    assert console.errors() == []


async def test_org11_api8_a_member_sees_neither_page(console: Console) -> None:
    await console.api.add_member("member@acme.test")
    page = await console.sign_in("member@acme.test")
    await expect(page.get_by_role("link", name="Usage")).to_have_count(0)
    await expect(page.get_by_role("link", name="Limits")).to_have_count(0)
    for path in ("/usage", "/limits"):
        response = await page.goto(path)
        assert response is not None
        assert response.status == 403


async def test_org11_a_limit_typed_that_cannot_be_one_is_refused_on_the_page_naming_it(console: Console) -> None:
    page = await console.sign_in("owner@acme.test")
    await page.goto("/limits")
    csrf = await page.locator('input[name="csrf_token"]').first.get_attribute("value")
    assert csrf
    for typed in ("²", "-1", "1e3", "100001"):
        form: dict[str, str | float | bool] = {"csrf_token": csrf, "member_per_minute": typed}
        response = await page.request.post("/limits", form=form, max_redirects=0)
        assert response.status == 303, typed
        await page.goto("/limits")
        await expect(page.locator(".notice.error")).to_contain_text("member_per_minute must be a whole number")
        await expect(page.locator(".notice.error code")).to_have_text("member_per_minute")
    assert (await console.api.get("/api/v1/limits"))["member_per_minute"] is None
    assert await console.api.get("/api/v1/audit", params={"action": "limits.set"}) == []
