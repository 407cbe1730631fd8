"""Finding tools by what a person wants (MOD-4): a lexical index over a catalog's names, descriptions and parameters.

BM25F over four fields (the name split into words, the description, the parameters' names, their
descriptions), with a light stemmer and a small table of words people use for what tools call
otherwise ("save" finds `write`, "remove" finds `delete`). Deterministic (ties go by name), no
network, no model: the same catalog and query give the same answer on every machine.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["ToolIndex", "words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STOP = frozenset(
    [
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
    ]
)
FIELDS = {"name": 3.0, "server": 1.0, "description": 1.0, "parameter": 1.5, "parameter_text": 0.5}
"""Each field's weight: a word in a tool's name says most about what it does."""
K1 = 1.2
B = 0.75
REPEAT_DECAY = 0.5
"""Each further copy of one definition (the same tool on another server) scores this much of the one before."""
RELATED_WEIGHT = 0.5
"""How much a related word (`save` for `write`) counts against the word itself."""

RELATED: Mapping[str, tuple[str, ...]] = {
    "save": ("write", "store", "create", "put", "add"),
    "store": ("write", "save", "put"),
    "remember": ("store", "save", "memory", "create", "add"),
    "note": ("memory", "observation", "entity", "file", "write"),
    "remove": ("delete", "unlink", "drop"),
    "erase": ("delete", "remove"),
    "delete": ("remove", "destroy", "erase", "wipe"),
    "forget": ("delete", "remove", "clear", "wipe"),
    "undo": ("reset", "revert", "restore", "unstage", "cancel"),
    "record": ("write", "save", "store", "log", "add", "create"),
    "know": ("knowledge", "memory", "information"),
    "txt": ("text", "file"),
    "doc": ("document", "file"),
    "dir": ("directory", "folder"),
    "repo": ("repository", "git"),
    "env": ("environment", "variable"),
    "img": ("image", "picture"),
    "screenshot": ("image", "picture", "screen"),
    "png": ("image", "picture"),
    "online": ("internet", "web", "url"),
    "internet": ("web", "url", "online"),
    "article": ("page", "web", "document"),
    "find": ("search", "lookup", "query", "get", "list"),
    "look": ("search", "lookup", "get", "read", "view"),
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


_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A light suffix stripper, never a dictionary: `notes`/`note`, `changed`/`changes`/`change`,
    `running`/`run`, `relations`/`relate` and `deletion`/`delete` meet on one stem."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and _VOWELS & set(stem):
            # `stopped` → `stop`, `running` → `run`, but `pressed` stays `press`.
            word = stem[:-1] if stem[-1] == stem[-2] and stem[-1] not in "lsz" else stem
            break
    if word.endswith("ion") and len(word) > 6:
        word = word[:-3]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _related_stems(table: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """`RELATED` keyed and valued by stems, so `saving`, `saves` and `saved` all find what `save` finds."""
    merged: dict[str, dict[str, None]] = {}
    for word, related in table.items():
        key = _stem(word)
        bucket = merged.setdefault(key, {})
        for other in related:
            for stem in (_stem(part) for part in other.split()):
                if stem != key:
                    bucket[stem] = None
    return {key: tuple(bucket) for key, bucket in merged.items()}


_RELATED_STEMS = _related_stems(RELATED)

MAX_QUERY_WORDS = 64
"""A query's words past this many are ignored: a pasted document must not cost more than a sentence."""
MAX_WORD = 40
"""Longer runs of letters are not words anyone searches by (base64, hashes, a 100 KB `xxxx`)."""


def words(text: str, limit: int | None = None) -> list[str]:
    """The words of a text, name or query: split on anything not a letter or digit and on camelCase, lowercased,
    stemmed, without the commonest English words (at most `limit` of them when given)."""
    found: list[str] = []
    for match in _WORD.finditer(text):
        lowered = match.group().lower()
        if lowered in _STOP or len(lowered) > MAX_WORD:
            continue
        found.append(_stem(lowered))
        if limit is not None and len(found) >= limit:
            break
    return found


def _query_terms(query: str) -> dict[str, float]:
    """The query's stemmed words at weight 1, and the words related to them at `RELATED_WEIGHT` (never more)."""
    terms: dict[str, float] = {}
    for match in _WORD.finditer(query):
        lowered = match.group().lower()
        if lowered in _STOP or len(lowered) > MAX_WORD:
            continue
        stem = _stem(lowered)
        if stem not in terms and len(terms) >= MAX_QUERY_WORDS:
            break
        terms[stem] = 1.0
        for related in _RELATED_STEMS.get(stem, ()):
            terms[related] = max(terms.get(related, 0.0), RELATED_WEIGHT)
    return terms


