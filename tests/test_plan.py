"""What a reload does, and the status page, as pure functions of the plan and the servers' snapshots (CFG-7, CLI-1).

Also: who shadows whom when two servers share a tool prefix (CAT-1).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from mcpyard import HostView
from mcpyard._plan import Plan, Running, make_plan, plan_changes
from mcpyard._status import build_status
from mcpyard.catalog import Catalog
from mcpyard.config import HostSettings, LoadedConfig, ServerSpec
from mcpyard.connect import ServerSnapshot, State
from mcpyard.policy import PinPolicies, Rules
from mcpyard.secrets import Redactor

SOURCE = Path("/flag.json")


def spec(server_id: str, position: int = 0, **fields: object) -> ServerSpec:
    base = ServerSpec(
        id=server_id, source="flag", source_path=SOURCE, position=position, name=server_id, transport="stdio"
    )
    return replace(base, **{"command": "server", **fields})  # type: ignore[arg-type]  # fields of the spec, by name


def plan_of(*specs: ServerSpec) -> Plan:
    return make_plan(LoadedConfig(tuple(specs), HostSettings(), (), ()))


A, B, C = spec("a", 0), spec("b", 1), spec("c", 2)


@pytest.mark.parametrize(
    ("old", "new", "running", "stop", "keep", "start"),
    [
        pytest.param(None, plan_of(A, B), {}, (), (), ("a", "b"), id="first start: everything starts"),
        pytest.param(
            plan_of(A, B),
            plan_of(A, B),
            {"a": Running(A, True), "b": Running(B, True)},
            (),
            ("a", "b"),
            (),
            id="nothing changed: all kept",
        ),
        pytest.param(
            plan_of(A, B),
            plan_of(A, C),
            {"a": Running(A, True), "b": Running(B, True)},
            ("b",),
            ("a",),
            ("c",),
            id="one left, one came",
        ),
        pytest.param(
            plan_of(A),
            plan_of(spec("a", 0, args=("--other",))),
            {"a": Running(A, True)},
            ("a",),
            (),
            ("a",),
            id="a changed command line restarts it",
        ),
        pytest.param(
            plan_of(A),
            plan_of(spec("a", 0, call_timeout_secs=5.0, shared_tools=("x",))),
            {"a": Running(A, True)},
            (),
            ("a",),
            (),
            id="a change that needs no new connection keeps it",
        ),
        pytest.param(
            plan_of(A),
            plan_of(spec("a", 0, name="renamed")),
            {"a": Running(A, True)},
            ("a",),
            (),
            ("a",),
            id="a new tool prefix restarts it",
        ),
        pytest.param(
            plan_of(A),
            plan_of(A),
            {"a": Running(A, False)},
            ("a",),
            (),
            ("a",),
            id="a failed or stopped server is tried again",
        ),
        pytest.param(
            plan_of(A, B),
            plan_of(A, spec("b", 1, enabled=False, state="disabled")),
            {"a": Running(A, True), "b": Running(B, True)},
            ("b",),
            ("a",),
            (),
            id="a disabled server stops",
        ),
    ],
)
def test_cfg7_a_reload_stops_keeps_and_starts_as_the_table_says(
    old: Plan | None,
    new: Plan,
    running: dict[str, Running],
    stop: tuple[str, ...],
    keep: tuple[str, ...],
    start: tuple[str, ...],
) -> None:
    changes = plan_changes(old, new, running)
    assert changes.stop == stop
    assert changes.keep == keep
    assert tuple(s.id for s in changes.start) == start


def test_cat1_the_later_of_two_servers_with_one_prefix_is_used_the_earlier_is_shadowed() -> None:
    plan = plan_of(spec("early", 0, name="same"), spec("late", 1, name="same"))
    assert list(plan.specs) == ["late"]
    assert plan.shadowed_by["early"].id == "late"


def view_of(plan: Plan, servers: dict[str, ServerSnapshot]) -> HostView:
    return HostView(
        plan=plan,
        catalog=Catalog(),
        servers=MappingProxyType(servers),
        connections=MappingProxyType({}),
        policies=PinPolicies({}),
        redactor=Redactor([("%TOKEN%", "hunter2-secret")]),
        known=MappingProxyType({}),
        workspace=Path("/work"),
        environ={},
        rules=Rules(),
    )


def test_cli1_the_status_page_is_a_function_of_the_view() -> None:
    plan = plan_of(
        spec("up", 0),
        spec("down", 1),
        spec("skipped", 2, state="skipped", problem="neither command nor url", command=None),
        spec("early", 3, name="same"),
        spec("late", 4, name="same"),
        spec("starting", 5),
    )
    servers = {
        "up": ServerSnapshot("up", State.CONNECTED, transport="stdio", protocol_version="2025-11-25"),
        "down": ServerSnapshot("down", State.FAILED, reason="exited with code 3; stderr: hunter2-secret"),
        "late": ServerSnapshot("late", State.WAITING_FOR_SIGN_IN, sign_in_url="https://as.example/authorize"),
    }
    page = build_status(view_of(plan, servers), session_id="s1", mode="ask")
    states = {server.id: (server.state, server.reason) for server in page.servers}
    assert states["up"] == ("connected", None)
    assert states["down"] == ("failed", "exited with code 3; stderr: %TOKEN%"), "reasons are redacted"
    assert states["skipped"] == ("skipped", "neither command nor url")
    assert states["early"][0] == "shadowed"
    assert "--mcp-config file" in str(states["early"][1])
    assert states["starting"] == ("connecting", "starting")
    late = next(server for server in page.servers if server.id == "late")
    assert late.sign_in_url == "https://as.example/authorize"
    up = next(server for server in page.servers if server.id == "up")
    assert up.protocol_version == "2025-11-25"
    assert page.to_json()["servers"][0]["source"] == "flag", "the JSON keeps the source's kind"
