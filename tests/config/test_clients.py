"""Config files as people keep them, read by `mcpyard import`, `--mcp-config` and as the project file (CFG-1..CFG-5).

Each file is written as its client writes it (Gemini CLI's settings.json, Windsurf's
mcp_config.json, a VS Code mcp.json, a Cursor mcp.json, a Codex config.toml) and read the
three ways a user can give it to mcpyard.
"""

from __future__ import annotations

from pathlib import Path

from mcpyard.config import import_config

from ._support import Setup, by_id, mentioning

GEMINI_REMOTE = """{
  "theme": "GitHub",
  "mcpServers": {
    "events": {
      "url": "http://localhost:8080/sse",
      "timeout": 30000
    },
    "api": {
      "httpUrl": "http://localhost:3000/mcp",
      "headers": {"Authorization": "Bearer $API_TOKEN"}
    },
    "typed": {"url": "http://localhost:3001/mcp", "type": "http"}
  }
}"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_cfg3_a_gemini_url_is_sse_and_its_http_url_streamable_http(cfg: Setup) -> None:
    """CFG-3: Gemini CLI's `url` is an SSE endpoint (its `httpUrl` is streamable HTTP); a `type` still decides."""
    settings = write(cfg.root / "home" / ".gemini" / "settings.json", GEMINI_REMOTE)
    imported = import_config(settings, workspace=cfg.workspace)
    assert [(server.id, server.transport) for server in imported.servers] == [
        ("events", "sse"),
        ("api", "streamable_http"),
        ("typed", "streamable_http"),
    ]
    [note] = [note for note in imported.understood if note.key == "url" and note.server == "events"]
    assert "sse" in note.why
    loaded = cfg.load(config_file=settings, environ={"API_TOKEN": "t"})
    servers = by_id(loaded)
    assert (servers["events"].transport, servers["events"].sse_fallback) == ("sse", False)
    assert (servers["api"].transport, servers["api"].sse_fallback) == ("streamable_http", False)
    assert servers["typed"].transport == "streamable_http"
    assert not mentioning(loaded, "events", "ignoring")
