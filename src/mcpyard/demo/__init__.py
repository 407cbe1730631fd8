"""Demo MCP servers shipped with mcpyard (notes over stdio, weather over streamable HTTP)."""
