"""A stdio transport that keeps its process in view: exit code, stderr, whole-group stop (CONN-2, CONN-5).

The SDK's `stdio_client` hides the process, so it can report neither an exit code
nor what the server printed before dying, and its shutdown waits are fixed. This one
speaks the same newline-delimited JSON-RPC (parsed and serialized by the SDK's own
message models) with a linear reader: a buffer scanned once per chunk.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from mcpyard.catalog import clean_and_redact
from mcpyard.connect._errors import MessageTooLong
from mcpyard.connect._kept import FdReceiveStream, KeptProcess
from mcpyard.connect._pipe import PipeMessages, on_asyncio
from mcpyard.connect._raw import RawCalls
from mcpyard.connect._reaper import Reaper
from mcpyard.connect._reaper_program import HURRIED_TERM_GRACE, KILL_LIMIT
from mcpyard.connect._writer import MessageWriter

__all__ = ["MAX_LINE_BYTES", "StdioProcess", "StdioTransport", "kill_every_server", "parse_message"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A message longer than this ends the connection: the peer is flooding, not answering."""
STDERR_LINES = 20
STDERR_LINE_CHARS = 500
TERM_GRACE = 2.0
HURRIED_GRACE = 0.3
"""At most this long an interrupted host (Ctrl-C) waits for a server to exit once its input is closed."""
_FIRST_VISIBLE = re.compile(rb"[^ \t\r\n\f\v]")
"""The first character that is not white space (found without copying the line)."""
_SEARCHED_LINE_BYTES = 65536
"""Up to this size a line is searched for the keys that tell a response from the other kinds of message;
a longer one costs more to search than to check as a response first."""
_POLL = 0.02
_IDLE_POLL = 0.5


@dataclass
class StdioProcess:
    """What the host can observe of a running stdio server."""

    pid: int | None = None
    returncode: int | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    exited: anyio.Event = field(default_factory=anyio.Event)
    problem: str | None = None
    """Why the transport ended on its own side (a flood, unparseable output), if it did."""
    redact: Callable[[str], str] = str
    """Applied to each stderr line before it is cut, so no part of a secret is kept."""

    def describe_exit(self) -> str:
        """`exited with code N` plus the last lines of stderr, for the status page."""
        code = self.returncode
        if code is None:
            text = "the server closed its output"
        elif code < 0:
            text = f"killed by signal {signal.Signals(-code).name}" if -code in signal.valid_signals() else ""
            text = text or f"exited with code {code}"
        else:
            text = f"exited with code {code}"
        if self.problem:
            text = f"{self.problem}; {text}"
        if self.stderr_tail:
            text += "; stderr: " + " | ".join(self.stderr_tail)
        return text

    def describe_stop(self) -> str:
        """Why the server stopped: what it did wrong, if it did (`problem`), then how it exited."""
        return self.describe_exit() if self.problem else f"the server process {self.describe_exit()}"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user; it still exists
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_RUNNING: weakref.WeakSet[StdioTransport] = weakref.WeakSet()
"""The transports whose server runs, in this process."""


def kill_every_server() -> None:
    """Kill every stdio server this process runs, with all its processes, at once (a second Ctrl-C: no more waits).

    Each transport's stop then ends as soon as its processes are gone.
    """
    for transport in list(_RUNNING):
        transport.kill()


