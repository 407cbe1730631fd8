"""The tool catalog: naming (CAT-1), definition hashes (CAT-2) and clean texts (CAT-4)."""

from mcpyard.catalog._catalog import Catalog, CatalogEntry, ServerTools, build_catalog
from mcpyard.catalog._hashing import canonical_json, definition_hash
from mcpyard.catalog._naming import (
    MAX_NAME_LENGTH,
    RESERVED_NAMES,
    Named,
    assign_names,
    name_tools,
    sanitize_name,
    server_prefix,
    tool_name,
)
from mcpyard.catalog._sanitize import LESS_THAN_LOOKALIKES, clean_json, clean_text, escape_tags, sanitize_text

__all__ = [
    "LESS_THAN_LOOKALIKES",
    "MAX_NAME_LENGTH",
    "RESERVED_NAMES",
    "Catalog",
    "CatalogEntry",
    "Named",
    "ServerTools",
    "assign_names",
    "build_catalog",
    "canonical_json",
    "clean_json",
    "clean_text",
    "definition_hash",
    "escape_tags",
    "name_tools",
    "sanitize_name",
    "sanitize_text",
    "server_prefix",
    "tool_name",
]
