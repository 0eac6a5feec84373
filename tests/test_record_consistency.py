"""Relation classes have one source: on every path that writes chain records (expand, the
sample corpus writer, alias merge), a record's ``relation_classes`` is exactly the set of
its steps' classes, its ``types`` the set of its nodes' types, and ``s_div`` is
recomputable from the record alone (DESIGN §4, issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaingraph.expand import expand
from chaingraph.graph import EvidenceGraph
from chaingraph.merge import merge_adjacent
from chaingraph.ranking import s_div
from chaingraph.records import ChainRecord
from chaingraph.sample_corpus import world_chain_records
from chaingraph.settings import TraversalPolicy
from chaingraph.sources.loaders import load
from chaingraph.store import Store


def check(record: ChainRecord) -> None:
    steps = {s.relation_class for s in record.steps if s.relation_class is not None}
    assert set(record.relation_classes) == steps, record.model_dump_json()
    assert len(record.relation_classes) == len(set(record.relation_classes))
    assert set(record.types) == {n.type for n in record.nodes if n.type is not None}
    again = s_div(len(record.types), len(record.relation_classes), record.k,
                  len(record.parameters.type_inventory))
    assert record.s_div == again


def test_expand_records_agree_with_their_steps() -> None:
    records = expand(["Q42"], top=20).records
    assert len(records) == 20 and any(r.relation_classes for r in records)
    for r in records:
        check(r)


def test_corpus_writer_records_agree_with_their_steps(shared_data: Path) -> None:
    records = list(world_chain_records(shared_data / "world" / "codex-s.json.gz", seeds=3, per_seed=20))
    assert len(records) >= 30
    # the corpus graph once had no classifier: every record said () while its steps had classes
    assert all(r.relation_classes for r in records)
    for r in records:
        check(r)


def test_merged_records_agree_with_their_steps() -> None:
    from chaingraph.expand import chain_record
    from chaingraph.explain import explain_chain
    from chaingraph.records import ChainParameters

    world = Path(__file__).parent / "fixtures" / "chains" / "world.json"
    babbage = ["Q1001", "Q1003", "Q1004", "Q1016", "Q1017", "Q1018", "Q1019"]
    with Store() as store:
        load([world], store)
        graph = EvidenceGraph.from_store(store, policy=TraversalPolicy(hub_limit=5))
        why = explain_chain(graph, babbage)
        assert why.chain is not None
        record = chain_record(graph, why.chain, store=store, parameters=ChainParameters())
    check(record)
    merged = merge_adjacent(graph, record, 2).record  # Q1004 and Q1016 are said to be the same (P460)
    assert merged.k == record.k - 1 and merged.merged
    check(merged)


@pytest.mark.parametrize("version", ["chaingraph.chain/1"])
def test_version_1_parameters_are_read(version: str) -> None:
    flat = {"min_hops": 5, "max_hops": 7, "max_neighbours": 3, "policy": {"hub_limit": None}}
    rec = ChainRecord.model_validate({"schema_version": version, "seed": "Q1", "nodes": [{"id": "Q1"}],
                                      "steps": [], "k": 0, "s_div": 0.0, "crosswalk_version": "x",
                                      "parameters": flat})
    assert rec.parameters.bounds.max_hops == 7 and rec.parameters.limits is not None
    assert rec.parameters.limits.max_neighbours == 3 and rec.parameters.policy.hub_limit is None


def test_undeclared_parameters_are_refused() -> None:
    from pydantic import ValidationError

    from chaingraph.records import ChainParameters

    with pytest.raises(ValidationError, match="verifyer"):
        ChainParameters.model_validate({"verifyer": "typo"})
