"""Alias merge on the story world: the duplicate Babbage (Q1016, P460) is contracted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chaingraph.chains import Verdict
from chaingraph.errors import ChainRuleError
from chaingraph.expand import chain_record, evidence_graph
from chaingraph.explain import explain_chain
from chaingraph.graph import EvidenceGraph
from chaingraph.merge import DefaultJudge, merge_adjacent, normalise_label
from chaingraph.ranking import s_div
from chaingraph.records import ChainParameters, ChainRecord
from chaingraph.store import Store

WORLD = Path(__file__).parent / "fixtures" / "chains" / "world.json"
BABBAGE = ["Q1001", "Q1003", "Q1004", "Q1016", "Q1017", "Q1018", "Q1019"]


@pytest.fixture(scope="module")
def hood() -> Iterator[tuple[EvidenceGraph, Store]]:
    from chaingraph.settings import TraversalPolicy
    from chaingraph.sources.loaders import load

    with Store() as source:
        load([WORLD], source)
        with evidence_graph(["Q1001"], store=source, collect=False,
                            policy=TraversalPolicy(hub_limit=5)) as h:
            yield h.graph, h.store


def record(hood: tuple[EvidenceGraph, Store], path: list[str], lo: int = 5) -> ChainRecord:
    g, store = hood
    why = explain_chain(g, path, min_hops=lo)
    assert why.valid and why.chain is not None
    return chain_record(g, why.chain, store=store,
                        parameters=ChainParameters(min_hops=lo, max_hops=7))


def test_default_judge() -> None:
    assert normalise_label("Charles  BABBAGE") == normalise_label("charles babbage")
    g = EvidenceGraph.from_edges([("s", "Q1", "P460", "Q2"), ("t", "Q2", "P50", "Q3")],
                                 labels={"Q2": "Émile", "Q3": "ÉMILE ", "Q1": "x"})
    judge = DefaultJudge()
    assert judge(g, "Q1", "Q2") is not None and "P460" in str(judge(g, "Q2", "Q1"))
    assert "normalised labels" in str(judge(g, "Q2", "Q3"))
    assert judge(g, "Q1", "Q3") is None


def test_merge_contracts_the_duplicate(hood: tuple[EvidenceGraph, Store]) -> None:
    g = hood[0]
    rec = record(hood, BABBAGE)
    assert rec.k == 6
    out = merge_adjacent(g, rec, 2)
    assert out.valid, out.violations
    merged = out.record
    assert [n.id for n in merged.nodes] == ["Q1001", "Q1003", "Q1004", "Q1017", "Q1018", "Q1019"]
    assert merged.k == 5
    assert [s.statement_id for s in merged.steps] == [rec.steps[i].statement_id for i in (0, 1, 3, 4, 5)]
    assert merged.steps[2].source == "Q1004" and merged.steps[2].target == "Q1017"
    assert merged.steps[2].direction == "backward"  # Difference Engine -P170-> (Babbage)
    assert merged.merged[0].kept == "Q1004" and merged.merged[0].dropped == "Q1016"
    assert "P460" in merged.merged[0].reason
    assert merged.s_div == pytest.approx(s_div(len(merged.types), len(merged.relation_classes), 5))
    assert rec.k == 6  # the original record is unchanged (records are immutable)


def test_merge_reapplies_the_rules(hood: tuple[EvidenceGraph, Store]) -> None:
    g = hood[0]
    short = record(hood, BABBAGE[:-1])  # five hops: merging leaves four
    out = merge_adjacent(g, short, 2)
    assert not out.valid and out.violations[0].reason == "too_short"
    assert out.record.k == 4


def test_merge_reverifies(hood: tuple[EvidenceGraph, Store]) -> None:
    g = hood[0]

    def no_museums(graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        return Verdict(graph.edge_property(edge) != "P276", 0.5, "location unverified")

    out = merge_adjacent(g, record(hood, BABBAGE), 2, verifier=no_museums)
    assert not out.valid and {v.reason for v in out.violations} == {"unsupported"}


def test_merge_refuses_what_the_judge_rejects(hood: tuple[EvidenceGraph, Store]) -> None:
    g = hood[0]
    rec = record(hood, BABBAGE)
    with pytest.raises(ChainRuleError, match="not judged the same"):
        merge_adjacent(g, rec, 0)
    with pytest.raises(ChainRuleError, match="merge position"):
        merge_adjacent(g, rec, 6)
    out = merge_adjacent(g, rec, 0, judge=lambda graph, a, b: "the pipeline says so")
    assert out.record.nodes[0].id == "Q1001" and out.record.k == 5


def test_merged_node_that_becomes_a_hub_breaks_the_policy() -> None:
    # Q3 -P460- Q4 in the chain Q1..Q7; each has leaves, together more than the hub limit.
    from chaingraph.settings import TraversalPolicy

    chain = [("a", "Q1", "P1", "Q2"), ("b", "Q2", "P1", "Q3"), ("c", "Q3", "P460", "Q4"),
             ("d", "Q4", "P1", "Q5"), ("e", "Q5", "P1", "Q6"), ("f", "Q6", "P1", "Q7")]
    leaves = [("l1", "Q3", "P2", "Q31"), ("l2", "Q4", "P2", "Q41"), ("l3", "Q4", "P2", "Q42")]
    g = EvidenceGraph.from_edges(chain + leaves, policy=TraversalPolicy(hub_limit=4))
    why = explain_chain(g, ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7"])
    assert why.valid and why.chain is not None
    rec = chain_record(g, why.chain, store=None, parameters=ChainParameters(min_hops=5, max_hops=7))
    out = merge_adjacent(g, rec, 2)
    assert not out.valid and [v.reason for v in out.violations] == ["policy"]
    loose = EvidenceGraph.from_edges(chain + leaves, policy=TraversalPolicy(hub_limit=None))
    assert merge_adjacent(loose, rec, 2).valid
