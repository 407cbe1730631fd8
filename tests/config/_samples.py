"""Config files as each MCP client writes them, for the import tests (CFG-2, CFG-3)."""

from __future__ import annotations

from pathlib import Path

CLAUDE_DESKTOP = """{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}
    }
  }
}"""

CLAUDE_CODE = """{
  "mcpServers": {
    "api": {
      "type": "http",
      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
      "headers": {"Authorization": "Bearer ${API_KEY}"}
    },
    "sentry": {"type": "sse", "url": "https://mcp.sentry.dev/sse"},
    "local": {
      "type": "stdio",
      "command": "${HOME}/bin/server",
      "args": ["--config", "${CONFIG_PATH:-./config.json}"],
      "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"}
    },
    "signed": {
      "type": "http",
      "url": "https://mcp.example.com/mcp",
      "headersHelper": "/usr/local/bin/make-headers",
      "oauth": {"clientId": "my-client", "callbackPort": 8080}
    }
  }
}"""

VSCODE = """{
  // Prompted once by VS Code, kept in its secret storage.
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
  ],
  "servers": {
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
      "envFile": "${workspaceFolder}/.env"
    },
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "dev": {"watch": "src/**/*.py"}},
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"},
    },
    "files": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js", "--open", "${file}"]},
  },
}"""

CURSOR = """{
  "mcpServers": {
    "userjot": {
      "url": "https://api.userjot.com/v1/mcp",
      "headers": {"Authorization": "Bearer ${env:USERJOT_API_TOKEN}"}
    },
    "mittwald": {
      "url": "https://mcp.mittwald.de/mcp",
      "auth": {"CLIENT_ID": "mw-client", "CLIENT_SECRET": "${env:MW_SECRET}", "scopes": ["mcp", "offline_access"]}
    },
    "notes": {"command": "python", "args": ["${userHome}/mcp/notes.py"], "envFile": ".env"}
  }
}"""

CODEX = """model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
env_vars = ["HTTPS_PROXY"]
startup_timeout_sec = 20
tool_timeout_sec = 120

[mcp_servers.context7.env]
DEBUG = "mcp:*"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Org" = "FIGMA_ORG" }
enabled_tools = ["get_file"]
disabled_tools = ["delete_file", "post_comment"]

[mcp_servers.legacy]
command = "legacy-server"
enabled = false
required = true
startup_timeout_ms = 5000
"""

GEMINI = """{
  "theme": "Dracula",
  "selectedAuthType": "gemini-api-key",
  "mcp": {"excluded": ["experimental"]},
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"},
      "timeout": 15000,
      "trust": true
    },
    "github": {
      "httpUrl": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer $GITHUB_PAT"},
      "includeTools": ["get_issue"],
      // "excludeTools": ["merge_pull_request"],
      "excludeTools": ["delete_repository"]
    },
    "experimental": {"url": "http://localhost:8080/sse", "type": "sse", "description": "trying it out"}
  }
}"""

WINDSURF = """{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"},
      "disabled": false,
      "disabledTools": ["create_repository", "fork_repository"]
    },
    "figma": {
      "serverUrl": "https://mcp.figma.com/mcp",
      "headers": {"X-Figma-Region": "us-east-1"}
    }
  }
}"""

SAMPLES: dict[str, tuple[str, str]] = {
    "claude-desktop": ("claude_desktop_config.json", CLAUDE_DESKTOP),
    "claude-code": (".mcp.json", CLAUDE_CODE),
    "vscode": (".vscode/mcp.json", VSCODE),
    "cursor": (".cursor/mcp.json", CURSOR),
    "codex": (".codex/config.toml", CODEX),
    "gemini": (".gemini/settings.json", GEMINI),
    "windsurf": (".codeium/windsurf/mcp_config.json", WINDSURF),
}


ENVIRON = dict.fromkeys(
    ("API_KEY", "GITHUB_TOKEN", "USERJOT_API_TOKEN", "FIGMA_OAUTH_TOKEN", "FIGMA_ORG", "GITHUB_PAT"), "value"
) | {"HOME": "/home/me"}


def sample(tmp_path: Path, name: str) -> Path:
    relative, text = SAMPLES[name]
    path = tmp_path / "from" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
