"""The official conformance suite's client scenarios, with mcpyard's host as the client (AUTH-2, CONN-1).

Each scenario must pass and run at least one check, except those in `known_failures.json`,
each with its reason; a listed scenario that starts to pass fails here, so the list stays true.

The official suite's own server processes: interoperability is the subject.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TOOLS = Path(os.environ.get("MCPYARD_TEST_CONFORMANCE", ROOT / ".tools" / "conformance"))
KNOWN_FAILURES: dict[str, str] = json.loads((HERE / "known_failures.json").read_text())
SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]
RESULT = re.compile(r"Passed: (\d+)/(\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.conformance


def suite() -> tuple[Path, Path]:
    conformance = TOOLS / "node_modules" / ".bin" / "conformance"
    node_bin = TOOLS / "node_modules" / "node" / "bin"
    if not conformance.exists() or not (node_bin / "node").exists():
        pytest.fail(f"the conformance suite is not installed in {TOOLS}; run scripts/check, which installs it")
    return conformance, node_bin


def test_the_known_failures_list_only_names_real_scenarios() -> None:
    assert set(KNOWN_FAILURES) <= set(SCENARIOS)
    assert all(reason.strip() for reason in KNOWN_FAILURES.values())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_client_scenario(scenario: str) -> None:
    conformance, node_bin = suite()
    command = f"{sys.executable} {HERE / 'client.py'}"
    done = subprocess.run(
        [str(conformance), "client", "--command", command, "--scenario", scenario],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
        timeout=120,
        check=False,
        cwd=TOOLS,
    )
    output = ANSI.sub("", done.stdout + done.stderr)
    counts = RESULT.findall(output)
    assert counts, f"{scenario}: no result line from the suite:\n{output[-2000:]}"
    passed, total = (int(n) for n in counts[-1])
    overall = "OVERALL: PASSED" in output
    if scenario in KNOWN_FAILURES:
        assert not overall, f"{scenario} passes now: remove it from known_failures.json ({passed}/{total} checks)"
        return
    assert total > 0, f"{scenario} ran no check"
    assert overall, f"{scenario}: {passed}/{total} checks passed:\n{output[-3000:]}"
