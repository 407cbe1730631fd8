"""Blocking reads of a terminal or of standard input that never hold up the exit: each in a daemon thread.

A read of the terminal blocks until a line comes. In a worker thread of anyio's, one still
waiting when the command ends (Ctrl-C at a prompt or at an approval card, a sign-in finished in
the browser while the paste prompt waited, the stdio gateway stopped on a terminal) kept the
process alive until someone pressed Enter: the interpreter waits for such threads before it
exits. A daemon thread is left behind instead.

A read given up while the program goes on (a server's question, when the call that asked it is
cancelled in `mcpyard shell` or `chat`) must not take the next line typed, which is meant for the
prompt after it: such a read waits for input with `wait_for_input` (or reads through
`readline_from_stdin`), which ends it (`GivenUp`) once the read is given up, nothing read.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import select
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio

__all__ = ["GivenUp", "interruptible", "read_in_daemon_thread", "readline_from_stdin", "wait_for_input"]

T = TypeVar("T")

GIVE_UP_SECS = 1.0
"""How long a read given up while it waits for a terminal's input may take to end (and put back what it changed)."""

_reading = threading.local()
"""In a read's thread: `given_up`, the end of a pipe that turns readable once the read is given up; `interruptible`,
set once the read will wait for input with `wait_for_input`."""


class GivenUp(Exception):
    """The read was given up before its input came: nothing was read."""


def interruptible(fd: int) -> None:
    """Say, in a read run by `read_in_daemon_thread(..., abandon_on_cancel=True)`, that it will wait for the input
    of `fd` with `wait_for_input` (when `fd` is a terminal): given up, it ends at once, and whoever gave it up waits
    for it to end, so what it changed meanwhile (a terminal's echo) is put back before the program goes on.

    Call it before changing anything.
    """
    flag: threading.Event | None = getattr(_reading, "interruptible", None)
    with contextlib.suppress(OSError):
        if flag is not None and os.isatty(fd):
            flag.set()


def wait_for_input(fd: int) -> None:
    """Until `fd` has input to read, in a read run by `read_in_daemon_thread(..., abandon_on_cancel=True)`.

    Raises:
        GivenUp: the read was given up first (nothing was read from `fd`).

    Elsewhere, or where `fd` is not a terminal (a pipe's or a file's input may already sit in a
    buffer, where waiting on its descriptor would wait for more), it returns at once.
    """
    given_up: int | None = getattr(_reading, "given_up", None)
    if given_up is None or not os.isatty(fd):
        return
    while True:
        ready, _, _ = select.select([fd, given_up], [], [])
        if given_up in ready:
            raise GivenUp
        if ready:
            return


def readline_from_stdin() -> str:
    """`sys.stdin.readline()`, after `wait_for_input` on its terminal (so a read given up takes no line)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no descriptor: nothing to wait on
        fd = sys.stdin.fileno()
        interruptible(fd)
        wait_for_input(fd)
    return sys.stdin.readline()


async def read_in_daemon_thread(read: Callable[..., T], *args: object, abandon_on_cancel: bool = False) -> T:
    """`read(*args)` in a daemon thread; what it returns or raises (`EOFError` at the end of input) is returned or
    raised here.

    As `anyio.to_thread.run_sync`: cancelled, the caller waits for the line unless `abandon_on_cancel`; the event
    loop's end (Ctrl-C) never waits. A read left waiting ends with the process.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    ended: asyncio.Future[None] = loop.create_future()
    waits = threading.Event()
    # Closing `give_up` makes `given_up` readable: how a read waiting in `wait_for_input` learns it was given up.
    given_up, give_up = os.pipe() if abandon_on_cancel and os.name == "posix" else (None, None)

    def work() -> None:
        deliver: Callable[[], None] | None = None
        _reading.given_up, _reading.interruptible = given_up, waits
        try:
            value = read(*args)
        except GivenUp:
            pass  # no one waits for it any more
        except BaseException as exc:  # handed to the caller, whatever it is
            deliver = functools.partial(_fail, future, exc)
        else:
            deliver = functools.partial(_succeed, future, value)
        finally:
            if given_up is not None:
                os.close(given_up)
        with contextlib.suppress(RuntimeError):  # the event loop is closed: no one waits for it any more
            if deliver is not None:
                loop.call_soon_threadsafe(deliver)
            loop.call_soon_threadsafe(_succeed, ended, None)

    threading.Thread(target=work, name="mcpyard console input", daemon=True).start()
    try:
        with anyio.CancelScope(shield=not abandon_on_cancel):
            value = await future
    finally:
        if give_up is not None:
            os.close(give_up)  # read or given up: a read still waiting for input ends
            if (future.cancelled() or not future.done()) and waits.is_set():
                # Given up while it waits for a terminal: it ends at once, and puts back what it changed first.
                with anyio.CancelScope(shield=True), anyio.move_on_after(GIVE_UP_SECS):
                    await ended
    return value


def _succeed(future: asyncio.Future[T], value: T) -> None:
    if not future.done():  # else given up
        future.set_result(value)


def _fail(future: asyncio.Future[T], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
