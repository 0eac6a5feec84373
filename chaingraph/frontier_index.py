"""The array form of an evidence graph that path patterns are evaluated on (DESIGN §6).

:class:`FrontierIndex` holds, once per graph, what :mod:`chaingraph.patterns` propagates
frontiers over: the graph's step edges as CSR rows by subject and by object (one edge per
``(subject, property, object)`` triple, as ``wdt:`` has it), the same rows per property, the
passable and literal masks, the class members and subclasses that type constraints read,
and the name and id orders that answers and witnesses are listed in. A frontier is a sorted
vertex array: :meth:`FrontierIndex.expand` reads only the edges it touches.

>>> sorted_unique(np.array([5, 1, 5, 3, 1]))
array([1, 3, 5])
>>> member_of(np.array([1, 2, 3]), np.array([1, 3]))
array([ True, False,  True])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chaingraph.graph import per_graph
from chaingraph.ids import is_item_id

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.patterns import Step

__all__ = ["FrontierIndex", "answer_key", "frontier_index", "member_of", "ranges", "sorted_unique"]


def answer_key(key: str) -> tuple[int, int, str]:
    """The order answers are listed in: items by their Q-number, then anything else by name.

    >>> sorted(["Q10", "P31", "Q9"], key=answer_key)
    ['Q9', 'Q10', 'P31']
    """
    if is_item_id(key):
        return (0, int(key[1:]), "")
    return (1, 0, key)


def ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] … starts[i] + lens[i] - 1`` of every ``i``, concatenated.

    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return shift + np.arange(total, dtype=np.int64)


class FrontierIndex:
    """Array form of an evidence graph for frontier propagation (built once per graph)."""

    def __init__(self, graph: EvidenceGraph) -> None:
        n, m = graph.vcount(), graph.ecount()
        self.n = n
        el = np.column_stack([graph.arrays.src, graph.arrays.dst]).astype(np.int64).reshape(-1, 2)
        # the graph's property codes are in id order already; keep the codes of edges present
        used, pc = np.unique(graph.prop_codes.astype(np.int64), return_inverse=True)
        self.properties = [graph.property_ids[c] for c in used.tolist()]
        self.code = {p: i for i, p in enumerate(self.properties)}
        pc = pc.reshape(-1).astype(np.int64) if m else np.zeros(0, dtype=np.int64)
        self.edge_code = pc  # property code per graph edge
        key = (el[:, 0] * max(1, len(self.properties)) + pc) * max(1, n) + el[:, 1]
        _, first = np.unique(key, return_index=True)  # one edge per (subject, property, object)
        s, o, p = el[first, 0], el[first, 1], pc[first]
        self.csr: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for by_subject in (True, False):
            at, to = (s, o) if by_subject else (o, s)
            order = np.argsort(at, kind="stable")
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(at, minlength=n), out=ptr[1:])
            self.csr[by_subject] = (ptr, to[order], p[order])
        self.csr_at = {d: np.repeat(np.arange(n, dtype=np.int64), np.diff(self.csr[d][0])) for d in self.csr}
        # per property: the edges sorted by (property, endpoint), so a step that names its
        # property reads only that property's edges (binary search per frontier node)
        self.by_property: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        for by_subject in (True, False):
            at, to = (s, o) if by_subject else (o, s)
            order = np.lexsort((at, p))
            bounds = np.searchsorted(p[order], np.arange(len(self.properties) + 1))
            for pcode in range(len(self.properties)):
                sl = order[bounds[pcode]:bounds[pcode + 1]]
                self.by_property[(pcode, by_subject)] = (at[sl], to[sl])
        self.passable = np.asarray(graph.passable_mask, dtype=bool).reshape(n)
        self.literal = np.asarray(graph.arrays.literal, dtype=bool).reshape(n)
        self.entities = np.flatnonzero(~self.literal)
        cs = graph.class_statements
        instance_of: dict[str, tuple[str, ...]] = cs.get("P31", {}) if cs else graph.classes
        self.members: dict[str, list[int]] = {}  # class -> vertices that are its direct instances
        for ent, classes in instance_of.items():
            if ent in graph:
                for c in classes:
                    self.members.setdefault(c, []).append(graph.vertex(ent))
        self.children: dict[str, list[str]] = {}  # class -> its direct subclasses
        for c, supers in (cs.get("P279", {}) if cs else {}).items():
            for sup in supers:
                self.children.setdefault(sup, []).append(c)
        names = [graph.name(v) for v in range(n)]
        self.name_rank = np.empty(n, dtype=np.int64)  # position in name order (witness search)
        self.name_rank[sorted(range(n), key=names.__getitem__)] = np.arange(n)
        self.id_rank = np.empty(n, dtype=np.int64)  # position in Q-number order (answer lists)
        self.id_rank[sorted(range(n), key=lambda v: answer_key(names[v]))] = np.arange(n)
        self.masks: dict[tuple[Any, ...], np.ndarray] = {}
        self._moves: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def expand(self, nodes: np.ndarray, step: Step, counts: np.ndarray | None = None, *,
               back: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """The neighbour over every edge ``step`` allows from the sorted vertex array
        ``nodes`` (x(i-1) to x(i), or x(i) to x(i-1) when ``back``), and the count of its
        source node. Reads only the touched edges, or every edge of the step's kind when
        the frontier touches most of them (a flat scan is then cheaper)."""
        nbrs, weights = [], []
        for forward in (True, False):
            if step.direction is not None and (step.direction == "forward") != forward:
                continue
            if step.property is None:
                ptr, nbr, _prop = self.csr[forward != back]
                at = self.csr_at[forward != back]
                starts = ptr[nodes]
                lens = ptr[nodes + 1] - starts
            else:
                code = self.code.get(step.property)
                if code is None:
                    continue
                at, nbr = self.by_property[(code, forward != back)]
                starts = np.searchsorted(at, nodes, "left")
                lens = np.searchsorted(at, nodes, "right") - starts
            touched = int(lens.sum())
            if touched * 4 > len(nbr):
                if touched < len(nbr):
                    mark = np.zeros(self.n, dtype=bool)
                    mark[nodes] = True
                    sel = mark[at]
                    at, nbr = at[sel], nbr[sel]
                nbrs.append(nbr)
                if counts is not None:
                    spread = np.zeros(self.n, dtype=counts.dtype)
                    spread[nodes] = counts
                    weights.append(spread[at])
            else:
                nbrs.append(nbr[ranges(starts, lens)])
                if counts is not None:
                    weights.append(np.repeat(counts, lens))
        if len(nbrs) == 1:
            return nbrs[0], weights[0] if counts is not None else None
        empty = np.zeros(0, dtype=np.int64)
        dtype = np.float64 if counts is None else counts.dtype
        return (np.concatenate([empty, *nbrs]),
                np.concatenate([np.zeros(0, dtype=dtype), *weights]) if counts is not None else None)

    def advance(self, nodes: np.ndarray, step: Step, counts: np.ndarray | None = None, *,
                back: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """Propagate the frontier ``nodes`` (sorted, unique; with per-node ``counts`` for
        the match count) through ``step``: the sorted unique neighbours, and their summed
        counts. Small frontiers stay sparse; big ones scatter into a length-n array."""
        nb, w = self.expand(nodes, step, counts, back=back)
        dense = len(nb) * 8 > self.n
        if w is None:
            if not dense:
                return sorted_unique(nb), None
            mark = np.zeros(self.n, dtype=bool)
            mark[nb] = True
            return np.flatnonzero(mark), None
        if dense and w.dtype != object:
            total = np.bincount(nb, weights=w, minlength=self.n)
            out = np.flatnonzero(total)
            return out, total[out]
        out, inv = np.unique(nb, return_inverse=True)
        if w.dtype == object:
            acc = np.zeros(len(out), dtype=object)
            np.add.at(acc, inv, w)
            return out, acc
        return out, np.bincount(inv, weights=w, minlength=len(out))

    def moves(self, graph: EvidenceGraph, v: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(neighbour, edge, forward)`` arrays of ``v`` in ``graph.neighbours`` order."""
        got = self._moves.get(v)
        if got is None:
            adj = graph.neighbours(v)
            got = self._moves[v] = (np.fromiter((u for u, _e, _f in adj), np.int64, len(adj)),
                                    np.fromiter((e for _u, e, _f in adj), np.int64, len(adj)),
                                    np.fromiter((f for _u, _e, f in adj), bool, len(adj)))
        return got


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of a one-dimensional array (a new array, sorted), by a sort and a compare
    of neighbours: numpy 2's hashing ``np.unique`` takes about ten times as long on the few
    hundred to few thousand vertices of a typical frontier.

    >>> sorted_unique(np.array([5, 1, 5, 3, 1]))
    array([1, 3, 5])
    """
    out = np.sort(a)
    if len(out) > 1:
        keep = np.empty(len(out), dtype=bool)
        keep[0] = True
        np.not_equal(out[1:], out[:-1], out=keep[1:])
        out = out[keep]
    return out


def member_of(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which elements of ``a`` are in the sorted array ``b``."""
    if len(b) == 0:
        return np.zeros(len(a), dtype=bool)
    at = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return np.asarray(b[at] == a, dtype=bool)


@per_graph
def frontier_index(graph: EvidenceGraph) -> FrontierIndex:
    """The graph's :class:`FrontierIndex`, built on first use and kept while the graph lives."""
    return FrontierIndex(graph)
