"""Hearing the other replicas: PostgreSQL `LISTEN` on the organization's channel, reconnecting by itself (ORG-9).

Each payload is handed on as it arrives. A connection that drops (the database restarted, the
network failed) is opened again with a growing pause, and once it is back the caller hears that
announcements may have been missed, so it brings everything in step again. SQLite has no such
channel: its replicas read the change counter before every call instead.
"""

from __future__ import annotations

import logging
from typing import Protocol

import anyio
import anyio.abc
import psycopg
from sqlalchemy.engine import URL

from mcpyard.org.store._db import CONNECT_TIMEOUT_S
from mcpyard.org.store._revision import CHANNEL

__all__ = ["Ears", "listen"]

KEEPALIVE_SECONDS = 15.0
"""How long the listener waits in silence before it checks that its connection is still alive."""
RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
"""Pauses between attempts to connect again (the last one repeats)."""
_log = logging.getLogger("mcpyard.org")


class Ears(Protocol):
    """Who hears the announcements."""

    def heard(self, payload: str) -> None:
        """One announcement: the organization's id, then what (if anything) it is about."""

    def missed(self) -> None:
        """The connection was lost and is back: announcements may have been missed meanwhile."""

    def listening(self, up: bool) -> None:
        """Whether announcements are heard now."""


async def listen(url: URL, ears: Ears, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Hand each announcement to `ears` until cancelled.

    Started (for `task_group.start`) once the first connection listens, or once it failed: a database that is
    away at start delays nothing, the listener keeps trying.
    """
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    started = False
    failures = 0
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(
                conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            ) as connection:
                await connection.execute(f"LISTEN {CHANNEL}")
                ears.listening(True)
                if started:
                    if failures:
                        _log.info("listening to the other replicas again")
                    ears.missed()  # whatever was announced while no one listened
                else:
                    started = True
                    task_status.started()
                failures = 0
                while True:
                    async for note in connection.notifies(timeout=KEEPALIVE_SECONDS):
                        ears.heard(note.payload)
                    await connection.execute("SELECT 1")  # a connection that died quietly says so here
        except (psycopg.Error, OSError) as exc:
            ears.listening(False)
            if failures == 0:  # once per outage; the error names no password (psycopg never puts it there)
                _log.warning("not hearing the other replicas (%s); trying again", type(exc).__name__)
            failures += 1
            if not started:
                started = True
                task_status.started()
            await anyio.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS)) - 1])
