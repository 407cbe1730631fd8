"""A throwaway PostgreSQL cluster for the storage tests: Debian's binaries, a temp folder, a free 127.0.0.1 port.

`initdb` refuses to run as root; as root the cluster belongs to an unprivileged system user
(`postgres`, which Debian's package creates, or `mcpyard-pg`, which scripts/check creates).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NotAvailable", "TemporaryCluster", "find_binaries"]

START_SECONDS = 60
"""Bound on initdb, start and stop each: a slow shared machine, never a hang."""

USERS = ("postgres", "mcpyard-pg")
SUPERUSER = "mcpyard"


class NotAvailable(RuntimeError):
    """PostgreSQL cannot be run here; the message says what to do."""


def find_binaries() -> Path:
    """The folder holding `initdb`, `pg_ctl` and `postgres`: `MCPYARD_TEST_POSTGRES_BIN`, else Debian's newest."""
    override = os.environ.get("MCPYARD_TEST_POSTGRES_BIN")
    candidates = [override] if override else []
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name or 0))
    candidates += reversed(debian)
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    for candidate in candidates:
        folder = Path(candidate)
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise NotAvailable(
        "PostgreSQL's server binaries were not found (looked in /usr/lib/postgresql/*/bin and on PATH): "
        "run `bash scripts/check`, which installs Debian's postgresql package"
    )


def _service_user() -> str | None:
    """Who runs the cluster: None for the current user, else an unprivileged account when we are root."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("MCPYARD_TEST_POSTGRES_USER")
    for name in [wanted] if wanted else USERS:
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise NotAvailable(
        "as root, PostgreSQL needs an unprivileged user to run as (postgres or mcpyard-pg): "
        "run `bash scripts/check`, which creates one"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class TemporaryCluster:
    """A running cluster; `url(database)` gives a `postgresql+psycopg://` URL with its password."""

    folder: Path
    port: int
    password: str
    binaries: Path
    user: str | None

    durable: bool = False
    """Whether a commit survives a crash of the server (fsync and synchronous commits on): for the tests that
    crash it; the others run faster without."""

    @classmethod
    def start(cls, *, durable: bool = False) -> TemporaryCluster:
        """Create and start a cluster; raises NotAvailable with what to do when it cannot be."""
        binaries = find_binaries()
        user = _service_user()
        # As root the folder sits directly in /tmp, where the unprivileged user can reach it.
        folder = Path(tempfile.mkdtemp(prefix="mcpyard-pg-", dir="/tmp" if user else None))
        cluster = cls(folder, 0, secrets.token_urlsafe(24), binaries, user, durable)
        try:
            cluster.create()
            cluster.run_server()
        except BaseException:
            cluster.remove()
            raise
        return cluster

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def run_tool(self, *argv: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.binaries / argv[0]), *argv[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=START_SECONDS, check=False, env=_plain_env()
        )

    def create(self) -> None:
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n", encoding="utf-8")
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
            os.chown(password_file, entry.pw_uid, entry.pw_gid)
        done = self.run_tool(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--pwfile",
            str(password_file),
            "--auth=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        password_file.unlink()
        if done.returncode != 0:
            raise NotAvailable(f"initdb failed: {(done.stderr or done.stdout).strip()[-800:]}")

    OPTIONS = (
        "-c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200 -c shared_buffers=32MB"
    )
    FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    """Fast and throwaway, unless `durable`: nothing of it must survive a crash of the machine."""

    @property
    def options(self) -> str:
        return self.OPTIONS if self.durable else f"{self.OPTIONS} {self.FAST}"

    def start_on_port(self) -> subprocess.CompletedProcess[str]:
        """`pg_ctl start` on `self.port`, waiting until it takes connections."""
        log, wait = str(self.folder / "log"), str(START_SECONDS)
        options = f"{self.options} -p {self.port}"
        return self.run_tool("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", wait, "-o", options, "start")

    def run_server(self) -> None:
        for _ in range(5):  # another process may take the probed port first
            self.port = _free_port()
            done = self.start_on_port()
            if done.returncode == 0:
                return
        log = (self.folder / "log").read_text(encoding="utf-8", errors="replace")[-800:]
        raise NotAvailable(f"PostgreSQL did not start: {done.stderr.strip()[-400:]} {log}")

    def restart(self) -> None:
        """Stop the server at once (every connection dropped, as in a crash) and start it again on the same port."""
        self.stop()
        done = self.start_on_port()
        if done.returncode != 0:
            raise NotAvailable(f"PostgreSQL did not start again: {done.stderr.strip()[-400:]}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def dsn(self, database: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user={SUPERUSER} password={self.password} dbname={database}"

    def stop(self) -> None:
        if self.data.is_dir() and (self.data / "postmaster.pid").exists():
            self.run_tool("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", str(START_SECONDS), "stop")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _plain_env() -> dict[str, str]:
    # The cluster's tools must not pick up a developer's PG* settings.
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"LC_ALL": "C"}
