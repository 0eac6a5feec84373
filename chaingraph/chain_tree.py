"""Bulk enumeration: every valid chain of a seed as one compact prefix tree.

Valid chains are shortest paths (DESIGN §4), so they share prefixes; :func:`chain_tree`
stores each prefix once. Layer ``d`` of a :class:`ChainTree` holds the prefixes of ``d``
hops as three int32 arrays: the last vertex, the last edge, and the parent (a row of
layer ``d - 1``). Every row of a layer ``≥ min_hops`` is a chain, so *n* chains take
about 12 bytes each (17 M chains: ~200 MB) and building the tree is a handful of numpy
operations per layer over the trimmed DAG of :func:`~chaingraph.chains.shortest_path_dag`
— work proportional to the output, no Python object per chain. Rows of a layer are in
the neighbour order of :func:`~chaingraph.chains.enumerate_chains`.

>>> from chaingraph.graph import EvidenceGraph
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"),
...                               ("s3", "Q2", "P3", "Q4")])
>>> t = chain_tree(g, "Q1", 1, 2)
>>> t.count(), t.count(2)
(3, 2)
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
    """Prefixes by length: ``vertex[d]``, ``edge[d]``, ``parent[d]`` (int32) for ``d`` hops;
    layer 0 is the seed alone. Chains are the rows of layers ``min_hops..max_hops``."""

    seed: int
    min_hops: int
    max_hops: int
    vertex: tuple[np.ndarray, ...]
    edge: tuple[np.ndarray, ...]
    parent: tuple[np.ndarray, ...]

    def count(self, k: int | None = None) -> int:
        """How many chains (of ``k`` hops, or of every valid length)."""
        if k is not None:
            return len(self.vertex[k]) if self.min_hops <= k < len(self.vertex) else 0
        return sum(len(self.vertex[d]) for d in range(self.min_hops, len(self.vertex)))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for layer in (self.vertex, self.edge, self.parent) for a in layer)

    def block(self, k: int, rows: slice | np.ndarray | None = None) -> ChainBlock:
        """Chains of ``k`` hops (all, or the given rows of layer ``k``) as a
        :class:`~chaingraph.chains.ChainBlock`, read back along the parent pointers."""
        if not self.min_hops <= k < len(self.vertex):
            return ChainBlock(np.zeros((0, k + 1), dtype=np.int64), np.zeros((0, k), dtype=np.int64))
        idx = np.arange(len(self.vertex[k]), dtype=np.int64)
        if rows is not None:
            idx = idx[rows]
        nodes = np.empty((len(idx), k + 1), dtype=np.int64)
        edges = np.empty((len(idx), k), dtype=np.int64)
        for d in range(k, 0, -1):
            nodes[:, d] = self.vertex[d][idx]
            edges[:, d - 1] = self.edge[d][idx]
            idx = self.parent[d][idx]
        nodes[:, 0] = self.seed
        return ChainBlock(nodes, edges)

    def blocks(self, block_size: int = 1 << 16) -> Iterator[ChainBlock]:
        """Every chain as blocks of at most ``block_size`` rows, shortest first."""
        for k in range(self.min_hops, len(self.vertex)):
            for start in range(0, len(self.vertex[k]), block_size):
                yield self.block(k, slice(start, start + block_size))

    def chains(self) -> Iterator[Chain]:
        """Every chain as a :class:`~chaingraph.chains.Chain` (shortest first)."""
        for b in self.blocks():
            yield from b.chains()


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
    vertex = [np.asarray([dag.seed], dtype=np.int32)]
    edge = [np.zeros(1, dtype=np.int32)]
    parent = [np.zeros(1, dtype=np.int32)]
    targets32, edges32 = targets.astype(np.int32), edges.astype(np.int32)
    for _d in range(max_hops):
        last = vertex[-1].astype(np.int64)
        starts = indptr[last]
        counts = indptr[last + 1] - starts
        total = int(counts.sum())
        if total == 0:
            break
        par = np.repeat(np.arange(len(last), dtype=np.int32), counts)
        offsets = np.cumsum(counts) - counts
        pos = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, counts)
        vertex.append(targets32[pos])
        edge.append(edges32[pos])
        parent.append(par)
    return ChainTree(dag.seed, min_hops, max_hops, tuple(vertex), tuple(edge), tuple(parent))
