"""The elicitation package's public names are pinned (API-1: adding one is an API decision)."""

from __future__ import annotations

import mcpyard.elicitation


def test_the_elicitation_packages_public_names_are_pinned() -> None:
    assert sorted(mcpyard.elicitation.__all__) == [
        "Choice",
        "ELICIT",
        "ElicitationAction",
        "ElicitationAnswer",
        "ElicitationMode",
        "ElicitationRequest",
        "Elicitor",
        "FORMATS",
        "FieldKind",
        "FieldValue",
        "FormField",
        "MAX_CHOICES",
        "MAX_FIELDS",
        "MAX_URL",
        "MESSAGE_LIMIT",
        "ScriptedElicitor",
        "answer_for_server",
        "check_content",
        "check_url",
        "check_value",
        "defaults_of",
        "elicitor_input",
        "form_fields",
        "keep_answers_out_of_logs",
        "parse_entry",
        "request_from_params",
        "secret_looking",
        "shown_value",
    ]
    for name in mcpyard.elicitation.__all__:
        assert getattr(mcpyard.elicitation, name) is not None
