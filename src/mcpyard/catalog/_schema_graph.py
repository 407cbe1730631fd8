"""A schema as a graph of its parts, and the judgements made on that graph: cycles, and recursion that branches.

Each part (a subschema, by identity) has edges to the parts it applies: in place to the same
value (`allOf`, `anyOf`, `not`…), to a child of the value (`properties`, `items`…, labelled
with which child), by `$ref`, or as a definition (`$defs`, applied only when referred to).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEF", "DESCEND", "IN_PLACE", "REF", "Label", "Part", "components", "self_loop", "two_recursive_paths"]

IN_PLACE, DESCEND, REF, DEF = 0, 1, 2, 3
Label = tuple[str, ...]
"""Which child of a value a part applies to: `("key", name)` (a property), `("other",)` (any key not among the
part's own properties), `("any",)` (any key), `("item",)`, `("name",)` (the key itself); `()` in place."""

MAX_LABELLED_STEPS = 1_000_000
"""Work allowed judging one schema's recursion (keys times parts); past it, the schema is too intricate."""


@dataclass(slots=True)
class Part:
    node: Any
    edges: list[tuple[Any, int, Label]]


Children = Callable[[int], Iterable[int]]


def self_loop(parts: Mapping[int, Part], component: list[int]) -> bool:
    key = component[0]
    return any(id(target) == key and kind != DEF for target, kind, _ in parts[key].edges)


def post_order(keys: Iterable[int], children: Children) -> Iterator[int]:
    """Each key after its children (iterative; a cycle is broken where it is first met)."""
    seen: set[int] = set()
    for start in keys:
        if start in seen:
            continue
        seen.add(start)
        stack: list[tuple[int, Iterator[int]]] = [(start, iter(children(start)))]
        while stack:
            key, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                yield key
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(children(child))))


def components(parts: Mapping[int, Part], children: Callable[[Part], Iterable[int]]) -> list[list[int]]:
    """Strongly connected components of the parts (Tarjan's algorithm, iterative: no recursion limit)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []

    def enter(key: int) -> tuple[int, Iterator[int]]:
        index[key] = low[key] = len(index)
        stack.append(key)
        on_stack.add(key)
        return key, iter([child for child in children(parts[key]) if child in parts])

    for start in parts:
        if start in index:
            continue
        work = [enter(start)]
        while work:
            key, pending = work[-1]
            child = next(pending, None)
            if child is not None:
                if child not in index:
                    work.append(enter(child))
                elif child in on_stack:
                    low[key] = min(low[key], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[key])
            if low[key] == index[key]:
                component: list[int] = []
                while not component or component[-1] != key:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                found.append(component)
    return found


def two_recursive_paths(parts: Mapping[int, Part]) -> str | None:
    """Why one child of a value would be checked along two recursive paths, if it would (else None).

    With two, the work doubles at every level of the value: exponential in its depth. Within
    each cycle of parts, every part's in-place closure is counted per child it applies to: a
    property by name, any other key, an item. A count of two or more is refused.
    """
    for component in components(parts, lambda part: [id(t) for t, kind, _ in part.edges if kind != DEF]):
        members = set(component)
        if len(members) == 1 and not self_loop(parts, component):
            continue
        names = {label[1] for key in component for _, kind, label in parts[key].edges if label[:1] == ("key",)}
        labels: list[Label] = [("key", name) for name in sorted(names)] + [("other",), ("item",)]
        if len(labels) * len(component) > MAX_LABELLED_STEPS:
            return "its recursion is too intricate to judge in bounded time"
        in_place = {
            key: [id(t) for t, kind, _ in parts[key].edges if kind in (IN_PLACE, REF) and id(t) in members]
            for key in component
        }
        counts: dict[int, dict[Label, int]] = {}
        for key in post_order(component, in_place.__getitem__):
            tally = _own_counts(parts[key], members, labels)
            for target in in_place[key]:
                for label, count in counts.get(target, {}).items():
                    tally[label] = min(2, tally.get(label, 0) + count)
            counts[key] = tally
            if any(count >= 2 for count in tally.values()):
                return (
                    "it checks one part of a result along two recursive paths, "
                    "so a deep result takes exponential time to check"
                )
    return None


def _own_counts(part: Part, members: set[int], labels: list[Label]) -> dict[Label, int]:
    """How many of `part`'s own child parts inside the cycle apply to each kind of child."""
    own_names = {label[1] for _, kind, label in part.edges if label[:1] == ("key",)}
    tally: dict[Label, int] = {}

    def add(label: Label) -> None:
        tally[label] = min(2, tally.get(label, 0) + 1)

    for target, kind, label in part.edges:
        if kind != DESCEND or id(target) not in members:
            continue
        if label[:1] == ("key",) or label == ("item",):
            add(label)
        elif label == ("other",):
            for each in labels:
                if each == ("other",) or (each[:1] == ("key",) and each[1] not in own_names):
                    add(each)
        elif label == ("any",):
            for each in labels:
                if each != ("item",):
                    add(each)
    return tally
