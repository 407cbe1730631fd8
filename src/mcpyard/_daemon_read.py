"""Blocking reads of a terminal or of standard input that never hold up the exit: each in a daemon thread.

A read of the terminal blocks until a line comes. In a worker thread of anyio's, one still
waiting when the command ends (Ctrl-C at a prompt or at an approval card, a sign-in finished in
the browser while the paste prompt waited, the stdio gateway stopped on a terminal) kept the
process alive until someone pressed Enter: the interpreter waits for such threads before it
exits. A daemon thread is left behind instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable
from typing import TypeVar

import anyio

__all__ = ["read_in_daemon_thread"]

T = TypeVar("T")


async def read_in_daemon_thread(read: Callable[..., T], *args: object, abandon_on_cancel: bool = False) -> T:
    """`read(*args)` in a daemon thread; what it returns or raises (`EOFError` at the end of input) is returned or
    raised here.

    As `anyio.to_thread.run_sync`: cancelled, the caller waits for the line unless `abandon_on_cancel`; the event
    loop's end (Ctrl-C) never waits. A read left waiting ends with the process.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        deliver: Callable[[], None]
        try:
            value = read(*args)
        except BaseException as exc:  # handed to the caller, whatever it is
            deliver = functools.partial(_fail, future, exc)
        else:
            deliver = functools.partial(_succeed, future, value)
        with contextlib.suppress(RuntimeError):  # the event loop is closed: no one waits for it any more
            loop.call_soon_threadsafe(deliver)

    threading.Thread(target=work, name="mcpyard console input", daemon=True).start()
    with anyio.CancelScope(shield=not abandon_on_cancel):
        value = await future
    return value  # noqa: RET504 - returned outside the scope: mypy cannot tell a shielded one swallows nothing


def _succeed(future: asyncio.Future[T], value: T) -> None:
    if not future.done():  # else given up
        future.set_result(value)


def _fail(future: asyncio.Future[T], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