@dataclass(frozen=True, slots=True)
class _Document:
    name: str
    fields: dict[str, list[str]]
    signature: tuple[str, ...]
    """What two copies of one server's tool share (all but the server prefix): repeats are spread out by it."""


def _document(tool: Mapping[str, Any], separator: str) -> _Document:
    name = str(tool.get("name", ""))
    server, _, own = name.rpartition(separator) if separator else ("", "", name)
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    parameters: list[str] = []
    parameter_text: list[str] = []
    if isinstance(properties, Mapping):
        for key, spec in properties.items():
            parameters.extend(words(str(key)))
            if isinstance(spec, Mapping):
                parameter_text.extend(words(str(spec.get("description", ""))))
    annotations = tool.get("annotations")
    title = tool.get("title") or (annotations.get("title") if isinstance(annotations, Mapping) else None) or ""
    fields = {
        "name": words(own) + words(str(title)),
        "server": words(server),
        "description": words(str(tool.get("description") or "")),
        "parameter": parameters,
        "parameter_text": parameter_text,
    }
    signature = (own, *fields["description"], "|", *parameters, "|", *parameter_text)
    return _Document(name, fields, signature)


class ToolIndex:
    """A catalog's tools, indexed once, searched many times: `search(query, limit)` → names, best first.

    `separator` is what joins a server's id to its tools' names (`fs1__read_file`): the server's
    words count, but less than the tool's own, and copies of one definition on several servers are
    spread out (`REPEAT_DECAY`) so that a handful of results shows a handful of different tools.
    """

    def __init__(self, tools: Iterable[Mapping[str, Any]], *, separator: str = "__") -> None:
        documents = [_document(tool, separator) for tool in tools]
        self.names: tuple[str, ...] = tuple(document.name for document in documents)
        signatures: dict[tuple[str, ...], int] = {}
        self._signature = tuple(signatures.setdefault(document.signature, len(signatures)) for document in documents)
        # Names sorted once: a tool's rank among them breaks ties without comparing strings per search.
        self._order = [0] * len(documents)
        for rank, index in enumerate(sorted(range(len(documents)), key=self.names.__getitem__)):
            self._order[index] = rank
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
        # Document frequency counts distinct definitions, so that five copies of a filesystem server
        # do not make `file` look five times commoner than it is. Each posting keeps its term's whole
        # BM25 share (idf times saturated frequency): a search is then additions only.
        distinct = len(signatures) or 1
        self._postings: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        for term, docs in postings.items():
            frequency = len({self._signature[index] for index in docs})
            idf = math.log(1 + (distinct - frequency + 0.5) / (frequency + 0.5))
            self._postings[term] = (tuple(docs), tuple(idf * tf * (K1 + 1) / (tf + K1) for tf in docs.values()))

    def __len__(self) -> int:
        return len(self.names)

    def search(self, query: str, limit: int = 5) -> list[str]:
        """The names of the `limit` tools that best match `query` (none that share no word with it), best first.

        Never raises on any text; ties go by name, so the answer does not depend on the catalog's order.
        """
        if limit <= 0 or not self.names:
            return []
        scores = [0.0] * len(self.names)
        for term, weight in _query_terms(query).items():
            posting = self._postings.get(term)
            if posting is None:
                continue
            for index, share in zip(*posting, strict=True):
                scores[index] += weight * share
        order = self._order
        heap = [(-score, order[index], index) for index, score in enumerate(scores) if score > 0]
        heapq.heapify(heap)
        # Best first by raw score; a repeat's decayed score never beats its raw one, so once the next
        # raw score cannot reach the `limit`-th kept score, nothing further can enter.
        seen: dict[int, int] = {}
        kept: list[tuple[float, int, int]] = []
        while heap and (len(kept) < limit or -heap[0][0] > kept[limit - 1][0]):
            negative, rank, index = heapq.heappop(heap)
            copies = seen.get(self._signature[index], 0)
            seen[self._signature[index]] = copies + 1
            kept.append((-negative * REPEAT_DECAY**copies, rank, index))
            kept.sort(key=lambda item: (-item[0], item[1]))
        return [self.names[index] for _, _, index in kept[:limit]]
