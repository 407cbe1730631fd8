"""The gateway's stdio front: standard input and output read and written on the event loop.

The SDK's `stdio_server()` sends every line read and every write to a worker thread, and
writes through a relay task; with pipes on both sides (how MCP clients start a stdio server)
this front reads and writes them on the event loop instead, each answer written by the task
that sends it, which roughly halves the gateway's own time per call. Messages are parsed and
serialized by the SDK's models, as on mcpyard's client side (`connect/_stdio.py`).

Like the SDK, it takes the wire off fds 0 and 1 while it serves (fd 0 reads the null device,
fd 1 goes to stderr), so nothing else in the process can read the client's messages or write
into the stream, and puts them back at the end. Standard streams that are not pipes or sockets
(a terminal, a file) are read in daemon threads, a chunk at a time, and written at once: a read
still waiting on a terminal never holds up the exit (the SDK's worker threads kept a gateway
stopped with Ctrl-C alive until Enter was pressed). Windows goes through the SDK's own
`stdio_server()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import select
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from mcpyard._daemon_read import read_in_daemon_thread
from mcpyard.connect import MessageWriter, parse_message
from mcpyard.gateway._fast_stdio import FastCalls
from mcpyard.pipeline import sendable_problem

__all__ = ["MAX_LINE_BYTES", "client_message", "stdio_streams"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A client message longer than this ends the connection."""
CHUNK_BYTES = 65536
"""What one read of a terminal or a file takes at most."""
CLOSE_SECS = 5.0
"""How long what is still to be written may take to reach a client at the end."""


async def _read_lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # over the limit: the client is flooding, not talking
            sys.stderr.write(f"mcpyard: error: a client message was over {MAX_LINE_BYTES} bytes; closing\n")
            return
        if not line:
            return
        if line.strip():
            yield line


def client_message(line: bytes) -> SessionMessage | Exception:
    """One client message, as the SDK parses it; or a tool call whose arguments only Python's JSON reader reads.

    JSON text may hold a lone surrogate (`"\\ud800"`) or NaN; the SDK's parser refuses such a line, so the
    client would never hear about its call. A `tools/call` whose arguments alone hold them is read, and the
    pipeline refuses it with an error result the client can match to its request (CALL-1); any other such
    line stays refused, since what it carries would be sent on (a prompt's arguments, an answer).
    """
    parsed = parse_message(line)
    if not isinstance(parsed, Exception) or b'"tools/call"' not in line:
        return parsed
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return parsed
    if not isinstance(value, dict) or value.get("method") != "tools/call" or not isinstance(value.get("params"), dict):
        return parsed
    rest = {**value, "params": {k: v for k, v in value["params"].items() if k != "arguments"}}
    if sendable_problem(rest) is not None:
        return parsed
    try:
        return SessionMessage(types.JSONRPCRequest.model_validate(value, by_name=False))
    except ValueError:
        return parsed


@contextlib.asynccontextmanager
async def _session_streams(
    lines: AsyncIterator[bytes], write: Callable[[bytes], Awaitable[None]], fast: FastCalls | None
) -> AsyncIterator[Any]:
    """Messages parsed and serialized by the SDK's models, as on mcpyard's client side (`connect/_stdio.py`);
    tool calls `fast` takes are answered by it."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def read() -> None:
        async with read_writer:
            async for line in lines:
                if fast is None or not fast.take(line, write):
                    await read_writer.send(client_message(line))
            if fast is not None:
                await fast.end()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        try:
            yield read_stream, MessageWriter(write, read_writer.aclose)
        finally:
            tg.cancel_scope.cancel()


class _Written(asyncio.streams.FlowControlMixin):
    """The write end's protocol: flow control (for `drain`), and a future that is done once the pipe is closed."""

    def __init__(self) -> None:
        super().__init__()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.closed.done():
            self.closed.set_result(None)


