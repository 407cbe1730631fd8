"""API-6: the services' TypedDict views and the OpenAPI document describe the same bodies, key by key: the same keys,
the same required keys, the same fixed values, null where the document allows it, and the same body nested inside.

A body's schema is `mcpyard.org.api.BODY_SCHEMAS[name]`; its view is `VIEWS[name]`. A view is what mypy checks
every builder and every reader against; the schema is what the API promises its clients.
"""

from __future__ import annotations

import functools
import operator
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from mcpyard.org import services, turns
from mcpyard.org.api import BODY_SCHEMAS
from mcpyard.pipeline import CallResult

VIEWS: dict[str, Any] = {
    "member_identity": services.MemberIdentityView,
    "member": services.MemberView,
    "token": services.TokenView,
    "grant": services.GrantView,
    "definition": services.DefinitionView,
    "tool": services.ToolView,
    "tool_detail": services.ToolDetailView,
    "server": services.ServerView,
    "edited_server": services.EditedServerView,
    "selection": services.SelectionView,
    "call_result": services.CallResultView,
    "pending": services.PendingRef,
    "running_approval": services.RunningRef,
    "parked": services.ParkedView,
    "long_call": services.LongCallView,
    "task_call": services.TaskCallView,
    "asking": services.AskingView,
    "running": services.RunningView,
    "approval": services.ApprovalView,
    "audit_entry": services.AuditEntryView,
    "alert": services.AlertView,
    "question": services.QuestionView,
    "model": turns.ModelView,
    "teammate": turns.TeammateView,
    "started_conversation": turns.StartedConversationView,
    "listed_conversation": turns.ListedConversationView,
    "conversation": turns.ConversationView,
    "turn_call": turns.TurnCallView,
    "turn": turns.TurnView,
    "trace_step": turns.TraceStepView,
    "traced_turn": turns.TracedTurnView,
    "preview": turns.PreviewView,
    "published_tool": turns.PublishedToolView,
    "publication": turns.PublicationView,
    "assistant": turns.AssistantView,
    "visitor_turn": turns.VisitorTurnView,
    "webhook": services.WebhookView,
    "created_webhook": services.CreatedWebhookView,
    "delivery": services.DeliveryView,
    "delivery_try": services.DeliveryTryView,
    "limits": services.LimitsView,
    "usage": services.UsageView,
    "tool_search": services.ToolSearchView,
}
"""Each documented body's view, by the body's name in `BODY_SCHEMAS`."""
NAMES = sorted(VIEWS)

NEVER_ANSWERED: dict[tuple[str, str], set[str]] = {
    ("server", "state"): {"deleted"},
    ("edited_server", "state"): {"deleted"},
}
"""Values a view's type allows that the service never answers with: a deleted server is not shown."""
DOCUMENT_INCOMPLETE: dict[str, str] = {}
"""Mismatches where the service is right and the document says less: strict xfails, to be dropped once it says it."""


def keys(view: Any) -> set[str]:
    return set(view.__required_keys__) | set(view.__optional_keys__)


def _without_none(hint: Any) -> tuple[Any, bool]:
    """The hint with None taken out of its union, and whether it allowed None."""
    if get_origin(hint) not in (Union, types.UnionType):
        return hint, hint is type(None)
    parts = [part for part in get_args(hint) if part is not type(None)]
    rest: Any = functools.reduce(operator.or_, parts)
    return rest, len(parts) < len(get_args(hint))


def literal_values(hint: Any) -> set[Any] | None:
    """What a `Literal` (or a union of them) allows; None for any other type."""
    if get_origin(hint) is Literal:
        return set(get_args(hint))
    if get_origin(hint) in (Union, types.UnionType):
        found = [literal_values(part) for part in get_args(hint)]
        if all(values is not None for values in found):
            return set().union(*(values for values in found if values is not None))
    return None


def documented_values(schema: Mapping[str, Any]) -> set[Any] | None:
    if "enum" in schema:
        return set(schema["enum"])
    if "const" in schema:
        return {schema["const"]}
    return None


def nullable(schema: Mapping[str, Any]) -> bool:
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(nullable(option) for option in schema.get("oneOf", ()))


