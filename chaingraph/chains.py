"""Valid evidence chains (DESIGN §4): enumeration and the shortcut proof.

A chain ``v0 -r1- v1 … -rk- vk`` from seed ``v0`` is valid when (1) ``min_hops ≤ k ≤
max_hops``, (2) no node repeats, (3) the shortest seed→``vk`` distance in the evidence
graph (undirected, under the traversal policy) is ``k``, and (4) every step passes the
edge verifier.

Rule 3 makes every valid chain a shortest path from the seed, and so is each of its
prefixes. :func:`enumerate_chains` therefore runs one breadth-first search from the seed,
keeps only the edges that go from distance layer ``d`` to ``d + 1`` (a DAG), drops the
DAG vertices from which no layer ``≥ min_hops`` can be reached, and walks what is left
depth-first. Every walk it starts ends in at least one chain: the work is proportional
to the output, not to the number of simple paths (rule 2 holds by construction, since
layers strictly increase).

Hubs and literal nodes are *not passable* (:meth:`EvidenceGraph.passable`): the BFS does
not expand them, so they neither shorten distances nor appear inside a chain, but a chain
may end on one. The seed is always expanded.

>>> from chaingraph.graph import EvidenceGraph

_Arc = TypeVar("_Arc")
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"),
...                               ("s3", "Q4", "P3", "Q3"), ("s4", "Q1", "P4", "Q3")])
>>> [chain_ids(g, c) for c in enumerate_chains(g, "Q1", 1, 2)]
[('Q1', 'P1', 'Q2'), ('Q1', 'P4', 'Q3'), ('Q1', 'P4', 'Q3', 'P3', 'Q4')]

Why a given path is not a chain: :mod:`chaingraph.explain`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np

from chaingraph.chain_walk import suffix_level, walk
from chaingraph.errors import ChainRuleError
from chaingraph.graph import EvidenceGraph, per_graph

_Arc = TypeVar("_Arc")

__all__ = [
    "AcceptAll",
    "Chain",
    "ChainBlock",
    "ChainDag",
    "EdgeVerifier",
    "Verdict",
    "chain_blocks",
    "chain_ids",
    "distances",
    "enumerate_chains",
    "shortest_path_dag",
    "validate_bounds",
]

UNREACHED = -1


class Chain(NamedTuple):
    """A chain as vertex and edge indices of one :class:`EvidenceGraph`.

    ``nodes[0]`` is the seed; ``edges[i]`` joins ``nodes[i]`` and ``nodes[i + 1]``.
    """

    nodes: tuple[int, ...]
    edges: tuple[int, ...]

    @property
    def k(self) -> int:
        return len(self.edges)

    def forward(self, graph: EvidenceGraph) -> tuple[bool, ...]:
        """Per step: True when the walk follows the statement subject→object."""
        return tuple(graph.edge_endpoints(e)[0] == self.nodes[i] for i, e in enumerate(self.edges))


def chain_ids(graph: EvidenceGraph, chain: Chain) -> tuple[str, ...]:
    """``(Q…, P…, Q…, …)``: node ids interleaved with step properties."""
    out = [graph.name(chain.nodes[0])]
    for e, v in zip(chain.edges, chain.nodes[1:]):
        out += [graph.edge_property(e), graph.name(v)]
    return tuple(out)


# -- the edge verifier plug-in (DESIGN §3) -------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """An edge verifier's answer for one step."""

    accepted: bool
    confidence: float = 1.0
    reason: str = ""


@runtime_checkable
class EdgeVerifier(Protocol):
    """Decides whether one step (edge ``edge`` walked from ``source``) is supported.

    The pipeline may pass an LLM-backed verifier that checks a statement against its
    references; a verdict is asked once per (edge, direction) per enumeration.
    """

    def __call__(self, graph: EvidenceGraph, edge: int, source: int) -> Verdict: ...


