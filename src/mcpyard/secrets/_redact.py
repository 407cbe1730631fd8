"""The redactor: every secret value mcpyard sent, in every form it may come back in, replaced by its name (SEC-3).

Forms: the value itself (also inside a longer word), its JSON-escaped, URL-encoded and
HTML-escaped forms, and its base64 (standard and URL-safe) at each of the three byte
alignments it can take inside a longer encoding; for base64 the stable core is matched,
the characters that depend on neighbouring bytes left out.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = ["MIN_SECRET_LENGTH", "Redactor", "forms_of"]

MIN_SECRET_LENGTH = 4
"""Shorter values are not redacted: they would match ordinary text everywhere."""
MIN_BASE64_CORE = 6
SCANNED_FORMS = 16
"""Up to this many forms, text is searched with `str.find` per form; with more, one regex pass is cheaper."""


def _base64_cores(raw: bytes) -> set[str]:
    cores: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        start = -(-4 * shift // 3)  # characters that carry bits of the bytes before
        end = (8 * (shift + len(raw))) // 6  # characters whose bits are all known
        core = encoded[start:end]
        if len(core) >= MIN_BASE64_CORE:
            cores.add(core)
            cores.add(core.replace("+", "-").replace("/", "_"))
    return cores


def forms_of(value: str) -> set[str]:
    """Every spelling of a value the redactor looks for."""
    forms = {value, json.dumps(value)[1:-1], quote(value, safe=""), quote_plus(value), html.escape(value)}
    forms |= _base64_cores(value.encode("utf-8", "surrogatepass"))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


class Redactor:
    """Replaces secret values by labels (`%NAME%`, `${env:NAME}`) wherever they stand.

    With a few forms (up to `SCANNED_FORMS`: a few secrets), text is first searched for each
    with `str.find`, far faster than one regex alternation of literals over a long text;
    text holding none is returned as it is, a lone form found is replaced with `str.replace`,
    several by one regex of those forms only. All give what the regex of every form gives: a
    form absent from the text can never match in it. With more forms, one regex of every
    form does it in one pass.
    """

    def __init__(self, secrets: Iterable[tuple[str, str]] = ()) -> None:
        """`secrets`: `(label, value)` pairs; values shorter than 4 characters are ignored."""
        labels: dict[str, str] = {}
        for label, value in secrets:
            if len(value) < MIN_SECRET_LENGTH:
                continue
            for form in forms_of(value):
                labels.setdefault(form, label)
        self._labels = labels
        # Longest first: where two forms start at the same place, the longer one is replaced.
        self._forms = tuple(sorted(labels, key=len, reverse=True))
        self._pattern = _alternation(self._forms) if self._forms else None
        self._scan = len(self._forms) <= SCANNED_FORMS

    def __bool__(self) -> bool:
        return self._pattern is not None

    def with_secrets(self, secrets: Iterable[tuple[str, str]]) -> Redactor:
        """This redactor and more `(label, value)` pairs: a new one (this one does not change)."""
        more = Redactor(secrets)
        if not more:
            return self
        merged = Redactor()
        merged._labels = {**more._labels, **self._labels}
        merged._forms = tuple(sorted(merged._labels, key=len, reverse=True))
        merged._pattern = _alternation(merged._forms)
        merged._scan = len(merged._forms) <= SCANNED_FORMS
        return merged

    @property
    def longest(self) -> int:
        """The longest form looked for (a streaming reader holds back one less than this)."""
        return max((len(form) for form in self._labels), default=0)

    def redact(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        if not self._scan:
            return self._pattern.sub(lambda match: self._labels[match.group()], text)
        present = [form for form in self._forms if form in text]
        if not present:
            return text
        if len(present) == 1:
            [form] = present
            return text.replace(form, self._labels[form])
        pattern = self._pattern if len(present) == len(self._forms) else _alternation(present)
        return pattern.sub(lambda match: self._labels[match.group()], text)

    def contains(self, text: str) -> bool:
        """Whether any secret value, in any form, is in the text (outgoing arguments are held for approval)."""
        if not self._scan:
            return self._pattern is not None and self._pattern.search(text) is not None
        return any(form in text for form in self._forms)

    def redact_json(self, value: Any) -> Any:
        """A JSON value with every string (keys included) redacted."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_json(item) for item in value]
        if isinstance(value, Mapping):
            return {self.redact(str(key)): self.redact_json(item) for key, item in value.items()}
        return value


def _alternation(forms: Sequence[str]) -> re.Pattern[str]:
    # re.compile keeps recent patterns, so the same few forms found again cost a dictionary look-up.
    return re.compile("|".join(re.escape(form) for form in forms))
