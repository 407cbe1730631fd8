"""Where one tool call's time goes inside the gateway's stdio front, measured in place: `python bench/segments.py
OUT -m mcpyard serve ARGS...` runs the gateway with a timestamp taken at each step of a call on the fast path, and
writes to OUT, when it exits, the median of each step over the calls (the first fifth left out as warm-up).

`gateway.py --profile mcpyard-stdio --profiler segments` uses it. Steps timed in a loop of their own, with their code
and data in the caches, read three to five times faster than here, where each call runs after the client and the
server had the CPUs: these medians are what a call costs the gateway, and at c = 1 every step but the waits is on
the path of each call. The waits on the server and on the client's next request are timed too, and the time the
garbage collector took per call.

The steps are found by the names of mcpyard's own functions (`FastCalls.take`, the pipeline's stages, the fast
path of a server's connection); a name that is gone stops the run with the name.
"""

from __future__ import annotations

import atexit
import gc
import runpy
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

_now = time.perf_counter_ns
_marks: list[tuple[str, int]] = []
_gc = {"ns": 0, "collections": 0, "started": 0}
_gc_at: list[int] = []
"""The garbage collector's time so far, as each call began."""
TAKEN = "client line taken"
WARM_UP = 5
"""One call in this many, from the start, is left out."""


def _collecting(phase: str, info: dict[str, Any]) -> None:
    del info
    if phase == "start":
        _gc["started"] = _now()
    else:
        _gc["ns"] += _now() - _gc["started"]
        _gc["collections"] += 1


def _find(owner: Any, name: str) -> Any:
    found = getattr(owner, name, None)
    if found is None:
        raise SystemExit(f"segments: {getattr(owner, '__name__', owner)}.{name} is gone; update bench/segments.py")
    return found


def _timed_sync(owner: Any, name: str, label: str) -> None:
    original = _find(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        if label == TAKEN:
            _gc_at.append(_gc["ns"])
        _marks.append((f"{label} begins", _now()))
        try:
            return original(*args, **kwargs)
        finally:
            _marks.append((f"{label} ends", _now()))

    setattr(owner, name, timed)


def _timed_async(owner: Any, name: str, label: str) -> None:
    original = _find(owner, name)

    async def timed(*args: Any, **kwargs: Any) -> Any:
        _marks.append((f"{label} begins", _now()))
        try:
            return await original(*args, **kwargs)
        finally:
            _marks.append((f"{label} ends", _now()))

    setattr(owner, name, timed)


def _timed_serve(owner: Any) -> None:
    """The call's task, and the write of its answer to the client (the front's writer, passed to it)."""
    original = _find(owner, "_serve")

    async def timed(self: Any, taken: Any, write: Callable[[bytes], Any]) -> None:
        async def written(data: bytes) -> None:
            _marks.append(("client answer written begins", _now()))
            try:
                await write(data)
            finally:
                _marks.append(("client answer written ends", _now()))

        _marks.append(("call task begins", _now()))
        await original(self, taken, written)

    owner._serve = timed


def _stage(stage: Callable[..., Any]) -> Callable[..., Any]:
    name = stage.__name__

    async def timed(*args: Any) -> Any:
        _marks.append((f"stage {name} begins", _now()))
        try:
            return await stage(*args)
        finally:
            _marks.append((f"stage {name} ends", _now()))

    timed.__name__ = name
    return timed


def install() -> None:
    """Marks at each step of a fast-path call: the front's, the pipeline's, the connection's."""
    from mcpyard.connect import _raw, _writer
    from mcpyard.gateway import _fast, _fast_stdio
    from mcpyard.pipeline import _run

    _timed_sync(_fast_stdio.FastCalls, "take", TAKEN)
    _timed_serve(_fast_stdio.FastCalls)
    _timed_async(_fast.FastPath, "_answer", "answer")
    _timed_sync(_fast.FastPath, "_serialize", "answer serialized")
    _run.STAGES = tuple(_stage(stage) for stage in _find(_run, "STAGES"))
    _timed_async(_run, "_finish", "record")
    _timed_async(_raw.RawCalls, "call", "server call")
    _timed_async(_raw.RawCalls, "_read", "result read")
    _timed_sync(_raw.RawCalls, "take", "server line")
    _timed_async(_writer.MessageWriter, "send_line", "line written")
    gc.callbacks.append(_collecting)


def _report() -> str:
    """The median of each step between two marks, in the order of a call; then the waits, and the sums."""
    starts = [index for index, (label, _) in enumerate(_marks) if label == f"{TAKEN} begins"]
    if len(starts) < 2 * WARM_UP:
        return f"segments: only {len(starts)} calls were taken on the fast path; nothing to report\n"
    durations: dict[str, list[int]] = defaultdict(list)
    order: list[str] = []
    calls = 0
    for first, end in zip(starts[len(starts) // WARM_UP :], starts[len(starts) // WARM_UP + 1 :], strict=False):
        calls += 1
        for (before, at), (after, then) in zip(_marks[first:end], _marks[first + 1 : end + 1], strict=True):
            step = f"{before} → {after}"
            if step not in durations:
                order.append(step)
            durations[step].append(then - at)
    waits = ("line written ends → server line begins", f"client answer written ends → {TAKEN} begins")
    lines = [f"{'step':72} {'median µs':>10} {'per call':>9}"]
    on_path = 0.0
    for step in order:
        values = durations[step]
        median = statistics.median(values) / 1000
        share = len(values) / calls
        lines.append(f"{step:72} {median:10.1f} {share:9.2f}")
        if step not in waits and share >= 0.9:
            on_path += median
    lines.append(f"\nsteps on the path of a call (every step but the two waits), summed: {on_path:.0f} µs")
    counted = _gc_at[len(starts) // WARM_UP :]
    collected = (counted[-1] - counted[0]) / 1000 / max(len(counted) - 1, 1)
    lines.append(f"garbage collection: {collected:.1f} µs per call on average")
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "-m":
        raise SystemExit("usage: python bench/segments.py OUT -m mcpyard serve [ARGS...]")
    out, module = sys.argv[1], sys.argv[3]
    sys.argv = [module, *sys.argv[4:]]
    install()
    atexit.register(lambda: open(out, "w", encoding="utf-8").write(_report()))  # noqa: SIM115
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
