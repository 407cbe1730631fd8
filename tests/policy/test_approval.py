"""APR-1, FILE-3, POL-2, API-3: approval cards, argument previews and the scripted and `--yes` approvers."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from mcpyard.policy import Answer, ApprovalCard, FileFacts, ScriptedApprover, YesApprover, preview_arguments

pytestmark = pytest.mark.anyio

FILE_BYTES = b"quarterly numbers: confidential draft\n"
FILE_B64 = base64.b64encode(FILE_BYTES).decode("ascii")
REPORT = FileFacts("/work/ws/report.txt", len(FILE_BYTES), hashlib.sha256(FILE_BYTES).hexdigest())
SESSION_CHOICE = "allow for this session"


def card(
    *,
    tool: str = "notes__write_page",
    destructive: bool = False,
    offers_session: bool = False,
    annotations: dict[str, Any] | None = None,
    files: tuple[FileFacts, ...] = (),
    arguments_preview: str = '{"title": "x"}',
) -> ApprovalCard:
    return ApprovalCard(
        tool=tool,
        server="notes-server",
        server_tool="write_page",
        arguments_preview=arguments_preview,
        annotations=annotations if annotations is not None else {},
        reason="the tool is not read-only (the tool may change things)",
        files=files,
        offers_session=offers_session,
        destructive=destructive,
    )


def test_apr1_card_lines_show_the_full_tool_name_server_reason_and_annotations() -> None:
    long_name = "documentation_server__delete_every_page_of_the_selected_notebook"
    assert len(long_name) == 64
    shown = card(tool=long_name, annotations={"readOnlyHint": True, "destructiveHint": True}, destructive=True)
    text = "\n".join(shown.lines())
    assert long_name in text
    assert "notes-server" in text
    assert "write_page" in text
    assert "the tool is not read-only (the tool may change things)" in text
    assert "readOnlyHint" in text
    assert "destructiveHint" in text


def test_apr1_card_lines_show_annotations_the_server_set_to_false() -> None:
    text = "\n".join(card(annotations={"destructiveHint": False, "openWorldHint": False}).lines())
    assert "destructiveHint" in text
    assert "openWorldHint" in text


def test_apr1_file3_card_lines_show_each_file_as_path_size_and_sha256() -> None:
    other = FileFacts("/work/ws/notes.md", 7, "0" * 64)
    lines = card(arguments_preview="{}", files=(REPORT, other)).lines()
    for facts in (REPORT, other):
        assert any(facts.path in line and f"{facts.size} bytes" in line and facts.sha256 in line for line in lines), (
            facts
        )


def test_apr1_file3_a_card_built_from_the_preview_never_shows_the_file_bytes() -> None:
    arguments = {"path": FILE_B64, "title": "Q3"}
    lines = card(arguments_preview=preview_arguments(arguments, {"path": REPORT}), files=(REPORT,)).lines()
    text = "\n".join(lines)
    assert REPORT.sha256 in text
    assert FILE_B64 not in text
    assert FILE_BYTES.decode().strip() not in text


@pytest.mark.parametrize(
    ("offers_session", "offered"),
    [pytest.param(False, False, id="not-offered"), pytest.param(True, True, id="offered")],
)
def test_apr1_allow_for_this_session_is_shown_only_when_the_card_offers_it(offers_session: bool, offered: bool) -> None:
    text = "\n".join(card(offers_session=offers_session).lines())
    assert (SESSION_CHOICE in text) is offered
    assert "allow once" in text
    assert "deny" in text


async def test_pol2_api3_yes_approver_allows_once_a_non_destructive_card() -> None:
    approver = YesApprover()
    shown = card(offers_session=True)
    assert await approver(shown) == "once"
    assert approver.cards == [shown]


async def test_pol2_api3_yes_approver_denies_a_destructive_card() -> None:
    approver = YesApprover()
    shown = card(tool="notes__delete_page", destructive=True)
    assert await approver(shown) == "deny"
    assert approver.cards == [shown]


async def test_scripted_approver_answers_in_order_then_its_default_and_records_every_card() -> None:
    approver = ScriptedApprover(answers=["once", "session", "deny"], default="once")
    shown = [card(tool=f"notes__t{index}", offers_session=True) for index in range(5)]
    answers = [await approver(each) for each in shown]
    assert answers == ["once", "session", "deny", "once", "once"]
    assert approver.cards == shown


async def test_scripted_approver_always_gives_one_answer() -> None:
    approver = ScriptedApprover.always("once")
    assert [await approver(card()) for _ in range(3)] == ["once", "once", "once"]


@pytest.mark.parametrize(
    "shown",
    [
        pytest.param(card(offers_session=False), id="no-session-offered"),
        pytest.param(card(destructive=True, offers_session=False), id="destructive"),
        pytest.param(card(files=(REPORT,), offers_session=False), id="sends-file"),
    ],
)
async def test_apr1_scripted_session_answer_becomes_deny_when_the_card_does_not_offer_session(
    shown: ApprovalCard,
) -> None:
    approver = ScriptedApprover(answers=["session"])
    answer: Answer = await approver(shown)
    assert answer == "deny"
    assert approver.cards == [shown]


def test_apr1_short_arguments_are_previewed_whole_as_json() -> None:
    arguments = {"title": "Réunion <lundi>", "tags": ["a", "b"], "count": 3, "nested": {"ok": True}}
    assert json.loads(preview_arguments(arguments)) == arguments


def test_apr1_long_arguments_are_cut_and_say_how_long_they_were() -> None:
    # {"text": "<10,000 x>"}: 10 characters before the value, 2 after.
    preview = preview_arguments({"text": "x" * 10_000})
    assert len(preview) < 3_000
    assert preview.startswith('{"text": "xxx')
    assert "10012 characters" in preview


def test_apr1_file3_preview_shows_a_file_parameter_by_its_facts_not_its_contents() -> None:
    preview = preview_arguments({"path": FILE_B64, "title": "Q3"}, {"path": REPORT})
    shown = json.loads(preview)
    assert shown["title"] == "Q3"
    assert REPORT.path in shown["path"]
    assert REPORT.sha256 in shown["path"]
    assert str(REPORT.size) in shown["path"]
    assert FILE_B64 not in preview
