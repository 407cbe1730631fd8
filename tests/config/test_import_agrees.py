"""What `mcpyard import` says will not load is what loading the same file refuses, in the same words (CFG-5, ERR-1)."""

from __future__ import annotations

import pytest

from mcpyard.config import import_config

from ._support import Setup, by_id

MALFORMED = {
    "Windsurf's ${file:…}": ({"command": "node", "args": ["${file:/run/token}"]}, "args[0]", "not a valid reference"),
    "a VS Code prompt outside VS Code": ({"command": "node", "env": {"X": "${input:tok}"}}, "env.X", "not a valid"),
    "a reference of no kind": ({"url": "https://x.invalid/${nope:x}"}, "url", "at character 19 is not a valid"),
    "a reference never closed": ({"command": "node", "args": ["${unclosed"]}, "args[0]", "is never closed"),
    "an editor's setting": ({"command": "${config:python.path}"}, "command", "not a valid reference"),
    "a header": ({"serverUrl": "https://x.invalid/mcp", "headers": {"X-Key": "${K"}}, "headers.X-Key", "never"),
    "Windsurf's serverUrl": ({"serverUrl": "https://x.invalid/${a:b}"}, "serverUrl", "not a valid reference"),
}


@pytest.mark.parametrize(("entry", "key", "needle"), list(MALFORMED.values()), ids=list(MALFORMED))
def test_cfg5_err1_import_names_a_malformed_reference_as_loading_refuses_it(
    cfg: Setup, entry: dict[str, object], key: str, needle: str
) -> None:
    """CFG-5, ERR-1: a `${` that expansion cannot read is under "will not load" in import, as --mcp-config fails the
    server for it, with the same words and nothing else said of the same field."""
    source = cfg.flag({"mcpServers": {"s": entry}}, name="mcp_config.json")
    [problem] = import_config(source, workspace=cfg.workspace).problems
    assert (problem.server, problem.key) == ("s", key)
    assert needle in problem.why
    spec = by_id(cfg.load(config_file=source))["s"]
    assert (spec.state, spec.problem) == ("failed", f"{key}: {problem.why}")
