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
  exports (`Host`, `Status`, `HostView`, `__version__`…), which they import from `mcpyard`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
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


MODULES = modules()
NAMES = [str(path.relative_to(SRC)) for path in MODULES]


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


def test_the_walk_sees_every_package() -> None:
    """The checks above run over the whole source tree, not a corner of it."""
    packages = {package_of(path) for path in MODULES}
    assert {"mcpyard", "mcpyard.cli", "mcpyard.connect", "mcpyard.org", "mcpyard.pipeline"} <= packages
    assert len(MODULES) > 150


# The checks themselves, on made-up modules: each rule catches what it should, and only that.


@pytest.mark.parametrize(
    ("where", "code", "caught"),
    [
        ("cli/_x.py", "from mcpyard.org._keys import key_source", "private to mcpyard.org"),
        ("cli/_x.py", "def f():\n    from mcpyard.org._db import open_database", "private to mcpyard.org"),
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
        ("org/web/_x.py", "from mcpyard.org._models import Tool", None),
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
