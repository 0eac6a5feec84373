"""The compact graph against the rule it implements, written out in plain Python."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from test_chains_properties import World, build, worlds

from chaingraph.compact import argsort_keys
from chaingraph.graph import EvidenceGraph


def _expected_neighbours(g: EvidenceGraph, v: int) -> list[tuple[str, str, str, bool]]:
    """(neighbour id, property, statement id, forward), sorted as DESIGN's deterministic order."""
    out = []
    for e in range(g.ecount()):
        s, o = g.edge_endpoints(e)
        if s == v:
            out.append((g.name(o), g.edge_property(e), g.edge_statement(e), True))
        if o == v:
            out.append((g.name(s), g.edge_property(e), g.edge_statement(e), False))
    return sorted(out)


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_neighbours_follow_id_property_statement_direction_order(world: World) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    for v in range(g.vcount()):
        got = [(g.name(u), g.edge_property(e), g.edge_statement(e), f) for u, e, f in g.neighbours(v)]
        assert got == _expected_neighbours(g, v)


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_edges_are_the_policy_steps_in_subject_property_object_statement_order(world: World) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    items = sorted((s, p, o, sid) for sid, s, p, o in edges if policy.allows(p))
    lits = sorted((s, p, sid) for sid, s, p in literals if policy.allows(p) and policy.include_literals)
    got = [(g.name(a), g.edge_property(e), g.name(b), g.edge_statement(e))
           for e, (a, b) in ((e, g.edge_endpoints(e)) for e in range(g.ecount()))]
    assert got == [*items, *((s, p, f"{sid}#value", sid) for s, p, sid in lits)]
    assert sorted(n for n in (g.name(v) for v in range(g.vcount()))) == [g.name(v) for v in range(g.vcount())]


def test_mutual_statements_between_two_items_order_by_statement_id() -> None:
    g = EvidenceGraph.from_edges([("Q2$b", "Q2", "P26", "Q1"), ("Q1$c", "Q1", "P26", "Q2"),
                                  ("Q1$a", "Q1", "P26", "Q2")])
    assert [(g.edge_statement(e), f) for _u, e, f in g.neighbours(g.vertex("Q1"))] == [
        ("Q1$a", True), ("Q1$c", True), ("Q2$b", False)]


def test_arrays_in_and_tuples_in_build_the_same_graph() -> None:
    rows = [("s3", "Q3", "P1", "Q1"), ("s1", "Q1", "P2", "Q2"), ("s2", "Q1", "P31", "Q5")]
    a = EvidenceGraph.from_edges(rows)
    cols = [pa.array(c) for c in zip(*rows)]
    b = EvidenceGraph.from_arrays(*cols)
    assert [a.neighbours(v) for v in range(a.vcount())] == [b.neighbours(v) for v in range(b.vcount())]
    assert a.classes == b.classes == {"Q1": ("Q5",)}
    assert b.relation_codes.shape == (b.ecount(),)


@pytest.mark.parametrize("widths", [(3,), (20, 20, 6, 25), (62,), (40, 1, 62, 7)])
def test_argsort_keys_is_a_stable_lexsort_however_wide_the_keys(widths: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(widths))
    n = 50_000
    # few distinct values per key, so that rows tie on some keys and stability shows
    keys = [rng.choice(rng.integers(0, 2**w, 40, dtype=np.int64), n) for w in widths]
    assert argsort_keys(keys).tolist() == np.lexsort(keys[::-1]).tolist()
