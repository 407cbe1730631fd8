"""The members page in a real browser: an owner changes a member's role and removes another, with a confirmation;
the removed member's open page is signed out at once (ORG-1)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.org.web._console import Console

pytestmark = pytest.mark.anyio


async def test_org1_an_owner_changes_a_members_role_and_removes_a_member_after_confirming(console: Console) -> None:
    await console.api.add_member("dana@acme.test")
    leaving = await console.api.add_member("eve@acme.test")
    page = await console.sign_in("owner@acme.test")
    eves_page = await console.sign_in("eve@acme.test")
    await page.goto("/members")

    dana = page.locator("tr", has_text="dana@acme.test")
    await dana.get_by_label("Role of dana@acme.test").select_option("admin")
    await dana.get_by_role("button", name="Change role").click()
    await expect(page.locator(".notice")).to_have_text("dana@acme.test is now admin.")
    await expect(page.locator("tr", has_text="dana@acme.test").get_by_label("Role of dana@acme.test")).to_have_value(
        "admin"
    )

    eve = page.locator("tr", has_text="eve@acme.test")
    await eve.get_by_role("button", name="Remove").click()  # not confirmed: the browser keeps the form
    await expect(page.locator("tr", has_text="eve@acme.test")).to_have_count(1)
    await eve.get_by_label("Yes, remove eve@acme.test").check()
    await eve.get_by_role("button", name="Remove").click()
    await expect(page.locator(".notice")).to_contain_text("eve@acme.test is removed")
    await expect(page.locator("tr", has_text="eve@acme.test")).to_have_count(0)
    await console.look(page)

    refused = await console.api.request("GET", "/api/v1/me", token=leaving)
    assert refused.status_code == 401, "her token is revoked"
    await eves_page.reload()
    await expect(eves_page).to_have_url(re.compile(r"/login"))
    [changed] = await console.api.get("/api/v1/audit", params={"action": "member.role_changed"})
    assert changed["new"]["role"] == "admin"
    assert console.errors() == []


async def test_org1_an_admin_sees_no_control_over_an_owner_and_the_service_refuses_one_anyway(
    console: Console,
) -> None:
    await console.api.add_member("admin@acme.test", "admin")
    page = await console.sign_in("admin@acme.test")
    await page.goto("/members")
    owner_row = page.locator("tr", has_text="owner@acme.test")
    await expect(owner_row.get_by_role("button")).to_have_count(0)
    await expect(page.locator("tr", has_text="admin@acme.test").get_by_role("button", name="Leave")).to_have_count(1)
    csrf = await page.locator('input[name="csrf_token"]').first.get_attribute("value")
    assert csrf
    owner_id = next(row["id"] for row in await console.api.get("/api/v1/members") if row["role"] == "owner")
    for action, form in (("remove", {"confirm": "yes"}), ("role", {"role": "member"})):
        forged = await page.request.post(
            f"/members/{owner_id}/{action}", form={"csrf_token": csrf, **form}, max_redirects=0
        )
        assert forged.status == 303, "refused, back to the page saying why"
    owner = next(row for row in await console.api.get("/api/v1/members") if row["id"] == owner_id)
    assert owner["role"] == "owner", "the service checked the role: nothing changed"
