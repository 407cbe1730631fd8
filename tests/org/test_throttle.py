"""Failed sign-ins slowed down per address, as a table over a clock of the test's own (THREATS: login)."""

from __future__ import annotations

import pytest

from mcpyard.org.services._throttle import SignInLimits, TooManySignIns


def test_an_address_that_failed_too_often_waits_until_its_oldest_failure_is_out_of_the_window() -> None:
    limits = SignInLimits(failures=3, window_secs=60)
    for second in (0, 1, 2):
        limits.reserve("10.0.0.1", now=second)
    with pytest.raises(TooManySignIns) as raised:
        limits.reserve("10.0.0.1", now=30)
    assert raised.value.status == 429
    assert raised.value.retry_after == 31
    limits.reserve("10.0.0.2", now=30)  # another address is not held up
    limits.reserve("10.0.0.1", now=61)  # the first failure has left the window


def test_attempts_are_counted_when_they_start_and_a_success_gives_its_place_back() -> None:
    """Attempts still being checked count already: the fourth of three allowed is refused before any finished."""
    limits = SignInLimits(failures=3, window_secs=60)
    started = [limits.reserve("10.0.0.1", now=0) for _ in range(3)]
    with pytest.raises(TooManySignIns):
        limits.reserve("10.0.0.1", now=0)
    limits.give_back("10.0.0.1", started[0])
    limits.reserve("10.0.0.1", now=1)
    with pytest.raises(TooManySignIns):
        limits.reserve("10.0.0.1", now=1)


def test_memory_stays_bounded_whatever_the_number_of_addresses() -> None:
    limits = SignInLimits(failures=2, window_secs=60, addresses=100)
    for index in range(1_000):
        limits.reserve(f"10.0.{index // 256}.{index % 256}", now=0)
    limits.reserve("10.9.9.9", now=0)
    limits.reserve("10.9.9.9", now=0)
    with pytest.raises(TooManySignIns):
        limits.reserve("10.9.9.9", now=1)
    limits.reserve("10.0.0.0", now=1)  # the oldest addresses were forgotten first
