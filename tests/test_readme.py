"""The README's commands and examples are real: its examples are the files tests run (API-1; STYLE 12)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import Home

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_starts_with_the_two_commands() -> None:
    block = README.split("```")[1]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["bash scripts/demo", "bash scripts/check"]
    assert (ROOT / "scripts" / "demo").stat().st_mode & 0o111
    assert (ROOT / "scripts" / "check").stat().st_mode & 0o111
    assert "bash scripts/check" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_examples_are_the_example_files() -> None:
    for name in ("quickstart.py", "config.toml"):
        assert (ROOT / "examples" / name).read_text(encoding="utf-8") in README


def test_the_library_example_runs_as_shipped(home: Home) -> None:
    """As a user runs it: no variable set for it, a `python3` on PATH that may not have mcpyard (API-1)."""
    assert "MCPYARD_PYTHON" not in home.environ
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        cwd=home.workspace,
        env=home.environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "notes__add_note - Create a note." in done.stdout
    assert done.stdout.strip().endswith("Added note 'hello'.")


def test_the_readmes_screenshots_are_ones_the_browser_tests_write() -> None:
    shown = re.findall(r"!\[[^\]]+\]\(docs/screenshots/([\w-]+)\.png\)", README)
    assert len(shown) >= 2
    written = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "tests" / "org" / "web").glob("test_*.py"))
    for name in shown:
        assert f'"{name}")' in written, f"no browser test writes docs/screenshots/{name}.png"
        assert (ROOT / "docs" / "screenshots" / f"{name}.png").is_file()
