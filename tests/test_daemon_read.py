"""CLI-2: a read of the terminal given up (its call cancelled) ends at once, and puts back what it changed (a secret
field's echo) before its caller goes on: the next prompt's line is shown as it is typed."""

from __future__ import annotations

import os
import threading

import anyio
import pytest

from mcpyard._daemon_read import interruptible, read_in_daemon_thread, wait_for_input

pytestmark = pytest.mark.anyio

PUT_BACK_SECS = 0.3
"""How long the read below takes to put back what it changed, once given up."""


async def test_cli2_a_read_given_up_at_a_terminal_puts_back_what_it_changed_before_its_caller_goes_on() -> None:
    leader, follower = os.openpty()
    changed = threading.Event()  # as a secret field's read turns its terminal's echo off
    never = threading.Event()

    def read() -> bytes:
        interruptible(follower)
        changed.set()
        try:
            wait_for_input(follower)
            return os.read(follower, 100)
        finally:
            never.wait(PUT_BACK_SECS)  # putting it back takes a while
            changed.clear()

    async def cancel_once_it_waits(scope: anyio.CancelScope) -> None:
        assert await anyio.to_thread.run_sync(changed.wait, 10), "the read never began"
        scope.cancel()

    try:
        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as reading:
                tg.start_soon(cancel_once_it_waits, reading)
                await read_in_daemon_thread(read, abandon_on_cancel=True)
            assert reading.cancelled_caught
            assert not changed.is_set(), "the caller went on before the read put back what it changed"
    finally:
        os.close(leader)
        os.close(follower)


async def test_cli2_a_read_given_up_while_it_waits_on_a_pipe_is_not_waited_for() -> None:
    """A pipe's read cannot be ended early (its input may already sit in a buffer): giving it up never waits for it."""
    given, kept = os.pipe()
    began = threading.Event()

    def read() -> bytes:
        interruptible(given)  # not a terminal: nothing to wait for
        began.set()
        wait_for_input(given)
        return os.read(given, 100)  # blocks until the pipe is written to

    async def cancel_once_it_reads(scope: anyio.CancelScope) -> None:
        assert await anyio.to_thread.run_sync(began.wait, 10), "the read never began"
        scope.cancel()

    try:
        with anyio.fail_after(0.9):  # under GIVE_UP_SECS: the caller did not wait for the read
            async with anyio.create_task_group() as tg:
                with anyio.CancelScope() as reading:
                    tg.start_soon(cancel_once_it_reads, reading)
                    await read_in_daemon_thread(read, abandon_on_cancel=True)
                assert reading.cancelled_caught
    finally:
        os.write(kept, b"x\n")  # the read left behind ends
        os.close(kept)
        os.close(given)
