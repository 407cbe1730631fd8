"""Pre-call hooks: the user's own programs that may allow, deny or ask for a call (POL-6)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import anyio

from mcpyard.config import Hook
from mcpyard.policy._decide import HookAnswer

__all__ = ["HOOK_TIMEOUT", "run_hooks"]

HOOK_TIMEOUT = 10.0
_MAX_OUTPUT = 4096


def _matches(hook: Hook, name: str, file_paths: Sequence[str]) -> bool:
    return fnmatchcase(name, hook.match) or any(fnmatchcase(path, hook.match) for path in file_paths)


async def _ask_one(hook: Hook, payload: bytes, cwd: Path, environ: Mapping[str, str]) -> HookAnswer:
    """One hook's answer; no answer within 10 s, a failure or anything unclear counts as `ask`."""
    shell = ["cmd", "/c"] if sys.platform == "win32" else ["/bin/sh", "-c"]
    try:
        with anyio.fail_after(HOOK_TIMEOUT):
            done = await anyio.run_process(
                [*shell, hook.command],
                input=payload,
                cwd=cwd,
                env=dict(environ),
                check=False,
                stderr=subprocess.DEVNULL,
            )
    except (TimeoutError, OSError):
        return "ask"
    words = done.stdout[:_MAX_OUTPUT].decode("utf-8", "replace").split()
    answer = words[0].lower() if words else ""
    return answer if answer in ("allow", "deny") else "ask"  # type: ignore[return-value]


async def run_hooks(
    hooks: Sequence[Hook],
    *,
    name: str,
    file_paths: Sequence[str],
    payload: Mapping[str, Any],
    cwd: Path,
    environ: Mapping[str, str],
) -> HookAnswer | None:
    """The combined answer of every hook whose glob matches the tool name or a file's path.

    `None` when no hook matches. Any `deny` wins; then any `ask`; else `allow`.
    """
    matching = [hook for hook in hooks if _matches(hook, name, file_paths)]
    if not matching:
        return None
    data = json.dumps(payload, ensure_ascii=False).encode()
    answers = [await _ask_one(hook, data, cwd, environ) for hook in matching]
    if "deny" in answers:
        return "deny"
    if "ask" in answers:
        return "ask"
    return "allow"
