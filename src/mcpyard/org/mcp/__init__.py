"""The organization as an MCP server for its members' own clients: `/mcp` and `/mcp/teammates/{id}` (ORG-10)."""

from mcpyard.org.mcp._endpoint import McpEndpoint, transport_security
from mcpyard.org.mcp._face import OrgFace

__all__ = ["McpEndpoint", "OrgFace", "transport_security"]
