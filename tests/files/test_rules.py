"""FILE-1: which names may be sent: protected folders and credential files, case-folded, at any depth."""

from __future__ import annotations

import hashlib
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpyard.files import CREDENTIAL_PATTERNS, PROTECTED_FOLDERS, FileRefused, refused_component

from ._support import CONTENT, Arrangement, Places, assert_explained

SPEC_CREDENTIAL_PATTERNS = (
    ".env*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials*",
    "*.p12",
    "*.pfx",
    "mcp-auth.json",
)
"""The credential names FILE-1 lists (the secrets store aside)."""

CREDENTIAL_NAMES = (
    ".env",
    ".env.local",
    "key.pem",
    "server.KEY",
    "id_rsa",
    "id_rsa.pub",
    "id_ed25519",
    "id_ed25519.pub",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "cert.p12",
    "cert.pfx",
    "mcp-auth.json",
    ".ENV",
    ".Env.Production",
    "SERVER.PEM",
    "ID_RSA",
    "Id_Ed25519",
    ".NetRC",
    ".NPMRC",
    ".PyPiRc",
    "Credentials.JSON",
    "CERT.P12",
    "Cert.PFX",
    "MCP-Auth.json",
)
PROTECTED_NAMES = (".git", ".GIT", ".Git", ".mcpyard", ".MCPYARD", ".McpYard")
NEAR_MISSES = (
    "notes.txt",
    ".gitignore",
    ".github",
    "git",
    ".mcpyard.toml",
    "mcpyard",
    "environment.txt",
    "my.env",
    "dotenv",
    "keys.txt",
    "pem.txt",
    "key.pem.txt",
    "id_rs",
    "rsa_id",
    "credential.md",
    "my-credentials.txt",
    "netrc",
    "mcp-auth.yaml",
    "cert.p12.md",
)


def test_file1_the_deny_lists_hold_every_name_of_the_spec() -> None:
    """FILE-1: `.git` and `.mcpyard` folders, and every credential pattern the spec names."""
    assert set(PROTECTED_FOLDERS) == {".git", ".mcpyard"}
    assert set(SPEC_CREDENTIAL_PATTERNS) <= set(CREDENTIAL_PATTERNS)


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
@pytest.mark.parametrize("folder", [(), ("src", "deep"), (".hidden",)], ids=["top", "deep", "hidden-folder"])
def test_file1_a_credential_name_is_refused_at_any_depth_in_any_case(name: str, folder: tuple[str, ...]) -> None:
    """FILE-1: the credential deny list applies to every component, case-folded."""
    why = refused_component((*folder, name))
    assert why is not None
    assert "credential" in why
    assert name in why


@pytest.mark.parametrize("name", PROTECTED_NAMES)
@pytest.mark.parametrize(
    ("before", "after"),
    [((), ("config",)), (("sub",), ("HEAD",)), (("a", "b"), ("objects", "ab", "cd")), ((), ())],
    ids=["top", "nested", "deep", "the-folder-itself"],
)
def test_file1_anything_under_a_protected_folder_is_refused(
    name: str, before: tuple[str, ...], after: tuple[str, ...]
) -> None:
    """FILE-1: `.git` and `.mcpyard` anywhere in the path, case-folded."""
    why = refused_component((*before, name, *after))
    assert why is not None
    assert f"inside a {name} folder" in why


@pytest.mark.parametrize("name", NEAR_MISSES)
def test_file1_names_that_only_resemble_a_refused_one_pass(name: str) -> None:
    """FILE-1: the patterns are matched whole; a name that merely contains `env`, `git` or `key` is fine."""
    assert refused_component(("docs", name)) is None


def test_file1_an_empty_path_has_no_refused_component() -> None:
    assert refused_component(()) is None


_ASCII_COMPONENT = st.text(alphabet=string.ascii_letters + string.digits + "._-~ ", min_size=1, max_size=16)
_PLAIN_COMPONENT = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ -]{0,15}", fullmatch=True).filter(
    lambda part: not part.casefold().startswith(("credentials", "id_rsa", "id_ed25519"))
)


