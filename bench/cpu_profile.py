"""Run a Python module under cProfile timed by the thread's CPU clock, not the wall clock.

`python bench/cpu_profile.py OUT -m MODULE ARGS...` runs `python -m MODULE ARGS...` and writes
cProfile's stats to OUT when it exits (a clean SIGINT shutdown included). The wall clock that
`python -m cProfile` uses counts the time a process is preempted inside a call (a write that
wakes another process on a busy machine) as that call's; the thread's CPU clock counts only
the work done, which is what a per-call cost of the front should show. `gateway.py --profile
SIDE --profiler cprofile-cpu` uses it.
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "-m":
        raise SystemExit("usage: python bench/cpu_profile.py OUT -m MODULE [ARGS...]")
    out, module = sys.argv[1], sys.argv[3]
    sys.argv = [module, *sys.argv[4:]]
    profile = cProfile.Profile(time.thread_time)
    try:
        profile.runcall(runpy.run_module, module, run_name="__main__", alter_sys=True)
    finally:
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
