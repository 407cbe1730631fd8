"""A server's questions to the user (MCP elicitation, form and URL modes): the form, the answer, who answers."""

from mcpyard.elicitation._answers import check_content, check_value, defaults_of
from mcpyard.elicitation._entry import parse_entry, shown_value
from mcpyard.elicitation._field import FORMATS, Choice, FieldKind, FieldValue, FormField
from mcpyard.elicitation._form import MAX_CHOICES, MAX_FIELDS, form_fields, secret_looking
from mcpyard.elicitation._quiet import keep_answers_out_of_logs
from mcpyard.elicitation._relay import ELICIT, elicitor_input
from mcpyard.elicitation._request import (
    MAX_URL,
    MESSAGE_LIMIT,
    ElicitationAction,
    ElicitationAnswer,
    ElicitationMode,
    ElicitationRequest,
    Elicitor,
    ScriptedElicitor,
    answer_for_server,
    check_url,
    request_from_params,
)

__all__ = [
    "ELICIT",
    "FORMATS",
    "MAX_CHOICES",
    "MAX_FIELDS",
    "MAX_URL",
    "MESSAGE_LIMIT",
    "Choice",
    "ElicitationAction",
    "ElicitationAnswer",
    "ElicitationMode",
    "ElicitationRequest",
    "Elicitor",
    "FieldKind",
    "FieldValue",
    "FormField",
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
