"""Checking a call's arguments against its tool's input schema, fast for the common case (CALL-1)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import regex
from jsonschema import SchemaError, ValidationError, validators

from mcpyard.catalog import CatalogEntry
from mcpyard.errors import CallError

__all__ = ["validate_arguments"]

MAX_ERRORS_SHOWN = 3


_VALIDATORS: OrderedDict[str, Any] = OrderedDict()
_MAX_VALIDATORS = 4096
PATTERN_TIMEOUT = 0.1
"""A server's `pattern` gets this long per check: a backtracking pattern cannot stall the host."""


def _bounded_pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """The `pattern` keyword, with a time limit on the regular expression (THREATS: bound what a peer controls)."""
    if not validator.is_type(instance, "string") or not isinstance(pattern, str):
        return
    try:
        matched = regex.search(pattern, instance, timeout=PATTERN_TIMEOUT)
    except regex.error:
        yield ValidationError(f"the tool's pattern {pattern[:80]!r} is not a valid regular expression")
        return
    except TimeoutError:
        yield ValidationError(f"checking the pattern {pattern[:80]!r} took too long; the value was not accepted")
        return
    if matched is None:
        yield ValidationError(f"{instance[:80]!r} does not match {pattern[:80]!r}")


def _validator(entry: CatalogEntry) -> Any:
    """The schema validator of a tool, built once per definition (not per call)."""
    key = entry.definition_hash
    validator = _VALIDATORS.get(key)
    if validator is None:
        schema = dict(entry.input_schema)
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        bounded = validators.extend(cls, {"pattern": _bounded_pattern})
        validator = bounded(schema)
        _VALIDATORS[key] = validator
        if len(_VALIDATORS) > _MAX_VALIDATORS:
            _VALIDATORS.popitem(last=False)
    return validator


def validate_arguments(entry: CatalogEntry, arguments: Mapping[str, Any]) -> None:
    """Check the arguments against the tool's input schema (CALL-1).

    Raises:
        CallError: `invalid_arguments` naming each problem and where it is.
    """
    try:
        validator = _validator(entry)
    except (SchemaError, ValueError, TypeError) as exc:
        raise CallError(
            "invalid_schema",
            f"tool {entry.name!r} has an input schema mcpyard cannot use ({_first_line(exc)}); "
            f"report it to the maintainers of server {entry.server!r}",
        ) from None
    if validator.is_valid(arguments):
        return
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    problems = []
    for error in errors[:MAX_ERRORS_SHOWN]:
        where = "/".join(str(part) for part in error.absolute_path) or "(arguments)"
        problems.append(f"{where}: {error.message}")
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    raise CallError(
        "invalid_arguments",
        f"arguments for {entry.name!r} do not match its input schema: {'; '.join(problems)}{more}",
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