class AcceptAll:
    """The default verifier: every stored, non-deprecated statement is supported with
    confidence 1.0 (deprecated statements never reach the evidence graph).

    >>> AcceptAll()(None, 0, 0)  # type: ignore[arg-type]
    Verdict(accepted=True, confidence=1.0, reason='stored non-deprecated statement')
    """

    _VERDICT = Verdict(True, 1.0, "stored non-deprecated statement")

    def __call__(self, graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        return self._VERDICT


# -- topology shared by enumeration, explanation and the shortcut proof -------------------
class _Topology:
    """Arc arrays of the graph's CSR adjacency (both directions of every step edge, in
    :meth:`EvidenceGraph.neighbours` order), for vectorised BFS and DAG building. Vertex
    and edge numbers are int32 when they fit (half the bytes to gather per arc)."""

    def __init__(self, graph: EvidenceGraph) -> None:
        ar = graph.arrays
        n = graph.vcount()
        itype = np.int32 if n < 2**31 and len(ar.nbr) < 2**31 else np.int64
        self.indptr = ar.indptr
        self.src: np.ndarray = np.repeat(np.arange(n, dtype=itype), np.diff(ar.indptr))
        self.dst: np.ndarray = ar.nbr.astype(itype)
        self.edge: np.ndarray = ar.arc_edge.astype(itype)
        self.passable = np.asarray(graph.passable_mask, dtype=bool)
        self.n = n

    @cached_property
    def key(self) -> np.ndarray:
        """``src * n + dst`` per arc: ascending, since rows are in neighbour-id order, so the
        arcs from ``u`` to ``w`` are one ``searchsorted`` range."""
        key: np.ndarray = self.src.astype(np.int64) * self.n + self.dst
        return key

    @cached_property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)


@per_graph
def _topology(graph: EvidenceGraph) -> _Topology:
    return _Topology(graph)


