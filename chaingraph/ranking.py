"""Ranking chains by diversity (DESIGN §4): entity types, familiarity, ``s_div``, top-N.

``s_div(c) = α·|T_c| / min(k+1, |T|) + β·|R_c| / min(k, 7)`` with α = 0.6, β = 0.4,
``T_c`` the distinct entity types on the chain, ``T`` the type inventory and ``R_c`` the
distinct relation classes of its steps. Scores are compared exactly (as integers over a
common denominator), so ties are real ties; they break by enumeration order, which is
deterministic. :func:`top_chains` finds the best ``n`` with a branch-and-bound walk of
the same DAG :func:`~chaingraph.chains.enumerate_chains` walks, and returns exactly what
ranking every chain would (:func:`rank_chains`).

Entity types come from an entity's ``P31`` classes through the type table
(``data/entity_types.tsv``), climbing ``P279`` when the graph holds subclass statements.

>>> s_div(n_types=4, n_relations=3, k=5)
0.64
>>> TypeTable({"Q5": "Person", "Q515": "Location"}).entity_type(["Q515"])
'Location'
"""

from __future__ import annotations

import csv
import heapq
import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from chaingraph.chains import Chain, ChainDag, EdgeVerifier, shortest_path_dag, validate_bounds
from chaingraph.errors import ChainRuleError, InvalidInput
from chaingraph.graph import EvidenceGraph
from chaingraph.records import TYPES
from chaingraph.resources import data_file

__all__ = [
    "RankedChain",
    "TypeTable",
    "chain_types",
    "default_type_table",
    "edge_relations",
    "familiarity",
    "node_types",
    "rank_chains",
    "s_div",
    "score_chain",
    "top_chains",
]

_A_NUM, _B_NUM, _DEN = 3, 2, 5  # α = 3/5, β = 2/5, exactly
MAX_RELATION_DENOMINATOR = 7


