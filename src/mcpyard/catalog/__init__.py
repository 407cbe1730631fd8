"""The tool catalog: naming (CAT-1), definition hashes (CAT-2), clean texts (CAT-4) and bounded schemas (THREATS)."""

from mcpyard.catalog._bounds import (
    MAX_EXPANDED_PARTS,
    MAX_PATTERN_CHARS,
    MAX_PATTERN_SIZE,
    MAX_REF_DEPTH,
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_VALUES,
    SchemaReport,
    inspect_schema,
)
from mcpyard.catalog._catalog import Catalog, CatalogEntry, RefusedTool, ServerTools, build_catalog, schema_refusal
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
from mcpyard.catalog._regex_risk import backtracking_risk, expanded_size
from mcpyard.catalog._sanitize import (
    LESS_THAN_LOOKALIKES,
    clean_and_redact,
    clean_and_redact_json,
    clean_json,
    clean_text,
    escape_tags,
    sanitize_text,
)
from mcpyard.catalog._search import ToolIndex, words

__all__ = [
    "LESS_THAN_LOOKALIKES",
    "MAX_EXPANDED_PARTS",
    "MAX_NAME_LENGTH",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_SIZE",
    "MAX_REF_DEPTH",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_VALUES",
    "RESERVED_NAMES",
    "Catalog",
    "CatalogEntry",
    "Named",
    "RefusedTool",
    "SchemaReport",
    "ServerTools",
    "ToolIndex",
    "assign_names",
    "backtracking_risk",
    "build_catalog",
    "canonical_json",
    "clean_and_redact",
    "clean_and_redact_json",
    "clean_json",
    "clean_text",
    "definition_hash",
    "escape_tags",
    "expanded_size",
    "inspect_schema",
    "name_tools",
    "sanitize_name",
    "sanitize_text",
    "schema_refusal",
    "server_prefix",
    "tool_name",
    "words",
]
