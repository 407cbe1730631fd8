"""Finding tools by what a person wants (MOD-4): a lexical index over a catalog's names, descriptions and parameters.

BM25F over five fields (the tool's name split into words, its server's, the description, the
parameters' names, their descriptions), with a light stemmer and a table of words people use for
what tools call otherwise ("save" finds `write`, "remove" finds `delete`). Copies of one definition
on several servers (`fs1__read_file`, `fs2__read_file`) count once for how rare a word is, and
each further copy is pushed down, so a handful of results shows a handful of different tools;
a tool whose description says it is deprecated gives way to its replacement. Deterministic (ties
go by name, whatever the catalog's order), no network, no model.

How `RELATED` was built: a hand-written list of everyday synonyms for the verbs and nouns MCP tools
use (create/read/update/delete, files, the web, time, version control, messages), then grown while
measuring recall@5 on `tests/catalog/tool_search/` (the reference servers' real tools, queries in a
user's words) with the words those queries used and no tool did (`undo`, `forget`, `online`,
`screenshot`), always with their general meaning, never a particular tool's or query's name. A
second set of queries, held out from that tuning, checks that it did not just learn the first.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["ToolIndex", "words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\dA-Za-z_]+")
"""camelCase-aware ASCII words and numbers, and runs of any other script's letters (a Russian or Japanese word)."""
_STOP_WORDS = """
a about an and any are as at be been by can could did do does for from had has have how i in into is it its
just me my of on or our please should some that the their them then there these this to up us use using want
was we were what when where which who will with would you your  d ll m re s t ve
"""
"""The commonest English words (and the tails of contractions: what's, don't, I'm), which say nothing of a tool."""
_STOP = frozenset(_STOP_WORDS.split())
FIELDS = {"name": 3.0, "server": 1.0, "description": 1.0, "parameter": 1.5, "parameter_text": 0.5}
"""Each field's weight: a word in a tool's name says most about what it does."""
K1 = 1.2
B = 0.75
REPEAT_DECAY = 0.5
"""Each further copy of one definition (the same tool on another server) scores this much of the one before."""
DEPRECATED = 0.7
"""A tool whose description calls it deprecated scores this much: its replacement (often listed too) comes first."""
EXACT_NAME = 2.0
"""A query that is a tool's very name (`read_file`, "read file", `readFile`) scores that tool this much more."""
RELATED_WEIGHT = 0.5
"""How much a related word (`save` for `write`) counts against the word itself."""

