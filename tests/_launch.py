"""Start a fixture server through the worker's fork server (`tests/_forkserver.py`), or by itself when it cannot.

Run as `python -S tests/_launch.py SOCKET PYTHON SCRIPT [ARGS…]` (the command `fixture_server` gives): the standard
library only, so it starts in milliseconds. It hands its standard input, output and error, its working folder and
its environment to the fork server, whose forked copy runs SCRIPT; then it stands for that server: the signals it
gets are passed on, and it ends as the server ended (its exit code, or killed by the same signal). Killed outright,
it takes the server with it (the fork server watches the connection). Without a fork server to talk to, or when
the fork server says this environment needs an interpreter of its own, it becomes `PYTHON SCRIPT ARGS…` (exec).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys

PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
STARTED, EXEC = 0, -1000
"""The fork server's first answer: the server runs; or start it yourself."""


def received(conn: socket.socket, size: int) -> bytes:
    """`size` bytes from `conn`, or b"" when it ends first."""
    data = b""
    while len(data) < size:
        part = conn.recv(size - len(data))
        if not part:
            return b""
        data += part
    return data


def main() -> None:
    path, python, *command = sys.argv[1:]
    # A signal ignored here (as by a runner that starts its jobs with Ctrl-C ignored) is ignored by the server too.
    ignored = [int(number) for number in PASSED_ON if signal.getsignal(number) == signal.SIG_IGN]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"argv": command, "cwd": os.getcwd(), "env": dict(os.environ), "ignored": ignored}
        data = json.dumps(request).encode()
        socket.send_fds(conn, [b"!"], [0, 1, 2])
        conn.sendall(struct.pack("!I", len(data)) + data)
        answer = received(conn, 4)
    except OSError:
        answer = b""
    if not answer or struct.unpack("!i", answer)[0] == EXEC:
        conn.close()
        os.execv(python, [python, *command])
    # The server holds the pipes now: this process lets go of them, so that their ends are the server's alone.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for number in PASSED_ON:
        if number not in ignored:
            signal.signal(number, lambda number, frame: conn.send(bytes([number])))
    status = received(conn, 4)
    code = struct.unpack("!i", status)[0] if status else 1
    if code < 0:  # killed by a signal: so is this process
        with contextlib.suppress(OSError, ValueError):  # SIGKILL takes no handler: it has the default already
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


if __name__ == "__main__":
    main()
