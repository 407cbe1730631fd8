"""The tool catalog: naming (CAT-1), definition hashes (CAT-2) and clean texts (CAT-4)."""

from mcpyard.catalog._catalog import Catalog, CatalogEntry, ServerTools, build_catalog
from mcpyard.catalog._hashing import canonical_json, definition_hash
from mcpyard.catalog._naming import MAX_NAME_LENGTH, assign_names, sanitize_name, server_prefix, tool_name
from mcpyard.catalog._sanitize import clean_text, sanitize_text

__all__ = [
    "MAX_NAME_LENGTH",
    "Catalog",
    "CatalogEntry",
    "ServerTools",
    "assign_names",
    "build_catalog",
    "canonical_json",
    "clean_text",
    "definition_hash",
    "sanitize_name",
    "sanitize_text",
    "server_prefix",
    "tool_name",
]
