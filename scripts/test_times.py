"""Where a test run's time went, from pytest's JUnit XML: seconds per folder, then the slowest tests.

Usage: `python scripts/test_times.py RUN.xml [BEFORE.xml] [--slowest N]`; make the XML with
`bash scripts/check --junitxml=RUN.xml`. With BEFORE, each folder shows both runs side by side.
A test's time is its setup, call and teardown together, as the XML records it; with parallel
workers the folders add up to more than the run's wall time.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> dict[str, float]:
    """Seconds by test id (`tests/org/test_x.py::test_y[case]`)."""
    times: dict[str, float] = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        times[f"{module}.py::{case.get('name', '')}"] = float(case.get("time", "0"))
    return times


def folder(test_id: str) -> str:
    parts = test_id.split("::", 1)[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0] + " (top level)"


def by_folder(times: dict[str, float]) -> dict[str, tuple[int, float]]:
    totals: dict[str, list[float]] = defaultdict(list)
    for test_id, seconds in times.items():
        totals[folder(test_id)].append(seconds)
    return {name: (len(values), sum(values)) for name, values in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("before", type=Path, nargs="?")
    parser.add_argument("--slowest", type=int, default=30)
    args = parser.parse_args(argv)
    now = read(args.run)
    then = read(args.before) if args.before else {}
    folders, old = by_folder(now), by_folder(then)
    width = max(len(name) for name in {*folders, *old})
    header = f"{'folder':<{width}}  tests  seconds"
    print(header + ("   before: tests  seconds" if then else ""))
    for name in sorted({*folders, *old}, key=lambda n: -folders.get(n, (0, 0.0))[1]):
        count, seconds = folders.get(name, (0, 0.0))
        line = f"{name:<{width}}  {count:5d}  {seconds:7.1f}"
        if then:
            before_count, before_seconds = old.get(name, (0, 0.0))
            line += f"           {before_count:5d}  {before_seconds:7.1f}"
        print(line)
    print(f"{'all':<{width}}  {len(now):5d}  {sum(now.values()):7.1f}", end="")
    print(f"           {len(then):5d}  {sum(then.values()):7.1f}" if then else "")
    print(f"\nthe {args.slowest} slowest tests:")
    for test_id, seconds in sorted(now.items(), key=lambda item: -item[1])[: args.slowest]:
        print(f"{seconds:7.2f}  {test_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
