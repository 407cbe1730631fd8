"""The line Ctrl-C ends a command with, and a Ctrl-C a library wrapped in an error of its own (the standard library
only, so it loads at once even when Ctrl-C came before the console's own modules did)."""

from __future__ import annotations

import sys

__all__ = ["interrupt_inside", "say_interrupted"]


def say_interrupted(what: str = "") -> None:
    """The one line Ctrl-C ends a command with (`what`: what was done about it), on a line of its own: a terminal
    has just shown `^C` where the cursor was."""
    start = "\n" if sys.stderr.isatty() else ""
    sys.stderr.write(f"{start}mcpyard: interrupted{'; ' + what if what else ''}\n")


def interrupt_inside(exc: BaseException) -> bool:
    """Whether `exc` is a Ctrl-C that a library wrapped in an error of its own: pydantic turns one pressed while it
    builds a model (as modules load) into a `SchemaError` naming it."""
    seen: set[int] = set()
    inner: BaseException | None = exc
    while inner is not None and id(inner) not in seen:
        if isinstance(inner, KeyboardInterrupt):
            return True
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__
    return type(exc).__name__ == "SchemaError" and "KeyboardInterrupt" in str(exc)
