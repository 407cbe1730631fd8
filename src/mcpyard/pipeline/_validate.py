"""Checking a call's arguments against its tool's input schema: fast for the common case, bounded always (CALL-1).

A simple schema is decided by the quick check on the event loop, as before. A schema the
quick check does not decide is checked by jsonschema under a hard budget (`_budget.py`):
first on the event loop for at most `INLINE_BUDGET_SECS` (what nearly every check needs),
then, if that was not enough, or at once for a large schema, in a worker thread (each
server with its own few), so one server's costly schema never holds up another server, a
gateway client or a cancellation. A check past `VALIDATION_BUDGET_SECS` refuses the call
with `validation_timeout`; the server is not called.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from jsonschema import SchemaError
from referencing.exceptions import Unresolvable

from mcpyard.catalog import CatalogEntry, inspect_schema
from mcpyard.errors import CallError
from mcpyard.pipeline._budget import PATTERN_TIMEOUT, OverBudget, bounded_validator, budget
from mcpyard.pipeline._quick import Check, quick_check

__all__ = [
    "INLINE_BUDGET_SECS",
    "INLINE_PARTS",
    "PATTERN_TIMEOUT",
    "VALIDATION_BUDGET_SECS",
    "WORKERS_PER_SERVER",
    "check_arguments",
    "quick_check",
    "validate_arguments",
]

MAX_ERRORS_SHOWN = 3
VALIDATION_BUDGET_SECS = 1.0
"""The most one call's arguments may take to check; past it the call is refused (THREATS: bound what peers control)."""
INLINE_BUDGET_SECS = 0.005
"""How long a check may hold the event loop; one that needs more starts again in a worker thread."""
INLINE_PARTS = 2_000
"""A schema larger than this once its `$ref`s are expanded is checked in a worker thread from the start."""
WORKERS_PER_SERVER = 2
"""Worker threads checking one server's schemas at once; more calls wait their turn (other servers' do not)."""
_MAX_PREPARED = 4096


@dataclass(slots=True)
class _Prepared:
    """What checking one tool definition takes: built once per definition, not per call."""

    quick: Check | None
    problem: str | None
    """Why the schema cannot be used at all (a bound passed), if it cannot."""
    large: bool
    """Checked in a worker from the start: even building its validator takes time."""
    validator: Any = None


_PREPARED: OrderedDict[str, _Prepared] = OrderedDict()
_LIMITERS: anyio.lowlevel.RunVar[dict[str, anyio.CapacityLimiter]] = anyio.lowlevel.RunVar("mcpyard_validators")


def _prepare(entry: CatalogEntry) -> _Prepared:
    key = entry.definition_hash
    prepared = _PREPARED.get(key)
    if prepared is None:
        schema = entry.input_schema
        # The same judgement as at listing time (cached there by the same hash): an entry made
        # some other way is held to the same bounds.
        report = inspect_schema(dict(schema), key=key)
        large = report.expanded > INLINE_PARTS
        prepared = _PREPARED[key] = _Prepared(quick_check(schema), report.problem, large)
        if len(_PREPARED) > _MAX_PREPARED:
            _PREPARED.popitem(last=False)
    return prepared


def validate_arguments(
    entry: CatalogEntry, arguments: Mapping[str, Any], *, budget_secs: float = VALIDATION_BUDGET_SECS
) -> None:
    """Check the arguments against the tool's input schema (CALL-1), here and now, within `budget_secs`.

    Raises:
        CallError: `invalid_arguments` naming each problem and where it is; `invalid_schema`
            when the schema cannot be used; `validation_timeout` past the budget.
    """
    prepared = _prepare(entry)
    if prepared.quick is not None and prepared.quick(arguments):
        return
    _full_check(prepared, entry, arguments, budget_secs, None)


async def check_arguments(entry: CatalogEntry, arguments: Mapping[str, Any]) -> None:
    """`validate_arguments`, without ever holding the event loop longer than `INLINE_BUDGET_SECS`.

    Raises:
        CallError: as `validate_arguments`.
    """
    prepared = _prepare(entry)
    if prepared.quick is not None and prepared.quick(arguments):
        return
    if not prepared.large:
        try:
            _full_check(prepared, entry, arguments, INLINE_BUDGET_SECS, None, inline=True)
            return
        except _NeedsMore:
            pass  # a costly check: started again where it holds up no one
    cancelled = threading.Event()
    check = functools.partial(_full_check, prepared, entry, arguments, VALIDATION_BUDGET_SECS, cancelled)
    try:
        await anyio.to_thread.run_sync(check, abandon_on_cancel=True, limiter=_limiter(entry.server))
    finally:
        cancelled.set()  # a caller that went away stops its worker at the next step


class _NeedsMore(Exception):  # internal signal: the check goes on in a worker
    pass


def _limiter(server: str) -> anyio.CapacityLimiter:
    try:
        limiters = _LIMITERS.get()
    except LookupError:
        limiters = {}
        _LIMITERS.set(limiters)
    limiter = limiters.get(server)
    if limiter is None:
        limiter = limiters[server] = anyio.CapacityLimiter(WORKERS_PER_SERVER)
    return limiter


def _full_check(
    prepared: _Prepared,
    entry: CatalogEntry,
    arguments: Mapping[str, Any],
    seconds: float,
    cancelled: threading.Event | None,
    *,
    inline: bool = False,
) -> None:
    if prepared.problem is not None:
        raise _unusable(entry, prepared.problem)
    try:
        with budget(seconds, cancelled):
            if prepared.validator is None:
                prepared.validator = bounded_validator(dict(entry.input_schema))
            validator = prepared.validator
            if validator.is_valid(arguments):
                return
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except OverBudget as exc:
        if inline:
            raise _NeedsMore from None
        raise CallError(
            "validation_timeout",
            f"checking the arguments for {entry.name!r} against its input schema {exc.what}, so the call was "
            f"refused and server {entry.server!r} was not called; the schema is too costly to check for these "
            "arguments (try smaller or simpler ones)",
        ) from None
    except (SchemaError, Unresolvable, ValueError, TypeError) as exc:
        raise _unusable(entry, _first_line(exc)) from None
    except (RecursionError, ArithmeticError):
        raise CallError(
            "invalid_arguments", f"arguments for {entry.name!r} nest too deeply or are too large to check"
        ) from None
    problems = []
    for error in errors[:MAX_ERRORS_SHOWN]:
        where = "/".join(str(part) for part in error.absolute_path) or "(arguments)"
        problems.append(f"{where}: {error.message}")
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more)" if len(errors) > MAX_ERRORS_SHOWN else ""
    raise CallError(
        "invalid_arguments",
        f"arguments for {entry.name!r} do not match its input schema: {'; '.join(problems)}{more}",
    )


def _unusable(entry: CatalogEntry, why: str) -> CallError:
    return CallError(
        "invalid_schema",
        f"tool {entry.name!r} has an input schema mcpyard cannot use ({why}); "
        f"report it to the maintainers of server {entry.server!r}",
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
