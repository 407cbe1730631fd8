"""Ctrl-C while a command runs: what each press does, and the prompt-time handling of the chat and the shell."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["CtrlC", "ctrl_c_cancels"]

T = TypeVar("T")


async def ctrl_c_cancels(session: Any, everything: Any, *, task_status: Any) -> None:
    """Ctrl-C cancels what `session` runs (its `current` cancel scope), or else `everything`; started (`tg.start`)
    once Ctrl-C is caught, so a prompt shown after it never meets the default handler. A process started with Ctrl-C
    ignored is left ignoring it (listening would put Python's default handler in place once the prompt ends).

    `everything` is the scope around the host: left cancelled, the host stops its servers in a hurry,
    as on any other Ctrl-C (a server whose process outlives its input is not given its whole wait).
    """
    import anyio

    interrupts = signal.getsignal(signal.SIGINT)
    if interrupts is signal.SIG_IGN:
        # Started with Ctrl-C ignored (by a parent that ignores it: `trap '' INT`): it stays ignored, as in a call.
        task_status.started()
        return
    caught = False
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                caught = True
                if session.current is not None:
                    session.current.cancel()
                else:
                    everything.cancel()
    finally:
        if isinstance(interrupts, CtrlC):  # the command's own handler again (asyncio leaves Python's default)
            interrupts.resume(interrupted=caught and everything.cancel_called)


class CtrlC:
    """Ctrl-C while a command runs. The first cancels the command, as asyncio's own handler does (its host then stops
    the servers in a hurry); the second kills every server at once, where asyncio's handler raised
    KeyboardInterrupt in the middle of that stop (the servers then had their full wait after mcpyard was gone); a
    third leaves at once, Python's way."""

    def __init__(self) -> None:
        self.presses = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    @property
    def interrupted(self) -> bool:
        return self.presses > 0

    async def run(self, main: Callable[[], Awaitable[T]]) -> T:
        """`main`, with Ctrl-C cancelling it."""
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            return await main()
        finally:
            self._loop = self._task = None

    def resume(self, *, interrupted: bool) -> None:
        """Handle Ctrl-C again after a part of the command handled it itself (`interrupted`: and was stopped by it)."""
        self.presses = max(self.presses, 1) if interrupted else self.presses
        signal.signal(signal.SIGINT, self)

    def __call__(self, signum: int, frame: object) -> None:
        del signum, frame
        loop, task = self._loop, self._task
        self.presses += 1
        if loop is None or task is None or self.presses > 2:
            raise KeyboardInterrupt  # before the command began, once it ended, or a third time: Python's own way
        with contextlib.suppress(RuntimeError):  # the event loop closed meanwhile
            loop.call_soon_threadsafe(task.cancel if self.presses == 1 else _kill_every_server)


def _kill_every_server() -> None:
    from mcpyard.connect import kill_every_server

    kill_every_server()