def _pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def stdio_streams(fast: FastCalls | None = None) -> AsyncIterator[Any]:
    """The `(read_stream, write_stream)` of an MCP session on this process's standard input and output; the tool
    calls `fast` takes do not reach them."""
    if sys.platform == "win32":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as streams:
            yield streams
        return
    saved: list[tuple[int, int]] = []
    """(standard fd, its wire kept aside): put back at the end."""
    try:
        for fd in (0, 1):
            saved.append((fd, fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)))
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        wire_in, wire_out = saved[0][1], saved[1][1]
        if _pipe_or_socket(wire_in) and _pipe_or_socket(wire_out):
            async with _pipe_streams(wire_in, wire_out, fast) as streams:
                yield streams
        else:
            async with _session_streams(_lines_read_aside(wire_in), _writer_at_once(wire_out), fast) as streams:
                yield streams
    finally:
        for fd, wire in saved:
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)
                os.dup2(wire, fd)
            os.close(wire)


@contextlib.asynccontextmanager
async def _pipe_streams(wire_in: int, wire_out: int, fast: FastCalls | None) -> AsyncIterator[Any]:
    """Pipes or sockets (how MCP clients start a stdio server): read and written by the event loop."""
    loop = asyncio.get_running_loop()
    read_transport: asyncio.BaseTransport | None = None
    writer: asyncio.StreamWriter | None = None
    written: _Written | None = None
    try:
        # Each transport owns a copy of its own (uvloop closes what it is given, whatever `closefd` says).
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(wire_in), "rb", 0)
        )
        write_transport, written = await loop.connect_write_pipe(_Written, os.fdopen(os.dup(wire_out), "wb", 0))
        # `flush` (drain) returns only once every byte is with the pipe, not at a high-water mark.
        write_transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(write_transport, written, None, loop)
        pipe_writer = writer

        async def write(data: bytes) -> None:
            pipe_writer.write(data)
            await pipe_writer.drain()

        async with _session_streams(_read_lines(reader), write, fast) as streams:
            yield streams
    finally:
        if writer is not None and written is not None:
            writer.close()  # once what is buffered is written
            with anyio.move_on_after(CLOSE_SECS, shield=True):
                await written.closed
            if not written.closed.done():  # a client that does not read: what is left is dropped
                writer.transport.abort()
        if read_transport is not None:
            read_transport.close()


async def _lines_read_aside(wire: int) -> AsyncIterator[bytes]:
    """The lines of a terminal or a file, each read in a daemon thread: one still waiting when the gateway stops
    (Ctrl-C on a terminal) never holds up its exit."""
    fd = os.dup(wire)  # its own: left open while a read of it may still be waiting (that read ends with the process)
    reading = False
    buffer = bytearray()
    try:
        while True:
            end = buffer.find(b"\n")
            if (end if end != -1 else len(buffer)) > MAX_LINE_BYTES:
                sys.stderr.write(f"mcpyard: error: a client message was over {MAX_LINE_BYTES} bytes; closing\n")
                return
            if end == -1:
                reading = True
                chunk = await read_in_daemon_thread(_read_chunk, fd, abandon_on_cancel=True)
                reading = False
                if not chunk:
                    if buffer.strip():
                        yield bytes(buffer)
                    return
                buffer += chunk
                continue
            line = bytes(buffer[: end + 1])
            del buffer[: end + 1]
            if line.strip():
                yield line
    finally:
        if not reading:
            os.close(fd)


def _read_chunk(fd: int) -> bytes:
    """What `fd` has, waiting for it if need be (an error reads as the end)."""
    while True:
        try:
            return os.read(fd, CHUNK_BYTES)
        except BlockingIOError:  # a terminal another program left non-blocking
            select.select([fd], [], [])
        except OSError:
            return b""


def _writer_at_once(fd: int) -> Callable[[bytes], Awaitable[None]]:
    """Writes to a terminal or a file, each message whole (a lock keeps concurrent answers apart)."""
    lock = anyio.Lock(fast_acquire=True)

    async def write(data: bytes) -> None:
        async with lock:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    await anyio.wait_writable(fd)

    return write
