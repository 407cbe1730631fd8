"""FILE-1, FILE-2, FILE-3: reading one local file safely (`read_local_file`), on real files in a temporary workspace."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from ._support import CONTENT, MAX_BYTES, SECRET, Arrangement, Places, assert_explained

LINUX_PROC = pytest.mark.skipif(
    sys.platform != "linux" or not Path("/proc/self/pagemap").is_file(), reason="needs Linux /proc"
)
HANG_BOUND = pytest.mark.timeout(10)
"""Tests whose failure mode is a blocking open or an endless read end in a failure instead of hanging."""


@pytest.mark.parametrize(
    ("arrangement", "raw"),
    [
        pytest.param(Arrangement(files=("notes.txt",)), "notes.txt", id="relative"),
        pytest.param(Arrangement(files=("notes.txt",)), "./notes.txt", id="relative-with-dot"),
        pytest.param(Arrangement(files=("notes.txt",)), "{ws}/notes.txt", id="absolute-in-workspace"),
        pytest.param(Arrangement(files=("docs/deep/notes.txt",)), "docs/deep/notes.txt", id="subfolder"),
        pytest.param(Arrangement(files=("docs/deep/notes.txt",)), "{ws}/docs/deep/notes.txt", id="absolute-subfolder"),
        pytest.param(Arrangement(files=("{grant}/report.txt",)), "{grant}/report.txt", id="granted-folder"),
        pytest.param(Arrangement(files=("{grant}/q3/report.txt",)), "{grant}/q3/report.txt", id="granted-subfolder"),
        pytest.param(
            Arrangement(files=("docs/notes.txt",), links=(("link.txt", "docs/notes.txt"),)),
            "link.txt",
            id="symlink-relative-target-in-workspace",
        ),
        pytest.param(
            Arrangement(files=("docs/notes.txt",), links=(("link.txt", "{ws}/docs/notes.txt"),)),
            "link.txt",
            id="symlink-absolute-target-in-workspace",
        ),
        pytest.param(
            Arrangement(files=("docs/notes.txt",), links=(("shortcut", "docs"),)),
            "shortcut/notes.txt",
            id="symlinked-folder-in-workspace",
        ),
        pytest.param(
            Arrangement(files=("docs/notes.txt",), links=(("b.txt", "docs/notes.txt"), ("a.txt", "b.txt"))),
            "a.txt",
            id="symlink-chain-in-workspace",
        ),
        pytest.param(
            Arrangement(files=("{grant}/report.txt",), links=(("report.txt", "{grant}/report.txt"),)),
            "report.txt",
            id="symlink-into-granted-folder",
        ),
    ],
)
def test_file1_paths_in_the_workspace_or_a_grant_are_read_whole(
    places: Places, arrangement: Arrangement, raw: str
) -> None:
    """FILE-1, FILE-3: data, size and SHA-256 of the bytes read; `path` is the path as the model gave it."""
    places.arrange(Arrangement(files=arrangement.files, links=arrangement.links, data=CONTENT))
    file = places.read(raw)
    assert file.path == places.expand(raw)
    assert file.data == CONTENT
    assert file.size == len(CONTENT)
    assert file.sha256 == hashlib.sha256(CONTENT).hexdigest()


@pytest.mark.parametrize(
    ("size", "max_bytes"),
    [
        pytest.param(0, MAX_BYTES, id="empty"),
        pytest.param(0, 0, id="empty-with-zero-limit"),
        pytest.param(1, MAX_BYTES, id="one-byte"),
        pytest.param(MAX_BYTES - 1, MAX_BYTES, id="one-under-limit"),
        pytest.param(MAX_BYTES, MAX_BYTES, id="exactly-limit"),
        pytest.param(3 << 20, 3 << 20, id="several-mib-at-limit"),
    ],
)
def test_file2_regular_files_up_to_max_bytes_are_read_whole(places: Places, size: int, max_bytes: int) -> None:
    """FILE-2: a regular file of at most `max_bytes` is read to its last byte."""
    data = bytes(index % 251 for index in range(size))
    (places.workspace / "blob.bin").write_bytes(data)
    file = places.read("blob.bin", max_bytes=max_bytes)
    assert file.data == data
    assert file.size == size
    assert file.sha256 == hashlib.sha256(data).hexdigest()


def test_file3_the_bytes_read_are_kept_whatever_happens_to_the_file_afterwards(places: Places) -> None:
    """FILE-3: the file is read once; later changes on disk do not reach what was read."""
    path = places.workspace / "notes.txt"
    path.write_bytes(CONTENT)
    file = places.read("notes.txt")
    path.write_bytes(b"changed after the read")
    path.unlink()
    assert file.data == CONTENT
    assert file.sha256 == hashlib.sha256(CONTENT).hexdigest()


@pytest.mark.parametrize(
    ("arrangement", "raw", "why"),
    [
        pytest.param(Arrangement(), "../x", "`..`", id="dotdot-first"),
        pytest.param(Arrangement(files=("{out}/secret.txt",)), "../outside/secret.txt", "`..`", id="dotdot-to-file"),
        pytest.param(Arrangement(files=("b",), folders=("a",)), "a/../b", "`..`", id="dotdot-middle"),
        pytest.param(Arrangement(files=("notes.txt",), folders=("sub",)), "sub/..", "`..`", id="dotdot-last"),
        pytest.param(
            Arrangement(files=("notes.txt",), folders=("sub",)), "{ws}/sub/../notes.txt", "`..`", id="dotdot-absolute"
        ),
        pytest.param(
            Arrangement(files=("{grant}/report.txt",)), "{grant}/../granted/report.txt", "`..`", id="dotdot-in-grant"
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",)), "{out}/secret.txt", "outside the workspace", id="outside-absolute"
        ),
        pytest.param(
            Arrangement(files=("{ws}-evil/secret.txt",)),
            "{ws}-evil/secret.txt",
            "outside the workspace",
            id="sibling-sharing-workspace-prefix",
        ),
        pytest.param(
            Arrangement(files=("{grant}2/secret.txt",)),
            "{grant}2/secret.txt",
            "outside the workspace",
            id="sibling-sharing-grant-prefix",
        ),
        pytest.param(
            Arrangement(files=("data.txt",), hard_links=(("data.txt", "copy.txt"),)),
            "data.txt",
            "2 hard links",
            id="two-hard-links",
        ),
        pytest.param(
            Arrangement(files=("data.txt",), hard_links=(("data.txt", "{out}/copy.txt"),)),
            "data.txt",
            "hard links",
            id="hard-link-from-outside",
        ),
        pytest.param(
            Arrangement(files=("{grant}/data.txt",), hard_links=(("{grant}/data.txt", "{grant}/copy.txt"),)),
            "{grant}/data.txt",
            "hard links",
            id="hard-links-in-grant",
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",), links=(("link.txt", "{out}/secret.txt"),)),
            "link.txt",
            "symlink that leads out",
            id="symlink-out-absolute-target",
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",), links=(("link.txt", "../outside/secret.txt"),)),
            "link.txt",
            "symlink that leads out",
            id="symlink-out-relative-target",
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",), links=(("b.txt", "{out}/secret.txt"), ("a.txt", "b.txt"))),
            "a.txt",
            "outside the workspace",
            id="symlink-chain-out",
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",), links=(("shared", "{out}"),)),
            "shared/secret.txt",
            "outside the workspace",
            id="symlinked-folder-out",
        ),
        pytest.param(
            Arrangement(files=("{out}/secret.txt",), links=(("{grant}/link.txt", "{out}/secret.txt"),)),
            "{grant}/link.txt",
            "outside the workspace",
            id="symlink-in-grant-out",
        ),
        pytest.param(
            Arrangement(files=(".git/config",), links=(("config.txt", ".git/config"),)),
            "config.txt",
            ".git",
            id="symlink-to-git-config",
        ),
        pytest.param(
            Arrangement(files=(".git/config",), links=(("gitdir", ".git"),)),
            "gitdir/config",
            ".git",
            id="symlinked-folder-to-git",
        ),
        pytest.param(
            Arrangement(files=(".mcpyard/state.json",), links=(("state.json", ".mcpyard/state.json"),)),
            "state.json",
            ".mcpyard",
            id="symlink-to-mcpyard",
        ),
        pytest.param(
            Arrangement(files=("keys/id_rsa",), links=(("key.txt", "keys/id_rsa"),)),
            "key.txt",
            "credential",
            id="symlink-to-id-rsa",
        ),
        pytest.param(
            Arrangement(files=("{grant}/.env",), links=(("settings.txt", "{grant}/.env"),)),
            "settings.txt",
            "credential",
            id="symlink-to-env-in-grant",
        ),
        pytest.param(
            Arrangement(files=("data.txt",), hard_links=(("data.txt", "copy.txt"),), links=(("link.txt", "data.txt"),)),
            "link.txt",
            "hard links",
            id="symlink-to-hard-linked-file",
        ),
        pytest.param(
            Arrangement(files=("notes.txt",), links=((".env", "notes.txt"),)),
            ".env",
            "credential",
            id="symlink-named-like-a-credential",
        ),
        pytest.param(
            Arrangement(files=("notes.txt",), links=((".env", "notes.txt"),)),
            "{ws}/.env",
            "credential",
            id="symlink-named-like-a-credential-absolute",
        ),
        pytest.param(
            Arrangement(files=("store/config",), links=((".git", "store"),)),
            ".git/config",
            ".git",
            id="git-folder-that-is-a-symlink",
        ),
    ],
)
def test_file1_paths_breaking_a_rule_are_refused_with_the_reason(
    places: Places, arrangement: Arrangement, raw: str, why: str
) -> None:
    """FILE-1: `..`, outside the workspace and grants, hard links, symlinks leading to a refused place."""
    places.arrange(arrangement)
    assert_explained(places.refusal(raw), code="file_refused", raw=places.expand(raw), why=why)


@pytest.mark.parametrize("raw", ["", "\0", "notes.txt\0", "notes.txt\0.png", "docs/\0/notes.txt"])
def test_file1_an_empty_path_or_one_holding_nul_is_refused(places: Places, raw: str) -> None:
    """FILE-1: nothing is looked up for an empty path or one with a NUL character."""
    places.arrange(Arrangement(files=("notes.txt", "docs/notes.txt")))
    refusal = places.refusal(raw)
    assert refusal.code == "file_refused"
    assert "empty or holds a NUL" in refusal.message
    assert SECRET.decode() not in refusal.message


def test_file1_a_path_holding_nul_is_named_in_its_refusal(places: Places) -> None:
    """FILE-1: like every other refusal, the message names the path the model gave."""
    refusal = places.refusal("notes.txt\0.png")
    assert repr("notes.txt\0.png") in refusal.message


@pytest.mark.parametrize(
    ("arrangement", "raw"),
    [
        pytest.param(Arrangement(files=("notes.txt",), links=((".env", "notes.txt"),)), "/{ws}/.env", id="env-link"),
        pytest.param(
            Arrangement(files=("store/config",), links=((".git", "store"),)), "/{ws}/.git/config", id="git-link"
        ),
    ],
)
def test_file1_credential_and_protected_names_are_refused_however_an_absolute_path_is_spelled(
    places: Places, arrangement: Arrangement, raw: str
) -> None:
    """FILE-1, THREATS "Local files": the deny list applies to every component of the path given."""
    places.arrange(arrangement)
    assert places.expand(raw).startswith("//")
    assert places.refusal(raw).code == "file_refused"


def test_file1_a_relative_path_starting_with_a_tilde_is_in_the_workspace(places: Places) -> None:
    """FILE-1: a path that is not absolute is relative to the workspace, `~` included."""
    places.arrange(Arrangement(files=("~/notes.txt",), data=CONTENT))
    assert places.read("~/notes.txt").data == CONTENT


@pytest.mark.parametrize(
    ("arrangement", "raw", "why"),
    [
        pytest.param(Arrangement(), "missing.txt", "does not exist", id="missing"),
        pytest.param(Arrangement(), "{ws}/missing.txt", "does not exist", id="missing-absolute"),
        pytest.param(Arrangement(), "nope/missing.txt", "does not exist", id="missing-folder"),
        pytest.param(Arrangement(), "{grant}/missing.txt", "does not exist", id="missing-in-grant"),
        pytest.param(Arrangement(links=(("link.txt", "gone.txt"),)), "link.txt", "does not exist", id="dangling-link"),
        pytest.param(Arrangement(folders=("docs",)), "docs", "is a folder", id="folder"),
        pytest.param(Arrangement(folders=("docs",)), "{ws}/docs", "is a folder", id="folder-absolute"),
        pytest.param(Arrangement(), ".", "is a folder", id="workspace-itself"),
        pytest.param(Arrangement(), "{ws}", "is a folder", id="workspace-absolute"),
        pytest.param(Arrangement(), "{grant}", "is a folder", id="grant-itself"),
        pytest.param(Arrangement(folders=("{grant}/q3",)), "{grant}/q3", "is a folder", id="folder-in-grant"),
        pytest.param(
            Arrangement(folders=("docs",), links=(("shortcut", "docs"),)),
            "shortcut",
            "is a folder",
            id="link-to-folder",
        ),
        pytest.param(Arrangement(files=("notes.txt",)), "notes.txt/inner", "not a folder", id="file-as-folder"),
        pytest.param(Arrangement(), "x" * 300, "cannot be opened", id="name-too-long"),
        pytest.param(
            Arrangement(files=("big.bin",), data=SECRET + b"x" * (MAX_BYTES + 1 - len(SECRET))),
            "big.bin",
            f"over this server's limit of {MAX_BYTES}",
            id="one-byte-over",
        ),
        pytest.param(
            Arrangement(files=("{grant}/big.bin",), data=SECRET * 100),
            "{grant}/big.bin",
            "`max_file_bytes`",
            id="over-in-grant",
        ),
    ],
)
def test_file2_what_is_not_a_regular_file_within_max_bytes_is_an_error_with_the_reason(
    places: Places, arrangement: Arrangement, raw: str, why: str
) -> None:
    """FILE-2: a missing file, a folder or a file larger than `max_bytes` is `file_error`."""
    places.arrange(arrangement)
    assert_explained(places.refusal(raw), code="file_error", raw=places.expand(raw), why=why)


@HANG_BOUND
@pytest.mark.parametrize("raw", ["pipe", "{ws}/pipe", "to-pipe", "{grant}/pipe"])
def test_file2_a_fifo_is_an_error_without_waiting_for_a_writer(places: Places, raw: str) -> None:
    """FILE-2: opening a pipe that nobody writes to must not block."""
    os.mkfifo(places.workspace / "pipe")
    os.mkfifo(places.granted / "pipe")
    (places.workspace / "to-pipe").symlink_to("pipe")
    assert_explained(places.refusal(raw), code="file_error", raw=places.expand(raw), why="not a regular file")


@HANG_BOUND
@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero", "/dev/urandom"])
def test_file2_a_device_in_a_granted_folder_is_an_error_and_is_not_read(places: Places, device: str) -> None:
    """FILE-2: a device is refused from `fstat`: `/dev/zero` read up to the limit would say "grew past" instead."""
    if not Path(device).exists():
        pytest.skip(f"{device} is missing here")
    refusal = places.refusal(device, grants=[Path("/dev")])
    assert_explained(refusal, code="file_error", raw=device, why="not a regular file")


@HANG_BOUND
def test_file2_a_huge_sparse_file_is_refused_by_its_size_without_being_read(places: Places) -> None:
    """FILE-2: 64 GiB of holes cannot be read within the time bound, so the refusal comes from `fstat`."""
    with (places.workspace / "huge.bin").open("wb") as huge:
        huge.truncate(64 << 30)
    refusal = places.refusal("huge.bin")
    assert_explained(refusal, code="file_error", raw="huge.bin", why=f"{64 << 30} bytes")


@LINUX_PROC
def test_file2_a_file_whose_stat_size_is_zero_is_read_to_its_end_within_max_bytes(places: Places) -> None:
    """FILE-2: `/proc` files report size 0; the read stops at the limit, and a file of exactly the limit is sent."""
    cmdline = Path("/proc/self/cmdline").read_bytes()
    proc = [Path("/proc")]
    file = places.read("/proc/self/cmdline", max_bytes=len(cmdline), grants=proc)
    assert file.data == cmdline
    assert file.size == len(cmdline)
    refusal = places.refusal("/proc/self/cmdline", max_bytes=len(cmdline) - 1, grants=proc)
    assert_explained(refusal, code="file_error", raw="/proc/self/cmdline", why=f"limit of {len(cmdline) - 1} bytes")


@HANG_BOUND
@LINUX_PROC
def test_file2_an_endless_file_is_read_no_further_than_max_bytes_plus_one(places: Places) -> None:
    """FILE-2: `/proc/self/pagemap` says size 0 and holds hundreds of GiB: only a bounded read ends in time.

    The limit is one under a multiple of 8 because pagemap only answers reads of whole 8-byte entries.
    """
    refusal = places.refusal("/proc/self/pagemap", max_bytes=4095, grants=[Path("/proc")])
    assert_explained(refusal, code="file_error", raw="/proc/self/pagemap", why="grew past the limit of 4095 bytes")


@pytest.mark.parametrize(
    ("grant", "arrangement"),
    [
        pytest.param("{out}/gone", Arrangement(), id="grant-missing"),
        pytest.param("{out}/plain", Arrangement(files=("{out}/plain",)), id="grant-is-a-file"),
    ],
)
def test_file2_a_path_under_an_unusable_grant_is_a_file_error(
    places: Places, grant: str, arrangement: Arrangement
) -> None:
    """FILE-2: a path that cannot be opened is an error the model reads, whatever part of it is missing."""
    places.arrange(arrangement)
    refusal = places.refusal(f"{grant}/notes.txt", grants=[places.path(grant)])
    assert refusal.code == "file_error"
    assert places.expand(f"{grant}/notes.txt") in refusal.message


@LINUX_PROC
def test_file2_a_file_that_fails_to_read_is_a_file_error(places: Places) -> None:
    """FILE-2: `/proc/self/mem` opens as a regular file and fails its first read with EIO."""
    refusal = places.refusal("/proc/self/mem", grants=[Path("/proc")])
    assert_explained(refusal, code="file_error", raw="/proc/self/mem", why="cannot be read")
