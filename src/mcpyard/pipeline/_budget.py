"""A hard budget on checking a value against a server's schema: each keyword step counted, each regex time-limited.

The validator classes made here are jsonschema's own, with every keyword wrapped so the
budget in force (`budget(...)`) is charged a step for each one applied, and its regular
expressions (`pattern`, `patternProperties`, and `additionalProperties` beside them)
matched by the `regex` module with a time limit instead of by `re`, which has none. A check
past its deadline, or whose caller went away, stops at its next step with `OverBudget`.
`$ref`s resolve inside the schema only: the registry is empty, so nothing is ever fetched.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import regex
from jsonschema import ValidationError, validators
from referencing import Registry

__all__ = ["PATTERN_TIMEOUT", "OverBudget", "bounded_validator", "budget"]

PATTERN_TIMEOUT = 0.1
"""One regular expression match gets at most this long (less when the whole check has less left)."""
_STEPS_PER_CLOCK_READ = 32

Keyword = Callable[[Any, Any, Any, Any], Any]


class OverBudget(Exception):  # a signal inside the validator, not an error of its own
    """The check ran out of time (or its caller went away); `what` says how, in words."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _Budget:
    __slots__ = ("cancelled", "deadline", "seconds", "steps")

    def __init__(self, seconds: float, cancelled: threading.Event | None) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.cancelled = cancelled
        self.steps = 0

    def spend(self) -> None:
        self.steps += 1
        if self.steps % _STEPS_PER_CLOCK_READ == 0:
            self.check()

    def check(self) -> None:
        if self.cancelled is not None and self.cancelled.is_set():
            raise OverBudget("was given up by its caller")
        if time.monotonic() > self.deadline:
            raise OverBudget(f"took longer than {self.seconds:g} s")

    def regex_timeout(self) -> float:
        return max(0.001, min(PATTERN_TIMEOUT, self.deadline - time.monotonic()))


_CURRENT: ContextVar[_Budget | None] = ContextVar("mcpyard_validation_budget", default=None)


@contextlib.contextmanager
def budget(seconds: float, cancelled: threading.Event | None = None) -> Iterator[None]:
    """Checks run in this block get `seconds` in all, and stop early once `cancelled` is set."""
    token = _CURRENT.set(_Budget(seconds, cancelled))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def _search(pattern: str, text: str) -> bool:
    current = _CURRENT.get()
    timeout = current.regex_timeout() if current is not None else PATTERN_TIMEOUT
    try:
        # `concurrent`: the GIL is released while matching, so a worker thread holds up no one.
        return regex.search(pattern, text, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise OverBudget(f"took too long matching the pattern {pattern[:80]!r}") from None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "string") or not isinstance(pattern, str):
        return
    try:
        matched = _search(pattern, instance)
    except regex.error:
        yield ValidationError(f"the tool's pattern {pattern[:80]!r} is not a valid regular expression")
        return
    if not matched:
        yield ValidationError(f"{instance[:80]!r} does not match {pattern[:80]!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _matches(pattern: str, key: str) -> bool:
    try:
        return _search(pattern, key)
    except regex.error:
        return False  # the listing refuses such a schema; a stray one matches nothing


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's `additionalProperties`, with `patternProperties` matched under the budget."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in properties and not any(_matches(p, key) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(extra) for extra in sorted(extras, key=str)[:10])
        verb = "was" if len(extras) == 1 else "were"
        if patterns:
            yield ValidationError(f"{shown} {verb} not expected (and match none of the tool's patterns)")
        else:
            yield ValidationError(f"Additional properties are not allowed ({shown} {verb} unexpected)")


_OWN: dict[str, Keyword] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def _counted(keyword: Keyword) -> Keyword:
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        current = _CURRENT.get()
        if current is not None:
            current.spend()
        return keyword(validator, value, instance, schema)

    return counted


_CLASSES: dict[Any, Any] = {}
_CLASSES_LOCK = threading.Lock()


def _bounded_class(base: Any) -> Any:
    """`base` (a jsonschema validator class) with every keyword counted and every regex bounded; made once."""
    made = _CLASSES.get(base)
    if made is None:
        with _CLASSES_LOCK:
            keywords = {name: _OWN.get(name, keyword) for name, keyword in base.VALIDATORS.items()}
            made = _CLASSES.setdefault(base, validators.extend(base, {k: _counted(f) for k, f in keywords.items()}))
    return made


def bounded_validator(schema: Any) -> Any:
    """A validator for `schema` that obeys the budget in force, resolving `$ref`s inside `schema` only.

    Raises:
        jsonschema.SchemaError: `schema` is not a valid schema of its draft.
    """
    base = validators.validator_for(schema, default=validators.Draft202012Validator)
    base.check_schema(schema)
    # Without `$schema` at the root, a `$ref` to the root stays with this class: with it,
    # jsonschema would pick its own class again for that subschema, unbounded.
    root = {key: value for key, value in schema.items() if key != "$schema"} if isinstance(schema, dict) else schema
    return _bounded_class(base)(root, registry=Registry())
