"""POL-1, POL-2, POL-3, POL-4, FILE-5, APR-1: whether a call may run, must ask, or is refused."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

import pytest

from mcpyard.config import Mode
from mcpyard.policy import CallFacts, Decision, Rules, decide, matching_rule

Hints = Literal["none", "readOnly", "destructive", "both"]

MODES: tuple[Mode, ...] = ("read-only", "plan", "ask", "auto")
HINTS: tuple[Hints, ...] = ("none", "readOnly", "destructive", "both")


@dataclass(frozen=True)
class Expected:
    verdict: Literal["run", "ask", "refuse"]
    offers_session: bool = False
    """Only meaningful when the verdict is "ask"."""


RUN = Expected("run")
REFUSE = Expected("refuse")
ASK = Expected("ask")
ASK_SESSION = Expected("ask", offers_session=True)


def facts(
    hints: Hints = "none",
    *,
    name: str = "notes__write",
    trusted: bool = True,
    files: bool = False,
    secret: bool = False,
) -> CallFacts:
    return CallFacts(
        name=name,
        read_only=hints in ("readOnly", "both"),
        destructive=hints in ("destructive", "both"),
        trust_annotations=trusted,
        sends_files=files,
        sends_secret=secret,
    )


# (mode, annotations, trust_annotations, sends a file) -> expected, written from the SPEC text:
#   POL-1 read-only/plan run only read-only tools; auto runs everything without asking.
#   POL-2 trusted readOnlyHint runs in every mode; destructiveHint always asks except in auto and is never
#         covered by "allow for this session"; both hints = destructive; neither asks in ask mode, is refused in
#         read-only/plan, and may be allowed for the session.
#   POL-3 untrusted annotations count as no hints: asks in ask mode, refused in read-only/plan, runs in auto.
#   FILE-5 a file-sending call always asks (auto too, and session can't cover it); read-only/plan refuse it.
EXPECTED: dict[tuple[Mode, Hints, bool, bool], Expected] = {
    ("read-only", "none", True, False): REFUSE,
    ("read-only", "none", True, True): REFUSE,
    ("read-only", "none", False, False): REFUSE,
    ("read-only", "none", False, True): REFUSE,
    ("read-only", "readOnly", True, False): RUN,
    ("read-only", "readOnly", True, True): REFUSE,
    ("read-only", "readOnly", False, False): REFUSE,
    ("read-only", "readOnly", False, True): REFUSE,
    ("read-only", "destructive", True, False): REFUSE,
    ("read-only", "destructive", True, True): REFUSE,
    ("read-only", "destructive", False, False): REFUSE,
    ("read-only", "destructive", False, True): REFUSE,
    ("read-only", "both", True, False): REFUSE,
    ("read-only", "both", True, True): REFUSE,
    ("read-only", "both", False, False): REFUSE,
    ("read-only", "both", False, True): REFUSE,
    ("plan", "none", True, False): REFUSE,
    ("plan", "none", True, True): REFUSE,
    ("plan", "none", False, False): REFUSE,
    ("plan", "none", False, True): REFUSE,
    ("plan", "readOnly", True, False): RUN,
    ("plan", "readOnly", True, True): REFUSE,
    ("plan", "readOnly", False, False): REFUSE,
    ("plan", "readOnly", False, True): REFUSE,
    ("plan", "destructive", True, False): REFUSE,
    ("plan", "destructive", True, True): REFUSE,
    ("plan", "destructive", False, False): REFUSE,
    ("plan", "destructive", False, True): REFUSE,
    ("plan", "both", True, False): REFUSE,
    ("plan", "both", True, True): REFUSE,
    ("plan", "both", False, False): REFUSE,
    ("plan", "both", False, True): REFUSE,
    ("ask", "none", True, False): ASK_SESSION,
    ("ask", "none", True, True): ASK,
    ("ask", "none", False, False): ASK_SESSION,
    ("ask", "none", False, True): ASK,
    ("ask", "readOnly", True, False): RUN,
    ("ask", "readOnly", True, True): ASK,
    ("ask", "readOnly", False, False): ASK_SESSION,
    ("ask", "readOnly", False, True): ASK,
    ("ask", "destructive", True, False): ASK,
    ("ask", "destructive", True, True): ASK,
    ("ask", "destructive", False, False): ASK_SESSION,
    ("ask", "destructive", False, True): ASK,
    ("ask", "both", True, False): ASK,
    ("ask", "both", True, True): ASK,
    ("ask", "both", False, False): ASK_SESSION,
    ("ask", "both", False, True): ASK,
    ("auto", "none", True, False): RUN,
    ("auto", "none", True, True): ASK,
    ("auto", "none", False, False): RUN,
    ("auto", "none", False, True): ASK,
    ("auto", "readOnly", True, False): RUN,
    ("auto", "readOnly", True, True): ASK,
    ("auto", "readOnly", False, False): RUN,
    ("auto", "readOnly", False, True): ASK,
    ("auto", "destructive", True, False): RUN,
    ("auto", "destructive", True, True): ASK,
    ("auto", "destructive", False, False): RUN,
    ("auto", "destructive", False, True): ASK,
    ("auto", "both", True, False): RUN,
    ("auto", "both", True, True): ASK,
    ("auto", "both", False, False): RUN,
    ("auto", "both", False, True): ASK,
}


def row_id(mode: Mode, hints: Hints, trusted: bool, files: bool) -> str:
    return f"{mode}-{hints}-{'trusted' if trusted else 'untrusted'}-{'file' if files else 'nofile'}"


def assert_matches(decision: Decision, expected: Expected) -> None:
    assert decision.verdict == expected.verdict, decision.reason
    if expected.verdict == "ask":
        assert decision.session_allowed is expected.offers_session, decision.reason


def test_the_verdict_table_covers_every_mode_annotation_trust_and_file_combination() -> None:
    assert set(EXPECTED) == set(itertools.product(MODES, HINTS, (True, False), (False, True)))


@pytest.mark.parametrize(
    ("mode", "hints", "trusted", "files", "expected"),
    [pytest.param(*key, expected, id=row_id(*key)) for key, expected in EXPECTED.items()],
)
def test_pol1_pol2_pol3_file5_verdict_follows_mode_annotations_trust_and_files(
    mode: Mode, hints: Hints, trusted: bool, files: bool, expected: Expected
) -> None:
    decision = decide(facts(hints, trusted=trusted, files=files), mode, Rules(), ())
    assert_matches(decision, expected)


# --- POL-4: rules ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("hints", HINTS)
@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_pol4_a_deny_rule_refuses_in_every_mode_whatever_the_annotations(
    mode: Mode, hints: Hints, trusted: bool
) -> None:
    decision = decide(facts(hints, name="notes__write", trusted=trusted), mode, Rules(deny=("notes__*",)), ())
    assert decision.verdict == "refuse"
    assert decision.code
    assert "notes__*" in decision.reason


@pytest.mark.parametrize("mode", MODES)
def test_pol4_deny_beats_an_allow_rule_and_a_session_allow(mode: Mode) -> None:
    rules = Rules(allow=("notes__*", "notes__delete_page"), deny=("*__delete_*",))
    decision = decide(facts(name="notes__delete_page"), mode, rules, {"notes__delete_page"})
    assert decision.verdict == "refuse"
    assert "*__delete_*" in decision.reason


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_pol4_an_allow_rule_skips_the_card_in_ask_mode_for_a_tool_with_no_hints(trusted: bool) -> None:
    without_rule = decide(facts(trusted=trusted), "ask", Rules(), ())
    with_rule = decide(facts(trusted=trusted), "ask", Rules(allow=("notes__*",)), ())
    assert without_rule.verdict == "ask"
    assert with_rule.verdict == "run"
    assert "notes__*" in with_rule.reason


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(facts("destructive"), id="destructive"),
        pytest.param(facts("both"), id="readOnly+destructive"),
        pytest.param(facts(files=True), id="sends-file"),
        pytest.param(facts("readOnly", files=True), id="readOnly-sends-file"),
        pytest.param(facts(secret=True), id="sends-secret"),
    ],
)
def test_pol2_file5_an_allow_rule_never_skips_the_card_of_a_destructive_tool_or_a_file_sending_call(
    call: CallFacts,
) -> None:
    decision = decide(call, "ask", Rules(allow=("notes__*", "*")), ())
    assert decision.verdict == "ask"
    assert decision.session_allowed is False


@pytest.mark.parametrize("mode", ["read-only", "plan"])
@pytest.mark.parametrize(
    "call",
    [
        pytest.param(facts(), id="no-hints"),
        pytest.param(facts("destructive"), id="destructive"),
        pytest.param(facts("readOnly", trusted=False), id="untrusted-readOnly"),
        pytest.param(facts("readOnly", files=True), id="readOnly-sends-file"),
    ],
)
def test_pol1_pol4_allow_rules_and_session_allows_never_let_a_non_read_only_call_run_in_read_only_or_plan(
    mode: Mode, call: CallFacts
) -> None:
    decision = decide(call, mode, Rules(allow=("*",)), {call.name})
    assert decision.verdict == "refuse"


@pytest.mark.parametrize(
    ("glob", "name", "matches"),
    [
        ("notes__*", "notes__write", True),
        ("notes__*", "notes__delete_page", True),
        ("notes__*", "notebook__write", False),
        ("notes__*", "files__notes__write", False),
        ("*__delete_*", "notes__delete_page", True),
        ("*__delete_*", "files__delete_all", True),
        ("*__delete_*", "notes__undelete_page", False),
        ("*__delete_*", "notes__delete", False),
        ("notes__write", "notes__write", True),
        ("notes__write", "notes__write_all", False),
    ],
)
def test_pol4_rule_globs_match_the_whole_model_facing_name(glob: str, name: str, matches: bool) -> None:
    assert matching_rule(name, ("nothing__here", glob)) == (glob if matches else None)
    denied = decide(facts(name=name), "auto", Rules(deny=(glob,)), ())
    allowed = decide(facts(name=name), "ask", Rules(allow=(glob,)), ())
    assert (denied.verdict == "refuse") is matches
    assert (allowed.verdict == "run") is matches


# --- POL-2: "allow for this session" --------------------------------------------------------------------------


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_pol2_allow_for_this_session_covers_later_calls_of_that_tool_only(trusted: bool) -> None:
    allows = {"notes__write"}
    same_tool = decide(facts(name="notes__write", trusted=trusted), "ask", Rules(), allows)
    other_tool = decide(facts(name="notes__write_all", trusted=trusted), "ask", Rules(), allows)
    assert same_tool.verdict == "run"
    assert other_tool.verdict == "ask"
    assert other_tool.session_allowed is True


@pytest.mark.parametrize("hints", ["destructive", "both"])
def test_pol2_apr1_allow_for_this_session_never_covers_nor_is_offered_for_a_destructive_tool(hints: Hints) -> None:
    decision = decide(facts(hints, name="notes__delete_page"), "ask", Rules(), {"notes__delete_page"})
    assert decision.verdict == "ask"
    assert decision.session_allowed is False


@pytest.mark.parametrize("mode", ["ask", "auto"])
def test_file5_allow_for_this_session_never_covers_a_file_sending_call(mode: Mode) -> None:
    decision = decide(facts(name="files__upload", files=True), mode, Rules(), {"files__upload"})
    assert decision.verdict == "ask"
    assert decision.session_allowed is False


@pytest.mark.parametrize(
    ("call", "mode", "rules", "named"),
    [
        pytest.param(facts(), "auto", Rules(deny=("notes__write",)), "notes__write", id="deny-rule"),
        pytest.param(facts(), "read-only", Rules(), "read-only", id="read-only-no-hints"),
        pytest.param(facts("destructive"), "plan", Rules(), "plan", id="plan-destructive"),
        pytest.param(facts("readOnly", trusted=False), "read-only", Rules(), "read-only", id="read-only-untrusted"),
        pytest.param(facts("readOnly", files=True), "plan", Rules(), "plan", id="plan-sends-file"),
        pytest.param(facts("readOnly", secret=True), "read-only", Rules(), "read-only", id="read-only-sends-secret"),
    ],
)
def test_pol1_pol4_a_refusal_carries_a_code_and_a_reason_naming_the_rule_or_mode(
    call: CallFacts, mode: Mode, rules: Rules, named: str
) -> None:
    decision = decide(call, mode, rules, ())
    assert decision.verdict == "refuse"
    assert decision.code
    assert named in decision.reason


# --- POL-2: secret values are treated like files --------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "hints", "trusted"),
    [pytest.param(*key, id=row_id(*key, False)) for key in itertools.product(MODES, HINTS, (True, False))],
)
def test_pol2_a_secret_sending_call_is_decided_like_a_file_sending_one(mode: Mode, hints: Hints, trusted: bool) -> None:
    decision = decide(facts(hints, trusted=trusted, secret=True), mode, Rules(), ())
    assert_matches(decision, EXPECTED[(mode, hints, trusted, True)])


@pytest.mark.parametrize("mode", ["ask", "auto"])
def test_pol2_neither_an_allow_rule_nor_a_session_allow_skips_the_card_of_a_secret_sending_call(mode: Mode) -> None:
    decision = decide(facts("readOnly", secret=True), mode, Rules(allow=("*",)), {"notes__write"})
    assert decision.verdict == "ask"
    assert decision.session_allowed is False


# --- invariants over every combination ------------------------------------------------------------------------

NAMES = ("notes__read", "notes__delete_page", "files__upload")
SESSION_ALLOWS: tuple[frozenset[str], ...] = (frozenset(), frozenset(NAMES))
# Each rule set with the names (of NAMES) its deny globs match, worked out by hand.
RULE_SETS: tuple[tuple[Rules, frozenset[str]], ...] = (
    (Rules(), frozenset()),
    (Rules(allow=("*",)), frozenset()),
    (Rules(allow=("notes__*",), deny=("*__delete_*",)), frozenset({"notes__delete_page"})),
    (Rules(allow=("*",), deny=("files__*", "notes__read")), frozenset({"files__upload", "notes__read"})),
)


@dataclass(frozen=True)
class Case:
    call: CallFacts
    mode: Mode
    rules: Rules
    denied: bool
    session_allows: Collection[str]


def every_case() -> Iterator[Case]:
    for mode, hints, trusted, files, secret, name, (rules, denied), allows in itertools.product(
        MODES, HINTS, (True, False), (False, True), (False, True), NAMES, RULE_SETS, SESSION_ALLOWS
    ):
        call = facts(hints, name=name, trusted=trusted, files=files, secret=secret)
        yield Case(call, mode, rules, name in denied, allows)


def test_pol4_a_name_matching_a_deny_rule_is_always_refused() -> None:
    for case in every_case():
        if case.denied:
            decision = decide(case.call, case.mode, case.rules, case.session_allows)
            assert decision.verdict == "refuse", case
            assert decision.code, case


def test_pol1_pol2_pol3_read_only_and_plan_run_only_trusted_read_only_tools_that_are_not_destructive() -> None:
    for case in every_case():
        if case.mode not in ("read-only", "plan"):
            continue
        decision = decide(case.call, case.mode, case.rules, case.session_allows)
        if decision.verdict == "run":
            assert case.call.trust_annotations, case
            assert case.call.read_only, case
            assert not case.call.destructive, case
        assert decision.verdict != "ask", case


def test_file5_pol2_nothing_that_sends_a_file_or_secret_ever_runs_without_asking() -> None:
    for case in every_case():
        if case.call.sends_files or case.call.sends_secret:
            decision = decide(case.call, case.mode, case.rules, case.session_allows)
            assert decision.verdict != "run", case
            assert decision.session_allowed is False, case


def test_pol2_a_trusted_destructive_tool_runs_without_a_card_only_in_auto_and_never_offers_session() -> None:
    for case in every_case():
        if case.call.trust_annotations and case.call.destructive:
            decision = decide(case.call, case.mode, case.rules, case.session_allows)
            assert decision.verdict != "run" or case.mode == "auto", case
            assert decision.session_allowed is False, case


def test_decide_is_deterministic_and_ignores_the_kind_of_collection_of_session_allows() -> None:
    for case in every_case():
        first = decide(case.call, case.mode, case.rules, case.session_allows)
        assert decide(case.call, case.mode, case.rules, case.session_allows) == first, case
        assert decide(case.call, case.mode, case.rules, list(case.session_allows)) == first, case
        assert decide(case.call, case.mode, case.rules, tuple(sorted(case.session_allows))) == first, case


@pytest.mark.parametrize("mode", MODES)
def test_pol4_cat1_a_deny_rule_holds_for_the_name_a_collision_took_from_the_tool(mode: Mode) -> None:
    suffixed = CallFacts(name="a__b__c-1a2b3c", base_name="a__b__c", contested=True, read_only=True)
    decision = decide(suffixed, mode, Rules(deny=("a__b__c",)), ())
    assert decision.verdict == "refuse"
    assert decision.code == "denied"
    assert "'a__b__c'" in decision.reason


def test_pol4_cat1_an_allow_rule_applies_to_neither_of_two_tools_that_want_one_name() -> None:
    rules = Rules(allow=("a__b__c", "a__b__c-*"))
    holder = CallFacts(name="a__b__c", contested=True)
    newcomer = CallFacts(name="a__b__c-1a2b3c", base_name="a__b__c", contested=True)
    alone = CallFacts(name="a__b__c")
    assert decide(holder, "ask", rules, ()).verdict == "ask"
    assert decide(newcomer, "ask", rules, ()).verdict == "ask"
    assert decide(alone, "ask", rules, ()).verdict == "run"
