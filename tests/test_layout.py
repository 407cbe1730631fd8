"""The code's shape, checked on every run: small modules, and packages that meet only through their public faces
(API-1: `from mcpyard import Host` and each package's `__init__` are the way in; STYLE 1, 2).

Walks `src/mcpyard` with `ast`, so an import inside a function or a `TYPE_CHECKING` block counts
like any other. The rules:

- no module over 400 lines, and `_host.py` (the core every face drives) at most 350;
- every module opens with a docstring that states its job;
- a package's private module (`mcpyard.x._y`) is imported only inside `src/mcpyard/x/`: anywhere
  else the name comes from `mcpyard.x` (its `__init__`, listed in `__all__`);
- the top-level private modules (`mcpyard._host`, `mcpyard._atomic`…) belong to the root package,
  which holds every other: other packages may use them, except for a name `mcpyard` itself
  exports (`Host`, `Status`, `HostView`, `__version__`…), which they import from `mcpyard`;
- no import cycles, between modules or between packages (each subpackage, and each of the root's
  own modules, counts as one): a name imported from a package counts as an import of the module
  its `__init__` takes it from, so `from mcpyard import HostView` depends on `mcpyard._view`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import mcpyard

SRC = Path(__file__).resolve().parents[1] / "src" / "mcpyard"
ROOT = SRC.parent
MAX_LINES = 400
LIMITS = {Path("_host.py"): 350}
"""Tighter limits for some modules, by path under `src/mcpyard`."""


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target as the importing module names it."""

    line: int
    module: str
    """The module imported from (absolute, dotted)."""
    names: tuple[str, ...]
    """The names imported from it (empty for `import a.b.c`)."""


def modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def shown(path: Path, root: Path = ROOT) -> str:
    """A module's path as the repository names it: `src/mcpyard/...`."""
    return str(path.relative_to(root.parent))


def package_of(path: Path, root: Path = ROOT) -> str:
    """The dotted package a module belongs to: its folder (for `__init__.py`, the package it makes)."""
    return ".".join(path.parent.relative_to(root).parts)


def imports(path: Path, root: Path = ROOT) -> Iterator[Import]:
    """Every import in a module, wherever it stands; relative ones made absolute."""
    package = package_of(path, root).split(".")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            yield Import(node.lineno, module, tuple(alias.name for alias in node.names))


def private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def import_problems(path: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with a module's imports of other packages' private modules, each with its fix.

    One problem per private module imported, naming every line that imports it.
    """
    home = package_of(path, root)
    lines: dict[str, list[int]] = {}
    fixes: dict[str, str] = {}
    for found in imports(path, root):
        for target in (found.module, *(f"{found.module}.{name}" for name in found.names)):
            parts = target.split(".")
            if parts[0] != "mcpyard":
                break
            index = next((i for i, part in enumerate(parts) if private(part)), None)
            if index is None:
                continue
            owner = ".".join(parts[:index])
            if owner == "mcpyard":
                exported = sorted(set(found.names) & set(mcpyard.__all__))
                if home != "mcpyard" and target == found.module and exported:
                    key = f"imports {', '.join(exported)} from {found.module}"
                    fixes[key] = f"import {'it' if len(exported) == 1 else 'them'} from mcpyard, the public name"
                    lines.setdefault(key, []).append(found.line)
            elif home != owner and not home.startswith(f"{owner}."):
                key = f"imports {'.'.join(parts[: index + 1])}, private to {owner}"
                fixes[key] = (
                    f"import the name from {owner} instead (add it to src/{Path(*owner.split('.'))}/__init__.py "
                    "and its __all__ if it is not there yet, and to the test that pins that list)"
                )
                lines.setdefault(key, []).append(found.line)
            break
    return [f"{shown(path, root)}:{','.join(map(str, sorted(at)))} {key}: {fixes[key]}" for key, at in lines.items()]


def dotted(path: Path, root: Path = ROOT) -> str:
    """A module's dotted name (a package's `__init__.py`: the package's)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Which of mcpyard's modules each module imports, a name taken from a package counting as its home module."""
    found = {dotted(path, root): path for path in sorted((root / "mcpyard").rglob("*.py"))}
    packages = {dotted(path, root) for path in found.values() if path.name == "__init__.py"}
    # Where each package's `__init__` takes each of its names from.
    taken = {(package, name): item.module for package in packages for item in imports(found[package], root)
             for name in item.names}  # fmt: skip

    def home(module: str, name: str) -> str:
        for _ in range(len(found)):  # a re-export of a re-export… ends, or the walk stops at the package
            if f"{module}.{name}" in found:
                return f"{module}.{name}"
            if (module, name) not in taken:
                break
            module = taken[module, name]
        return module

    graph: dict[str, set[str]] = {}
    for module, path in found.items():
        targets: set[str] = set()
        for item in imports(path, root):
            if item.module.split(".")[0] != "mcpyard":
                continue
            for named in [home(item.module, name) for name in item.names] or [item.module]:
                target = named
                while target not in found and "." in target:  # `import mcpyard.a.b.c` names module a.b
                    target = target.rsplit(".", 1)[0]
                if target in found and target != module:
                    targets.add(target)
        graph[module] = targets
    return graph


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The same imports between packages: each subpackage is one, and each of the root's own modules."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        units.setdefault(unit(module), set()).update(unit(target) for target in targets if unit(target) != unit(module))
    return units


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle for each group of nodes that reach each other, as the path `a, b, …, a`; none in a clean graph."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []
    for start in sorted(graph):  # Tarjan's algorithm, iterative: no recursion limit to meet
        if start in order:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        order[start] = low[start] = len(order)
        stack.append(start)
        while work:
            node, following = work[-1]
            step = next(following, None)
            if step is not None:
                if step not in order:
                    order[step] = low[step] = len(order)
                    stack.append(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in stack:
                    low[node] = min(low[node], order[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = set()
                while True:
                    member = stack.pop()
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return [_path_within(graph, group) for group in groups]


def _path_within(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the group's first node, found breadth first inside the group."""
    first = min(group)
    came: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for step in sorted(graph.get(node, set()) & group):
                if step == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(came[path[-1]])
                    return [first, *reversed(path[:-1]), first] if node != first else [first, first]
                if step not in came:
                    came[step] = node
                    following.append(step)
        frontier = following
    raise AssertionError("a group of nodes that reach each other holds a cycle")


MODULES = modules()
NAMES = [str(path.relative_to(SRC)) for path in MODULES]
GRAPH = import_graph()


@pytest.mark.parametrize("path", MODULES, ids=NAMES)
def test_the_module_is_within_its_line_limit(path: Path) -> None:
    limit = LIMITS.get(path.relative_to(SRC), MAX_LINES)
    count = len(path.read_text(encoding="utf-8").splitlines())
    if count > limit:
        pytest.fail(
            f"{shown(path)}: {count} lines, over {limit}: split it by concept, one concept per module, each "
            "opening with a one-line docstring, the public names re-exported by the package's __init__ as before"
        )


@pytest.mark.parametrize("path", MODULES, ids=NAMES)
def test_the_module_opens_with_a_docstring(path: Path) -> None:
    if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))):
        pytest.fail(f"{shown(path)}: no module docstring: open it with one line saying what the module is for")


