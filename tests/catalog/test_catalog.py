"""CAT-4 with SEC-3: what the model sees of a tool is cleaned, then redacted, everywhere."""

from __future__ import annotations

from mcpyard.catalog import ServerTools, build_catalog
from mcpyard.secrets import Redactor

SECRET = "tok-abcdef-123456"


def test_cat4_sec3_descriptions_schemas_and_annotations_are_redacted() -> None:
    wire = {
        "name": "t",
        "description": f"uses tok-abcdef-\u200b123456 and {SECRET}",
        "title": f"\x1b[1m{SECRET}",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "default": SECRET}}},
        "annotations": {"title": SECRET, "readOnlyHint": True},
    }
    catalog = build_catalog([ServerTools("s", "s", (wire,))], "__", redactor=Redactor([("%API%", SECRET)]))
    entry = catalog.get("s__t")
    assert entry is not None
    everything = repr((entry.description, entry.title, entry.input_schema, entry.annotations))
    assert SECRET not in everything
    assert "123456" not in everything
    assert entry.description == "uses %API% and %API%"
    assert entry.input_schema["properties"]["q"]["default"] == "%API%"
    assert entry.read_only
    assert (
        entry.definition_hash == build_catalog([ServerTools("s", "s", (wire,))], "__").entries["s__t"].definition_hash
    )
