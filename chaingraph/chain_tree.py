"""Bulk enumeration: every valid chain of a seed as one compact prefix tree.

Valid chains are shortest paths (DESIGN §4), so they share prefixes; :func:`chain_tree`
stores each prefix once. Layer ``d`` of a :class:`ChainTree` holds the prefixes of ``d``
hops; a row is an *arc* of the trimmed DAG of
:func:`~chaingraph.chains.shortest_path_dag` (its last step: vertex ``targets[arc]``,
edge ``edges[arc]``) and the row of layer ``d - 1`` it extends (its *parent*), all int32.
The children of a row are the DAG arcs of its last vertex, one contiguous range of the
DAG's CSR arrays, so the two deepest layers — usually most of the chains — are kept as
such ranges (offsets per row of the explicit layer above them) and read out only when
asked for (:meth:`ChainTree.block`, a few numpy operations per run of rows). Every row
of a layer ``≥ min_hops`` is a chain; 17 M chains take a few MB, and building the tree
is a handful of numpy operations per explicit layer, with no Python object per chain.
Rows of a layer are in the neighbour order of :func:`~chaingraph.chains.enumerate_chains`.

>>> from chaingraph.graph import EvidenceGraph
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"),
...                               ("s3", "Q2", "P3", "Q4")])
>>> t = chain_tree(g, "Q1", 1, 2)
>>> t.count(), t.count(2), t.sizes()
(3, 2, [1, 1, 2])
>>> t.block(2).nodes.tolist()
[[0, 1, 2], [0, 1, 3]]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from chaingraph.chains import (
    AcceptAll,
    Chain,
    ChainBlock,
    EdgeVerifier,
    shortest_path_dag,
    validate_bounds,
)
from chaingraph.errors import ChainRuleError
from chaingraph.graph import EvidenceGraph

__all__ = ["ChainTree", "chain_tree"]


@dataclass(frozen=True)
class ChainTree:
    """Prefixes by length over one trimmed DAG (``indptr``, ``targets``, ``edges``).

    Layers ``1..base`` are explicit: ``arc[d]`` and ``parent[d]`` (int32 rows). The one or
    two layers below ``base`` are ranges: the rows of layer ``base + 1`` under row ``g`` of
    layer ``base`` are ``near[g]:near[g + 1]`` (the DAG arcs of ``g``'s vertex, in order),
    and those of layer ``base + 2`` under ``g`` are ``far[g]:far[g + 1]`` (the arcs of
    each of those heads in turn; ``cum`` is the running count of successors over the DAG
    arcs, to find which). Layer 0 is the seed alone. Chains are the rows of layers
    ``min_hops..depth``.
    """

    seed: int
    min_hops: int
    max_hops: int
    depth: int
    indptr: np.ndarray
    targets: np.ndarray
    edges: np.ndarray
    cum: np.ndarray
    arc: tuple[np.ndarray, ...]
    parent: tuple[np.ndarray, ...]
    near: np.ndarray
    far: np.ndarray

    @property
    def base(self) -> int:
        """The deepest explicit layer (0: only the seed)."""
        return len(self.arc) - 1

    def sizes(self) -> list[int]:
        """Rows (prefixes) per layer, layer 0 (the seed) first."""
        lazy = [int(self.near[-1]), int(self.far[-1])][:self.depth - self.base]
        return [1, *(len(a) for a in self.arc[1:]), *lazy]

    def count(self, k: int | None = None) -> int:
        """How many chains (of ``k`` hops, or of every valid length)."""
        sizes = self.sizes()
        if k is not None:
            return sizes[k] if self.min_hops <= k < len(sizes) else 0
        return sum(sizes[self.min_hops:])

    @property
    def nbytes(self) -> int:
        """Bytes of every array the tree holds, the DAG's included."""
        return (sum(a.nbytes for a in (self.indptr, self.targets, self.edges, self.cum, self.near, self.far))
                + sum(a.nbytes for layer in (self.arc, self.parent) for a in layer))

    def _vertex(self, d: int, idx: np.ndarray) -> np.ndarray:
        """Last vertex of the rows ``idx`` of explicit layer ``d``."""
        return self.targets[self.arc[d][idx]] if d else np.full(len(idx), self.seed, dtype=np.int64)

    def _layer(self, k: int, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Arc and parent of the rows ``idx`` of layer ``k``."""
        if k <= self.base:
            return self.arc[k][idx], self.parent[k][idx]
        offsets = self.near if k == self.base + 1 else self.far
        g = _group_of(offsets, idx)
        start = self.indptr[self._vertex(self.base, g)]
        if k == self.base + 1:
            return start + (idx - self.near[g]), g
        at = self.cum[start] + (idx - self.far[g])
        a = np.searchsorted(self.cum, at, side="right") - 1
        return self.indptr[self.targets[a]] + (at - self.cum[a]), self.near[g] + (a - start)

    def _range(self, k: int, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Arc and parent of rows ``i0:i1`` of a range layer ``k`` (``i0 < i1``), without a
        search per row, and the first parent row (parents are ``parent - first`` of a
        contiguous run of the layer above)."""
        if k == self.base + 1:
            g, within = _groups(self.near, i0, i1)
            return self.indptr[self._vertex(self.base, g)] + within, g, 0
        # far rows under near row r are consecutive, head_deg[arc of r] of them
        r0, r1 = (int(self._layer(k, np.asarray([i]))[1][0]) for i in (i0, i1 - 1))
        arc_r, g_r, _ = self._range(k - 1, r0, r1 + 1)
        start = self.indptr[self._vertex(self.base, g_r)]
        first = self.far[g_r] + (self.cum[arc_r] - self.cum[start])  # first far row under each
        bounds = np.clip(np.append(first, first[-1] + self.cum[arc_r[-1] + 1] - self.cum[arc_r[-1]]), i0, i1)
        par = np.repeat(np.arange(len(arc_r)), np.diff(bounds))
        within = np.arange(i0, i1) - first[par]
        return self.indptr[self.targets[arc_r[par]]] + within, par + r0, r0

    def block(self, k: int, rows: slice | np.ndarray | None = None) -> ChainBlock:
        """Chains of ``k`` hops (all, or the given rows of layer ``k``) as a
        :class:`~chaingraph.chains.ChainBlock`, read back along the parent pointers."""
        if not self.min_hops <= k <= self.depth:
            return ChainBlock(np.zeros((0, k + 1), dtype=np.int64), np.zeros((0, k), dtype=np.int64))
        size = self.sizes()[k]
        if rows is None:
            rows = slice(0, size)
        idx: np.ndarray | None = None
        if isinstance(rows, slice) and rows.step in (None, 1):
            i0, i1, _ = rows.indices(size)
            i1 = max(i0, i1)
        else:
            idx = np.arange(size, dtype=np.int64)[rows]
        count = i1 - i0 if idx is None else len(idx)
        nodes = np.empty((count, k + 1), dtype=np.int64)
        edges = np.empty((count, k), dtype=np.int64)
        d = k
        while d > 0:
            if idx is None and d > self.base and count:  # a run of rows of a range layer
                arc, par, first = self._range(d, i0, i1)
                nodes[:, d], edges[:, d - 1] = self.targets[arc], self.edges[arc]
                idx = par
                if d == self.base + 2:  # its parents are within a run of near rows
                    d -= 1
                    near_arc, near_par, _ = self._range(d, first, int(par[-1]) + 1)
                    arc, idx = near_arc[par - first], near_par[par - first]
                    nodes[:, d], edges[:, d - 1] = self.targets[arc], self.edges[arc]
            else:
                arc, idx = self._layer(d, np.arange(i0, i1, dtype=np.int64) if idx is None else idx)
                nodes[:, d], edges[:, d - 1] = self.targets[arc], self.edges[arc]
            d -= 1
        nodes[:, 0] = self.seed
        return ChainBlock(nodes, edges)

    def blocks(self, block_size: int = 1 << 16) -> Iterator[ChainBlock]:
        """Every chain as blocks of at most ``block_size`` rows, shortest first."""
        sizes = self.sizes()
        for k in range(self.min_hops, len(sizes)):
            for start in range(0, sizes[k], block_size):
                yield self.block(k, slice(start, start + block_size))

    def chains(self) -> Iterator[Chain]:
        """Every chain as a :class:`~chaingraph.chains.Chain` (shortest first)."""
        for b in self.blocks():
            yield from b.chains()


def _group_of(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The group of each of ``rows`` (group ``g`` is ``offsets[g]:offsets[g + 1]``). The rows
    are cast to the offsets' int32 first: ``searchsorted`` would otherwise copy the offsets."""
    return np.searchsorted(offsets, rows.astype(offsets.dtype), side="right") - 1


def _groups(offsets: np.ndarray, i0: int, i1: int) -> tuple[np.ndarray, np.ndarray]:
    """For rows ``i0:i1`` grouped by ``offsets`` (group ``g`` is ``offsets[g]:offsets[g + 1]``):
    each row's group and its position in it."""
    g0, g1 = (int(g) for g in _group_of(offsets, np.asarray([i0, i1 - 1])))
    bounds = np.clip(offsets[g0:g1 + 2], i0, i1)
    g = np.repeat(np.arange(g0, g1 + 1), np.diff(bounds))
    return g, np.arange(i0, i1) - offsets[g]


def chain_tree(graph: EvidenceGraph, seed: int | str, min_hops: int = 5, max_hops: int = 7, *,
               verifier: EdgeVerifier | None = None) -> ChainTree:
    """Exactly the chains of :func:`~chaingraph.chains.enumerate_chains`, as a prefix tree
    (see the module docs). A verifier other than the default is asked once per DAG arc."""
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    dag = shortest_path_dag(graph, seed, min_hops, max_hops)
    indptr, targets, edges = dag.indptr, dag.targets, dag.edges
    if verifier is not None and not isinstance(verifier, AcceptAll):
        src = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        ok = np.fromiter((verifier(graph, int(e), int(u)).accepted for u, e in zip(src, edges)),
                         dtype=bool, count=len(edges))
        indptr = np.zeros_like(indptr)
        np.cumsum(np.bincount(src[ok], minlength=len(dag.indptr) - 1), out=indptr[1:])
        targets, edges = targets[ok], edges[ok]
    if len(targets) >= 2**31 or graph.ecount() >= 2**31:
        raise ChainRuleError("chain_tree stores int32 indices; this graph is too large for it")
    depth = int(dag.dist[targets].max()) if len(targets) else 0
    deg = np.diff(indptr)
    head_deg = deg[targets].astype(np.int32)  # per DAG arc: successors of its head
    cum = np.zeros(len(targets) + 1, dtype=np.int64)
    np.cumsum(head_deg, out=cum[1:])
    deg2 = cum[indptr[1:]] - cum[indptr[:-1]]  # per vertex: two-step continuations
    head_deg2 = deg2[targets]  # per DAG arc: two-step continuations of its head
    cum2 = np.zeros(len(targets) + 1, dtype=np.int64)
    np.cumsum(head_deg2, out=cum2[1:])
    s = dag.seed
    arcs: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    parents: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    # the last explicit layer's rows are runs of consecutive DAG arcs: (first arc, length) per run
    run_start, run_len = indptr[s:s + 1], deg[s:s + 1]
    if depth > 2:  # layer 1: the seed's arcs
        arcs.append(np.arange(indptr[s], indptr[s + 1], dtype=np.int32))
        parents.append(np.zeros(len(arcs[-1]), dtype=np.int32))
        head_start = indptr[targets]
    for d in range(2, depth - 1):
        prev = arcs[-1]
        run_start, run_len = head_start[prev], head_deg[prev]
        arc, par = _runs_layer(d, run_start, run_len)
        arcs.append(arc)
        parents.append(par)
    # the last one or two layers as ranges under the rows of the last explicit layer (int32:
    # their totals, summed over the runs first, are checked to fit)
    rows = len(arcs[-1]) if len(arcs) > 1 else 1
    ends = run_start + run_len
    _check_rows(len(arcs), int((cum[ends] - cum[run_start]).sum()) if depth else 0)
    _check_rows(len(arcs) + 1, int((cum2[ends] - cum2[run_start]).sum()) if depth else 0)
    near, far = np.empty(rows + 1, dtype=np.int32), np.empty(rows + 1, dtype=np.int32)
    near[0] = far[0] = 0
    if len(arcs) > 1:
        for offsets, per_arc in ((near, head_deg), (far, head_deg2.astype(np.int32))):
            np.take(per_arc, arcs[-1], out=offsets[1:], mode="clip")  # "clip": unbuffered
            np.cumsum(offsets[1:], out=offsets[1:])
    else:
        near[1], far[1] = (deg[s], deg2[s]) if depth else (0, 0)
    return ChainTree(s, min_hops, max_hops, depth, indptr, targets.astype(np.int32), edges.astype(np.int32),
                     cum, tuple(arcs), tuple(parents), near, far)


def _runs_layer(d: int, run_start: np.ndarray, run_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of layer ``d`` (int32 arc and parent) given, per row of layer ``d - 1``, the run
    of consecutive DAG arcs that extends it. Each output array is written once, in place:
    at this size fresh pages cost more than the arithmetic."""
    offsets = np.zeros(len(run_len) + 1, dtype=np.int64)
    np.cumsum(run_len, out=offsets[1:])
    total = int(offsets[-1])
    _check_rows(d, total)
    par = np.repeat(np.arange(len(run_len), dtype=np.int32), run_len)
    # arcs step by one within a run and jump to the next run's first arc between runs
    arc = np.ones(total, dtype=np.int32)
    full = np.flatnonzero(run_len)
    if len(full):
        first = run_start[full]
        jump = first.copy()
        jump[1:] -= first[:-1] + run_len[full[:-1]] - 1
        arc[offsets[full]] = jump
        np.cumsum(arc, out=arc)
    return arc, par


def _check_rows(layer: int, rows: int) -> None:
    if rows >= 2**31:
        raise ChainRuleError(f"layer {layer} of the chain tree has {rows:,} prefixes, more than int32 "
                             "rows can index; lower max_hops or use enumerate_chains")