@dataclass(frozen=True)
class TypeTable:
    """Class Q-id → entity type; :meth:`load` reads the documented TSV."""

    types: Mapping[str, str]
    inventory: tuple[str, ...] = TYPES
    source: str = "inline"
    _priority: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.types.values()) - set(self.inventory))
        if unknown:
            raise InvalidInput(f"{self.source}: types {unknown} are not in the inventory "
                               f"{list(self.inventory)}; use one of those")
        object.__setattr__(self, "_priority", {t: i for i, t in enumerate(self.inventory)})

    @classmethod
    def load(cls, path: str | Path | None = None) -> TypeTable:
        """Read a type table (default: the packaged ``data/entity_types.tsv``)."""
        p = Path(path) if path is not None else data_file("entity_types.tsv")
        try:
            lines = [ln for ln in p.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
        except OSError as exc:
            raise InvalidInput(f"{p}: cannot read the entity-type table ({exc.strerror})") from exc
        rows = list(csv.DictReader(lines, delimiter="\t"))
        if not rows or "class" not in rows[0] or "type" not in rows[0]:
            raise InvalidInput(f"{p}: expected a tab-separated header with columns 'class' and 'type'")
        return cls({r["class"]: r["type"] for r in rows},
                   source="chaingraph:data/entity_types.tsv" if path is None else str(p))

    def entity_type(self, classes: Sequence[str],
                    superclasses: Mapping[str, Sequence[str]] | None = None) -> str | None:
        """The type of an entity with these ``P31`` classes: the type most of them give
        (ties: inventory order). With ``superclasses`` (``P279``), climb level by level
        until some class is in the table. ``None`` when nothing decides."""
        level, seen = list(dict.fromkeys(classes)), set(classes)
        while level:
            votes: dict[str, int] = {}
            for c in level:
                t = self.types.get(c)
                if t is not None:
                    votes[t] = votes.get(t, 0) + 1
            if votes:
                return min(votes, key=lambda t: (-votes[t], self._priority[t]))
            if not superclasses:
                return None
            nxt = [s for c in level for s in superclasses.get(c, ()) if s not in seen]
            seen.update(nxt)
            level = list(dict.fromkeys(nxt))
        return None


@lru_cache(maxsize=1)
def default_type_table() -> TypeTable:
    """The packaged type table (read once)."""
    return TypeTable.load()


def s_div(n_types: int, n_relations: int, k: int, inventory: int = len(TYPES)) -> float:
    """The diversity score of a chain with ``k`` hops (DESIGN §4), α = 0.6, β = 0.4."""
    return _key(n_types, n_relations, k, inventory) / (_DEN * _lcm(inventory))


@lru_cache(maxsize=64)
def _lcm(inventory: int) -> int:
    return math.lcm(*range(1, max(inventory, MAX_RELATION_DENOMINATOR) + 1))


def _key(n_types: int, n_relations: int, k: int, inventory: int) -> int:
    """``s_div · 5 · lcm`` as an exact integer (comparisons without float ties)."""
    if k < 1:
        raise ChainRuleError(f"a chain has at least one hop, got k={k}")
    d = _lcm(inventory)
    return (_A_NUM * n_types * (d // min(k + 1, inventory))
            + _B_NUM * n_relations * (d // min(k, MAX_RELATION_DENOMINATOR)))


def familiarity(graph: EvidenceGraph, node: int | str) -> int | None:
    """Sitelink count of an entity when known (more = better known), else ``None``."""
    name = node if isinstance(node, str) else graph.name(node)
    return graph.sitelinks.get(name)


_NODE_TYPES: weakref.WeakKeyDictionary[EvidenceGraph, dict[int, tuple[TypeTable, list[str | None]]]] = \
    weakref.WeakKeyDictionary()


def node_types(graph: EvidenceGraph, table: TypeTable | None = None) -> list[str | None]:
    """Entity type of every vertex (literal nodes are ``Value``), cached per graph and table."""
    table = table or default_type_table()
    per_graph = _NODE_TYPES.setdefault(graph, {})
    cached = per_graph.get(id(table))
    if cached is not None and cached[0] is table:  # the table is held, so its id is not reused
        return cached[1]
    sup = graph.class_statements.get("P279") or None
    hit: list[str | None] = [
        "Value" if graph.is_literal(v) and "Value" in table.inventory else
        table.entity_type(graph.classes.get(graph.name(v), ()), sup)
        for v in range(graph.vcount())]
    per_graph[id(table)] = (table, hit)
    return hit


def edge_relations(graph: EvidenceGraph) -> tuple[str | None, ...]:
    """Relation class of every edge (the graph's ``relation`` attribute)."""
    return graph.relations


class RankedChain(NamedTuple):
    """A chain with its score. ``key`` orders exactly; ``s_div`` is for people."""

    chain: Chain
    s_div: float
    key: int
    types: tuple[str, ...]
    relation_classes: tuple[str, ...]


def chain_types(graph: EvidenceGraph, chain: Chain, table: TypeTable | None = None
                ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Distinct entity types and relation classes on a chain (sorted)."""
    nt = node_types(graph, table)
    rels = edge_relations(graph)
    types = sorted({t for v in chain.nodes if (t := nt[v]) is not None})
    relations = sorted({r for e in chain.edges if (r := rels[e]) is not None})
    return tuple(types), tuple(relations)


def score_chain(graph: EvidenceGraph, chain: Chain, table: TypeTable | None = None) -> RankedChain:
    table = table or default_type_table()
    types, relations = chain_types(graph, chain, table)
    size = len(table.inventory)
    key = _key(len(types), len(relations), chain.k, size)
    return RankedChain(chain, key / (_DEN * _lcm(size)), key, types, relations)


def rank_chains(graph: EvidenceGraph, chains: Iterable[Chain], n: int | None = None, *,
                table: TypeTable | None = None) -> list[RankedChain]:
    """Score every chain and sort: best ``s_div`` first, ties in input order."""
    scored = [(score_chain(graph, c, table), i) for i, c in enumerate(chains)]
    scored.sort(key=lambda t: (-t[0].key, t[1]))
    return [r for r, _ in (scored if n is None else scored[:n])]


def top_chains(graph: EvidenceGraph, seed: int | str, n: int = 20, min_hops: int = 5, max_hops: int = 7,
               *, verifier: EdgeVerifier | None = None, table: TypeTable | None = None
               ) -> list[RankedChain]:
    """The ``n`` best chains from ``seed`` by ``s_div`` — the same list as
    ``rank_chains(graph, enumerate_chains(graph, seed, …), n)`` — without scoring every
    chain: a subtree is skipped when even its best possible score (per remaining hop, one
    new type and one new relation class of those still reachable below it in the DAG, for
    every length it could still reach) cannot beat the n-th best found so far."""
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ChainRuleError(f"n: must be a positive integer, got {n!r}").about("n")
    table = table or default_type_table()
    dag = shortest_path_dag(graph, seed, min_hops, max_hops)
    return _BranchAndBound(graph, dag, n, min_hops, max_hops, verifier, table).run()


class _BranchAndBound:
    """Depth-first over the DAG's CSR arrays (as Python lists: cheap to index), scoring
    prefixes incrementally with bit masks of the types and relation classes seen so far.

    The bound of a prefix ending at ``v``: for every length it can still reach (up to
    ``height[v]`` more hops), one more type per hop but only of the types still *available
    below* ``v`` in the DAG (``below_types[v]``, a bit mask computed bottom-up with numpy),
    and likewise for relation classes. Children are walked in enumeration order, so a
    prefix whose bound only ties the n-th best is skipped: ties go to the earlier chain.
    """

    def __init__(self, graph: EvidenceGraph, dag: ChainDag, n: int, min_hops: int, max_hops: int,
                 verifier: EdgeVerifier | None, table: TypeTable) -> None:
        self.graph, self.seed, self.n = graph, dag.seed, n
        self.min_hops, self.max_hops, self.verifier, self.table = min_hops, max_hops, verifier, table
        self.size = len(table.inventory)
        index = {t: i for i, t in enumerate(table.inventory)}
        nt = node_types(graph, table)
        self.indptr: list[int] = dag.indptr.tolist()
        self.targets: list[int] = dag.targets.tolist()
        self.edges: list[int] = dag.edges.tolist()
        types = np.asarray([-1 if t is None else index[t] for t in nt], dtype=np.int64)
        codes = graph.relation_codes
        tbit = np.where(types >= 0, np.left_shift(1, np.maximum(types, 0)), 0).astype(np.int64)
        rbit = np.where(codes >= 0, np.left_shift(1, np.maximum(codes, 0)), 0).astype(np.int64)
        self.vbit: list[int] = tbit.tolist()
        self.ebit: list[int] = rbit.tolist()
        height, below_t, below_r = _below(dag, tbit, rbit, max_hops)
        self.height: list[int] = height.tolist()
        self.below_t: list[int] = below_t.tolist()
        self.below_r: list[int] = below_r.tolist()
        # the same per DAG arc, as numpy, to bound many children of one vertex at once
        self.arc_t, self.arc_r = tbit[dag.targets], rbit[dag.edges]
        self.arc_bt, self.arc_br, self.arc_h = below_t[dag.targets], below_r[dag.targets], height[dag.targets]
        self.heap: list[tuple[int, int, tuple[int, ...], tuple[int, ...]]] = []
        self.count = 0
        self.memo: dict[tuple[int, int], bool] = {}
        self.bounds: dict[tuple[int, int, int, int, int, int], int] = {}

    def bound(self, depth: int, t: int, r: int, height: int, t_avail: int, r_avail: int) -> int:
        """Best key of a chain extending a ``depth``-hop prefix with ``t`` types and ``r``
        relation classes, at most ``height`` more hops, ``t_avail``/``r_avail`` new ones left."""
        key = (depth, t, r, height, t_avail, r_avail)
        hit = self.bounds.get(key)
        if hit is None:
            best = -1
            for k in range(max(depth, self.min_hops), min(depth + height, self.max_hops) + 1):
                extra = k - depth
                best = max(best, _key(min(t + min(extra, t_avail), k + 1), min(r + min(extra, r_avail), k),
                                      k, self.size))
            hit = self.bounds[key] = best
        return hit

    def run(self) -> list[RankedChain]:
        self._visit(self.seed, [self.seed], [], self.vbit[self.seed], 0)
        best = sorted(self.heap, key=lambda x: (-x[0], -x[1]))
        return [score_chain(self.graph, Chain(vs, es), self.table) for _k, _i, vs, es in best]

    def _ok(self, u: int, e: int) -> bool:
        if self.verifier is None:
            return True
        hit = self.memo.get((e, u))
        if hit is None:
            hit = self.memo[(e, u)] = bool(self.verifier(self.graph, e, u).accepted)
        return hit

    def _bounds(self, lo: int, hi: int, depth: int, tm: int, rm: int, last: bool) -> np.ndarray:
        """The bounds (exact keys on the last layer) of the children ``lo:hi``, vectorised."""
        t, r = tm.bit_count(), rm.bit_count()
        ntm, nrm = self.arc_t[lo:hi] | tm, self.arc_r[lo:hi] | rm
        nt, nr = t + (ntm != tm), r + (nrm != rm)
        if last:
            return _keys(nt, nr, depth, self.size)
        ta, ra = _popcount(self.arc_bt[lo:hi] & ~ntm), _popcount(self.arc_br[lo:hi] & ~nrm)
        reach = depth + self.arc_h[lo:hi]
        best = np.full(hi - lo, -1, dtype=np.int64)
        for k in range(max(depth, self.min_hops), self.max_hops + 1):
            extra = k - depth
            keys = _keys(np.minimum(nt + np.minimum(extra, ta), k + 1),
                         np.minimum(nr + np.minimum(extra, ra), k), k, self.size)
            np.maximum(best, np.where(reach >= k, keys, -1), out=best)
        return best

    def _visit(self, u: int, vs: list[int], es: list[int], tm: int, rm: int) -> None:
        depth = len(es) + 1
        indptr, targets, edges, vbit, ebit = self.indptr, self.targets, self.edges, self.vbit, self.ebit
        height_of, below_t, below_r, bound = self.height, self.below_t, self.below_r, self.bound
        heap, n, last, size = self.heap, self.n, depth >= self.max_hops, self.size
        t, r = tm.bit_count(), rm.bit_count()
        emit = depth >= self.min_hops
        lo, hi = indptr[u], indptr[u + 1]
        while lo < hi:
            if hi - lo > _CHUNK and len(heap) >= n:
                # many children: bound the rest of them at once with numpy, walk the survivors
                stop = hi
                sel = np.flatnonzero(self._bounds(lo, stop, depth, tm, rm, last) > heap[0][0])
                todo: Iterable[int] = (sel + lo).tolist()
            else:
                stop = min(hi, lo + max(_CHUNK, 1))
                todo = range(lo, stop)
            lo = stop
            for i in todo:
                v, e = targets[i], edges[i]
                if self.verifier is not None and not self._ok(u, e):
                    continue
                ntm, nrm = tm | vbit[v], rm | ebit[e]
                nt, nr = t + (ntm != tm), r + (nrm != rm)
                if len(heap) >= n:
                    if last:
                        if _key(nt, nr, depth, size) <= heap[0][0]:
                            continue
                    elif bound(depth, nt, nr, height_of[v], (below_t[v] & ~ntm).bit_count(),
                               (below_r[v] & ~nrm).bit_count()) <= heap[0][0]:
                        continue
                vs.append(v)
                es.append(e)
                if emit:
                    key = _key(nt, nr, depth, size)
                    item = (key, -self.count, tuple(vs), tuple(es))
                    self.count += 1
                    if len(heap) < n:
                        heapq.heappush(heap, item)
                    elif key > heap[0][0]:
                        heapq.heapreplace(heap, item)
                if not last and indptr[v] != indptr[v + 1]:
                    self._visit(v, vs, es, ntm, nrm)
                vs.pop()
                es.pop()


_CHUNK = 64


def _keys(nt: np.ndarray, nr: np.ndarray, k: int, inventory: int) -> np.ndarray:
    """:func:`_key` of many chains of ``k`` hops at once."""
    d = _lcm(inventory)
    return (_A_NUM * (d // min(k + 1, inventory)) * nt.astype(np.int64)
            + _B_NUM * (d // min(k, MAX_RELATION_DENOMINATOR)) * nr.astype(np.int64))


_BYTE_BITS = np.asarray([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount(x: np.ndarray) -> np.ndarray:
    """Set bits per element of a non-negative int64 array."""
    out = np.zeros(len(x), dtype=np.int64)
    x = x.copy()
    while True:
        out += _BYTE_BITS[x & 255]
        x >>= 8
        if not x.any():
            return out


def _below(dag: ChainDag, tbit: np.ndarray, rbit: np.ndarray, max_hops: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per vertex, over the DAG below it: the longest path (hops), and the bit masks of the
    entity types of the vertices and of the relation classes of the arcs it can reach."""
    n = len(dag.indptr) - 1
    height = np.zeros(n, dtype=np.int64)
    below_t = np.zeros(n, dtype=np.int64)
    below_r = np.zeros(n, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(dag.indptr))
    arc_dist = dag.dist[src]
    for d in range(max_hops - 1, -1, -1):
        sel = np.flatnonzero(arc_dist == d)
        if not len(sel):
            continue
        s, w = src[sel], dag.targets[sel]
        heads = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # arcs are grouped by source
        u = s[heads]
        height[u] = np.maximum.reduceat(1 + height[w], heads)
        below_t[u] = np.bitwise_or.reduceat(tbit[w] | below_t[w], heads)
        below_r[u] = np.bitwise_or.reduceat(rbit[dag.edges[sel]] | below_r[w], heads)
    return height, below_t, below_r
