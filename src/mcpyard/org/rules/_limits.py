"""Limits on calls as pure rules: which limits a call meets, its windows, and the words of a refusal (ORG-11).

An organization sets, for each member, each API token and each teammate, at most so many calls a
minute and so many a day (unset: no limit). Windows are fixed and in UTC: a minute from :00 to :00,
a day from midnight to midnight, so every replica agrees on which window a call falls in without
talking to the others, and a refusal can say exactly when the window resets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

__all__ = [
    "LIMIT_FIELDS",
    "MAX_PER_DAY",
    "MAX_PER_MINUTE",
    "Period",
    "Reached",
    "Subject",
    "SubjectKind",
    "Window",
    "checked_limits",
    "limit_problem",
    "windows_of",
]

SubjectKind = Literal["member", "token", "teammate"]
Period = Literal["minute", "day"]
SUBJECT_KINDS: tuple[SubjectKind, ...] = get_args(SubjectKind)
PERIODS: tuple[Period, ...] = get_args(Period)
LIMIT_FIELDS: tuple[str, ...] = tuple(f"{kind}_per_{period}" for kind in SUBJECT_KINDS for period in PERIODS)
"""The settings, by name: `member_per_minute`, `member_per_day`, `token_per_minute`, … ."""
MAX_PER_MINUTE = 100_000
MAX_PER_DAY = 100_000_000
_SECONDS: dict[Period, int] = {"minute": 60, "day": 86_400}
_WHOSE: dict[SubjectKind, str] = {"member": "each member", "token": "each API token", "teammate": "each teammate"}


@dataclass(frozen=True, slots=True, order=True)
class Subject:
    """Who a call is counted for: a member, an API token (or an MCP client's sign-in), or a teammate."""

    kind: SubjectKind
    id: str


@dataclass(frozen=True, slots=True, order=True)
class Window:
    """One fixed UTC window of one subject under one limit: its counter's key, and when it ends."""

    key: str
    subject: Subject
    period: Period
    limit: int
    end: int
    """Seconds since the epoch."""


@dataclass(frozen=True, slots=True)
class Reached:
    """A limit a call would go over: which, and when its window resets."""

    subject: Subject
    period: Period
    limit: int
    end: int
    now: datetime

    @property
    def field(self) -> str:
        return f"{self.subject.kind}_per_{self.period}"

    @property
    def retry_after(self) -> int:
        """Whole seconds until the window resets, at least 1 (what `Retry-After` says)."""
        return max(1, math.ceil(self.end - self.now.timestamp()))

    @property
    def resets_at(self) -> str:
        return datetime.fromtimestamp(self.end, UTC).isoformat()

    @property
    def message(self) -> str:
        shape = "%H:%M:%S UTC" if self.period == "minute" else "%Y-%m-%d %H:%M UTC"
        when = datetime.fromtimestamp(self.end, UTC).strftime(shape)
        return (
            f"the {self.subject.kind} limit is reached: at most {self.limit} calls per {self.period} for "
            f"{_WHOSE[self.subject.kind]}; it resets in {self.retry_after} s (at {when}). Nothing was sent; "
            "call again then, or ask an owner or admin to raise the limit"
        )


def windows_of(limits: Mapping[str, int | None], subjects: list[Subject], now: datetime) -> list[Window]:
    """The windows a call at `now` counts in: one per subject and period with a limit set, in one fixed order (so
    that concurrent calls take their counters' locks in the same order and never wait on each other in a cycle)."""
    epoch = int(now.timestamp())
    found = []
    for subject in subjects:
        for period in PERIODS:
            limit = limits.get(f"{subject.kind}_per_{period}")
            if limit is None:
                continue
            length = _SECONDS[period]
            start = epoch - epoch % length
            key = f"{subject.kind}:{subject.id}|{period}|{start}"
            found.append(Window(key, subject, period, limit, start + length))
    return sorted(found)


def limit_problem(name: str, value: object) -> str | None:
    """Why `value` cannot be the setting `name` (None: it can): a whole number from 0 up to its maximum, or null."""
    if value is None:
        return None
    top = MAX_PER_MINUTE if name.endswith("_per_minute") else MAX_PER_DAY
    if isinstance(value, float) and value.is_integer():  # JSON's 5.0 is the number 5
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        period = name.rsplit("_", 1)[1]
        return f"`{name}` must be a whole number from 0 to {top} (calls per {period}), or null for no limit"
    return None


def checked_limits(body: Mapping[str, object]) -> dict[str, int | None]:
    """Every setting from a request (one left out: no limit), or ValueError naming each that cannot be one."""
    problems = [problem for name in LIMIT_FIELDS if (problem := limit_problem(name, body.get(name))) is not None]
    if problems:
        raise ValueError("; ".join(problems))
    return {name: _as_int(body.get(name)) for name in LIMIT_FIELDS}


def _as_int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) else None
