"""The prefix tree of chains holds exactly the chains of the per-chain walk."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chains_properties import World, build, worlds

from chaingraph.chain_tree import ChainTree, chain_tree
from chaingraph.chains import Chain, ChainBlock, Verdict, chain_ids, enumerate_chains
from chaingraph.graph import EvidenceGraph

STORY = [("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"), ("s3", "Q2", "P3", "Q4"),
         ("s4", "Q3", "P4", "Q5"), ("s5", "Q4", "P4", "Q5"), ("s6", "Q4", "P5", "Q5")]


def test_each_layer_lists_the_walks_chains_of_that_length_in_the_walks_order() -> None:
    g = EvidenceGraph.from_edges(STORY)
    tree = chain_tree(g, "Q1", 2, 3)
    walk = list(enumerate_chains(g, "Q1", 2, 3))
    for k in (2, 3):
        assert list(tree.block(k).chains()) == [c for c in walk if c.k == k]
    assert tree.count() == len(walk) == 5  # two parallel statements Q4-Q5 give two chains
    assert [chain_ids(g, c)[-1] for c in tree.block(3).chains()] == ["Q5", "Q5", "Q5"]


def test_prefixes_are_stored_once() -> None:
    g = EvidenceGraph.from_edges(STORY)
    tree = chain_tree(g, "Q1", 3, 3)
    assert tree.sizes() == [1, 1, 2, 3]


def test_a_rejecting_verifier_removes_the_chains_through_its_edge() -> None:
    g = EvidenceGraph.from_edges(STORY)

    def no_s6(graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        return Verdict(graph.edge_statement(edge) != "s6")

    tree = chain_tree(g, "Q1", 2, 3, verifier=no_s6)
    assert sorted(tree.chains()) == sorted(enumerate_chains(g, "Q1", 2, 3, verifier=no_s6))
    assert all("s6" not in {g.edge_statement(e) for e in c.edges} for c in tree.chains())


def test_no_chain_gives_an_empty_tree() -> None:
    g = EvidenceGraph.from_edges(STORY)
    tree = chain_tree(g, "Q5", 5, 7)
    assert tree.count() == 0 and list(tree.blocks()) == []


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_tree_and_walk_give_the_same_multiset_of_chains(world: World) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    seed = edges[0][1]
    for lo, hi in ((1, 3), (2, 4), (3, 3)):
        walk: Counter[Chain] = Counter(enumerate_chains(g, seed, lo, hi))
        assert Counter(chain_tree(g, seed, lo, hi).chains()) == walk


@settings(max_examples=150, deadline=None)
@given(worlds(), st.integers(1, 4), st.data())
def test_any_run_or_pick_of_rows_reads_the_walks_chains(world: World, size: int, data: st.DataObject) -> None:
    """Layers kept as ranges are read by runs (blocks of any size) or by picked rows; both
    give the walk's chains of that length, in the walk's order."""
    edges, literals, policy = world
    g = build(edges, literals, policy)
    seed = edges[0][1]
    for lo, hi in ((1, 3), (2, 4), (1, 1)):
        walk = list(enumerate_chains(g, seed, lo, hi))
        tree = chain_tree(g, seed, lo, hi)
        for k in range(lo, hi + 1):
            expected = [c for c in walk if c.k == k]
            assert [c for b in _blocks_of(tree, k, size) for c in b.chains()] == expected
            if expected:
                rows = data.draw(st.lists(st.integers(0, len(expected) - 1), max_size=6))
                picked = tree.block(k, np.asarray(rows, dtype=np.int64))
                assert list(picked.chains()) == [expected[r] for r in rows]


def _blocks_of(tree: ChainTree, k: int, size: int) -> list[ChainBlock]:
    n = tree.count(k)
    return [tree.block(k, slice(start, start + size)) for start in range(0, n, size)]
