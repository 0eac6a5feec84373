"""Diversity ranking: the s_div formula, the type table, and top-N by branch and bound."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.chains import enumerate_chains
from chaingraph.crosswalk.relations import RelationClassifier
from chaingraph.errors import ChainRuleError, InvalidInput
from chaingraph.graph import EvidenceGraph
from chaingraph.ranking import (
    TYPES,
    TypeTable,
    default_type_table,
    familiarity,
    node_types,
    rank_chains,
    s_div,
    score_chain,
    top_chains,
)
from chaingraph.settings import TraversalPolicy
from chaingraph.sources.loaders import load
from chaingraph.store import Store

WORLD = Path(__file__).parent / "fixtures" / "chains" / "world.json"


def exact(t: int, r: int, k: int, size: int = len(TYPES)) -> Fraction:
    return Fraction(3, 5) * Fraction(t, min(k + 1, size)) + Fraction(2, 5) * Fraction(r, min(k, 7))


@pytest.mark.parametrize(("t", "r", "k", "size"), [(4, 3, 5, 9), (1, 1, 5, 9), (9, 7, 8, 9), (6, 7, 7, 9),
                                                   (3, 2, 5, 3), (0, 0, 6, 9), (5, 5, 12, 9)])
def test_s_div_is_the_design_formula(t: int, r: int, k: int, size: int) -> None:
    assert s_div(t, r, k, size) == pytest.approx(float(exact(t, r, k, size)), abs=1e-12)


def test_s_div_reaches_one_for_a_fully_diverse_chain() -> None:
    assert s_div(6, 5, 5) == pytest.approx(1.0)  # 6 of min(6, 9) types, 5 of min(5, 7) classes
    assert s_div(9, 7, 9) == pytest.approx(1.0)
    with pytest.raises(ChainRuleError):
        s_div(1, 1, 0)


def test_type_table_is_packaged_and_documented() -> None:
    table = default_type_table()
    assert table.types["Q5"] == "Person" and table.types["Q515"] == "Location"
    assert table.types["Q11424"] == "Work" and table.types["Q3918"] == "Organization"
    assert set(table.types.values()) <= set(TYPES) - {"Value"}
    assert len(table.types) > 2000


def test_type_votes_and_priority() -> None:
    table = TypeTable({"Qa": "Location", "Qb": "Organization", "Qc": "Organization", "Qd": "Person"})
    assert table.entity_type(["Qa", "Qb", "Qc"]) == "Organization"  # majority
    assert table.entity_type(["Qa", "Qd"]) == "Person"  # tie: inventory order
    assert table.entity_type(["Qz"]) is None


def test_p279_closure_climbs_until_a_class_is_known() -> None:
    table = TypeTable({"Qroot": "Product", "Qother": "Work"})
    sup = {"Qleaf": ("Qmid",), "Qmid": ("Qroot",), "Qdeep": ("Qleaf",)}
    assert table.entity_type(["Qleaf"]) is None
    assert table.entity_type(["Qleaf"], sup) == "Product"
    assert table.entity_type(["Qdeep", "Qother"], sup) == "Work"  # nearest level wins
    cyclic = {"Qx": ("Qy",), "Qy": ("Qx",)}
    assert table.entity_type(["Qx"], cyclic) is None


def test_type_table_files(tmp_path: Path) -> None:
    good = tmp_path / "types.tsv"
    good.write_text("# comment\nclass\ttype\tlabel\nQ1\tEvent\tthing\n", encoding="utf-8")
    assert TypeTable.load(good).types == {"Q1": "Event"}
    bad = tmp_path / "bad.tsv"
    bad.write_text("class\ttype\nQ1\tPlanet\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="Planet"):
        TypeTable.load(bad)
    with pytest.raises(InvalidInput, match="cannot read"):
        TypeTable.load(tmp_path / "missing.tsv")


@pytest.fixture(scope="module")
def world() -> EvidenceGraph:
    with Store() as s:
        load([WORLD], s)
        rel = {"P19": "spatial", "P206": "spatial", "P131": "spatial", "P276": "spatial",
               "P108": "member-collection", "P1416": "member-collection", "P69": "member-collection",
               "P50": "causal", "P170": "causal", "P98": "causal", "P1434": "spatial", "P800": "causal"}
        return EvidenceGraph.from_store(s, policy=TraversalPolicy(hub_limit=5, include_literals=True),
                                        classifier=RelationClassifier.of(rel))


def test_world_types_and_familiarity(world: EvidenceGraph) -> None:
    types = node_types(world)
    by_name = {world.name(v): t for v, t in enumerate(types)}
    assert by_name["Q1001"] == "Person" and by_name["Q1009"] == "Organization"
    assert by_name["Q1005"] == "Location" and by_name["Q1013"] == "Work"
    assert by_name["Q1017"] == "Product"  # mechanical calculator -P279-> machine
    assert by_name["Q1013$W048#value"] == "Value"
    assert familiarity(world, "Q1002") == 300 and familiarity(world, "Q1004") is None


def test_score_of_a_world_chain(world: EvidenceGraph) -> None:
    chain = next(c for c in enumerate_chains(world, "Q1001", 7, 7))
    ranked = score_chain(world, chain)
    # Ada, London, Thames, Oxford, University, Tolkien, Hobbit, literal date
    assert ranked.types == ("Location", "Organization", "Person", "Value", "Work")
    assert ranked.relation_classes == ("causal", "member-collection", "spatial")
    assert ranked.s_div == pytest.approx(float(exact(5, 3, 7)))


def test_top_chains_equal_rank_all_on_the_world(world: EvidenceGraph) -> None:
    everything = rank_chains(world, enumerate_chains(world, "Q1001"))
    assert len(everything) > 3  # otherwise the comparisons below are of empty lists
    for n in range(1, len(everything) + 2):
        assert top_chains(world, "Q1001", n) == everything[:n]
    keys = [r.key for r in everything]
    assert keys == sorted(keys, reverse=True)


def test_top_chains_checks_arguments(world: EvidenceGraph) -> None:
    with pytest.raises(ChainRuleError, match=r"^n: must be a positive integer"):
        top_chains(world, "Q1001", 0)
    with pytest.raises(ChainRuleError):
        top_chains(world, "Q1001", 3, 4, 2)


@st.composite
def typed_worlds(draw: st.DrawFn) -> tuple[EvidenceGraph, dict[str, str]]:
    n = draw(st.integers(3, 11))
    names = [f"Q{i}" for i in range(1, n + 1)]
    raw = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["P1", "P2", "P3", "P4"]),
                                  st.sampled_from(names)), min_size=2, max_size=26))
    kinds = st.sampled_from(["C1", "C2", "C3", "C4", "C5"])
    classes = draw(st.lists(st.tuples(st.sampled_from(names), kinds), max_size=12))
    edges = [(f"e{i}", s, p, o) for i, (s, p, o) in enumerate(raw)]
    edges += [(f"c{i}", s, "P31", c) for i, (s, c) in enumerate(classes)]
    relation = draw(st.fixed_dictionaries({p: st.sampled_from(["a", "b", "c", None])
                                           for p in ("P1", "P2", "P3", "P4")}))
    policy = TraversalPolicy(hub_limit=draw(st.sampled_from([None, 3, 5])))
    graph = EvidenceGraph.from_edges(edges, policy=policy, classifier=RelationClassifier.of(relation))
    return graph, relation


TABLE = TypeTable({"C1": "Person", "C2": "Location", "C3": "Work", "C4": "Person", "C5": "Event"})


@settings(max_examples=120, deadline=None)
@given(typed_worlds(), st.integers(1, 4), st.integers(0, 3), st.integers(1, 8))
def test_branch_and_bound_equals_enumerate_then_sort(world: tuple[EvidenceGraph, dict[str, str]],
                                                     lo: int, extra: int, n: int) -> None:
    g, _ = world
    seed = g.name(0)
    expected = rank_chains(g, enumerate_chains(g, seed, lo, lo + extra), n, table=TABLE)
    assert top_chains(g, seed, n, lo, lo + extra, table=TABLE) == expected


def test_top_chains_respect_the_verifier(world: EvidenceGraph) -> None:
    from chaingraph.chains import Verdict

    def no_employers(graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        return Verdict(graph.edge_property(edge) != "P108", 1.0, "employer unverified")

    everything = rank_chains(world, enumerate_chains(world, "Q1001", verifier=no_employers))
    assert everything and all(world.edge_property(e) != "P108" for r in everything for e in r.chain.edges)
    for n in (1, 3, len(everything)):
        assert top_chains(world, "Q1001", n, verifier=no_employers) == everything[:n]


@settings(max_examples=120, deadline=None)
@given(typed_worlds(), st.integers(1, 3), st.integers(0, 3), st.integers(1, 8))
def test_vectorised_child_bounds_give_the_same_top_chains(world: tuple[EvidenceGraph, dict[str, str]],
                                                          lo: int, extra: int, n: int) -> None:
    """With the chunk size at 0 every vertex's children are bounded by the numpy path
    (on real graphs only hubs are), and the answer is still rank-all's."""
    import chaingraph.ranking as ranking

    g, _ = world
    seed = g.name(0)
    expected = rank_chains(g, enumerate_chains(g, seed, lo, lo + extra), n, table=TABLE)
    chunk = ranking._CHUNK
    ranking._CHUNK = 0
    try:
        assert top_chains(g, seed, n, lo, lo + extra, table=TABLE) == expected
    finally:
        ranking._CHUNK = chunk
