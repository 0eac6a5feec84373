"""The store's read primitive, ids, and the evidence graph's traversal policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaingraph.errors import ChaingraphError, InvalidId, StoreError, UnknownEntity
from chaingraph.graph import EvidenceGraph
from chaingraph.ids import pid, qid, statement_id_from_rdf, statement_iri
from chaingraph.settings import TraversalPolicy
from chaingraph.store import Batch, Store, entity_row, qualifier_row, reference_row, statement_row
from chaingraph.values import EntityValue, QuantityValue, TimeValue

# A tiny real story: Douglas Adams (Q42) studied at St John's College (Q691283), part of
# the University of Cambridge (Q35794), located in Cambridge (Q350).
FACTS = [
    ("Q42$a", "Q42", "P69", "Q691283", "normal"),
    ("Q691283$b", "Q691283", "P361", "Q35794", "normal"),
    ("Q35794$c", "Q35794", "P131", "Q350", "preferred"),
    ("Q42$d", "Q42", "P31", "Q5", "normal"),
    ("Q42$e", "Q42", "P19", "Q350", "deprecated"),
]


def _load(store: Store) -> str:
    src = store.add_source("fixture", "tests/test_foundation.py")
    batch = Batch(
        entities=[entity_row("Q42", "Douglas Adams", label_lang="en", sitelinks=129),
                  entity_row("Q350", "Cambridge", label_lang="en")],
        statements=[statement_row(sid, s, p, EntityValue(id=o), rank=r) for sid, s, p, o, r in FACTS]
        + [statement_row("Q42$h", "Q42", "P2048", QuantityValue(amount="+1.96", unit="Q11573"))],
        qualifiers=[qualifier_row("Q42$a", "P580", TimeValue.make(1971, precision=9))],
        reference_snaks=[reference_row("Q42$a", "abc123", "P248", EntityValue(id="Q5375741"))],
        statement_sources=[(f[0], src) for f in FACTS] + [("Q42$h", src)],
    )
    store.write(batch)
    return src


def test_ids_are_validated() -> None:
    assert qid("Q42") == "Q42" and pid("P31") == "P31"
    for bad in ("Q", "Q-1", "q42", "Q42 ; DROP", "P31", "wd:Q42", "Q042", 42):
        with pytest.raises(InvalidId):
            qid(bad)


def test_statement_ids_round_trip_between_rdf_and_json_forms() -> None:
    sid = "Q42$D8404CDA-25E4-4334-AF13-A3290BCD9C0F"
    assert statement_id_from_rdf(statement_iri(sid)) == sid
    assert statement_id_from_rdf("q42-D8404CDA") == "q42$D8404CDA"


def test_edges_with_wildcards(store: Store) -> None:
    _load(store)
    assert {e.object for e in store.edges(subject="Q42")} == {"Q691283", "Q5"}
    assert [e.statement_id for e in store.edges(property="P361")] == ["Q691283$b"]
    assert {e.subject for e in store.edges(object=["Q35794", "Q350"])} == {"Q691283", "Q35794"}
    assert len(store.edges()) == 4  # deprecated and literal statements are not edges by default


def test_deprecated_statements_are_stored_but_not_edges(store: Store) -> None:
    _load(store)
    assert store.edges(property="P19") == []
    assert [e.rank for e in store.edges(property="P19", ranks=("deprecated",))] == ["deprecated"]


def test_literal_statements_only_when_asked(store: Store) -> None:
    _load(store)
    lit = [e for e in store.edges(subject="Q42", item_only=False) if e.value_type != "item"]
    assert [(e.property, e.object, e.value_type) for e in lit] == [("P2048", None, "quantity")]


def test_statement_keeps_qualifiers_references_and_provenance(store: Store) -> None:
    _load(store)
    st = store.statement("Q42$a")
    assert st is not None
    assert st.qualifiers == (("P580", "value", TimeValue.make(1971, precision=9)),)
    assert st.references == (("abc123", "P248", "value", EntityValue(id="Q5375741")),)
    assert [s["location"] for s in st.sources] == ["tests/test_foundation.py"]
    assert store.statement("Q42$nope") is None


def test_writes_are_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "evidence.duckdb"
    with Store(path) as s:
        _load(s)
        first = s.counts()
    with Store(path) as s:  # a real DuckDB file, reopened
        _load(s)
        assert s.counts() == first


def test_entity_info_and_classes(store: Store) -> None:
    _load(store)
    info = store.entity("Q42")
    assert info is not None and info.label == "Douglas Adams" and info.classes == ("Q5",)
    assert info.sitelinks == 129
    assert store.entity("Q999999") is None


def test_upsert_keeps_known_labels(store: Store) -> None:
    _load(store)
    store.write(Batch(entities=[entity_row("Q42", None, sitelinks=130)]))
    info = store.entity("Q42")
    assert info is not None and (info.label, info.sitelinks) == ("Douglas Adams", 130)


def test_unwritable_store_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open store") as exc:
        Store(blocker / "sub" / "x.duckdb")
    assert "\n" not in str(exc.value) and isinstance(exc.value, ChaingraphError)


def test_graph_uses_policy_class_edges_type_nodes(store: Store) -> None:
    _load(store)
    g = EvidenceGraph.from_store(store)
    assert g.classes["Q42"] == ("Q5",)
    assert "Q5" not in g  # a class edge is not a step, so Q5 is not a vertex here
    assert g.ecount() == 3 and g.labels["Q42"] == "Douglas Adams"


def test_hub_limit_blocks_passing_through() -> None:
    edges = [(f"s{i}", "Q1", "P166", f"Q{100 + i}") for i in range(5)] + [("t", "Q2", "P69", "Q1")]
    g = EvidenceGraph.from_edges(edges, policy=TraversalPolicy(hub_limit=4))
    assert not g.passable(g.vertex("Q1")) and g.passable(g.vertex("Q2"))
    assert EvidenceGraph.from_edges(edges, policy=TraversalPolicy(hub_limit=None)).passable(0)


def test_literal_nodes_are_one_per_statement() -> None:
    g = EvidenceGraph.from_edges([], literals=[("a$1", "Q1", "P571"), ("b$1", "Q2", "P571")],
                                 policy=TraversalPolicy(include_literals=True))
    lits = [v for v in range(g.vcount()) if g.is_literal(v)]
    assert len(lits) == 2 and not any(g.passable(v) for v in lits)


def test_unknown_vertex_names_the_id() -> None:
    g = EvidenceGraph.from_edges([("s", "Q1", "P361", "Q2")])
    with pytest.raises(UnknownEntity, match="Q3 is not in the evidence graph"):
        g.vertex("Q3")


def test_networkx_export_keeps_parallel_properties() -> None:
    g = EvidenceGraph.from_edges([("s1", "Q1", "P361", "Q2"), ("s2", "Q1", "P131", "Q2")])
    nxg = g.to_networkx()
    assert sorted(d["property"] for _, _, d in nxg.edges(data=True)) == ["P131", "P361"]
