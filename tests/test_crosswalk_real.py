"""The crosswalk on the real property list (13,271 properties) and its shipped data files."""

from __future__ import annotations

import dataclasses
import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from chaingraph.crosswalk import (
    RELATION_CLASSES,
    Classification,
    Crosswalk,
    PropertyFacts,
    compare_reference,
    default_crosswalk,
    read_property_facts,
    summarise,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "crosswalk"
MERGED = "properties/wikidata_properties_merged.tsv.gz"


def _regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crosswalk_regenerate", FIXTURES / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def facts(shared_data: Path) -> dict[str, PropertyFacts]:
    return read_property_facts(shared_data / MERGED)


@pytest.fixture(scope="module")
def results(facts: dict[str, PropertyFacts]) -> dict[str, Classification]:
    return {c.property: c for c in default_crosswalk().classify_all(facts)}


def test_every_real_property_gets_a_class_or_an_explicit_status(
    facts: dict[str, PropertyFacts], results: dict[str, Classification]
) -> None:
    assert len(facts) == len(results) == 13271
    for c in results.values():
        assert (c.status == "relation") == (c.relation_class in RELATION_CLASSES)
        assert (c.status == "unclassified") == (c.rule == "none")
    summary = summarise(results.values())
    assert sum(summary.by_class.values()) == sum(summary.by_rule.values()) == 13271
    # every rule that can fire on this list does fire on it
    assert {r for r, n in summary.by_rule.items() if n} == {
        "table",
        "datatype",
        "property-class",
        "lexical",
        "none",
    }


def test_heavily_used_item_properties_are_never_decided_by_lexical_guessing(
    facts: dict[str, PropertyFacts], results: dict[str, Classification]
) -> None:
    heavy = [f.id for f in facts.values() if f.datatype == "wikibase-item" and (f.usage or 0) >= 10_000]
    assert len(heavy) == 394
    undecided = {p: results[p].rule for p in heavy if results[p].rule not in ("table", "property-class")}
    assert undecided == {}


def test_value_datatypes_are_never_relations_other_than_attributive_or_temporal(
    facts: dict[str, PropertyFacts], results: dict[str, Classification]
) -> None:
    by_type: dict[str, set[str]] = {}
    for ident, f in facts.items():
        if f.datatype and f.datatype != "wikibase-item":
            by_type.setdefault(f.datatype, set()).add(results[ident].relation_class or results[ident].status)
    assert by_type["quantity"] <= {"attributive", "not-a-relation"}
    assert by_type["external-id"] == {"not-a-relation"}
    assert by_type["time"] <= {"temporal", "attributive", "not-a-relation"}
    assert "temporal" in by_type["time"]


def test_time_exceptions_are_real_time_properties(facts: dict[str, PropertyFacts]) -> None:
    listed = default_crosswalk().tables.time_properties
    assert {facts[p].datatype for p in listed} == {"time"}


def test_golden_file_is_current(facts: dict[str, PropertyFacts]) -> None:
    regenerate = _regenerate()

    def rows(text: str) -> dict[str, tuple[str, ...]]:
        lines = [ln for ln in text.splitlines() if ln and not ln.startswith(("#", "pid\t"))]
        return {ln.split("\t")[0]: tuple(ln.split("\t")[1:3]) for ln in lines}

    want = rows(regenerate.GOLDEN.read_text(encoding="utf-8"))
    got = rows(regenerate.render())
    assert len(want) >= 300
    changed = {p: (want.get(p), got.get(p)) for p in want.keys() | got.keys() if want.get(p) != got.get(p)}
    assert changed == {}, "crosswalk answers moved: run tests/fixtures/crosswalk/regenerate.py and review"
    header = regenerate.GOLDEN.read_text(encoding="utf-8").splitlines()[1]
    assert header == f"# version: {default_crosswalk().version}", "bump or regenerate the golden file"


def test_reference_agreement_and_every_difference_is_explained() -> None:
    cmp = compare_reference(default_crosswalk())
    assert cmp.total == 252
    assert cmp.agreement >= 0.9
    for d in cmp.differences:
        assert d.rule == "table" and "§4.3" in d.reason, d
    explained = {p for p, e in default_crosswalk().tables.table.items() if "§4.3" in e.reason}
    assert {d.property for d in cmp.differences} <= explained


def test_the_table_is_not_a_restatement_of_the_later_rules(facts: dict[str, PropertyFacts]) -> None:
    """Without the explicit table, the later rules (mostly keywords) give another answer, or none,
    for a sizeable share of the tabled item properties: the table carries real decisions."""
    walk = default_crosswalk()
    lexical_only = Crosswalk(dataclasses.replace(walk.tables, table={}))
    tabled = [p for p in walk.tables.table if p in facts and facts[p].datatype == "wikibase-item"]
    moved = Counter(
        (walk.classify(p).relation_class, lexical_only.classify(facts[p]).relation_class) for p in tabled
    )
    disagree = sum(n for (a, b), n in moved.items() if a != b)
    assert 0.2 * len(tabled) < disagree < len(tabled)
