"""The README's and the docs' commands and examples are real: the README's examples are the files tests run, the
docs' blocks compile, run, parse and load, their `mcpyard` commands exist, and their links lead somewhere
(API-1; STYLE 12)."""

from __future__ import annotations

import ast
import builtins
import itertools
import json
import re
import shlex
import subprocess
import symtable
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcpyard.config import load_config
from mcpyard.config._read import SETTING_KEYS
from mcpyard.errors import ConfigError
from tests._cli import run_mcpyard
from tests.conftest import Home

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _run_as_user(home: Home, program: Path) -> subprocess.CompletedProcess[str]:
    """A Python program run as a user runs it: in their workspace, with their environment, for at most a minute."""
    return subprocess.run(
        [sys.executable, str(program)],
        cwd=home.workspace,
        env=home.environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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
    done = _run_as_user(home, ROOT / "examples" / "quickstart.py")
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


# The docs: every fenced block is checked as what it says it is, every relative link leads somewhere.

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
SHELLS = frozenset({"", "sh", "bash", "shell", "console"})
LANGUAGES = SHELLS | {"python", "toml", "json", "text"}
MCPYARD = frozenset({"mcpyard", ".venv/bin/mcpyard"})
_FENCE = re.compile(r"```\s*(?P<language>[\w+-]*)\s*")
_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a page: where it opens, its language (empty when untyped) and its text."""

    path: Path
    line: int
    language: str
    text: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, in order."""
    blocks: list[Block] = []
    opened: tuple[int, str] | None = None
    lines: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if opened is None:
            if fence := _FENCE.fullmatch(line):
                opened, lines = (number, fence["language"]), []
        elif line.strip() == "```":
            blocks.append(Block(path, opened[0], opened[1], "\n".join(lines) + "\n"))
            opened = None
        else:
            lines.append(line)
    assert opened is None, f"{path.relative_to(ROOT)}:{opened[0]}: the block is never closed"
    return blocks


def outside_blocks(path: Path) -> list[str]:
    """A page's lines, each line of a fenced block (its fences too) left empty."""
    kept: list[str] = []
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if inside or _FENCE.fullmatch(line):
            inside = not (inside and line.strip() == "```")
            kept.append("")
        else:
            kept.append(line)
    return kept


def prose(path: Path) -> str:
    """A page without its fenced blocks and inline code: the text whose links a reader follows."""
    return re.sub(r"`[^`]*`", "", "\n".join(outside_blocks(path)))


def docs_blocks(*languages: str) -> list[Block]:
    return [block for path in DOCS for block in fenced_blocks(path) if block.language in languages]


def is_program(source: str, name: str) -> bool:
    """Whether a block is a whole program: every name it reads is its own or a builtin (a fragment reads others)."""
    try:
        top = symtable.symtable(source, name, "exec")
    except SyntaxError:  # top-level `await`: a fragment of a program
        return False
    read: set[str] = set()

    def walk(scope: symtable.SymbolTable) -> None:
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (scope is top or symbol.is_global()):
                read.add(symbol.get_name())
        for child in scope.get_children():
            walk(child)

    walk(top)
    own = {symbol.get_name() for symbol in top.get_symbols() if symbol.is_assigned() or symbol.is_imported()}
    return not read - own - set(dir(builtins))


def shell_commands(block: Block) -> list[list[str]]:
    """The words of each simple command a shell block runs (a console block's lines that start with `$ `)."""
    lines = block.text.splitlines()
    if block.language == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    script = "\n".join(lines).replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        words: list[str] = []
        for word in [*lexer, ";"]:
            if word and set(word) <= set(";&|"):
                if words:
                    commands.append(words)
                words = []
            else:
                words.append(word)
    return commands


def mcpyard_arguments(command: Sequence[str]) -> list[str] | None:
    """What a command line passes to `mcpyard` (after any `VAR=value`), or None when it runs something else."""
    words = list(command)
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        words.pop(0)
    if words and words[0] in MCPYARD:
        return words[1:]
    if len(words) >= 3 and Path(words[0]).name.startswith("python") and words[1:3] == ["-m", "mcpyard"]:
        return words[3:]
    return None


def headings(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    anchors: set[str] = set()
    for line in outside_blocks(path):
        if heading := re.fullmatch(r"#{1,6}\s+(.*?)\s*#*\s*", line):
            slug = re.sub(r"[^\w\- ]", "", heading[1].lower()).replace(" ", "-")
            anchor, n = slug, 0
            while anchor in anchors:
                n += 1
                anchor = f"{slug}-{n}"
            anchors.add(anchor)
    return anchors


def test_every_block_in_the_docs_is_in_a_language_the_tests_check() -> None:
    for path in DOCS:
        for block in fenced_blocks(path):
            assert block.language in LANGUAGES, f"{block}: a ```{block.language} block, which no test checks"


def test_the_docs_python_compiles() -> None:
    blocks = docs_blocks("python")
    assert blocks
    for block in blocks:
        try:
            compile(block.text, str(block), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as exc:
            pytest.fail(f"{block}: {exc}")


def test_the_docs_whole_python_programs_run(home: Home) -> None:
    """A block that defines every name it reads runs as a user would run it, to its end and with no traceback."""
    programs = [block for block in docs_blocks("python") if is_program(block.text, str(block))]
    assert programs
    for number, block in enumerate(programs):
        program = home.root / f"program_{number}.py"
        program.write_text(block.text, encoding="utf-8")
        done = _run_as_user(home, program)
        assert done.returncode == 0, f"{block}: {done.stderr}"
        assert "Traceback" not in done.stderr, f"{block}: {done.stderr}"


def test_the_docs_toml_parses_and_their_configurations_load(tmp_path: Path) -> None:
    """A configuration example loads through `load_config` with no warning, each server ready to start."""
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    blocks = docs_blocks("toml")
    assert blocks
    configurations = 0
    for number, block in enumerate(blocks):
        try:
            document = tomllib.loads(block.text)
        except tomllib.TOMLDecodeError as exc:
            pytest.fail(f"{block}: {exc}")
        if not document or not set(document) <= {"mcp", *SETTING_KEYS}:
            continue
        configurations += 1
        config = tmp_path / f"config_{number}.toml"
        config.write_text(block.text, encoding="utf-8")
        # Each secret the example reads is saved; a private key, which any secret may be.
        secrets = dict.fromkeys(re.findall(r"\$\{secret:(\w+)\}", block.text), pem.decode())
        try:
            loaded = load_config(
                workspace=tmp_path,
                config_file=config,
                user_config_file=tmp_path / "no-user-config.toml",
                trusted=False,
                environ={},
                secrets=secrets,
            )
        except ConfigError as exc:
            pytest.fail(f"{block}: {exc}")
        assert not loaded.warnings, f"{block}: {loaded.warnings}"
        for server in loaded.servers:
            assert server.state == "ok", f"{block}: server {server.id}: {server.problem}"
    assert configurations


def test_the_docs_json_parses() -> None:
    for block in docs_blocks("json"):
        try:
            json.loads(block.text)
        except json.JSONDecodeError as exc:
            pytest.fail(f"{block}: {exc}")


def test_every_mcpyard_command_in_the_docs_exists_with_its_options(home: Home) -> None:
    """Each `mcpyard …` line of a shell block names commands that exist, and options its command's help lists."""
    checked = 0
    for block in docs_blocks(*SHELLS):
        for command in shell_commands(block):
            arguments = mcpyard_arguments(command)
            if arguments is None:
                continue
            checked += 1
            words = list(itertools.takewhile(lambda word: not word.startswith("-"), arguments))
            shown = " ".join(["mcpyard", *arguments])
            ran = run_mcpyard(home, *words, "--help")
            assert ran.returncode == 0, f"{block}: `{shown}`: {ran.stderr.strip()}"
            usage = re.search(r"Usage: mcpyard((?: [a-z][\w-]*)*)", ran.stdout)
            assert usage is not None, f"{block}: `{shown}`: no usage line in\n{ran.stdout}"
            path = usage[1].split()
            assert words[: len(path)] == path, f"{block}: `{shown}` is not `mcpyard {' '.join(path)} …`"
            for option in (word.split("=")[0] for word in arguments if word.startswith("--")):
                listed = re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", ran.stdout)
                assert listed, f"{block}: `{shown}`: `mcpyard {' '.join(path)}` has no option {option}"
    assert checked >= 10


def test_every_relative_link_of_the_readme_and_docs_leads_to_a_file() -> None:
    """A link to another page, a picture or a file exists, and an anchor in it is one of that page's headings."""
    for page in PAGES:
        for link in _LINK.finditer(prose(page)):
            target = link["target"]
            if _SCHEME.match(target):
                continue
            file, _, anchor = target.partition("#")
            found = (page.parent / file).resolve() if file else page
            where = f"{page.relative_to(ROOT)}: {target}"
            assert found.exists(), f"{where}: no such file"
            if anchor and found.suffix == ".md":
                assert anchor in headings(found), f"{where}: no heading with that anchor"
