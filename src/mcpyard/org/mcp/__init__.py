"""The organization as an MCP server for its members' own clients: `/mcp` and `/mcp/teammates/{id}` (ORG-10)."""

from mcpyard.org.mcp._endpoint import MCP_METHODS, MCP_PATHS, McpEndpoint, transport_security
from mcpyard.org.mcp._face import OrgFace

__all__ = ["MCP_METHODS", "MCP_PATHS", "McpEndpoint", "OrgFace", "transport_security"]
