"""`mcpyard org demo`: the organization service's story on a temporary database, through its API (ORG-2, ORG-3,
ORG-5, ORG-8, POL-5)."""

from __future__ import annotations

import json
import subprocess

from tests._forkserver import mcpyard_command
from tests.conftest import Home


def test_org_demo_walks_the_story_and_every_step_ends_as_it_should(home: Home) -> None:
    done = subprocess.run(
        mcpyard_command(home.environ, "org", "demo", "--json"),
        capture_output=True,
        text=True,
        env=home.environ,
        cwd=home.workspace,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    steps = [(step["step"], step["answer"]) for step in json.loads(done.stdout)["steps"]]
    answers = dict(steps)
    assert all(server["state"] == "connected" for server in answers[steps[0][0]])
    assert set(answers["every new tool starts off"].values()) == {"off"}
    assert answers["a call to a tool that is off is refused"]["code"] == "policy_off"
    assert answers["the call runs; its result comes fenced as data"]["ok"] is True
    assert answers["notes__add_note is ask_first: the call waits in the inbox"]["approval"]["status"] == "pending"
    assert answers["approved: the saved arguments run once"]["ok"] is True
    assert answers["a second approval is refused: it was decided already"]["code"] == "already_decided"
    assert answers["the server changed word_count's definition: a refresh suspends it"]["state"] == "changed"
    assert answers["until it is reviewed again it cannot run"]["code"] == "tool_changed"
    assert answers["the weather server stops: its refresh fails and raises an alert"]["alerts"]
    assert answers["it is back: the next success clears the alert"]["cleared"] is True
    teammate = answers["approved from the inbox: the call runs once and the turn goes on"]
    assert teammate["status"] == "done"
    assert teammate["trace"] == ["notes__add_note waiting_for_approval", "notes__add_note ran"]
    assert "waiting_for_approval" in json.dumps(
        answers["its model asks for notes__add_note, which is ask_first: the turn waits"]
    )
    visitor = answers["a visitor asks, with no credentials"]
    assert visitor["calls"] == [{"tool": "weather__forecast", "status": "ran"}]
    assert visitor["reply"]