def without_null(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema a nullable one allows besides null (`{"oneOf": [null, X]}` is X)."""
    options = [option for option in schema.get("oneOf", ()) if option.get("type") != "null"]
    return options[0] if len(options) == 1 else schema


def hints(name: str) -> dict[str, Any]:
    return get_type_hints(VIEWS[name])


def test_every_documented_body_has_a_view_and_every_view_a_documented_body() -> None:
    assert set(VIEWS) == set(BODY_SCHEMAS)
    assert len({id(view) for view in VIEWS.values()}) == len(VIEWS), "each body has a view of its own"
    assert all(is_typeddict(view) for view in VIEWS.values())


@pytest.mark.parametrize("name", NAMES)
def test_the_view_has_the_keys_its_schema_documents(name: str) -> None:
    assert keys(VIEWS[name]) == set(BODY_SCHEMAS[name]["properties"])


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=DOCUMENT_INCOMPLETE[name], strict=True))
        if name in DOCUMENT_INCOMPLETE
        else name
        for name in NAMES
    ],
)
def test_the_view_requires_the_keys_its_schema_requires(name: str) -> None:
    assert set(VIEWS[name].__required_keys__) == set(BODY_SCHEMAS[name]["required"])


@pytest.mark.parametrize("name", NAMES)
def test_a_key_with_a_fixed_set_of_values_has_the_documented_set(name: str) -> None:
    properties = BODY_SCHEMAS[name]["properties"]
    for key, hint in hints(name).items():
        inner, _ = _without_none(hint)
        schema = properties[key]
        if get_origin(inner) is list:
            inner, schema = get_args(inner)[0], schema["items"]
        allowed = literal_values(inner)
        if allowed is None:
            continue
        allowed -= NEVER_ANSWERED.get((name, key), set())
        documented = documented_values(schema)
        if documented is not None:  # a document that says only "a string" says less, not otherwise
            assert allowed == documented, f"{name}.{key}"


@pytest.mark.parametrize("name", NAMES)
def test_a_key_may_be_null_exactly_where_the_document_allows_null(name: str) -> None:
    properties = BODY_SCHEMAS[name]["properties"]
    for key, hint in hints(name).items():
        if hint is Any:
            continue
        assert _without_none(hint)[1] == nullable(properties[key]), f"{name}.{key}"


@pytest.mark.parametrize("name", NAMES)
def test_a_view_nested_in_a_view_is_the_body_the_document_nests_there(name: str) -> None:
    named = {id(view): other for other, view in VIEWS.items()}
    properties = BODY_SCHEMAS[name]["properties"]
    for key, hint in hints(name).items():
        inner, _ = _without_none(hint)
        schema = without_null(properties[key])
        if get_origin(inner) is list:
            inner, schema = get_args(inner)[0], schema["items"]
        if not is_typeddict(inner):
            continue
        assert id(inner) in named, f"{name}.{key}: {inner.__name__} is a view with no documented body"
        nested = BODY_SCHEMAS[named[id(inner)]]
        assert {k: v for k, v in schema.items() if k != "description"} == nested, f"{name}.{key}"


def test_a_call_result_view_holds_what_the_pipeline_gives_and_the_calls_id() -> None:
    """The view is written out key by key; the pipeline's result growing a key shows here first."""
    assert {*CallResult(ok=True, text="").to_json(), "call_id"} == keys(services.CallResultView)


def test_the_checks_catch_what_they_should() -> None:
    """The helpers on made-up hints and schemas: a check that never fails checks nothing."""
    assert literal_values(Literal["a", "b"] | Literal["c"]) == {"a", "b", "c"}
    assert literal_values(str) is None
    assert literal_values(Literal["a"] | int) is None
    assert _without_none(str | None) == (str, True)
    assert _without_none(str) == (str, False)
    assert documented_values({"type": "string", "enum": ["x"]}) == {"x"}
    assert documented_values({"const": "y"}) == {"y"}
    assert documented_values({"type": "string"}) is None
    assert nullable({"type": ["string", "null"]})
    assert nullable({"oneOf": [{"type": "null"}, {"type": "object"}]})
    assert not nullable({"type": "string"})
    assert without_null({"oneOf": [{"type": "null"}, {"type": "object"}]}) == {"type": "object"}
