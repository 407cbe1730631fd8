"""The program the reaper process runs: it starts stdio servers under keepers that stop every descendant (CONN-5).

Run as `python -I -S _reaper_program.py FD`, in a session of its own. It imports only
a few modules of the standard library: it starts before the first server and must be
ready at once. FD is its end of a Unix socket to the host, carrying requests of a 4-byte
length and a `marshal`led dict (host and reaper are the same interpreter):

- `{"op": "spawn", "argv", "env", "cwd"}` with four descriptors attached (the keeper's
  socket, the server's stdin, stdout and stderr): fork a keeper for one server;
- `{"op": "watch" | "forget", "pgid"}`: a process group the host started itself, to stop
  should the host die first (where there are no keepers).

A keeper is a child subreaper (Linux): every process its server starts, even one in a
session of its own or a double-forked daemon, stays its descendant, and when orphaned
becomes its child. It tells the host `pid N` (or `error ERRNO STEP`, STEP being `cwd` or
`exec`), then `exit CODE` when the server exits. When the host shuts its socket for
writing, closes it, or dies, the keeper sends SIGTERM to every descendant, waits up to 2 s
(0.25 s after the host said `hurry`) for them to go, SIGKILLs whatever is left, and exits;
the host reads the end of its socket as "nothing is left". `kill` from the host SIGKILLs
every descendant at once. The reaper is a subreaper too: a killed keeper's orphans are its.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import signal
import socket
import struct
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` and `collections.abc` would double the time to start
    from collections.abc import Callable, Iterable
    from typing import Any, NoReturn

__all__ = ["HEADER", "HURRIED_TERM_GRACE", "KILL_LIMIT", "TERM_GRACE", "encode_request", "main"]

HEADER = struct.Struct("!I")
"""The length of a request's body, sent with the request's descriptors attached."""
TERM_GRACE = 2.0
HURRIED_TERM_GRACE = 0.25  # once the host said `hurry` (it was interrupted: Ctrl-C)
KILL_LIMIT = 5.0
"""How long SIGKILL is repeated while descendants remain (each round may orphan new ones)."""
_MAX_FDS = 4
_MAX_REQUEST = 64 * 1024 * 1024
_POLL = 0.02
_PR_SET_CHILD_SUBREAPER = 36


def encode_request(request: dict[str, Any]) -> tuple[bytes, bytes]:
    """The header and body of one request."""
    body = marshal.dumps(request)
    return HEADER.pack(len(body)), body


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children instead of init's (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


# ----------------------------------------------------------------- the process tree


def process_tree() -> dict[int, list[int]]:
    """The children of every live process, from each one's parent in /proc."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rpartition(b")")[2].split()
        except OSError:
            continue
        # A zombie has nothing left to signal, and no children: they went to a subreaper.
        if len(fields) >= 2 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(children: dict[int, list[int]], roots: Iterable[int]) -> list[int]:
    """The roots and every process below them."""
    found: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def live_descendants(root: int) -> list[int]:
    """Every live process below `root`."""
    children = process_tree()
    return descendants(children, children.get(root, ()))


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone already, or it changed user: nothing more to do
            os.kill(pid, sig)


def reap() -> list[tuple[int, int]]:
    """Collect every child that exited: (pid, exit code as `subprocess` reports it)."""
    reaped: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append((pid, os.waitstatus_to_exitcode(status)))


def has_children() -> bool:
    """Whether any child remains (exited ones must be reaped first); no child means no descendant."""
    try:
        if hasattr(os, "waitid"):
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        else:  # pragma: no cover - macOS: only the reaper's own keepers-less loop gets here
            os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