class StdioTransport(contextlib.AbstractAsyncContextManager[TransportStreams]):
    """Starts a server process in its own process group and exchanges messages over its pipes.

    Leaving the context stops the server (CONN-5): stdin closed, `shutdown_timeout`
    to exit, SIGTERM to the whole group, 2 s, SIGKILL; grandchildren that outlive the
    server itself get the same treatment. On Linux the reaper starts the server under a
    keeper, which does the same to every descendant, in the group or not. After `hurry()`
    the two waits are at most 0.3 s and 0.25 s.
    """

    def __init__(
        self,
        command: str,
        args: tuple[str, ...],
        *,
        env: Mapping[str, str],
        cwd: str,
        shutdown_timeout: float,
        process: StdioProcess | None = None,
        reaper: Reaper | None = None,
    ) -> None:
        self._argv = [command, *args]
        self._env = dict(env)
        self._cwd = cwd
        self._shutdown_timeout = shutdown_timeout
        self.process = process or StdioProcess()
        self._reaper = reaper
        self._stack: contextlib.AsyncExitStack | None = None
        self._kept: KeptProcess | None = None
        self._hurried = False
        self.raw: RawCalls | None = None
        """The fast path for tool calls on the live connection, where the loop reads the pipe itself."""

    async def __aenter__(self) -> TransportStreams:
        async with contextlib.AsyncExitStack() as stack:
            streams = await stack.enter_async_context(self._run())
            self._stack = stack.pop_all()
            return streams

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(None, None, None)

    def hurry(self) -> None:
        """Stop sooner, the host being interrupted (Ctrl-C): short waits after closing stdin and after SIGTERM.

        Also shortens a stop already under way.
        """
        self._hurried = True

    def kill(self) -> None:
        """Kill the whole process group at once (a server that ignored cancellation)."""
        if self.process.pid is not None:
            _signal_group(self.process.pid, signal.SIGKILL)
        if self._kept is not None:
            self._kept.kill_tree()  # helpers outside the group too

    async def _open(self) -> anyio.abc.Process:
        self._kept = None
        if self._reaper is not None and self._reaper.spawns:
            kept = await self._reaper.spawn(self._argv, env=self._env, cwd=self._cwd)
            if kept is not None:
                self._kept = kept
                return kept
        # Without a keeper the process group is all there is to stop.
        proc = await anyio.open_process(
            self._argv,
            env=self._env,
            cwd=self._cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32",
        )
        if self._reaper is not None:
            self._reaper.watch(proc.pid)
        return proc

    @contextlib.asynccontextmanager
    async def _run(self) -> AsyncIterator[TransportStreams]:
        proc = await self._open()
        _RUNNING.add(self)
        try:
            async with self._talk(proc) as streams:
                yield streams
        finally:
            _RUNNING.discard(self)
            if self._kept is not None:
                self._kept.close()

    @contextlib.asynccontextmanager
    async def _talk(self, proc: anyio.abc.Process) -> AsyncIterator[TransportStreams]:
        self.process.pid = proc.pid
        assert proc.stdin is not None
        assert proc.stdout is not None
        read_stream: PipeMessages | MemoryObjectReceiveStream[SessionMessage | Exception]
        if isinstance(proc.stdout, FdReceiveStream) and on_asyncio():
            # The common case (a kept process on Linux): the event loop reads the pipe itself.
            self.raw = raw = RawCalls()

            def take_line(line: bytes) -> SessionMessage | Exception | Callable[[], None] | None:
                delivery = raw.take(line)
                return delivery if delivery is not None else _read_line(line)

            read_stream = PipeMessages(
                proc.stdout.fileno(), take_line=take_line, max_line_bytes=MAX_LINE_BYTES, on_end=raw.end
            )
            read_writer = None
            write_stream = MessageWriter(proc.stdin.send, read_stream.aclose, on_sent=raw.sent)
            raw.write = write_stream.send_line
        else:
            read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            write_stream = MessageWriter(proc.stdin.send, read_writer.aclose)

        async def read_stdout(read_writer: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
            assert proc.stdout is not None
            buffer = bytearray()
            async with read_writer:
                try:
                    async for chunk in proc.stdout:
                        start = len(buffer)
                        buffer += chunk
                        end = buffer.find(b"\n", start)
                        while end != -1:
                            line = bytes(buffer[:end])
                            del buffer[: end + 1]
                            if (message := _read_line(line)) is not None:
                                await read_writer.send(message)
                            end = buffer.find(b"\n")
                        if len(buffer) > MAX_LINE_BYTES:
                            # The session ends the connection, naming the problem, as for a broken message.
                            await read_writer.send(MessageTooLong(MAX_LINE_BYTES))
                            return
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                    return

        async def read_stderr() -> None:
            assert proc.stderr is not None
            pending = b""
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in proc.stderr:
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()[-4096:]
                    for raw in lines:
                        self._keep_stderr(raw)
            if pending:
                self._keep_stderr(pending)

        async def watch_exit() -> None:
            # The exit code is set as soon as the child is reaped, even while a grandchild
            # still holds the pipes (which `proc.wait()` would wait for); a slow poll is enough.
            await self._wait_exit(proc, math.inf, poll=_IDLE_POLL)

        async with anyio.create_task_group() as tg:
            if read_writer is not None:
                tg.start_soon(read_stdout, read_writer)
            tg.start_soon(read_stderr)
            tg.start_soon(watch_exit)
            try:
                yield read_stream, write_stream
            finally:
                # Shielded: an interrupted host must still stop its servers (CONN-5).
                with anyio.CancelScope(shield=True):
                    await self._stop(proc)
                    if self._reaper is not None and self._kept is None:
                        self._reaper.forget(proc.pid)
                    await write_stream.aclose()
                    await read_stream.aclose()
                tg.cancel_scope.cancel()

    def _keep_stderr(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip()
        if text:
            # Cleaned (terminal sequences, controls, invisible characters), then redacted, then cut:
            # a split secret is whole again before it is looked for, and no part of one is kept.
            self.process.stderr_tail.append(clean_and_redact(text, self.process.redact)[:STDERR_LINE_CHARS])

    async def _stop(self, proc: anyio.abc.Process) -> None:
        if proc.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await proc.stdin.aclose()
        await self._until(lambda: proc.returncode is not None, self._shutdown_timeout, HURRIED_GRACE)
        await self._wait_exit(proc, 0)  # its exit code, if it exited
        if self._kept is not None and self._hurried:
            self._kept.hurry()
        if self._kept is not None and await self._kept.stop(TERM_GRACE + KILL_LIMIT + 1):
            # The keeper saw every descendant go, in the group or not (and the group's
            # id may already be someone else's).
            await self._wait_exit(proc, 0)
            return
        pgid = proc.pid
        if sys.platform == "win32":  # pragma: no cover
            if proc.returncode is None:
                proc.kill()
            return
        # The server may be gone while its children (npx's node, a spawned helper) live on.
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGTERM)
            # Grandchildren are not ours to wait on: the only signal is the group emptying.
            await self._until(lambda: not _group_alive(pgid), TERM_GRACE, HURRIED_TERM_GRACE)
            _signal_group(pgid, signal.SIGKILL)
        await self._wait_exit(proc, TERM_GRACE)

    async def _until(self, done: Callable[[], bool], limit_secs: float, hurried_secs: float) -> None:
        """Poll until `done()`, for up to `limit_secs`, or `hurried_secs` once `hurry()` was asked, even meanwhile."""
        started = anyio.current_time()
        while not done():  # no event exists for another process's exit
            limit = min(limit_secs, hurried_secs) if self._hurried else limit_secs
            if anyio.current_time() - started >= limit:
                return
            await anyio.sleep(_POLL)

    async def _wait_exit(self, proc: anyio.abc.Process, limit_secs: float, *, poll: float = _POLL) -> None:
        """Wait up to `limit_secs` for the server itself to exit, and record its exit code.

        Polls the exit code instead of `proc.wait()`, which also waits for the pipes to
        close (a grandchild holding them would look like a hung server), and works even
        after the transport's tasks were cancelled.
        """
        with anyio.move_on_after(limit_secs):
            while proc.returncode is None:  # noqa: ASYNC110  # no event exists for another process's exit
                await anyio.sleep(poll)
        if proc.returncode is not None and not self.process.exited.is_set():
            self.process.returncode = proc.returncode
            self.process.exited.set()


def _read_line(line: bytes) -> SessionMessage | Exception | None:
    """A message, a malformed one (the session then ends the connection, naming it), or None for stray output.

    A line that does not even start like JSON is something the server printed by mistake (a
    banner, a log line): skipped, as other MCP clients do. One that does but cannot be read
    (invalid, nested too deeply, not JSON-RPC) is a broken message.
    """
    first = _FIRST_VISIBLE.search(line)
    if first is None:
        return None
    message = parse_message(line)
    if isinstance(message, Exception) and first.group() not in (b"{", b"["):
        return None
    return message


def parse_message(line: bytes) -> SessionMessage | Exception:
    """One JSON-RPC message, or why it is not one.

    A response, the message a client reads most, is checked as one instead of against each kind
    in turn (half the cost): a short line when it names neither a method nor an error (so it can
    be nothing else), a long one (a large result) whenever it reads as one. A long line that
    carries a result and also a method or an error, which no kind of message does, is then taken
    for the response it also is.
    """
    try:
        if len(line) > _SEARCHED_LINE_BYTES or (b'"method"' not in line and b'"error"' not in line):
            with contextlib.suppress(ValueError):
                return SessionMessage(types.JSONRPCResponse.model_validate_json(line, by_name=False))
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc
