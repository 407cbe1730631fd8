"""The gateway's tasks kept in a file across its restarts (CALL-8).

`mcpyard serve --transport http` keeps each task it gives a client in a private file (mode 0600,
written whole and renamed): whose it is, the tool, the server's task id (tasks extension) and, once
the call ended, how it ended with its result. Started again, the gateway answers `tasks/get` and
`tasks/cancel` for those tasks from the file, and follows each one still running to its end with the
same server task id: the call is not sent again. A gateway that stops leaves its running tasks
running on their servers (a stdio server, stopped with the gateway, forgets its own: such a task then
ends with the server's error). A handshake-era client's task belongs to its HTTP session, which a
restart ends: only new-era clients (whose requests carry no session) find theirs again. A server's
question during a task followed after a restart has no client to go to: it is declined. Ended tasks
are kept `KEPT_SECS`, as in memory.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import mcp_types as types
from mcp.server import ServerRequestContext

from mcpyard._atomic import read_private, write_atomic
from mcpyard.connect import MadeTask, noticing_tasks, resuming_task
from mcpyard.errors import ConfigError
from mcpyard.gateway._context import wire_result
from mcpyard.gateway._tasks import KEPT_SECS, MAX_STATUS_CHARS, MAX_TASKS, FaceTask, task_state

if TYPE_CHECKING:
    from mcpyard import Host

__all__ = ["TaskFile"]

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
LOST: Final = (
    "the gateway restarted while this task ran, and its server's task cannot be followed again (a task of the older "
    "protocol, or its server changed since)"
)
_log = logging.getLogger("mcpyard.gateway")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _kept_owner(owner: Hashable) -> list[str | None] | None:
    """An owner as the file keeps it (a pair of texts), or None when it cannot outlive the process."""
    if isinstance(owner, tuple) and all(part is None or isinstance(part, str) for part in owner):
        return list(owner)
    return None


class TaskFile:
    """`TaskElsewhere` for the gateway: its tasks in `path`, found again after a restart."""

    def __init__(self, path: Path, host: Host, owner_of: Callable[[ServerRequestContext[Any]], Hashable]) -> None:
        self._path, self._host, self._owner_of = path, host, owner_of
        self.warning: str | None = None
        """Why the last run's tasks were not found again (the file could not be used), for the gateway to say."""
        self._entries: dict[str, dict[str, Any]] = self._load()
        self._follows: dict[str, anyio.CancelScope] = {}
        self._made: dict[str, MadeTask] = {}
        self._running: list[FaceTask] = []

    # ----------------------------------------------------------------- the file

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = read_private(self._path, max_bytes=MAX_FILE_BYTES, what="the gateway's task file")
            loaded = json.loads(data) if data is not None else {}
        except (ConfigError, ValueError, RecursionError) as exc:  # never a reason not to serve: said once
            reason = exc.message if isinstance(exc, ConfigError) else f"{self._path} is not JSON"
            self.warning = f"the gateway's tasks of its last run are lost: {reason}; it is written anew"
            return {}
        kept = {key: value for key, value in loaded.items() if _valid(value)} if isinstance(loaded, dict) else {}
        if not isinstance(loaded, dict) or len(kept) < len(loaded):
            self.warning = (
                f"{self._path} holds what is not a task of this version's; those are left out and the file "
                "is written anew"
            )
        return kept

    def _save(self) -> None:
        now = time.time()
        for task_id, entry in list(self._entries.items()):
            if entry["ended_at"] is not None and now - entry["ended_at"] > KEPT_SECS:
                del self._entries[task_id]
        data = json.dumps(self._entries).encode()
        if len(data) > MAX_FILE_BYTES:  # the biggest results of ended tasks go first; the tasks themselves stay
            for entry in sorted(self._entries.values(), key=lambda entry: -len(json.dumps(entry["result"]))):
                if entry["result"] is not None and len(data) > MAX_FILE_BYTES:
                    entry.update(result=None, status="failed", message="its result was too large to keep")
                    data = json.dumps(self._entries).encode()
        try:
            write_atomic(self._path, data, mode=0o600)
        except OSError as exc:  # the tasks still run; only a restart would not find them
            _log.warning("the gateway's task file cannot be written (%s): %s", exc.strerror or exc, self._path)

    # ----------------------------------------------------------------- this run's tasks

    def made(self, task: FaceTask) -> None:
        owner = _kept_owner(task.owner)
        made = task.server_task
        server = self._host.view.server_of(task.tool) or ""
        if owner is None or made is None or len(self._entries) >= MAX_TASKS * 4:
            return
        self._running.append(task)
        self._entries[task.task_id] = {
            "owner": owner,
            "tool": task.tool,
            "server": server,
            "target": self._host.view.task_target(server) or "",
            "server_task": made.task_id if made.era == "extension" else None,
            "status": "working",
            "message": None,
            "result": None,
            "created_at": task.created_at,
            "updated_at": _now(),
            "ended_at": None,
        }
        self._save()

    def ended(self, task: FaceTask) -> None:
        if task in self._running:
            self._running.remove(task)
        entry = self._entries.get(task.task_id)
        if entry is None or (task.server_task is not None and task.server_task.detached):
            return  # not kept, or handed on to the next run: it stays `working` in the file
        state = task.state()
        entry.update(status=state["status"], result=state.get("result"), message=state.get("statusMessage"))
        entry.update(updated_at=_now(), ended_at=time.time())
        self._save()

    def hand_on(self) -> None:
        """The gateway stops: every running task is left running on its server, for the next run to follow."""
        for task in self._running:
            if task.server_task is not None:
                task.server_task.detach()
        for made in self._made.values():
            made.detach()

    # ----------------------------------------------------------------- the last run's tasks

    def resume(self, tg: anyio.abc.TaskGroup) -> int:
        """Follow every task of the last run still running; how many."""
        count = 0
        for task_id, entry in self._entries.items():
            if entry["status"] != "working" or task_id in self._follows:
                continue
            if entry["server_task"] is None or self._host.view.task_target(entry["server"]) != entry["target"]:
                # A task of the older protocol, or a server since pointed elsewhere: its id is not sent anywhere.
                entry.update(status="failed", message=LOST, updated_at=_now(), ended_at=time.time())
                continue
            self._follows[task_id] = anyio.CancelScope()
            tg.start_soon(self._follow, task_id, entry)
            count += 1
        self._save()
        return count

    async def _follow(self, task_id: str, entry: dict[str, Any]) -> None:
        scope = self._follows[task_id]

        async def note(progress: float, total: float | None, message: str | None) -> None:
            del progress, total
            if message:
                entry.update(message=message[:MAX_STATUS_CHARS], updated_at=_now())

        try:
            with (
                scope,
                resuming_task(entry["server_task"]),
                noticing_tasks(lambda made: self._made.__setitem__(task_id, made)),
            ):
                result = await self._host.call(entry["tool"], {}, on_progress=note, conversation=entry["owner"][1])
                dumped = wire_result(result).model_dump(by_alias=True, exclude_none=True, mode="json")
                entry.update(status="completed", result=dumped)
            if scope.cancelled_caught:
                entry.update(status="cancelled", message="cancelled by the client")
            elif (made := self._made.get(task_id)) is not None and made.detached:
                return  # the gateway stops again: the next run follows it
            entry.update(updated_at=_now(), ended_at=time.time())
            self._save()
        except Exception as exc:  # one task's failure is not the gateway's
            entry.update(status="failed", message=f"{LOST} ({type(exc).__name__})", updated_at=_now())
            entry.update(ended_at=time.time())
            self._save()
        finally:
            self._follows.pop(task_id, None)
            self._made.pop(task_id, None)

    def _found(self, ctx: ServerRequestContext[Any], task_id: str) -> dict[str, Any] | None:
        entry = self._entries.get(task_id)
        if entry is None or entry["owner"] != _kept_owner(self._owner_of(ctx)):
            return None
        return entry

    async def state(self, ctx: ServerRequestContext[Any], task_id: str) -> dict[str, Any] | None:
        entry = self._found(ctx, task_id)
        if entry is None:
            return None
        base = {**task_state(task_id, entry["created_at"], entry["updated_at"]), "status": entry["status"]}
        said = {"statusMessage": entry["message"]} if entry["message"] else {}
        if entry["status"] == "completed" and entry["result"] is not None:
            return {**base, "result": entry["result"]}
        if entry["status"] == "failed":
            return {**base, **said, "error": {"code": types.INTERNAL_ERROR, "message": entry["message"] or LOST}}
        return {**base, **said}

    async def given(self, ctx: ServerRequestContext[Any], task_id: str) -> None:
        del ctx, task_id  # read as often as its client likes while it is kept

    async def cancel(self, ctx: ServerRequestContext[Any], task_id: str) -> bool:
        if self._found(ctx, task_id) is None:
            return False
        if (scope := self._follows.get(task_id)) is not None:
            scope.cancel()  # the follow sends `tasks/cancel` to the server on its way out
        return True


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _valid(entry: Any) -> bool:
    """An entry of the file as this version writes it (anything else is left out)."""
    keys = {"owner", "tool", "server", "target", "server_task", "status", "message", "result", "created_at"}
    keys |= {"updated_at", "ended_at"}
    return (
        isinstance(entry, dict)
        and set(entry) == keys
        and isinstance(entry["owner"], list)
        and len(entry["owner"]) == 2
        and all(part is None or isinstance(part, str) for part in entry["owner"])
        and isinstance(entry["tool"], str)
        and isinstance(entry["server"], str)
        and isinstance(entry["target"], str)
        and (entry["server_task"] is None or isinstance(entry["server_task"], str))
        and entry["status"] in ("working", "completed", "cancelled", "failed")
        and (entry["message"] is None or isinstance(entry["message"], str))
        and (entry["result"] is None or isinstance(entry["result"], dict))
        and isinstance(entry["created_at"], str)
        and isinstance(entry["updated_at"], str)
        and (
            entry["ended_at"] is None
            or (isinstance(entry["ended_at"], int | float) and math.isfinite(entry["ended_at"]))
        )
    )
