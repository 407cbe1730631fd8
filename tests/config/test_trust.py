"""What `mcpyard trust` records: a digest per project server per workspace, in a private file (CFG-6, ERR-1)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mcpyard._paths import trust_file
from mcpyard.config import ProjectTrust, TrustStore, entry_digest
from mcpyard.errors import ConfigError

A = entry_digest({"command": "npx", "args": ["-y", "@acme/mcp"]})
B = entry_digest({"url": "https://mcp.acme.test"})
SERVERS = {"a": A, "b": B}


@pytest.fixture
def store(tmp_path: Path) -> TrustStore:
    return TrustStore(trust_file(tmp_path / "data"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def write(store: TrustStore, document: object) -> None:
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(json.dumps(document))
    store.path.chmod(0o600)


def test_a_workspace_is_untrusted_until_trusted_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6: `mcpyard trust` records it; nothing else is trusted by it."""
    assert store.record(workspace) is None
    assert not store.is_trusted(workspace)
    store.trust(workspace, SERVERS)
    assert store.is_trusted(workspace)
    assert store.record(workspace) == ProjectTrust(SERVERS)
    assert store.record(workspace.parent) is None
    assert store.record(workspace.parent / "repo2") is None


def test_trust_records_a_digest_per_server_and_replaces_the_workspaces_record_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path
) -> None:
    """CFG-6: a new store on the same file sees it; trusting again covers exactly the servers given then."""
    other = tmp_path / "other"
    other.mkdir()
    store.trust(workspace, SERVERS)
    store.trust(other, {"b": B})
    store.trust(workspace, {"a": A})
    again = TrustStore(store.path)
    assert again.record(workspace) == ProjectTrust({"a": A}), "b was removed: it goes"
    assert again.record(other) == ProjectTrust({"b": B})


def test_the_trust_file_format_has_a_digest_per_server_per_workspace_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6: version 2: per workspace, per server id, the entry's digest and the digest of each part."""
    store.trust(workspace, SERVERS)
    document = json.loads(store.path.read_text())
    assert document["version"] == 2
    assert list(document["workspaces"]) == [str(workspace.resolve())]
    servers = document["workspaces"][str(workspace.resolve())]["servers"]
    assert servers["a"] == {"digest": A.digest, "parts": dict(A.parts)}
    assert set(servers["a"]["parts"]) == {"command", "args", "env_names", "cwd", "url", "variables"}
    assert all(len(value) == 64 for value in servers["a"]["parts"].values())


