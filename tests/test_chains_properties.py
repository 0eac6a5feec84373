"""Property tests on random graphs: chaingraph's chains against an independent oracle.

The oracle is networkx: ``all_simple_paths`` on the undirected graph, parallel statements
expanded, filtered by the rules of DESIGN §4 as written (bounds, no repeat, hubs and
literals only at the end, seed→target distance under the policy equal to ``k`` by a
networkx BFS on a digraph whose arcs leave only passable vertices).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.chains import chain_blocks, chain_ids, enumerate_chains
from chaingraph.graph import EvidenceGraph
from chaingraph.settings import TraversalPolicy

Edge = tuple[str, str, str, str]
World = tuple[list[Edge], list[tuple[str, str, str]], TraversalPolicy]


@st.composite
def worlds(draw: st.DrawFn, max_nodes: int = 9, max_edges: int = 18) -> World:
    n = draw(st.integers(2, max_nodes))
    names = [f"Q{i}" for i in range(1, n + 1)]
    raw = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["P1", "P2", "P3", "P31"]),
                                  st.sampled_from(names)), min_size=1, max_size=max_edges))
    edges = [(f"{s}$e{i}", s, p, o) for i, (s, p, o) in enumerate(raw)]
    lits = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["P5", "P6"])), max_size=4))
    literals = [(f"{s}$l{i}", s, p) for i, (s, p) in enumerate(lits)]
    policy = TraversalPolicy(hub_limit=draw(st.sampled_from([None, 2, 3, 4])),
                             include_literals=draw(st.booleans()))
    return edges, literals, policy


def build(edges: Sequence[Edge], literals: Sequence[tuple[str, str, str]], policy: TraversalPolicy
          ) -> EvidenceGraph:
    return EvidenceGraph.from_edges(edges, literals=literals, policy=policy)


def oracle(edges: Sequence[Edge], literals: Sequence[tuple[str, str, str]], policy: TraversalPolicy,
           seed: str, lo: int, hi: int) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every valid chain as (node ids, statement ids), by brute force."""
    steps = [(sid, s, o) for sid, s, p, o in edges if policy.allows(p)]
    if policy.include_literals:
        steps += [(sid, s, f"{sid}#value") for sid, s, p in literals if policy.allows(p)]
    multi = nx.MultiGraph()
    multi.add_nodes_from({s for _sid, s, _p, _o in edges})
    for sid, s, o in steps:
        multi.add_edge(s, o, key=sid)
    if seed not in multi:
        return set()

    def literal(v: str) -> bool:
        return v.endswith("#value")

    def passable(v: str) -> bool:
        return not literal(v) and (policy.hub_limit is None or multi.degree(v) <= policy.hub_limit)

    arcs = nx.DiGraph()
    arcs.add_nodes_from(multi)
    for u, v in multi.edges():
        for a, b in ((u, v), (v, u)):
            if passable(a) or a == seed:
                arcs.add_edge(a, b)
    dist = nx.single_source_shortest_path_length(arcs, seed)
    simple = nx.Graph(multi)
    out = set()
    for target in simple:
        if target == seed or dist.get(target) is None or not lo <= dist[target] <= hi:
            continue
        for path in nx.all_simple_paths(simple, seed, target, cutoff=hi):
            k = len(path) - 1
            if not lo <= k <= hi or dist[target] != k or not all(passable(v) for v in path[1:-1]):
                continue
            options = [sorted(multi.get_edge_data(a, b)) for a, b in itertools.pairwise(path)]
            for sids in itertools.product(*options):
                out.add((tuple(path), tuple(sids)))
    return out


def ours(g: EvidenceGraph, seed: str, lo: int, hi: int) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(tuple(g.name(v) for v in c.nodes), tuple(g.edge_statement(e) for e in c.edges))
            for c in enumerate_chains(g, seed, lo, hi)]


@settings(max_examples=150, deadline=None)
@given(worlds(), st.integers(1, 3), st.integers(0, 3))
def test_chains_equal_brute_force(world: World, lo: int, extra: int) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    seed = g.name(0)
    if g.is_literal(0):
        return
    got = ours(g, seed, lo, lo + extra)
    assert len(got) == len(set(got)), "a chain was produced twice"
    assert set(got) == oracle(edges, literals, policy, seed, lo, lo + extra)


@settings(max_examples=100, deadline=None)
@given(worlds(max_nodes=12, max_edges=30), st.integers(1, 4))
def test_every_chain_is_simple_bounded_and_shortest(world: World, lo: int) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    if g.is_literal(0):
        return
    seed = g.name(0)
    hub_free = TraversalPolicy(hub_limit=None, include_literals=policy.include_literals)
    und = nx.Graph(build(edges, literals, hub_free).to_networkx().to_undirected())
    plain = nx.single_source_shortest_path_length(und, seed)
    for c in enumerate_chains(g, seed, lo, lo + 2):
        names = [g.name(v) for v in c.nodes]
        assert len(set(names)) == len(names)
        assert lo <= c.k <= lo + 2
        for a, b, e in zip(c.nodes, c.nodes[1:], c.edges):
            assert {a, b} == set(g.edge_endpoints(e)) or a == b
        # never shorter than the unrestricted BFS distance; equal to it when no hub limit applies
        assert plain[names[-1]] <= c.k
        if policy.hub_limit is None:
            assert plain[names[-1]] == c.k


