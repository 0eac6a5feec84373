"""Minimal and minimum clue sets: which clues can go while the target stays unique (DESIGN §6).

Both searches see a clue set only through a predicate ``unique(kept) -> bool`` (the
target is the unique answer of the pattern of the clues ``kept``). Removing a clue only
relaxes the pattern, so the answer set only grows: a clue that is necessary in a set
stays necessary in every subset of it. Two consequences used here:

* :func:`prune_sequential` tries the clues **one at a time** in a given order and
  removes a clue only when the target stays unique without it *given the removals so
  far*. One pass gives a **minimal** set: a clue kept at some point was necessary in a
  superset of the final set, hence in the final set. Clues that are each redundant alone
  but jointly necessary are therefore never removed together.
* :func:`largest_removal` searches for the largest set of clues that can be removed
  together (a **minimum**-size clue set) by depth-first search over removal sets in
  canonical order: a removal that loses uniqueness cuts every superset (the candidate
  list shrinks as the search descends), a branch that cannot beat the best set found is
  cut, and the work is bounded by ``budget`` predicate evaluations (the result says
  whether it is proven).

The documented order in which pruning tries clues (:func:`removal_order`): item-value
clues, literal-value clues, type clues, relation clues, and the anchor last (the anchor
is removed only when nothing else can be, since a task whose anchor is redundant is a
text-only shortcut); within a kind, in clue order.

>>> needs = [{0, 1}, {0, 2, 3}]  # unique when the kept set contains one of these
>>> unique = lambda kept: any(n <= kept for n in needs)
>>> r = prune_sequential([0, 1, 2, 3], [1, 2, 3], unique)
>>> r.kept, r.removed
((0, 2, 3), (1,))
>>> best = largest_removal([1, 2, 3], frozenset({0, 1, 2, 3}), unique, budget=100)
>>> sorted(best.removed), best.proven
([2, 3], True)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["KIND_ORDER", "Minimum", "Pruning", "largest_removal", "prune_sequential", "removal_order"]

#: the order in which sequential pruning tries clue kinds (see the module docstring)
KIND_ORDER = ("item-value", "literal-value", "type", "relation", "anchor")

Unique = Callable[[frozenset[int]], bool]


class _ClueLike(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def value(self) -> object: ...


def removal_order(clues: Sequence[_ClueLike], indexes: Iterable[int] | None = None) -> tuple[int, ...]:
    """The documented pruning order of the clues ``indexes`` (default: all) of ``clues``.

    >>> from chaingraph.tasks import Clue
    >>> removal_order([Clue(kind="anchor"), Clue(kind="relation", step=1),
    ...                Clue(kind="value", variable=1, property="P17", value="Q142"),
    ...                Clue(kind="type", variable=1, **{"class": "Q5"})])
    (2, 3, 1, 0)
    """
    def kind(i: int) -> str:
        c = clues[i]
        if c.kind == "value":
            return "item-value" if isinstance(c.value, str) or getattr(c.value, "kind", "") == "entity" \
                else "literal-value"
        return c.kind

    todo = range(len(clues)) if indexes is None else indexes
    return tuple(sorted(todo, key=lambda i: (KIND_ORDER.index(kind(i)), i)))


@dataclass(frozen=True)
class Pruning:
    """The result of :func:`prune_sequential`: ``kept`` (sorted), ``removed`` in removal
    order, ``tried`` (each clue tried and whether it went), predicate ``evaluations``."""

    kept: tuple[int, ...]
    removed: tuple[int, ...]
    tried: tuple[tuple[int, bool], ...]
    evaluations: int


def prune_sequential(clues: Collection[int], order: Sequence[int], unique: Unique) -> Pruning:
    """Remove the clues of ``order`` one at a time from ``clues`` while ``unique`` holds.

    ``unique(frozenset(clues))`` is assumed (the caller checked the full set). Clues not
    in ``order`` are never tried (e.g. the necessary ones, or an anchor to keep).
    """
    kept = set(clues)
    removed: list[int] = []
    tried: list[tuple[int, bool]] = []
    for i in order:
        if i not in kept:
            continue
        go = unique(frozenset(kept - {i}))
        tried.append((i, go))
        if go:
            kept.discard(i)
            removed.append(i)
    return Pruning(tuple(sorted(kept)), tuple(removed), tuple(tried), len(tried))


@dataclass(frozen=True)
class Minimum:
    """The result of :func:`largest_removal`: the largest removal set found (``None``
    when no removal satisfies the goal), whether the search finished within its budget
    (``proven``: nothing larger exists), and the predicate evaluations spent."""

    removed: tuple[int, ...] | None
    proven: bool
    evaluations: int


def largest_removal(optional: Sequence[int], clues: frozenset[int], unique: Unique, *,
                    goal: Unique | None = None, budget: int = 2000, at_least: int = 0) -> Minimum:
    """The largest subset ``D`` of ``optional`` with ``unique(clues - D)`` (and, when given,
    ``goal(clues - D)``, a property that only becomes true as clues are removed, such as
    "the target is not unique without the anchor").

    ``at_least``: only sets larger than this are of interest (e.g. what sequential
    pruning already removed). At most ``budget`` evaluations of ``unique`` and ``goal``.
    """
    spent = 0
    best: tuple[int, ...] | None = None
    best_size = at_least - 1

    class _Out(Exception):
        """The evaluation budget is spent."""

    def memo(predicate: Unique) -> Unique:
        """``predicate`` evaluated once per clue set, each new evaluation charged to the budget."""
        answers: dict[frozenset[int], bool] = {}

        def charged(kept: frozenset[int]) -> bool:
            nonlocal spent
            if kept not in answers:
                if spent >= budget:
                    raise _Out
                spent += 1
                answers[kept] = predicate(kept)
            return answers[kept]

        return charged

    ok = memo(unique)
    done = memo(goal) if goal is not None else (lambda kept: True)

    def visit(removed: tuple[int, ...], candidates: list[int]) -> None:
        nonlocal best, best_size
        kept = clues - frozenset(removed)
        if len(removed) > best_size and done(kept):
            best, best_size = removed, len(removed)
        if len(removed) + len(candidates) <= best_size:
            return
        feasible = [c for c in candidates if ok(kept - {c})]
        for j, c in enumerate(feasible):
            if len(removed) + len(feasible) - j <= best_size:
                return
            visit((*removed, c), feasible[j + 1:])

    try:
        if not ok(clues):
            return Minimum(None, True, spent)
        visit((), list(optional))
        proven = True
    except _Out:
        proven = False
    return Minimum(best, proven, spent)
