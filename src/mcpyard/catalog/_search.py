"""Finding tools by what a person wants (MOD-4): a lexical index over a catalog's names, descriptions and parameters.

BM25F over four fields (the name split into words, the description, the parameters' names, their
descriptions), with a light stemmer and a small table of words people use for what tools call
otherwise ("save" finds `write`, "remove" finds `delete`). Deterministic (ties go by name), no
network, no model: the same catalog and query give the same answer on every machine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolIndex", "words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "some",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "up",
        "us",
        "use",
        "using",
        "want",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    )
)
FIELDS = {"name": 3.0, "description": 1.0, "parameter": 1.5, "parameter_text": 0.5}
"""Each field's weight: a word in a tool's name says most about what it does."""
K1 = 1.2
B = 0.75
RELATED_WEIGHT = 0.5
"""How much a related word (`save` for `write`) counts against the word itself."""

RELATED: Mapping[str, tuple[str, ...]] = {
    "save": ("write", "store", "create", "put", "add"),
    "store": ("write", "save", "put"),
    "remember": ("store", "save", "memory", "create", "add"),
    "note": ("memory", "observation", "entity", "file", "write"),
    "remove": ("delete", "unlink", "drop"),
    "erase": ("delete", "remove"),
    "delete": ("remove",),
    "find": ("search", "lookup", "query", "get", "list"),
    "look": ("search", "lookup", "get", "read"),
    "show": ("get", "read", "list", "view"),
    "open": ("read", "get", "fetch"),
    "read": ("get", "open", "view"),
    "get": ("read", "fetch"),
    "fetch": ("get", "download", "url"),
    "download": ("fetch", "get"),
    "web": ("url", "fetch", "http", "page"),
    "page": ("url", "fetch", "web"),
    "website": ("url", "fetch", "web"),
    "time": ("clock", "now", "current", "timezone", "date"),
    "clock": ("time",),
    "date": ("time", "day"),
    "timezone": ("time", "zone"),
    "convert": ("conversion", "translate", "transform"),
    "change": ("edit", "update", "modify", "set"),
    "edit": ("update", "modify", "change", "replace"),
    "update": ("edit", "modify", "set"),
    "rename": ("move",),
    "move": ("rename",),
    "folder": ("directory", "dir"),
    "directory": ("folder", "dir"),
    "make": ("create", "add", "new"),
    "new": ("create", "add"),
    "add": ("create", "insert", "append"),
    "list": ("list", "all", "show"),
    "commit": ("commit", "git"),
    "history": ("log", "commit"),
    "branch": ("branch", "checkout", "git"),
    "difference": ("diff", "compare"),
    "compare": ("diff",),
    "changes": ("diff", "status"),
    "sum": ("add", "plus", "total"),
    "plus": ("add", "sum"),
    "weather": ("forecast", "temperature", "alert"),
    "forecast": ("weather",),
    "relation": ("link", "connect", "relationship"),
    "connect": ("link", "relation"),
    "link": ("relation", "connect", "url"),
    "picture": ("image",),
    "photo": ("image",),
    "image": ("picture", "png"),
    "size": ("info", "metadata", "stat"),
    "info": ("metadata", "info", "stat"),
    "details": ("info", "metadata", "get"),
    "think": ("thought", "sequential", "reason"),
    "plan": ("thought", "think", "step"),
    "echo": ("repeat", "back"),
    "repeat": ("echo",),
    "wait": ("sleep", "delay", "long", "running"),
}
"""Words people use, each with the words tools use for the same thing (searched at `RELATED_WEIGHT`)."""


def _stem(word: str) -> str:
    """A light suffix stripper: `notes` and `note`, `writing` and `write` meet (never a dictionary)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3].rstrip("e") if not word[:-3].endswith("e") else word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The words of a text, name or query: split on anything not a letter or digit and on camelCase, lowercased,
    stemmed, without the commonest English words."""
    found = []
    for part in _WORD.findall(text):
        lowered = part.lower()
        if lowered not in _STOP:
            found.append(_stem(lowered))
    return found


def _query_terms(query: str) -> dict[str, float]:
    """The query's stemmed words at weight 1, and the words related to them at `RELATED_WEIGHT` (never more)."""
    terms: dict[str, float] = {}
    for part in _WORD.findall(query):
        lowered = part.lower()
        if lowered in _STOP:
            continue
        terms[_stem(lowered)] = 1.0
        for related in RELATED.get(lowered, RELATED.get(_stem(lowered), ())):
            stem = _stem(related)
            terms[stem] = max(terms.get(stem, 0.0), RELATED_WEIGHT)
    return terms


@dataclass(frozen=True, slots=True)
class _Document:
    name: str
    fields: dict[str, list[str]]


def _document(tool: Mapping[str, Any]) -> _Document:
    name = str(tool.get("name", ""))
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    parameters: list[str] = []
    parameter_text: list[str] = []
    if isinstance(properties, Mapping):
        for key, spec in properties.items():
            parameters.extend(words(str(key)))
            if isinstance(spec, Mapping):
                parameter_text.extend(words(str(spec.get("description", ""))))
    title = tool.get("title") or (tool.get("annotations") or {}).get("title") or ""
    # A prefixed name (`server__tool`) names its server too: both count as the name's words.
    return _Document(
        name,
        {
            "name": words(name) + words(str(title)),
            "description": words(str(tool.get("description") or "")),
            "parameter": parameters,
            "parameter_text": parameter_text,
        },
    )


class ToolIndex:
    """A catalog's tools, indexed once, searched many times: `search(query, limit)` → names, best first."""

    def __init__(self, tools: Iterable[Mapping[str, Any]]) -> None:
        documents = [_document(tool) for tool in tools]
        self.names: tuple[str, ...] = tuple(document.name for document in documents)
        count = len(documents) or 1
        average = {
            field: (sum(len(document.fields[field]) for document in documents) / count) or 1.0 for field in FIELDS
        }
        postings: dict[str, dict[int, float]] = {}
        for index, document in enumerate(documents):
            weighted: dict[str, float] = {}
            for field, weight in FIELDS.items():
                terms = document.fields[field]
                norm = 1 - B + B * len(terms) / average[field]
                for term in terms:
                    weighted[term] = weighted.get(term, 0.0) + weight / norm
            for term, tf in weighted.items():
                postings.setdefault(term, {})[index] = tf
        self._postings = postings
        self._idf = {
            term: math.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5)) for term, docs in postings.items()
        }

    def __len__(self) -> int:
        return len(self.names)

    def search(self, query: str, limit: int = 5) -> list[str]:
        """The names of the `limit` tools that best match `query` (none that share no word with it), best first."""
        scores: dict[int, float] = {}
        for term, weight in _query_terms(query).items():
            docs = self._postings.get(term)
            if not docs:
                continue
            idf = self._idf[term] * weight
            for index, tf in docs.items():
                scores[index] = scores.get(index, 0.0) + idf * tf * (K1 + 1) / (tf + K1)
        best = sorted(scores.items(), key=lambda item: (-item[1], self.names[item[0]]))
        return [self.names[index] for index, _ in best[: max(0, limit)]]
