"""Pre-call hooks: the user's own programs that may allow, deny or ask for a call (POL-6).

A hook is a command line run by the shell. It gets the call as JSON on standard input and
answers on standard output. It owes mcpyard nothing else: it may ignore its input, close
it, exit before reading it, fail, hang, or leave a background child holding its pipes. Its
answer is what it wrote before it closed standard output or exited; whatever else happens
ends as `ask` within `HOOK_TIMEOUT`, and every process of the hook is stopped afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from mcpyard.config import Hook
from mcpyard.policy._decide import HookAnswer

__all__ = ["HOOK_TIMEOUT", "HookSpawn", "hook_answer", "own_group", "run_hooks"]

HOOK_TIMEOUT = 10.0
_MAX_OUTPUT = 4096
_DRAIN = 0.2
"""After the hook exited while something else still holds its standard output: how long to
collect what it wrote before exiting (already in the pipe, so one read away)."""
_REAP = 2.0
_SHELL = ["cmd", "/c"] if sys.platform == "win32" else ["/bin/sh", "-c"]
_WRITTEN_DENY = re.compile(r"\s*deny\s", re.IGNORECASE)
HookSpawn = Callable[[Sequence[str], Mapping[str, str], Path], AbstractAsyncContextManager[anyio.abc.Process]]
"""Starts a hook's command line (argv, environment, folder) with its stdin and stdout piped, and
stops it and every process it started when the block ends; raises `OSError` if it cannot."""
_STREAM_ENDS = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)


def _matches(hook: Hook, names: Sequence[str], file_paths: Sequence[str]) -> bool:
    return any(fnmatchcase(name, hook.match) for name in (*names, *file_paths))


def hook_answer(output: bytes, *, finished: bool) -> HookAnswer:
    """A hook's answer from what it wrote: its first word, `allow`, `deny` or anything else (`ask`).

    A hook that did not finish (neither exited nor closed its output by the time limit) has
    not answered, so it asks; but a `deny` it already wrote in full still refuses, since a
    refusal is never weakened into a card.
    """
    text = output[:_MAX_OUTPUT].decode("utf-8", "replace")
    if not finished:
        return "deny" if _WRITTEN_DENY.match(text) else "ask"
    words = text.split()
    first = words[0].lower() if words else ""
    if first == "allow":
        return "allow"
    return "deny" if first == "deny" else "ask"


async def _feed(stdin: anyio.abc.ByteSendStream, payload: bytes) -> None:
    # A hook may close its input or exit without reading it: a broken pipe is its right.
    with contextlib.suppress(*_STREAM_ENDS):
        await stdin.send(payload)
        await stdin.aclose()


async def _collect(stdout: anyio.abc.ByteReceiveStream, output: bytearray, closed: anyio.Event) -> None:
    # Read to the end even past the cap, so a chatty hook is never blocked on a full pipe.
    with contextlib.suppress(*_STREAM_ENDS):
        async for chunk in stdout:
            output += chunk[: max(0, _MAX_OUTPUT - len(output))]
    closed.set()


async def _converse(process: anyio.abc.Process, payload: bytes, output: bytearray, deadline: float) -> bool:
    """Feed the payload and read the answer until the hook closes its output or exits.

    Returns whether it did either before the deadline.
    """
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None
    assert stdout is not None
    closed, exited, settled = anyio.Event(), anyio.Event(), anyio.Event()

    async def collect() -> None:
        await _collect(stdout, output, closed)
        settled.set()

    async def watch_exit() -> None:
        await process.wait()
        exited.set()
        settled.set()

    with anyio.CancelScope(deadline=deadline):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_feed, stdin, payload)
            tg.start_soon(collect)
            tg.start_soon(watch_exit)
            await settled.wait()
            if not closed.is_set():
                # It exited while a background child still holds the pipe: what it wrote
                # before exiting is already there, one read away.
                with anyio.move_on_after(_DRAIN):
                    await closed.wait()
            # The payload may still be unwritten (a child holds the input open): no one reads it.
            tg.cancel_scope.cancel()
    return closed.is_set() or exited.is_set()


def _stop_group(process: anyio.abc.Process) -> None:
    """Kill the hook and everything it started in its process group, finished or not."""
    if sys.platform == "win32":  # pragma: no cover - no process groups there
        with contextlib.suppress(OSError):
            process.kill()
        return
    # The group only: the hook leads its own session, so it cannot have left it, and
    # `process.kill()` would reap it behind the event loop's back.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def own_group(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> AsyncIterator[anyio.abc.Process]:
    """A hook as a child of ours in a process group of its own, killed with the group when the block ends."""
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=dict(env),
        start_new_session=sys.platform != "win32",
    )
    try:
        yield process
    finally:
        # Shielded: a cancelled call still leaves no hook process behind.
        with anyio.CancelScope(shield=True):
            _stop_group(process)
            with anyio.move_on_after(_REAP):
                await process.aclose()


async def _ask_one(
    hook: Hook, payload: bytes, cwd: Path, environ: Mapping[str, str], spawn: HookSpawn | None
) -> HookAnswer:
    """One hook's answer; no answer within 10 s, a failure or anything unclear counts as `ask`."""
    argv = [*_SHELL, hook.command]
    output = bytearray()
    # One limit for starting and answering: a reaper that does not answer must not hold the call.
    deadline = anyio.current_time() + HOOK_TIMEOUT
    for start in (spawn, own_group) if spawn is not None else (own_group,):
        async with contextlib.AsyncExitStack() as stack:
            process: anyio.abc.Process | None = None
            with anyio.CancelScope(deadline=deadline), contextlib.suppress(OSError):
                process = await stack.enter_async_context(start(argv, environ, cwd))
            if process is None:
                continue  # not started (or not in time): the next way, or no answer
            finished = await _converse(process, payload, output, deadline)
        return hook_answer(bytes(output), finished=finished)
    return "ask"


async def run_hooks(
    hooks: Sequence[Hook],
    *,
    name: str,
    file_paths: Sequence[str],
    payload: Mapping[str, Any],
    cwd: Path,
    environ: Mapping[str, str],
    spawn: HookSpawn | None = None,
    also_named: Sequence[str] = (),
) -> HookAnswer | None:
    """The combined answer of every hook whose glob matches the tool name or a file's path.

    `also_named`: other names the tool answers to (the name a collision took from it, CAT-1),
    so a hook written for that name still sees its calls.

    `None` when no hook matches. Any `deny` wins; then any `ask`; else `allow`. The hooks
    run side by side, so the whole stage is bounded by one `HOOK_TIMEOUT`. `spawn` starts
    each (the host's reaper, so that not even a helper in a session of its own outlives
    the call); without it, or when it cannot, each runs in a process group of its own.
    """
    matching = [hook for hook in hooks if _matches(hook, (name, *also_named), file_paths)]
    if not matching:
        return None
    data = json.dumps(payload, ensure_ascii=False).encode()
    answers: list[HookAnswer] = ["ask"] * len(matching)

    async def ask(index: int, hook: Hook) -> None:
        answers[index] = await _ask_one(hook, data, cwd, environ, spawn)

    async with anyio.create_task_group() as tg:
        for index, hook in enumerate(matching):
            tg.start_soon(ask, index, hook)
    if "deny" in answers:
        return "deny"
    if "ask" in answers:
        return "ask"
    return "allow"