class Wakeup:
    """A pipe that SIGCHLD (and SIGTERM) write to, so that `select` wakes when a child exits."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        os.set_blocking(self.read, False)
        os.set_blocking(self.write, False)
        self.terminated = False
        signal.set_wakeup_fd(self.write, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._terminate)

    def _terminate(self, *_: object) -> None:
        self.terminated = True

    def wait(self, others: list[Any], timeout: float | None) -> list[Any]:
        ready, _, _ = select.select([self.read, *others], [], [], timeout)
        if self.read in ready:
            with contextlib.suppress(OSError):  # drained
                while os.read(self.read, 4096):
                    pass
        return [item for item in ready if item != self.read]

    def close(self) -> None:
        signal.set_wakeup_fd(-1)
        _close_all((self.read, self.write))


def stop_descendants(
    wakeup: Wakeup,
    on_reaped: Callable[[int, int], None] | None = None,
    group: Callable[[], int | None] = lambda: None,
    term_grace: float = TERM_GRACE,
) -> None:
    """SIGTERM every descendant, wait up to `term_grace` for them to go, then SIGKILL until none is left.

    `group` names the server's process group while the server is not reaped (its id cannot be
    anyone else's then), signalled too: that still works where /proc cannot be read.
    """
    me = os.getpid()

    def settled() -> bool:
        for pid, code in reap():
            if on_reaped is not None:
                on_reaped(pid, code)
        return not has_children()

    def send(sig: int) -> None:
        if (pgid := group()) is not None:
            with contextlib.suppress(OSError):
                os.killpg(pgid, sig)
        signal_all(live_descendants(me), sig)

    if settled():
        return
    send(signal.SIGTERM)
    deadline = time.monotonic() + term_grace
    while not settled() and time.monotonic() < deadline:
        # Only children wake us; a grandchild's exit is seen on the next round.
        wakeup.wait([], _POLL)
    deadline = time.monotonic() + KILL_LIMIT
    while not settled() and time.monotonic() < deadline:
        send(signal.SIGKILL)
        wakeup.wait([], _POLL)


# ----------------------------------------------------------------- a keeper


def _tell(channel: socket.socket, line: str) -> None:
    with contextlib.suppress(OSError):  # the host is gone: the end of its socket tells us too
        channel.sendall(f"{line}\n".encode())


def start_server(request: dict[str, Any], fds: list[int]) -> tuple[int, str]:
    """Fork and exec the server as `subprocess` would (own session, PATH from its env); (pid, "") or (errno, step)."""
    argv, env, cwd = list(request["argv"]), dict(request["env"]), str(request["cwd"])
    errors_r, errors_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs or exits
        step = "cwd"
        try:
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            for entry in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
                if int(entry) > 2 and int(entry) != errors_w:
                    with contextlib.suppress(OSError):
                        os.close(int(entry))
            os.chdir(cwd)
            # As `subprocess` does: Python ignores these, a server expects the defaults.
            for name in ("SIGPIPE", "SIGXFSZ"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            os.setsid()
            step = "exec"
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(errors_w, f"{exc.errno or 0} {step}".encode())
        except BaseException:
            os.write(errors_w, f"0 {step}".encode())
        os._exit(127)
    os.close(errors_w)
    with os.fdopen(errors_r, "rb") as errors:
        failure = errors.read()  # empty: the exec closed the pipe
    if not failure:
        return pid, ""
    os.waitpid(pid, 0)
    code, _, step = failure.decode().partition(" ")
    return int(code), step


def keeper(channel: socket.socket, request: dict[str, Any], fds: list[int]) -> NoReturn:
    """The forked keeper of one server: start it, report its pid and exit code, stop its descendants."""
    become_subreaper()
    try:
        server, failed_step = start_server(request, fds)
    except (KeyError, TypeError, ValueError, OSError):
        server, failed_step = 0, "exec"
    if failed_step:
        _tell(channel, f"error {server} {failed_step}")  # `server` is the errno here
        os._exit(0)
    _close_all(fds)
    _tell(channel, f"pid {server}")
    wakeup = Wakeup()
    exited, grace = False, TERM_GRACE

    def on_reaped(pid: int, code: int) -> None:
        nonlocal exited
        if pid == server and not exited:
            exited = True
            _tell(channel, f"exit {code}")

    while not wakeup.terminated:
        for pid, code in reap():
            on_reaped(pid, code)
        ready = wakeup.wait([channel], None)
        if channel in ready:
            try:
                data = channel.recv(4096)
            except OSError:
                data = b""
            if not data:
                break  # the host is done with this server, or gone
            grace = HURRIED_TERM_GRACE if b"hurry" in data else grace
            if b"kill" in data:
                if not exited:
                    with contextlib.suppress(OSError):
                        os.killpg(server, signal.SIGKILL)
                signal_all(live_descendants(os.getpid()), signal.SIGKILL)
    stop_descendants(wakeup, on_reaped, lambda: None if exited else server, grace)
    os._exit(0)


# ----------------------------------------------------------------- the reaper


def _read_exactly(channel: socket.socket, size: int, start: bytes = b"") -> bytes | None:
    data = bytearray(start)
    while len(data) < size:
        more = channel.recv(min(size - len(data), 1 << 20))
        if not more:
            return None
        data += more
    return bytes(data)


def _receive_request(channel: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """One request and its descriptors; None when the host closed the socket (or broke the protocol)."""
    # Close-on-exec: no keeper but the one a request is for may hold its descriptors.
    first, fds, _, _ = socket.recv_fds(channel, HEADER.size, _MAX_FDS, getattr(socket, "MSG_CMSG_CLOEXEC", 0))
    header = _read_exactly(channel, HEADER.size, first) if first else None
    (size,) = HEADER.unpack(header) if header is not None else (-1,)
    body = _read_exactly(channel, size) if 0 <= size <= _MAX_REQUEST else None
    try:
        request = marshal.loads(body) if body is not None else None
    except (EOFError, ValueError, TypeError):
        request = None
    if not isinstance(request, dict):
        _close_all(fds)
        return None
    return request, fds


def _close_all(fds: Iterable[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):  # closed already
            os.close(fd)


def _stop_groups(groups: set[int]) -> None:
    """The groups the host started itself and did not stop: SIGTERM, 2 s, SIGKILL."""

    def send(sig: int) -> None:
        for group in groups:
            with contextlib.suppress(OSError):  # that group is gone
                os.killpg(group, sig)

    if groups:
        send(signal.SIGTERM)
        time.sleep(TERM_GRACE)
        send(signal.SIGKILL)


def main(argv: list[str]) -> None:
    """Serve the host's requests until its socket closes, then stop whatever it left behind."""
    channel = socket.socket(fileno=int(argv[1]))
    channel.setblocking(True)
    become_subreaper()
    wakeup = Wakeup()
    keepers: set[int] = set()
    groups: set[int] = set()
    while not wakeup.terminated:
        ready = wakeup.wait([channel], None)
        reaped = {pid for pid, _ in reap()}
        if reaped & keepers:
            keepers -= reaped
            # A keeper was killed: the processes it kept are now ours, and no one else's.
            children = process_tree()
            orphans = [pid for pid in children.get(os.getpid(), ()) if pid not in keepers]
            signal_all(descendants(children, orphans), signal.SIGKILL)
        if channel not in ready:
            continue
        try:
            received = _receive_request(channel)
        except OSError:
            received = None
        if received is None:
            break
        request, fds = received
        op = request.get("op")
        if op == "spawn" and len(fds) == _MAX_FDS:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the keeper
                keeper_channel = socket.socket(fileno=fds[0])
                keeper_channel.setblocking(True)
                channel.close()
                wakeup.close()
                keeper(keeper_channel, request, fds[1:])
            keepers.add(pid)
        elif op in ("watch", "forget") and isinstance(request.get("pgid"), int):
            (groups.add if op == "watch" else groups.discard)(request["pgid"])
        _close_all(fds)
    _stop_groups(groups)
    if wakeup.terminated:
        signal_all(keepers, signal.SIGTERM)  # each stops its own server's processes
    # Keepers see the host go as we do and stop their servers; then nothing may be left.
    deadline = time.monotonic() + TERM_GRACE + KILL_LIMIT + 1
    while keepers and time.monotonic() < deadline:
        keepers -= {pid for pid, _ in reap()}
        if keepers:
            wakeup.wait([], _POLL * 5)
    stop_descendants(wakeup)


if __name__ == "__main__":
    main(sys.argv)
