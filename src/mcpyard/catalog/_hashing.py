"""Definition hashes of tools: SHA-256 of their canonical JSON (CAT-2)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFINITION_FIELDS", "canonical_json", "definition_hash"]

DEFINITION_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def definition_hash(tool: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the tool's wire definition: the `DEFINITION_FIELDS` that are present."""
    definition = {key: tool[key] for key in DEFINITION_FIELDS if tool.get(key) is not None}
    return hashlib.sha256(canonical_json(definition).encode("utf-8", "surrogatepass")).hexdigest()
