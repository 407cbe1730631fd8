"""Trust covers each project server as it was shown: added or changed ones wait (CFG-6).

Real files: the project file is written, trusted through a real `TrustStore`, changed (as a
`git pull` would), and loaded with what the store recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from mcpyard.config import LoadedConfig, ProjectTrust, TrustStore, read_project

from ._support import RecordingMapping, Setup, by_id, mentioning

ALPHA: dict[str, object] = {"command": "alpha-mcp", "args": ["--root", "${ROOT}"], "env": {"LEVEL": "info"}}
BETA: dict[str, object] = {"url": "https://beta.test/mcp"}
TRUSTED = {"mcpServers": {"alpha": ALPHA, "beta": BETA}}


@pytest.fixture
def store(cfg: Setup) -> TrustStore:
    return TrustStore(cfg.root / "data" / "trust.json")


def trust_now(cfg: Setup, store: TrustStore) -> None:
    """What `mcpyard trust --yes` records: the digests of the project file as it is now."""
    project = read_project(cfg.workspace)
    assert project is not None
    store.trust(cfg.workspace, project.digests())


def load(cfg: Setup, store: TrustStore, environ: Mapping[str, str] | None = None) -> LoadedConfig:
    record = store.record(cfg.workspace)
    assert record is not None
    return cfg.load(trusted=record, environ=environ)


@pytest.fixture
def trusted(cfg: Setup, store: TrustStore) -> Path:
    path = cfg.project(TRUSTED)
    trust_now(cfg, store)
    return path


def states(loaded: LoadedConfig) -> dict[str, tuple[str, str | None]]:
    return {spec.id: (spec.state, spec.problem) for spec in loaded.servers}


def test_cfg6_unchanged_trusted_servers_start_as_before(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    loaded = load(cfg, store, environ={"ROOT": "/src"})
    servers = by_id(loaded)
    assert servers["alpha"].state == "ok"
    assert servers["alpha"].args == ("--root", "/src")
    assert servers["beta"].url == "https://beta.test/mcp"
    assert loaded.warnings == ()


def test_cfg6_a_server_added_after_trust_is_the_only_one_untrusted(
    cfg: Setup, store: TrustStore, trusted: Path
) -> None:
    cfg.project({"mcpServers": {**TRUSTED["mcpServers"], "gamma": {"command": "curl", "args": ["${HOME}"]}}})
    environ = RecordingMapping({"ROOT": "/src", "HOME": "/home/me"})
    loaded = load(cfg, store, environ=environ)
    found = states(loaded)
    assert found["alpha"] == ("ok", None)
    assert found["beta"] == ("ok", None)
    state, problem = found["gamma"]
    assert state == "untrusted"
    assert problem is not None
    assert problem.startswith("added since you trusted it")
    assert "mcpyard trust" in problem
    assert "HOME" not in environ.looked_up, "nothing in an entry trust does not cover is expanded"
    assert by_id(loaded)["gamma"].command is None
    assert len(mentioning(loaded, "1 server in project file", "was not started", "added or changed")) == 1


@pytest.mark.parametrize(
    ("alpha", "named"),
    [
        pytest.param(
            {"command": "sh", "args": ["--root", "${ROOT}"], "env": {"LEVEL": "info"}}, "command", id="command"
        ),
        pytest.param(
            {"command": "alpha-mcp", "args": ["--root", "${ROOT}", "--all"], "env": {"LEVEL": "info"}},
            "args",
            id="args",
        ),
        pytest.param(
            {"command": "alpha-mcp", "args": ["--root", "${ROOT}"], "env": {"NODE_OPTIONS": "x"}},
            "env names",
            id="env-names",
        ),
        pytest.param(
            {"command": "alpha-mcp", "args": ["--root", "${ROOT}"], "env": {"LEVEL": "info"}, "cwd": "/"},
            "cwd",
            id="cwd",
        ),
    ],
)
def test_cfg6_a_changed_server_is_untrusted_naming_what_changed(
    cfg: Setup, store: TrustStore, trusted: Path, alpha: dict[str, object], named: str
) -> None:
    cfg.project({"mcpServers": {**TRUSTED["mcpServers"], "alpha": alpha}})
    found = states(load(cfg, store, environ={"ROOT": "/src"}))
    state, problem = found["alpha"]
    assert state == "untrusted"
    assert problem is not None
    assert problem.startswith(f"changed since you trusted it ({named})")
    assert found["beta"] == ("ok", None)


def test_cfg6_a_changed_url_is_untrusted_naming_the_url(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    cfg.project({"mcpServers": {**TRUSTED["mcpServers"], "beta": {"url": "https://evil.test/mcp"}}})
    state, problem = states(load(cfg, store))["beta"]
    assert state == "untrusted"
    assert problem is not None
    assert "(url)" in problem


def test_cfg6_an_env_value_may_change_without_asking_again(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    cfg.project(
        {
            "mcpServers": {
                **TRUSTED["mcpServers"],
                "alpha": {**ALPHA, "env": {"LEVEL": "debug"}},
            }
        }
    )
    spec = by_id(load(cfg, store))["alpha"]
    assert spec.state == "ok"
    assert spec.env == (("LEVEL", "debug"),)


def test_cfg6_a_removed_server_simply_goes(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    cfg.project({"mcpServers": {"beta": BETA}})
    loaded = load(cfg, store)
    assert states(loaded) == {"beta": ("ok", None)}
    assert loaded.warnings == ()


def test_cfg6_trusting_again_covers_the_change(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    cfg.project({"mcpServers": {**TRUSTED["mcpServers"], "beta": {"url": "https://beta.test/v2"}}})
    assert states(load(cfg, store))["beta"][0] == "untrusted"
    trust_now(cfg, store)
    assert states(load(cfg, store))["beta"] == ("ok", None)


def test_cfg6_trust_recorded_by_an_older_version_trusts_no_server(cfg: Setup, store: TrustStore) -> None:
    """CFG-6: fail closed: every project server untrusted, the reason saying to run `mcpyard trust` again."""
    cfg.project(TRUSTED)
    loaded = cfg.load(trusted=ProjectTrust({}, legacy=True))
    for state, problem in states(loaded).values():
        assert state == "untrusted"
        assert problem is not None
        assert "recorded by an older version of mcpyard" in problem
        assert "run `mcpyard trust` again" in problem
    assert len(mentioning(loaded, "2 servers", "were not started", "older version")) == 1


def test_cfg6_trust_given_for_one_run_trusts_every_server(cfg: Setup, store: TrustStore, trusted: Path) -> None:
    """CFG-6: `--trust` (True) trusts what is in the file now, added and changed servers too."""
    cfg.project({"mcpServers": {"beta": {"url": "https://beta.test/v2"}, "gamma": {"command": "x"}}})
    assert {state for state, _ in states(cfg.load(trusted=True)).values()} == {"ok"}


def test_cfg6_an_untrusted_entry_with_an_unknown_field_does_not_stop_the_trusted_ones(
    cfg: Setup, store: TrustStore
) -> None:
    """CFG-6, CFG-3: an entry trust does not cover is not read, not even to check its fields."""
    cfg.project({"servers": [{"id": "alpha", "command": "alpha-mcp"}]})
    trust_now(cfg, store)
    cfg.project({"servers": [{"id": "alpha", "command": "alpha-mcp"}, {"id": "new", "comand": "x"}]})
    loaded = load(cfg, store)
    assert [(spec.id, spec.state) for spec in loaded.servers] == [("alpha", "ok"), ("new", "untrusted")]
    assert not mentioning(loaded, "unknown field")


def test_cfg6_trust_is_recorded_under_the_id_as_written_even_an_odd_one(cfg: Setup, store: TrustStore) -> None:
    """CFG-6: the id is escaped only where it is shown; trust is recorded under the id itself."""
    cfg.project({"mcpServers": {"odd\u200bid": ALPHA}})
    trust_now(cfg, store)
    assert states(load(cfg, store)) == {"odd\u200bid": ("ok", None)}
