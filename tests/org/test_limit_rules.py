"""ORG-11 as pure rules: the fixed UTC windows a call counts in, when they reset, and which settings can be limits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mcpyard.org.rules import LIMIT_FIELDS, Reached, Subject, checked_limits, limit_problem, windows_of

NOW = datetime(2026, 12, 5, 23, 59, 45, 500_000, tzinfo=UTC)
MEMBER, TOKEN = Subject("member", "m1"), Subject("token", "t1")


def test_org11_a_call_counts_in_one_window_per_subject_and_limit_set_in_a_fixed_order() -> None:
    limits = {"member_per_minute": 5, "member_per_day": 100, "token_per_day": 10, "teammate_per_minute": 1}
    windows = windows_of(limits, [TOKEN, MEMBER], NOW)
    assert [(w.subject.kind, w.period, w.limit) for w in windows] == [
        ("member", "day", 100),
        ("member", "minute", 5),
        ("token", "day", 10),
    ], "sorted by key: every call takes its counters in the same order"
    minute = next(w for w in windows if w.period == "minute")
    assert minute.end == int(datetime(2026, 12, 6, 0, 0, tzinfo=UTC).timestamp())
    assert minute.key == f"member:m1|minute|{minute.end - 60}"
    assert windows_of({}, [MEMBER, TOKEN], NOW) == [], "no limits set: nothing is counted"


@pytest.mark.parametrize(
    ("period", "end", "retry_after", "shown"),
    [
        ("minute", datetime(2026, 12, 6, 0, 0, tzinfo=UTC), 15, "00:00:00 UTC"),
        ("day", datetime(2026, 12, 6, 0, 0, tzinfo=UTC), 15, "2026-12-06 00:00 UTC"),
        ("minute", datetime(2026, 12, 5, 23, 59, 45, tzinfo=UTC), 1, "23:59:45 UTC"),
    ],
)
def test_org11_a_refusal_says_which_limit_and_when_it_resets_in_whole_seconds(
    period: str, end: datetime, retry_after: int, shown: str
) -> None:
    reached = Reached(MEMBER, "minute" if period == "minute" else "day", 3, int(end.timestamp()), NOW)
    assert reached.retry_after == retry_after
    assert reached.field == f"member_per_{period}"
    assert f"member limit is reached: at most 3 calls per {period}" in reached.message
    assert shown in reached.message


@pytest.mark.parametrize(
    ("name", "value", "ok"),
    [
        ("member_per_minute", None, True),
        ("member_per_minute", 0, True),
        ("member_per_minute", 100_000, True),
        ("member_per_minute", 100_001, False),
        ("token_per_day", 100_000_000, True),
        ("token_per_day", 100_000_001, False),
        ("teammate_per_day", -1, False),
        ("teammate_per_day", True, False),
        ("teammate_per_day", 2.0, True),
        ("teammate_per_day", 2.5, False),
        ("teammate_per_day", "2", False),
    ],
)
def test_org11_a_limit_is_a_whole_number_within_bounds_or_none(name: str, value: object, ok: bool) -> None:
    assert (limit_problem(name, value) is None) is ok


def test_org11_settings_left_out_are_no_limit_and_every_problem_is_named() -> None:
    assert checked_limits({"member_per_minute": 3}) == {
        name: 3 if name == "member_per_minute" else None for name in LIMIT_FIELDS
    }
    with pytest.raises(ValueError, match=r"`member_per_minute`.*`token_per_day`"):
        checked_limits({"member_per_minute": -1, "token_per_day": "x"})
