"""Chain enumeration and "why not?" on a small hand-written world (tests/fixtures/chains).

The story is in ``tests/fixtures/chains/make_world.py``: seed Q1001 (Ada Lovelace), a long
route to Tolkien, The Hobbit and Middle-earth, a shortcut through Halley, a hub (the
United Kingdom), a duplicate Babbage, class edges, a deprecated birthplace, literal dates.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chaingraph.chains import (
    AcceptAll,
    Chain,
    Verdict,
    chain_ids,
    distances,
    enumerate_chains,
)
from chaingraph.errors import ChainRuleError, UnknownEntity
from chaingraph.explain import explain_chain
from chaingraph.graph import EvidenceGraph
from chaingraph.settings import TraversalPolicy
from chaingraph.sources.loaders import load
from chaingraph.store import Store

WORLD = Path(__file__).parent / "fixtures" / "chains" / "world.json"
OXFORD = ("Q1001", "P19", "Q1002", "P206", "Q1005", "P206", "Q1007", "P131", "Q1009")
BABBAGE = ("Q1001", "P800", "Q1003", "P170", "Q1004", "P460", "Q1016", "P170", "Q1017", "P276", "Q1018")


@pytest.fixture(scope="module")
def world_store() -> Iterator[Store]:
    with Store() as s:
        load([WORLD], s)
        yield s


def graph(store: Store, **policy: object) -> EvidenceGraph:
    return EvidenceGraph.from_store(store, policy=TraversalPolicy(**{"hub_limit": 5, **policy}))  # type: ignore[arg-type]


def ids(g: EvidenceGraph, chains: Iterator[Chain] | list[Chain]) -> set[tuple[str, ...]]:
    return {chain_ids(g, c) for c in chains}


def test_world_has_exactly_the_story_chains(world_store: Store) -> None:
    g = graph(world_store)
    tolkien = [(*OXFORD, p, "Q1011") for p in ("P108", "P1416")]
    expected = {*tolkien, *[(*t, "P50", "Q1013") for t in tolkien],
                *[(*t, "P50", "Q1013", "P1434", "Q1014") for t in tolkien],
                BABBAGE, (*BABBAGE, "P131", "Q1019")}
    assert ids(g, enumerate_chains(g, "Q1001")) == expected


def test_bounds_select_chain_lengths(world_store: Store) -> None:
    g = graph(world_store)
    assert {c.k for c in enumerate_chains(g, "Q1001", 6, 6)} == {6}
    assert ids(g, enumerate_chains(g, "Q1001", 7, 9)) == {
        (*OXFORD, p, "Q1011", "P50", "Q1013", "P1434", "Q1014") for p in ("P108", "P1416")}


def test_short_chains_are_exactly_the_shortest_paths(world_store: Store) -> None:
    g = graph(world_store)
    chains = list(enumerate_chains(g, "Q1001", 1, 2))
    dist = distances(g, "Q1001")
    for c in chains:
        assert all(dist[v] == i for i, v in enumerate(c.nodes))
    # Halley is reached only through London (two hops), never through the Principia.
    assert ("Q1001", "P19", "Q1002", "P19", "Q1012") in ids(g, chains)
    # ... and nothing is missing: every node within two hops, by its one shortest path
    assert ids(g, chains) == {
        ("Q1001", "P19", "Q1002"), ("Q1001", "P800", "Q1003"),
        ("Q1001", "P19", "Q1002", "P206", "Q1005"), ("Q1001", "P19", "Q1002", "P19", "Q1012"),
        ("Q1001", "P19", "Q1002", "P17", "Q1015"), ("Q1001", "P800", "Q1003", "P170", "Q1004")}
    assert len(chains) == 6


def test_parallel_properties_are_distinct_steps(world_store: Store) -> None:
    g = graph(world_store)
    five = [c for c in enumerate_chains(g, "Q1001", 5, 5) if g.name(c.nodes[-1]) == "Q1011"]
    assert len(five) == 2
    assert five[0].nodes == five[1].nodes and five[0].edges != five[1].edges
    assert {g.edge_property(c.edges[-1]) for c in five} == {"P108", "P1416"}


def test_directions_follow_wikidata(world_store: Store) -> None:
    g = graph(world_store)
    chain = next(c for c in enumerate_chains(g, "Q1001", 5, 5) if g.name(c.nodes[-1]) == "Q1011")
    # Ada -P19-> London -P206-> Thames <-P206- Oxford <-P131- University <-P108- Tolkien
    assert chain.forward(g) == (True, True, False, False, False)


def test_hub_is_not_walked_through(world_store: Store) -> None:
    hubbed, open_ = graph(world_store), graph(world_store, hub_limit=None)
    assert not hubbed.passable(hubbed.vertex("Q1015"))
    assert distances(hubbed, "Q1001")[hubbed.vertex("Q1019")] == 6
    assert distances(open_, "Q1001")[open_.vertex("Q1019")] == 3  # London – UK – South Kensington
    assert (*BABBAGE, "P131", "Q1019") in ids(hubbed, enumerate_chains(hubbed, "Q1001"))
    assert not any("Q1019" in c for c in ids(open_, enumerate_chains(open_, "Q1001")))


def test_hub_may_end_a_chain_and_seed_one() -> None:
    # Q1 - Q2 - Q3 - Q4 - Q5 - H, H also linked to 3 leaves: H (degree 4 > 3) is a hub.
    path = [("Q1", "Q2"), ("Q2", "Q3"), ("Q3", "Q4"), ("Q4", "Q5"), ("Q5", "Q9")]
    leaves = [("Q9", f"Q9{i}") for i in range(3)]
    edges = [(f"s{i}", a, "P1", b) for i, (a, b) in enumerate(path + leaves)]
    g = EvidenceGraph.from_edges(edges, policy=TraversalPolicy(hub_limit=3))
    got = ids(g, enumerate_chains(g, "Q1", 5, 7))
    assert got == {("Q1", "P1", "Q2", "P1", "Q3", "P1", "Q4", "P1", "Q5", "P1", "Q9")}
    # a hub seed is expanded (once) even though it is not passable
    from_hub = ids(g, enumerate_chains(g, "Q9", 1, 1))
    assert len(from_hub) == 4


def test_class_edges_type_nodes_but_are_not_steps(world_store: Store) -> None:
    g = graph(world_store)
    assert g.classes["Q1001"] == ("Q5",)
    assert "Q5" not in g  # human is not a vertex: Ada and Newton are not two hops apart
    assert g.class_statements["P279"]["Q9999001"] == ("Q11019",)
    why = explain_chain(g, ["Q1001", "Q5", "Q1008"], min_hops=2)
    assert why.reason == "policy" and "class" in why.violations[0].detail


def test_deprecated_statements_are_never_edges(world_store: Store) -> None:
    g = graph(world_store)
    assert distances(g, "Q1001")[g.vertex("Q1007")] == 3
    assert explain_chain(g, ["Q1001", "Q1007"], min_hops=1).reason == "unsupported"


def test_literal_nodes_are_terminal_and_never_shared(world_store: Store) -> None:
    g = graph(world_store, include_literals=True)
    literals = sorted(g.name(v) for v in range(g.vcount()) if g.is_literal(v))
    # the Hobbit's publication and Middle-earth's inception share 1937-09-21 but not a node;
    # VIAF (an external id) never becomes a node
    assert literals == ["Q1010$W047#value", "Q1011$W049#value", "Q1013$W048#value", "Q1014$W050#value"]
    chains = list(enumerate_chains(g, "Q1001", 5, 7))
    ends = {chain_ids(g, c)[-1] for c in chains if g.is_literal(c.nodes[-1])}
    assert ends == {"Q1011$W049#value", "Q1013$W048#value"}  # Tolkien's birth (6), Hobbit (7)
    assert all(not g.is_literal(v) for c in chains for v in c.nodes[:-1])


def test_excluded_property_is_policy(world_store: Store) -> None:
    g = graph(world_store, excluded_properties=frozenset({"P206"}))
    assert not any("P206" in c for c in ids(g, enumerate_chains(g, "Q1001")))
    why = explain_chain(g, ["Q1001", "Q1002", "Q1005"], min_hops=2)
    assert why.reason == "policy" and "excluded" in why.violations[0].detail


def test_explain_valid_chain_picks_the_property(world_store: Store) -> None:
    g = graph(world_store)
    why = explain_chain(g, [*OXFORD, "P1416", "Q1011"])
    assert why.valid and why.reason is None
    assert why.path == (*OXFORD, "P1416", "Q1011")
    assert why.chain is not None and why.chain.k == 5
    assert explain_chain(g, [n for n in OXFORD if n.startswith("Q")] + ["Q1011"]).path[-2] == "P108"


def test_explain_shortcut_gives_the_shorter_path(world_store: Store) -> None:
    g = graph(world_store)
    why = explain_chain(g, ["Q1001", "Q1003", "Q1004", "Q1006", "Q1008", "Q1010"])
    assert why.reason == "shortcut"
    v = why.violations[0]
    assert v.position == 5
    assert v.shorter_path == ("Q1001", "P19", "Q1002", "P19", "Q1012", "P98", "Q1010")


def test_explain_every_reason(world_store: Store) -> None:
    g = graph(world_store)
    assert explain_chain(g, ["Q1001", "Q1002", "Q1012"]).reason == "too_short"
    assert explain_chain(g, [*OXFORD, "Q1011", "Q1013", "Q1014"], max_hops=6).reason == "too_long"
    rep = explain_chain(g, ["Q1001", "Q1002", "Q1005", "Q1002", "Q1005", "Q1002"])
    assert "repeat" in {v.reason for v in rep.violations}
    hub = explain_chain(g, ["Q1001", "Q1002", "Q1015", "Q1019", "Q1018", "Q1017"])
    assert hub.reason == "policy" and "hub" in hub.violations[0].detail
    assert "shortcut" in {v.reason for v in hub.violations}
    missing = explain_chain(g, ["Q1001", "Q424242"], min_hops=1)
    assert missing.reason == "unsupported" and "Q424242" in missing.violations[0].detail
    wrong_prop = explain_chain(g, ["Q1001", "P50", "Q1002"], min_hops=1)
    assert wrong_prop.reason == "unsupported" and "P50" in wrong_prop.violations[0].detail
    assert "too_short" in explain_chain(g, ["Q1001", "Q1002"]).describe()


class RejectProperty:
    def __init__(self, prop: str) -> None:
        self.prop = prop

    def __call__(self, graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        if graph.edge_property(edge) == self.prop:
            return Verdict(False, 0.0, f"{self.prop} has no reference")
        return Verdict(True, 0.9)


def test_verifier_filters_steps_not_distances(world_store: Store) -> None:
    g = graph(world_store)
    kept = ids(g, enumerate_chains(g, "Q1001", verifier=RejectProperty("P1416")))
    assert kept == {c for c in ids(g, enumerate_chains(g, "Q1001")) if "P1416" not in c}
    # rejecting London's river link removes the whole Oxford branch; distances stay the same
    no_river = ids(g, enumerate_chains(g, "Q1001", verifier=RejectProperty("P206")))
    assert not any("Q1011" in c for c in no_river)
    # distances: without P19 (London) as *policy* a five-hop route to Q1010 becomes shortest; a
    # verifier rejecting P19 keeps the graph's distances, so that route stays a shortcut
    longer = ("Q1001", "P800", "Q1003", "P170", "Q1004", "P69", "Q1006", "P69", "Q1008", "P50", "Q1010")
    no_p19 = graph(world_store, excluded_properties=frozenset({"P19"}))
    assert longer in ids(no_p19, enumerate_chains(no_p19, "Q1001"))
    rejected = ids(g, enumerate_chains(g, "Q1001", verifier=RejectProperty("P19")))
    assert rejected and not any(c[-1] == "Q1010" for c in rejected)
    assert explain_chain(g, list(longer), verifier=RejectProperty("P19")).reason == "shortcut"
    why = explain_chain(g, [*OXFORD, "P1416", "Q1011"], verifier=RejectProperty("P1416"))
    assert why.reason == "unsupported" and "no reference" in why.violations[0].detail
    assert ids(g, enumerate_chains(g, "Q1001", verifier=AcceptAll())) == ids(g, enumerate_chains(g, "Q1001"))


def test_arguments_are_checked_at_call_time(world_store: Store) -> None:
    g = graph(world_store)
    with pytest.raises(UnknownEntity, match="Q999999"):
        enumerate_chains(g, "Q999999")
    with pytest.raises(ChainRuleError, match="min_hops"):
        enumerate_chains(g, "Q1001", 6, 5)
    with pytest.raises(ChainRuleError, match="max_hops"):
        enumerate_chains(g, "Q1001", 1, 0)
    with pytest.raises(ChainRuleError, match="min_hops must be a positive integer"):
        enumerate_chains(g, "Q1001", True, 5)  # type: ignore[arg-type]
    lit = graph(world_store, include_literals=True)
    with pytest.raises(ChainRuleError, match="literal"):
        enumerate_chains(lit, "Q1010$W047#value")
    with pytest.raises(ChainRuleError, match="between two nodes"):
        explain_chain(g, ["P19", "Q1001"])
    with pytest.raises(ChainRuleError, match="end on a node"):
        explain_chain(g, ["Q1001", "P19"])


def test_enumeration_streams(world_store: Store) -> None:
    g = graph(world_store)
    gen = enumerate_chains(g, "Q1001")
    first = next(gen)
    assert chain_ids(g, first) == (*OXFORD, "P108", "Q1011")
    assert len(list(gen)) == 7


def test_networkx_export_keeps_every_step(world_store: Store) -> None:
    g = graph(world_store)
    nxg = g.to_networkx()
    assert nxg.number_of_edges() == g.ecount()
    assert nxg.number_of_edges("Q1011", "Q1009") == 2