RELATED: Mapping[str, tuple[str, ...]] = {
    # Keeping and forgetting.
    "save": ("write", "store", "create", "put", "add"),
    "store": ("write", "save", "put"),
    "keep": ("save", "store", "write"),
    "remember": ("store", "save", "memory", "create", "add"),
    "record": ("write", "save", "store", "log", "add", "create"),
    "note": ("memory", "observation", "entity", "file", "write"),
    "know": ("knowledge", "memory", "information"),
    "fact": ("observation", "information", "knowledge"),
    "remove": ("delete", "unlink", "drop"),
    "erase": ("delete", "remove"),
    "delete": ("remove", "destroy", "erase", "wipe"),
    "forget": ("delete", "remove", "clear", "wipe"),
    "clear": ("delete", "reset", "remove"),
    "undo": ("reset", "revert", "restore", "unstage", "cancel"),
    # Reading, finding, showing.
    "find": ("search", "lookup", "query", "get", "list"),
    "search": ("find", "query", "lookup"),
    "look": ("search", "lookup", "get", "read", "view"),
    "show": ("get", "read", "list", "view"),
    "see": ("get", "read", "list", "view"),
    "view": ("read", "get", "show"),
    "display": ("show", "get", "view"),
    "open": ("read", "get", "fetch"),
    "read": ("get", "open", "view"),
    "get": ("read", "fetch"),
    "check": ("status", "get", "verify"),
    "inspect": ("info", "get", "read"),
    "details": ("info", "metadata", "get"),
    "info": ("metadata", "stat"),
    "size": ("info", "metadata", "stat"),
    "list": ("all", "show"),
    # Making and changing.
    "make": ("create", "add", "new"),
    "new": ("create", "add"),
    "add": ("create", "insert", "append"),
    "change": ("edit", "update", "modify", "set"),
    "edit": ("update", "modify", "change", "replace"),
    "update": ("edit", "modify", "set"),
    "modify": ("edit", "update", "change"),
    "fix": ("edit", "update", "change"),
    "rename": ("move",),
    "move": ("rename",),
    "convert": ("conversion", "translate", "transform"),
    "run": ("execute", "start", "call"),
    "execute": ("run",),
    "start": ("run", "create", "begin"),
    "stop": ("cancel", "kill", "end"),
    "toggle": ("enable", "disable", "switch"),
    "enable": ("toggle", "turn", "on"),
    "disable": ("toggle", "turn", "off"),
    "switch": ("checkout", "toggle", "change"),
    # Files and places.
    "folder": ("directory", "dir"),
    "directory": ("folder", "dir"),
    "dir": ("directory", "folder"),
    "txt": ("text", "file"),
    "doc": ("document", "file"),
    "document": ("file", "text"),
    "repo": ("repository", "git"),
    "env": ("environment", "variable"),
    "setting": ("config", "configuration", "environment"),
    "config": ("configuration", "setting"),
    "checksum": ("hash", "digest", "sha"),
    "hash": ("digest", "checksum"),
    # The web.
    "web": ("url", "fetch", "http", "page"),
    "page": ("url", "fetch", "web"),
    "website": ("url", "fetch", "web"),
    "site": ("url", "web", "website"),
    "url": ("link", "web", "fetch"),
    "online": ("internet", "web", "url"),
    "internet": ("web", "url", "online"),
    "article": ("page", "web", "document"),
    "html": ("web", "page", "markdown"),
    "fetch": ("get", "download", "url"),
    "download": ("fetch", "get"),
    "upload": ("put", "send", "write"),
    # Time.
    "time": ("clock", "now", "current", "timezone", "date"),
    "clock": ("time",),
    "now": ("current", "time"),
    "today": ("date", "current", "time"),
    "date": ("time", "day"),
    "timezone": ("time", "zone"),
    "wait": ("sleep", "delay", "long", "running"),
    "pause": ("sleep", "wait", "delay"),
    # Version control.
    "history": ("log", "commit"),
    "commit": ("git",),
    "branch": ("checkout", "git"),
    "difference": ("diff", "compare"),
    "compare": ("diff",),
    "changes": ("diff", "status"),
    "modified": ("diff", "status", "change"),
    # Numbers, pictures, people, messages.
    "sum": ("add", "plus", "total"),
    "plus": ("add", "sum"),
    "total": ("sum", "add", "count"),
    "count": ("number", "total", "many"),
    "calculate": ("compute", "sum"),
    "weather": ("forecast", "temperature", "alert"),
    "forecast": ("weather",),
    "relation": ("link", "connect", "relationship"),
    "connect": ("link", "relation"),
    "link": ("relation", "connect", "url"),
    "picture": ("image", "photo"),
    "photo": ("image", "picture"),
    "img": ("image", "picture"),
    "screenshot": ("image", "picture", "screen"),
    "png": ("image", "picture"),
    "image": ("picture", "png"),
    "user": ("account", "member", "person"),
    "person": ("user", "people", "contact"),
    "message": ("send", "chat", "post"),
    "send": ("post", "message", "write"),
    "email": ("mail", "message", "send"),
    "ticket": ("issue", "bug"),
    "bug": ("issue", "error"),
    "think": ("thought", "sequential", "reason"),
    "plan": ("thought", "think", "step"),
    "research": ("search", "investigate", "query"),
    "echo": ("repeat", "back"),
    "repeat": ("echo",),
}
"""Words people use, each with the words tools use for the same thing (searched at `RELATED_WEIGHT`)."""


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
        if word.endswith(suffix) and len(stem) >= 3 and not set(stem).isdisjoint("aeiouy"):
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
        bucket.update((stem, None) for stem in map(_stem, related) if stem != key)
    return {key: tuple(bucket) for key, bucket in merged.items()}


_RELATED_STEMS = _related_stems(RELATED)
_DEPRECATED_STEM = _stem("deprecated")

MAX_QUERY_CHARS = 4096
MAX_QUERY_WORDS = 64
"""A query's characters and words past these are ignored: a pasted document must not cost more than a sentence."""
MAX_WORD = 40
"""Longer runs of letters are not words anyone searches by (base64, hashes, a 100 KB `xxxx`)."""


def words(text: str) -> list[str]:
    """The words of a text, name or query: split on anything not a letter or digit and on camelCase, lowercased,
    stemmed, without the commonest English words nor runs longer than `MAX_WORD`."""
    return [word for word in map(_word, _WORD.findall(text)) if word]


@lru_cache(maxsize=1 << 16)
def _word(part: str) -> str:
    """One run of letters or digits as `words` keeps it, or "" when it is dropped (a catalog's vocabulary is small)."""
    lowered = part.lower()
    return "" if lowered in _STOP or len(lowered) > MAX_WORD else _stem(lowered)


def _query_terms(query: str) -> tuple[dict[str, float], tuple[str, ...]]:
    """The query's stemmed words at weight 1 and the words related to them at `RELATED_WEIGHT` (never more),
    and its own words in order (to know a query that is a tool's very name)."""
    terms: dict[str, float] = {}
    own: list[str] = []
    for part in _WORD.finditer(query, 0, MAX_QUERY_CHARS):
        stem = _word(part.group())
        if not stem:
            continue
        if len(own) >= MAX_QUERY_WORDS:
            break
        own.append(stem)
        terms[stem] = 1.0
        for related in _RELATED_STEMS.get(stem, ()):
            terms[related] = max(terms.get(related, 0.0), RELATED_WEIGHT)
    return terms, tuple(own)