@pytest.mark.parametrize("path", MODULES, ids=NAMES)
def test_the_module_imports_no_other_packages_private_module(path: Path) -> None:
    if problems := import_problems(path):
        pytest.fail("\n".join(problems))


def test_no_modules_import_each_other_in_a_cycle() -> None:
    if found := cycles(GRAPH):
        pytest.fail(
            "import cycles (imports inside functions and TYPE_CHECKING blocks count):\n"
            + "\n".join(" -> ".join(cycle) for cycle in found)
            + "\nmove what both need into a module of its own below them"
        )


def test_no_packages_import_each_other_in_a_cycle() -> None:
    """Each package stands on one floor: what it imports never imports it back, by any road."""
    if found := cycles(package_graph(GRAPH)):
        pytest.fail(
            "packages in a cycle:\n"
            + "\n".join(" -> ".join(cycle) for cycle in found)
            + "\nmove the names that point back down into the lower package, or into one of their own"
        )


ORG_FOLDERS = {"api", "demo", "hosts", "keys", "mcp", "oauth", "rules", "services", "store", "turns", "web"}
"""The organization service's folders, each one job: its rules, storage, secrets, hosts, services, turns, API, MCP
endpoint, its OAuth sign-in, pages."""
ORG_ROOT = {"__init__.py", "_app.py", "_bodies.py", "_caller.py", "_words.py"}
"""What stands beside them: the face, the service assembled, and what every folder uses (request text, the caller,
how the service's words quote what others wrote)."""


def test_the_organization_service_stands_in_its_folders() -> None:
    org = SRC / "org"
    folders = {path.name for path in org.iterdir() if path.is_dir() and path.name != "__pycache__"}
    modules = {path.name for path in org.glob("*.py")}
    assert folders == ORG_FOLDERS, "src/mcpyard/org/ holds a folder per job; put a new module in the folder of its job"
    assert modules == ORG_ROOT, "src/mcpyard/org/ holds only its face and shared base; move the module into a folder"


def test_the_organization_services_folders_stand_on_floors() -> None:
    """No two of org's folders import each other, by any road (its root modules count one each)."""

    def unit(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:3]) if parts[:2] == ["mcpyard", "org"] and len(parts) > 2 else module

    folders: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        if module.startswith("mcpyard.org."):
            inside = {unit(t) for t in targets if t.startswith("mcpyard.org.")}
            folders.setdefault(unit(module), set()).update(inside - {unit(module)})
    if found := cycles(folders):
        pytest.fail("org's folders in a cycle:\n" + "\n".join(" -> ".join(cycle) for cycle in found))


def test_the_walk_sees_every_package() -> None:
    """The checks above run over the whole source tree, not a corner of it."""
    packages = {package_of(path) for path in MODULES}
    assert {"mcpyard", "mcpyard.cli", "mcpyard.connect", "mcpyard.org", "mcpyard.pipeline", "mcpyard.agent"} <= packages
    assert len(MODULES) > 150