def test_trust_is_keyed_by_the_resolved_absolute_path_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CFG-6: a symlink, `..` and a relative path name the same workspace."""
    link = tmp_path / "link"
    link.symlink_to(workspace)
    store.trust(link, SERVERS)
    assert store.is_trusted(workspace)
    assert store.is_trusted(tmp_path / "other" / ".." / "repo")
    monkeypatch.chdir(tmp_path)
    assert store.is_trusted(Path("repo"))


def test_the_trust_file_is_written_atomically_private_and_its_folder_too_cfg_6_err_1(
    store: TrustStore, workspace: Path
) -> None:
    """CFG-6, ERR-1: mode 0600, in a 0700 folder, and no temporary file left beside it."""
    store.trust(workspace, SERVERS)
    store.trust(workspace, {"a": A})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert sorted(os.listdir(store.path.parent)) == ["trust.json"]


def test_an_old_format_file_trusts_no_server_and_says_so_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path
) -> None:
    """CFG-6: version 1 trusted folders, not what they run: read as trust covering nothing (fail closed)."""
    other = tmp_path / "other"
    other.mkdir()
    write(store, {"version": 1, "workspaces": [str(workspace.resolve()), str(other.resolve()), 7]})
    record = store.record(workspace)
    assert record == ProjectTrust({}, legacy=True)
    assert not store.is_trusted(workspace)
    assert record is not None
    assert record.problem("a", A) is not None
    # Trusting one workspace rewrites the file in the new format; the other keeps its old-version mark.
    store.trust(workspace, SERVERS)
    assert store.record(workspace) == ProjectTrust(SERVERS)
    assert store.record(other) == ProjectTrust({}, legacy=True)
    assert json.loads(store.path.read_text())["version"] == 2


@pytest.mark.parametrize(
    "record",
    [
        pytest.param("trusted", id="not-an-object"),
        pytest.param({}, id="no-servers"),
        pytest.param({"servers": ["a"]}, id="servers-a-list"),
        pytest.param({"servers": {"a": "digest"}}, id="entry-a-string"),
        pytest.param({"servers": {"a": {"digest": A.digest}}}, id="no-parts"),
        pytest.param({"servers": {"a": {"digest": A.digest, "parts": {}}}}, id="parts-missing"),
        pytest.param(
            {"servers": {"a": {"digest": A.digest, "parts": {**A.parts, "command": "0" * 64}}}}, id="tampered-part"
        ),
        pytest.param({"servers": {"a": {"digest": "0" * 64, "parts": dict(A.parts)}}}, id="tampered-digest"),
        pytest.param({"servers": {"a": {"digest": A.digest, "parts": {**A.parts, "url": "ZZ"}}}}, id="not-hex"),
        pytest.param(
            {"servers": {"a": {"digest": A.digest, "parts": {**A.parts, "extra": "0" * 64}}}}, id="extra-part"
        ),
        pytest.param({"legacy": "yes"}, id="legacy-not-true"),
    ],
)
def test_a_malformed_workspace_record_trusts_nothing_there_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path, record: object
) -> None:
    """CFG-6, ERR-1: any doubt about a workspace's record means none of it is believed; others still are."""
    good = tmp_path / "good"
    good.mkdir()
    fine = {"servers": {"b": {"digest": B.digest, "parts": dict(B.parts)}}}
    write(store, {"version": 2, "workspaces": {str(workspace.resolve()): record, str(good.resolve()): fine}})
    assert store.record(workspace) is None
    assert store.record(good) == ProjectTrust({"b": B})


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"workspaces": "all"}',
        b"\xff\xfe",
        b'{"workspaces": [1, null]}',
        b'{"version": 2, "workspaces": ["/"]}',
        b'{"version": 3, "workspaces": {}}',
        b"[" * 100_000,
    ],
)
def test_a_corrupt_trust_file_trusts_nothing_and_is_rewritten_cleanly_cfg_6(
    store: TrustStore, workspace: Path, content: bytes
) -> None:
    """CFG-6, ERR-1: no crash; fail closed; `trust` writes a valid file."""
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    store.path.chmod(0o600)
    assert store.record(workspace) is None
    store.trust(workspace, SERVERS)
    assert store.record(workspace) == ProjectTrust(SERVERS)
    assert list(json.loads(store.path.read_text())["workspaces"]) == [str(workspace.resolve())]


def test_a_trust_file_others_can_write_trusts_nothing_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6: anyone who could write it could make a workspace trusted, so it is not believed."""
    store.trust(workspace, SERVERS)
    store.path.chmod(0o622)
    assert store.record(workspace) is None


def test_a_trust_file_that_is_a_symlink_trusts_nothing_cfg_6(
    store: TrustStore, workspace: Path, tmp_path: Path
) -> None:
    """CFG-6: the file is opened without following links."""
    elsewhere = tmp_path / "elsewhere.json"
    fine = {"servers": {"a": {"digest": A.digest, "parts": dict(A.parts)}}}
    elsewhere.write_text(json.dumps({"version": 2, "workspaces": {str(workspace.resolve()): fine}}))
    elsewhere.chmod(0o600)
    store.path.parent.mkdir(parents=True)
    store.path.symlink_to(elsewhere)
    assert store.record(workspace) is None


def test_a_trust_file_that_is_a_fifo_trusts_nothing_without_hanging_cfg_6(store: TrustStore, workspace: Path) -> None:
    """CFG-6, ERR-1: never a hang."""
    store.path.parent.mkdir(parents=True)
    os.mkfifo(store.path, 0o600)
    assert store.record(workspace) is None


def test_trust_that_cannot_be_written_is_a_clear_error_cfg_6_err_1(tmp_path: Path, workspace: Path) -> None:
    """ERR-1: the message says where and what to do instead."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data folder should be")
    store = TrustStore(blocker / "data" / "trust.json")
    with pytest.raises(ConfigError, match=r"cannot record the trusted workspace .* pass --trust") as caught:
        store.trust(workspace, SERVERS)
    assert caught.value.source == store.path


def test_an_entry_with_roots_is_recorded_with_them_and_read_back_trusted_cfg_6(
    store: TrustStore, workspace: Path
) -> None:
    """CFG-6: trust covers an entry's `roots` once it has them (a seventh part), and reads it back as given."""
    rooted = entry_digest({"command": "npx", "args": ["-y", "@acme/fs"], "roots": ["."]})
    store.trust(workspace, {"fs": rooted, "a": A})
    document = json.loads(store.path.read_text())
    assert "roots" in document["workspaces"][str(workspace.resolve())]["servers"]["fs"]["parts"]
    assert TrustStore(store.path).record(workspace) == ProjectTrust({"fs": rooted, "a": A})