@dataclass(frozen=True, slots=True)
class _Document:
    """One tool as the index sees it: its words by field."""

    name: str
    fields: dict[str, list[str]]
    signature: tuple[str, ...]
    """What two copies of one server's tool share (all but the server prefix): repeats are spread out by it."""
    own: str
    """Its name without its server's prefix."""
    weight: float
    """What its score is multiplied by (`DEPRECATED` for a deprecated tool, else 1)."""


def _document(tool: Mapping[str, Any], separator: str, split: Callable[[str], list[str]] = words) -> _Document:
    name = str(tool.get("name", ""))
    server, _, own = name.partition(separator) if separator and separator in name else ("", "", name)
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    parameters: list[str] = []
    parameter_text: list[str] = []
    if isinstance(properties, Mapping):
        for key, spec in properties.items():
            parameters.extend(split(str(key)))
            if isinstance(spec, Mapping):
                parameter_text.extend(split(str(spec.get("description", ""))))
    annotations = tool.get("annotations")
    title = tool.get("title") or (annotations.get("title") if isinstance(annotations, Mapping) else None) or ""
    fields = {
        "name": split(own) + split(str(title)),
        "server": split(server),
        "description": split(str(tool.get("description") or "")),
        "parameter": parameters,
        "parameter_text": parameter_text,
    }
    signature = (own, *fields["description"], "|", *parameters, "|", *parameter_text)
    deprecated = _DEPRECATED_STEM in fields["description"] or _DEPRECATED_STEM in fields["name"]
    return _Document(name, fields, signature, own, DEPRECATED if deprecated else 1.0)


class ToolIndex:
    """A catalog's tools, indexed once, searched many times: `search(query, limit)` → names, best first.

    `separator` is what joins a server's id to its tools' names (`fs1__read_file`): the server's
    words count, but less than the tool's own, and copies of one definition on several servers are
    spread out (`REPEAT_DECAY`) so that a handful of results shows a handful of different tools.
    """

    def __init__(self, tools: Iterable[Mapping[str, Any]], *, separator: str = "__") -> None:
        # Servers repeated in a catalog repeat their texts: each distinct text is split once.
        split_texts: dict[str, list[str]] = {}

        def split(text: str) -> list[str]:
            found = split_texts.get(text)
            if found is None:
                found = split_texts[text] = words(text)
            return found

        documents = [_document(tool, separator, split) for tool in tools]
        self.names: tuple[str, ...] = tuple(document.name for document in documents)
        signatures: dict[tuple[str, ...], int] = {}
        self._signature = tuple(signatures.setdefault(document.signature, len(signatures)) for document in documents)
        self._named: dict[tuple[str, ...], list[int]] = {}
        for index, document in enumerate(documents):
            self._named.setdefault(tuple(split(document.own)), []).append(index)
        self._discounted = tuple(
            (index, document.weight) for index, document in enumerate(documents) if document.weight != 1
        )
        # Indices in name order, once: a stable sort of them by score alone then breaks ties by name.
        self._by_name = sorted(range(len(documents)), key=self.names.__getitem__)
        self._order = [0] * len(documents)
        for rank, index in enumerate(self._by_name):
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
        terms, own = _query_terms(query)
        for term, weight in terms.items():
            posting = self._postings.get(term)
            if posting is None:
                continue
            for index, share in zip(*posting, strict=True):
                scores[index] += weight * share
        for index, weight in self._discounted:
            scores[index] *= weight
        for index in self._named.get(own, ()):
            scores[index] *= EXACT_NAME
        # A stable sort of the name-ordered indices by score (no tuple a tool: the garbage collector stays idle).
        ranked = sorted(self._by_name, key=scores.__getitem__, reverse=True)
        # Best first by raw score; a repeat's decayed score never beats its raw one, so once the next
        # raw score falls below the `limit`-th best kept score, nothing further can enter (at equal
        # scores, an earlier name still could: hence `<` and not `<=`).
        seen: dict[int, int] = {}
        kept: list[tuple[float, int, int]] = []
        best: list[float] = []
        for index in ranked:
            raw = scores[index]
            if raw <= 0 or (len(best) >= limit and raw < best[0]):
                break
            copies = seen.get(self._signature[index], 0)
            seen[self._signature[index]] = copies + 1
            score = raw * REPEAT_DECAY**copies
            kept.append((-score, self._order[index], index))
            if len(best) < limit:
                heapq.heappush(best, score)
            else:
                heapq.heappushpop(best, score)
        kept.sort()
        return [self.names[index] for _, _, index in kept[:limit]]