@settings(max_examples=60, deadline=None)
@given(worlds(), st.randoms(use_true_random=False))
def test_order_is_deterministic_across_insertion_orders(world: World, rnd: object) -> None:
    edges, literals, policy = world
    shuffled = list(edges)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    g1, g2 = build(edges, literals, policy), build(shuffled, list(reversed(literals)), policy)
    seed = sorted(n for n in (g1.name(v) for v in range(g1.vcount())) if not n.endswith("#value"))[0]
    first = [chain_ids(g1, c) for c in enumerate_chains(g1, seed, 1, 4)]
    assert first == [chain_ids(g2, c) for c in enumerate_chains(g2, seed, 1, 4)]
    assert first == [chain_ids(g1, c) for c in enumerate_chains(g1, seed, 1, 4)]


@settings(max_examples=80, deadline=None)
@given(worlds(max_nodes=10, max_edges=24), st.integers(1, 3), st.integers(0, 3), st.integers(1, 6))
def test_blocks_hold_exactly_the_enumerated_chains(world: World, lo: int, extra: int, block: int) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    if g.is_literal(0):
        return
    seed = g.name(0)
    walked = Counter(enumerate_chains(g, seed, lo, lo + extra))
    blocks = list(chain_blocks(g, seed, lo, lo + extra, block_size=block))
    assert Counter(c for b in blocks for c in b.chains()) == walked
    assert all(b.nodes.shape == (b.edges.shape[0], b.k + 1) for b in blocks)
    # rows of one length come in the walk's order
    walk_order = list(enumerate_chains(g, seed, lo, lo + extra))
    for k in range(lo, lo + extra + 1):
        assert [c for b in blocks if b.k == k for c in b.chains()] == [c for c in walk_order if c.k == k]


@settings(max_examples=150, deadline=None)
@given(worlds(max_nodes=12, max_edges=30), st.integers(1, 3), st.integers(0, 3))
def test_layers_searched_from_the_unreached_side_find_the_same_dag(world: World, lo: int, extra: int) -> None:
    """Every BFS layer searched bottom-up (``BOTTOM_UP = 0``) gives the DAG and the chains the
    top-down search gives, and those chains are still the brute-force oracle's."""
    import numpy as np

    from chaingraph import chains

    edges, literals, policy = world
    g = build(edges, literals, policy)
    if g.is_literal(0):
        return
    seed, hi = g.name(0), lo + extra
    saved = chains.BOTTOM_UP
    try:
        chains.BOTTOM_UP = 10**9  # never
        top_down = chains.shortest_path_dag(g, seed, lo, hi)
        chains.BOTTOM_UP = 0  # every layer whose frontier has an arc
        calls = []
        real = chains._bottom_up

        def spy(*args: object) -> object:
            calls.append(1)
            return real(*args)  # type: ignore[arg-type]

        chains._bottom_up = spy  # type: ignore[assignment]
        try:
            bottom_up = chains.shortest_path_dag(g, seed, lo, hi)
            got = ours(g, seed, lo, hi)
        finally:
            chains._bottom_up = real
    finally:
        chains.BOTTOM_UP = saved
    if len(edges) and g.degree(0):
        assert calls, "the bottom-up search was not exercised"
    for name in ("dist", "indptr", "targets", "edges"):
        assert np.array_equal(getattr(top_down, name), getattr(bottom_up, name)), name
    assert set(got) == oracle(edges, literals, policy, seed, lo, hi)


@settings(max_examples=150, deadline=None)
@given(worlds(max_nodes=12, max_edges=30), st.integers(1, 3), st.integers(0, 3))
def test_the_walk_gives_the_same_chains_in_depth_first_order_whatever_layer_it_lists(
        world: World, lo: int, extra: int) -> None:
    """The per-chain walk lists one layer's suffixes; every choice of layer gives the chains
    a plain recursive depth-first walk of the DAG gives, in its order."""
    from chaingraph.chain_walk import walk
    from chaingraph.chains import Chain, shortest_path_dag

    edges, literals, policy = world
    g = build(edges, literals, policy)
    if g.is_literal(0):
        return
    hi = lo + extra
    dag = shortest_path_dag(g, g.name(0), lo, hi)

    def dfs(nodes: tuple[int, ...], path: tuple[int, ...]) -> list[Chain]:
        out = []
        for v, e in dag.succ.get(nodes[-1], ()):
            chain = Chain((*nodes, v), (*path, e))
            out += [chain] * (chain.k >= lo) + dfs(chain.nodes, chain.edges)
        return out

    expected = dfs((dag.seed,), ())
    assert list(enumerate_chains(g, dag.seed, lo, hi)) == expected
    for level in range(hi + 1):
        assert list(walk(dag.steps, dag.seed, lo, level)) == expected, level
    # with no room for suffixes, the walk lists none: a layer no arc leaves
    import numpy as np

    from chaingraph import chain_walk

    saved = chain_walk.MAX_SUFFIXES
    try:
        chain_walk.MAX_SUFFIXES = 0
        level = dag.suffix_level(lo, hi)
        assert list(enumerate_chains(g, dag.seed, lo, hi)) == expected
    finally:
        chain_walk.MAX_SUFFIXES = saved
    tails = np.repeat(np.arange(len(dag.indptr) - 1), np.diff(dag.indptr))
    assert not len(tails) or int(dag.dist[tails].max()) < level
