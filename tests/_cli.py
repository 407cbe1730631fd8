"""The `mcpyard` command run inside the test process: `main(argv, environ=...)` with its streams captured.

It answers as `subprocess.run([python, "-m", "mcpyard", ...], capture_output=True, text=True)` would,
without starting a Python: standard input is the text given, standard output and error are collected,
none of the three is a terminal. The command runs in `cwd` (default: the home's workspace), its
environment is the home's. Tests where the process itself is the subject (signals, terminals, the
import cost, long-running servers) start a real one instead.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from mcpyard.cli import main
from tests.conftest import Home

__all__ = ["Ran", "run_mcpyard", "run_mcpyard_in_thread"]

# The current directory and the standard streams belong to the whole process: one run at a time.
_ONE_AT_A_TIME = threading.Lock()


@dataclass(frozen=True, slots=True)
class Ran:
    """What a run of `mcpyard` did: as `subprocess.CompletedProcess[str]` has it."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _stream(text: str = "") -> io.TextIOWrapper:
    """A text stream over bytes, as a pipe is: UTF-8, with a `buffer`, no file descriptor, not a terminal."""
    return io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", write_through=True)


@dataclass
class _Captured:
    stdout: str = ""
    stderr: str = ""


@contextlib.contextmanager
def _streams(stdin: str) -> Iterator[_Captured]:
    """The standard streams replaced for the block; what it wrote to stdout and stderr once it ends."""
    given, out, err = _stream(stdin), _stream(), _stream()
    captured = _Captured()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = given, out, err
    try:
        yield captured
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        for stream in (out, err):
            stream.flush()
        captured.stdout = out.buffer.getvalue().decode()  # type: ignore[attr-defined]  # the BytesIO above
        captured.stderr = err.buffer.getvalue().decode()  # type: ignore[attr-defined]  # the BytesIO above
        for stream in (given, out, err):
            stream.close()


def run_mcpyard(
    home: Home,
    *args: str,
    stdin: str = "",
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Ran:
    """Run `mcpyard ARGS` here: reading `stdin`, in `cwd` (default: the workspace), with `environ` (the home's).

    A sync test calls it as it is; an async test through `run_mcpyard_in_thread` (the command runs its own loop).
    """
    argv = list(args)
    with _ONE_AT_A_TIME, contextlib.chdir(cwd or home.workspace), _streams(stdin) as captured:
        try:
            code = main(argv, environ=home.environ if environ is None else environ)
        except SystemExit as exc:  # as the process would end
            code = exc.code if isinstance(exc.code, int) else 1
    return Ran(["mcpyard", *argv], code, captured.stdout, captured.stderr)


async def run_mcpyard_in_thread(
    home: Home,
    *args: str,
    stdin: str = "",
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Ran:
    """`run_mcpyard` from an async test: in a worker thread, while the test's own event loop goes on."""
    run = functools.partial(run_mcpyard, home, *args, stdin=stdin, environ=environ, cwd=cwd)
    return await anyio.to_thread.run_sync(run)