def _ranges(indptr: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """Arc positions of all ``vertices``, concatenated (vectorised CSR gather)."""
    starts = indptr[vertices]
    lens = indptr[vertices + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    # ones, with a jump to the next range's first arc where a range starts, summed up: one
    # array written once (a repeat plus an arange wrote two)
    full = np.flatnonzero(lens)
    first = starts[full]
    jump = first.copy()
    jump[1:] -= first[:-1] + lens[full[:-1]] - 1
    pos = np.ones(total, dtype=np.int64)
    pos[(np.cumsum(lens) - lens)[full]] = jump
    return np.cumsum(pos, out=pos)


def distances(graph: EvidenceGraph, seed: int | str) -> np.ndarray:
    """Undirected hop distance from ``seed`` to every vertex under the traversal policy
    (``-1`` where unreachable). Paths never pass through a hub or a literal node; the
    seed itself is always expanded.

    >>> g = EvidenceGraph.from_edges([("a", "Q1", "P1", "Q2"), ("b", "Q3", "P1", "Q2")])
    >>> distances(g, "Q1").tolist()
    [0, 1, 2]
    """
    s = graph.vertex(seed) if isinstance(seed, str) else seed
    topo = _topology(graph)
    dist = np.full(graph.vcount(), UNREACHED, dtype=np.int64)
    dist[s] = 0
    frontier = np.asarray([s], dtype=np.int64)
    depth = 0
    while len(frontier):
        depth += 1
        reached = topo.dst[_ranges(topo.indptr, frontier)]
        reached = reached[dist[reached] == UNREACHED]
        if not len(reached):
            break
        reached = np.unique(reached)
        dist[reached] = depth
        frontier = reached[topo.passable[reached]]
    return dist


def validate_bounds(min_hops: object, max_hops: object) -> tuple[int, int]:
    """Check rule 1's bounds; :class:`ChainRuleError` names the bad one."""
    for name, value in (("min_hops", min_hops), ("max_hops", max_hops)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ChainRuleError(f"{name} must be a positive integer, got {value!r}")
    assert isinstance(min_hops, int) and isinstance(max_hops, int)
    if min_hops > max_hops:
        raise ChainRuleError(f"min_hops ({min_hops}) is greater than max_hops ({max_hops}); "
                             "pass bounds with min_hops <= max_hops")
    return min_hops, max_hops


def _seed_vertex(graph: EvidenceGraph, seed: int | str) -> int:
    if isinstance(seed, str):
        v = graph.vertex(seed)
    elif isinstance(seed, int) and 0 <= seed < graph.vcount():
        v = seed
    else:
        raise ChainRuleError(f"seed must be an entity id in the graph, got {seed!r}")
    if graph.is_literal(v):
        raise ChainRuleError(f"seed {graph.name(v)} is a literal node; seeds are entities (Q-ids)")
    return v


@dataclass(frozen=True)
class ChainDag:
    """The shortest-path DAG from one seed, trimmed to what reaches ``min_hops``.

    Arcs ``u → v`` (edge ``e``) in CSR form: the successors of ``u`` are
    ``targets[indptr[u]:indptr[u + 1]]`` (edges alike), in deterministic neighbour order;
    only vertices that lie on some valid chain have successors. ``dist`` holds the policy
    distances from the seed up to ``max_hops`` (``-1`` beyond).
    """

    seed: int
    dist: np.ndarray
    indptr: np.ndarray
    targets: np.ndarray
    edges: np.ndarray

    @cached_property
    def succ(self) -> dict[int, list[tuple[int, int]]]:
        """``{u: [(v, edge), …]}`` for every vertex with successors (for walking in Python)."""
        return self._by_source(list(zip(self.targets.tolist(), self.edges.tolist())))

    @cached_property
    def steps(self) -> dict[int, list[tuple[tuple[int], tuple[int]]]]:
        """:attr:`succ` with each vertex and edge as a one-element tuple (for the walk)."""
        return self._by_source(list(zip(zip(self.targets.tolist()), zip(self.edges.tolist()))))

    def suffix_level(self, min_hops: int, max_hops: int) -> int:
        """The layer whose suffixes the per-chain walk lists (:func:`~chaingraph.chain_walk.suffix_level`)."""
        return suffix_level(self.dist, self.indptr, self.targets, self.seed, min_hops, max_hops)

    def _by_source(self, arcs: list[_Arc]) -> dict[int, list[_Arc]]:
        """``arcs`` (one per DAG arc, in CSR order) as one list slice per source vertex."""
        sources = np.flatnonzero(np.diff(self.indptr))
        bounds = zip(sources.tolist(), self.indptr[sources].tolist(), self.indptr[sources + 1].tolist())
        return {u: arcs[a:b] for u, a, b in bounds}


def shortest_path_dag(graph: EvidenceGraph, seed: int | str, min_hops: int, max_hops: int) -> ChainDag:
    """Build the trimmed layer DAG that :func:`enumerate_chains` walks (vectorised).

    One breadth-first search to depth ``max_hops`` that keeps, layer by layer, the arcs it
    scans from depth ``d`` to ``d + 1``; then, backwards, only the arcs that lead to a
    vertex at depth ``≥ min_hops``. Work is proportional to the arcs within ``max_hops``
    of the seed, not to the whole graph; a layer whose frontier has many times more arcs
    than the vertices still unreached (a hub reached early) is searched from the unreached
    side instead (:func:`_bottom_up`), which finds the same arcs.
    """
    s = _seed_vertex(graph, seed)
    topo = _topology(graph)
    n = graph.vcount()
    dist = np.full(n, UNREACHED, dtype=np.int64)
    dist[s] = 0
    seen = np.zeros(n, dtype=bool)  # reached (a byte per vertex: cheaper to gather than dist)
    seen[s] = True
    frontier = np.asarray([s], dtype=np.int64)
    layers: list[np.ndarray] = []  # per depth d: positions of the arcs d -> d + 1
    unreached_arcs = len(topo.dst) - int(topo.degree[s])  # arcs of the vertices not yet reached
    for d in range(max_hops):
        if not len(frontier):
            break
        if unreached_arcs * BOTTOM_UP < int(topo.degree[frontier].sum()):
            pos, reached = _bottom_up(topo, frontier, np.flatnonzero(~seen), n)
        else:  # an arc leads to layer d + 1 exactly when its head was not reached before
            pos = _ranges(topo.indptr, frontier)
            w = topo.dst[pos]
            fresh = ~seen[w]
            pos, reached = pos[fresh], _distinct(w[fresh], n)
        seen[reached] = True
        dist[reached] = d + 1
        unreached_arcs -= int(topo.degree[reached].sum())
        layers.append(pos)
        frontier = reached[topo.passable[reached]]
    # backwards: keep an arc when its head reaches depth >= min_hops (heads deeper than
    # min_hops all do); a tail at depth < min_hops is useful when one of its arcs is kept
    useful = np.zeros(n, dtype=bool)
    for d in range(len(layers) - 1, -1, -1):
        pos = layers[d]
        if d + 1 < min_hops:
            pos = pos[useful[topo.dst[pos]]]
            layers[d] = pos
        useful[topo.src[pos]] = True
    kept = np.sort(np.concatenate(layers)) if layers else np.zeros(0, dtype=np.int64)
    # topo arrays are grouped by source vertex in vertex order: sorted positions are CSR already
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(topo.src[kept], minlength=n), out=indptr[1:])
    return ChainDag(s, dist, indptr, topo.dst[kept].astype(np.int64), topo.edge[kept].astype(np.int64))


#: search a layer from the unreached side when their arcs are this many times fewer than the
#: frontier's (a bottom-up arc costs a mark look-up and a ``searchsorted``, not one gather)
BOTTOM_UP = 16


def _bottom_up(topo: _Topology, frontier: np.ndarray, unreached: np.ndarray, n: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """One BFS layer searched from the unreached side (direction-optimising BFS): when the
    unreached vertices have fewer arcs than the frontier, scan theirs. Returns the positions
    of the frontier's arcs into newly reached vertices (each arc ``w → u`` found names its
    reverse ``u → w``, a ``searchsorted`` range of :attr:`_Topology.key`) and those vertices."""
    pos = _ranges(topo.indptr, unreached)
    u = topo.dst[pos]
    hit = _marked(frontier, n)[u]
    w = topo.src[pos[hit]]
    pairs = np.unique(u[hit].astype(np.int64) * n + w)
    lo = np.searchsorted(topo.key, pairs, side="left")
    hi = np.searchsorted(topo.key, pairs, side="right")
    lens = hi - lo
    arcs = np.repeat(lo - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()), dtype=np.int64)
    return arcs, _distinct(w, n)


def _marked(values: np.ndarray, n: int) -> np.ndarray:
    mark = np.zeros(n, dtype=bool)
    mark[values] = True
    return mark


def _distinct(values: np.ndarray, n: int) -> np.ndarray:
    """Sorted distinct ``values`` (vertices below ``n``): a sort when few, a mark when many."""
    if len(values) * 16 < n:
        return np.unique(values)
    mark = np.zeros(n, dtype=bool)
    mark[values] = True
    return np.flatnonzero(mark)


def enumerate_chains(graph: EvidenceGraph, seed: int | str, min_hops: int = 5, max_hops: int = 7, *,
                     verifier: EdgeVerifier | None = None) -> Iterator[Chain]:
    """Every valid chain from ``seed`` (DESIGN §4 rules 1–4), depth-first, streaming.

    Arguments are checked now (unknown seed → :class:`~chaingraph.errors.UnknownEntity`,
    bad bounds → :class:`~chaingraph.errors.ChainRuleError`); the returned generator then
    yields :class:`Chain` values in a deterministic order (neighbours sorted by id,
    property and statement id). Parallel statements between the same two nodes give
    distinct chains. ``verifier=None`` is :class:`AcceptAll`.
    """
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    dag = shortest_path_dag(graph, seed, min_hops, max_hops)
    if verifier is None or isinstance(verifier, AcceptAll):
        return walk(dag.steps, dag.seed, min_hops, dag.suffix_level(min_hops, max_hops))
    return _walk_verified(graph, dag, min_hops, max_hops, verifier)


def _singletons(succ: dict[int, list[tuple[int, int]]]) -> dict[int, list[tuple[tuple[int], tuple[int]]]]:
    return {u: [((v,), (e,)) for v, e in lst] for u, lst in succ.items()}


def _walk_verified(graph: EvidenceGraph, dag: ChainDag, min_hops: int, max_hops: int,
                   verifier: EdgeVerifier) -> Iterator[Chain]:
    memo: dict[tuple[int, int], bool] = {}

    def ok(u: int, e: int) -> bool:
        hit = memo.get((e, u))
        if hit is None:
            hit = memo[(e, u)] = bool(verifier(graph, e, u).accepted)
        return hit

    filtered = {u: [(v, e) for v, e in lst if ok(u, e)] for u, lst in _reachable(dag.succ, dag.seed)}
    # the level is chosen on the unfiltered DAG: any level gives the same chains
    yield from walk(_singletons(filtered), dag.seed, min_hops, dag.suffix_level(min_hops, max_hops))


def _reachable(succ: dict[int, list[tuple[int, int]]], seed: int
               ) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """DAG vertices reachable from the seed, breadth-first (verifier asked in that order)."""
    seen, queue = {seed}, deque([seed])
    while queue:
        u = queue.popleft()
        lst = succ.get(u)
        if lst is None:
            continue
        yield u, lst
        for v, _e in lst:
            if v not in seen:
                seen.add(v)
                queue.append(v)


# -- bulk enumeration: the same chains as numpy blocks ----------------------------------------
class ChainBlock(NamedTuple):
    """Chains of one length ``k`` as rows: ``nodes`` (n × k+1) and ``edges`` (n × k) indices."""

    nodes: np.ndarray
    edges: np.ndarray

    @property
    def k(self) -> int:
        return int(self.edges.shape[1])

    def chains(self) -> Iterator[Chain]:
        """The rows as :class:`Chain` values."""
        for vs, es in zip(self.nodes.tolist(), self.edges.tolist()):
            yield Chain(tuple(vs), tuple(es))


def chain_blocks(graph: EvidenceGraph, seed: int | str, min_hops: int = 5, max_hops: int = 7, *,
                 verifier: EdgeVerifier | None = None, block_size: int = 1 << 16) -> Iterator[ChainBlock]:
    """Exactly the chains of :func:`enumerate_chains`, as numpy blocks of at most about
    ``block_size`` rows (a block may hold more when one vertex has more successors).

    For bulk work (counting, statistics, export) on graphs with millions of chains: the
    trimmed DAG is expanded a layer at a time with array operations, block by block, so
    memory stays bounded. Blocks come depth-first (a block before its extensions);
    rows within a block follow :func:`enumerate_chains`' neighbour order, but rows of
    different lengths are not interleaved as there.

    >>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3")])
    >>> [b.nodes.tolist() for b in chain_blocks(g, "Q1", 1, 2)]
    [[[0, 1]], [[0, 1, 2]]]
    """
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ChainRuleError(f"block_size must be a positive integer, got {block_size!r}")
    dag = shortest_path_dag(graph, seed, min_hops, max_hops)
    indptr, dst, eid = dag.indptr, dag.targets, dag.edges
    if verifier is not None and not isinstance(verifier, AcceptAll):
        verified = verifier
        succ = {u: [(v, e) for v, e in lst if verified(graph, e, u).accepted]
                for u, lst in _reachable(dag.succ, dag.seed)}
        counts = np.zeros(graph.vcount() + 1, dtype=np.int64)
        for u, lst in succ.items():
            counts[u + 1] = len(lst)
        indptr = np.cumsum(counts)
        flat = [step for u in sorted(succ) for step in succ[u]]
        dst = np.asarray([v for v, _e in flat], dtype=np.int64)
        eid = np.asarray([e for _v, e in flat], dtype=np.int64)
    return _blocks(indptr, dst, eid, dag.seed, min_hops, max_hops, block_size)


def _blocks(indptr: np.ndarray, dst: np.ndarray, eid: np.ndarray, seed: int, lo: int, hi: int,
            block: int) -> Iterator[ChainBlock]:
    stack = [(np.asarray([[seed]], dtype=np.int64), np.empty((1, 0), dtype=np.int64))]
    while stack:
        nodes, edges = stack.pop()
        depth = edges.shape[1]
        if depth >= lo:
            yield ChainBlock(nodes, edges)
        if depth == hi:
            continue
        last = nodes[:, -1]
        starts = indptr[last]
        deg = indptr[last + 1] - starts
        cum = np.cumsum(deg)
        rows = len(deg)
        children = []
        first = 0
        while first < rows:
            base = int(cum[first - 1]) if first else 0
            end = max(int(np.searchsorted(cum, base + block, side="right")), first + 1)
            d = deg[first:end]
            total = int(d.sum())
            if total:
                rep = np.repeat(np.arange(first, end), d)
                within = np.arange(total) - np.repeat(cum[first:end] - d - base, d)
                idx = np.repeat(starts[first:end], d) + within
                children.append((np.column_stack([nodes[rep], dst[idx]]),
                                 np.column_stack([edges[rep], eid[idx]])))
            first = end
        stack.extend(reversed(children))