# The checks themselves, on made-up modules: each rule catches what it should, and only that.


@pytest.mark.parametrize(
    ("where", "code", "caught"),
    [
        ("cli/_x.py", "from mcpyard.org._caller import Caller", "private to mcpyard.org"),
        ("cli/_x.py", "from mcpyard.org.keys._keys import key_source", "private to mcpyard.org.keys"),
        ("org/web/_x.py", "from mcpyard.org.store._models import Tool", "private to mcpyard.org.store"),
        ("cli/_x.py", "def f():\n    from mcpyard.org.store._db import open_database", "private to mcpyard.org"),
        ("cli/_x.py", "import mcpyard.connect._stdio", "private to mcpyard.connect"),
        ("cli/_x.py", "from mcpyard.connect import _stdio", "private to mcpyard.connect"),
        ("org/_x.py", "from mcpyard.org.web._security import SecurityHeaders", "private to mcpyard.org.web"),
        (
            "cli/_x.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mcpyard._host import Host",
            "import it from mcpyard",
        ),
        ("gateway/_x.py", "from mcpyard._version import __version__", "from mcpyard, the public name"),
        ("cli/_x.py", "from .._status import Status", "from mcpyard, the public name"),
        ("cli/_x.py", "from mcpyard.cli._common import run", None),
        ("org/web/_x.py", "from mcpyard.org._caller import Caller", None),
        ("org/web/_x.py", "from mcpyard.org.store import Tool", None),
        ("org/turns/_x.py", "from mcpyard.org.turns._turns import drive_turn", None),
        ("cli/_x.py", "from mcpyard._atomic import write_atomic", None),
        ("_x.py", "from mcpyard._host import Host", None),
        ("__init__.py", "from mcpyard._host import Host", None),
        ("cli/_x.py", "from mcpyard.org import OrgApp", None),
    ],
)
def test_the_import_rule_catches_private_imports_and_only_those(
    tmp_path: Path, where: str, code: str, caught: str | None
) -> None:
    root = tmp_path / "src"
    path = root / "mcpyard" / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'"""A made-up module."""\n{code}\n')
    problems = import_problems(path, root)
    if caught is None:
        assert problems == []
    else:
        assert len(problems) == 1, problems
        assert caught in problems[0]
        assert problems[0].startswith(f"src/mcpyard/{where}:"), "the problem names the file"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"a.py": "from mcpyard import b", "b.py": "import mcpyard.a"}, [["mcpyard.a", "mcpyard.b", "mcpyard.a"]]),
        (
            {"a.py": "def f():\n    from mcpyard.b import x", "b.py": "from typing import TYPE_CHECKING\n"
             "if TYPE_CHECKING:\n    from mcpyard.c import y", "c.py": "from .a import f"},
            [["mcpyard.a", "mcpyard.b", "mcpyard.c", "mcpyard.a"]],
        ),
        (
            {"p/__init__.py": "from mcpyard.p._x import X", "p/_x.py": "from mcpyard.q import Y",
             "q/__init__.py": "from mcpyard.q._y import Y", "q/_y.py": "Y = 1", "q/_z.py": "from mcpyard.p import X"},
            [],
        ),
        (
            {"p/__init__.py": "from mcpyard.p._x import X", "p/_x.py": "from mcpyard.q import Y",
             "q/__init__.py": "from mcpyard.q._y import Y", "q/_y.py": "from mcpyard.p import X"},
            [["mcpyard.p._x", "mcpyard.q._y", "mcpyard.p._x"]],
        ),
        ({"a.py": "import json\nfrom mcpyard import b", "b.py": "X = 1"}, []),
    ],
    ids=["two-modules", "through-a-function-and-type-checking", "packages-without-a-module-cycle", "through-re-exports",
         "none"],
)  # fmt: skip
def test_the_cycle_rule_finds_each_cycle_and_names_its_path(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    root = tmp_path / "src"
    for name, code in {"__init__.py": "", **files}.items():
        path = root / "mcpyard" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""A made-up module."""\n{code}\n')
    assert cycles(import_graph(root)) == expected


def test_the_package_cycle_rule_sees_packages_that_meet_from_both_sides(tmp_path: Path) -> None:
    """`p` and `q` import each other through different modules: no module cycle, a package cycle."""
    root = tmp_path / "src"
    files = {"__init__.py": "", "p/__init__.py": "", "p/_x.py": "from mcpyard.q._y import Y", "p/_w.py": "W = 1",
             "q/__init__.py": "", "q/_y.py": "Y = 1", "q/_z.py": "from mcpyard.p._w import W"}  # fmt: skip
    for name, code in files.items():
        path = root / "mcpyard" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""A made-up module."""\n{code}\n')
    graph = import_graph(root)
    assert cycles(graph) == []
    assert cycles(package_graph(graph)) == [["mcpyard.p", "mcpyard.q", "mcpyard.p"]]