@st.composite
def _any_case(draw: st.DrawFn) -> str:
    """A refused name with each letter upper- or lower-cased at random."""
    name = draw(st.sampled_from(CREDENTIAL_NAMES + PROTECTED_NAMES))
    upper = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return "".join(char.upper() if up else char.lower() for char, up in zip(name, upper, strict=True))


@given(
    before=st.lists(_PLAIN_COMPONENT, max_size=4),
    name=_any_case(),
    after=st.lists(_PLAIN_COMPONENT, max_size=3),
)
def test_file1_refused_names_stay_refused_in_any_case_and_position(
    before: list[str], name: str, after: list[str]
) -> None:
    """FILE-1: letter case and surrounding folders never rescue a refused name."""
    assert refused_component((*before, name, *after)) is not None


@given(st.lists(_PLAIN_COMPONENT, max_size=6))
def test_file1_names_without_a_dot_or_a_credential_prefix_are_never_refused(parts: list[str]) -> None:
    """FILE-1: every refused pattern needs a dot, or starts with `credentials`, `id_rsa` or `id_ed25519`."""
    assert refused_component(parts) is None


@given(st.lists(_ASCII_COMPONENT, max_size=5), st.lists(_ASCII_COMPONENT, max_size=5))
def test_file1_a_path_is_refused_exactly_when_one_of_its_parts_is(first: list[str], second: list[str]) -> None:
    """FILE-1: the verdict is per component, and letter case never changes it."""
    whole = refused_component((*first, *second))
    assert (whole is None) == (refused_component(first) is None and refused_component(second) is None)
    assert (refused_component([part.swapcase() for part in first]) is None) == (refused_component(first) is None)


@pytest.mark.parametrize("name", [*CREDENTIAL_NAMES, "credentials/plain.txt"])
@pytest.mark.parametrize("folder", ["", "src/deep/", "{ws}/", "{grant}/", "{grant}/nested/"])
def test_file1_credential_files_on_disk_are_refused_with_the_reason(places: Places, name: str, folder: str) -> None:
    """FILE-1: real credential files, in the workspace or a grant, relative or absolute, are never read."""
    raw = folder + name
    places.arrange(Arrangement(files=(raw,)))
    refusal = places.refusal(raw)
    assert_explained(refusal, code="file_refused", raw=places.expand(raw), why="looks like a credential file")


@pytest.mark.parametrize(
    "raw",
    [
        ".git/config",
        "sub/.git/HEAD",
        ".GIT/config",
        ".Git/objects/ab/cdef",
        "{ws}/.git/config",
        ".mcpyard/state.json",
        "sub/.mcpyard/trust.json",
        ".MCPYARD/state.json",
        "{grant}/.git/config",
        "{grant}/repo/.mcpyard/state.json",
    ],
)
def test_file1_files_under_git_or_mcpyard_on_disk_are_refused_with_the_reason(places: Places, raw: str) -> None:
    """FILE-1: anything under `.git` or `.mcpyard`, at any depth and in any case."""
    places.arrange(Arrangement(files=(raw,)))
    refusal = places.refusal(raw)
    assert_explained(refusal, code="file_refused", raw=places.expand(raw), why="folder, which is never sent")


@pytest.mark.parametrize("name", NEAR_MISSES)
def test_file1_files_that_only_resemble_a_refused_name_are_read(places: Places, name: str) -> None:
    """FILE-1: the deny list does not over-reach: these names are read like any file."""
    raw = f"docs/{name}/inside.txt" if name in {".github", "git", "mcpyard"} else f"docs/{name}"
    places.arrange(Arrangement(files=(raw,), data=CONTENT))
    file = places.read(raw)
    assert file.data == CONTENT
    assert file.sha256 == hashlib.sha256(CONTENT).hexdigest()


def test_file1_a_refusal_carries_its_code_and_message() -> None:
    refusal = FileRefused("file_refused", "'x' is refused: because")
    assert refusal.code == "file_refused"
    assert refusal.message == str(refusal) == "'x' is refused: because"
