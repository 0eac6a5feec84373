"""Crawling a store in place (:func:`collect_subset`) gives the store and the report that
copying the crawl into an empty store (:func:`collect`) gives, on real data: the rich
statement model of ``entities_full`` (qualifiers, references, every rank) and CoDEx-S."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chaingraph.collect import collect, collect_subset
from chaingraph.errors import InvalidInput, StoreError
from chaingraph.expand import expand
from chaingraph.settings import CrawlLimits
from chaingraph.sources.neighbours import KEPT_DATATYPES, LITERAL_TYPES, Neighbour, keep_neighbours
from chaingraph.store import Batch, Store, entity_row, statement_row
from chaingraph.values import EntityValue

#: every table a crawl fills with facts (the crawl state differs by design: the subset keeps none)
FACT_TABLES = ("entities", "properties", "statements", "qualifiers", "reference_snaks", "statement_sources",
               "sources", "entity_classes")


def rows(store: Store, table: str) -> list[tuple[Any, ...]]:
    return sorted(store.con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


@pytest.fixture(scope="module")
def rich(json_entities: Store) -> Store:
    """The real ``entities_full`` store (shared, read only)."""
    return json_entities


@pytest.mark.parametrize("seeds, radius", [(["Q42"], 2), (["Q1", "Q8413"], 3)])
def test_the_subset_holds_the_rows_a_copy_holds(rich: Store, seeds: list[str], radius: int) -> None:
    limits = CrawlLimits(max_neighbours=8, select=3)
    with Store() as copied:
        report = collect(seeds, radius, store=copied, source=rich, limits=limits)
        part, again = collect_subset(seeds, radius, source=rich, limits=limits)
        with part:
            assert again == report
            assert report.statements > 0
            assert rows(part, "qualifiers") and rows(part, "reference_snaks")  # the rich model is exercised
            for table in FACT_TABLES:
                assert rows(part, table) == rows(copied, table), table


def test_the_subset_leaves_a_read_only_source_alone(codex_s_file: Path) -> None:
    with Store(codex_s_file, read_only=True) as source:
        before = source.counts()
        first, report = collect_subset(["Q1785"], 2, source=source)
        second, _ = collect_subset(["Q835"], 1, source=source)
        with first, second:
            assert first.counts()["statements"] == report.statements < before["statements"]
            assert {e.statement_id for e in second.edges()} != {e.statement_id for e in first.edges()}
        assert source.counts() == before


def test_expand_reads_the_store_in_place_as_it_reads_a_copy(codex_s_file: Path) -> None:
    in_place = expand(["Q1785", "Q835"], store=codex_s_file, top=30, min_hops=3, max_hops=5)
    with Store() as target:
        copied = expand(["Q1785", "Q835"], store=codex_s_file, top=30, min_hops=3, max_hops=5, target=target)
    assert len(in_place.records) == 60
    assert in_place.records == copied.records
    assert in_place.collected == copied.collected
    assert (in_place.graph_vertices, in_place.graph_edges) == (copied.graph_vertices, copied.graph_edges)


def test_a_subset_is_for_reading(codex_s_file: Path) -> None:
    with Store(codex_s_file, read_only=True) as source, source.subset([], ["Q30"]) as part:
        assert list(part.entity_labels()) == ["Q30"]
        with pytest.raises(StoreError, match="cannot write"):
            part.write(Batch(entities=[entity_row("Q1", "One")]))
        assert list(part.entity_labels()) == ["Q30"]


def _kept_in_python(rows: Any, k: int) -> dict[str, list[tuple[str, str, str, bool]]]:
    found: dict[str, list[Neighbour]] = {}
    items = rows.filter(rows["item"])
    for ent, nb, prop, sid, fwd, rank in zip(*(items[c].to_pylist() for c in (
            "entity", "neighbour", "property", "statement_id", "forward", "rank"))):
        found.setdefault(ent, []).append(Neighbour(nb, prop, sid, fwd, rank))
    out = {e: [(n.entity, n.property, n.statement_id, n.forward) for n in keep_neighbours(e, ns, k)]
           for e, ns in found.items()}
    return {e: kept for e, kept in out.items() if kept}


def _kept_in_sql(rows: Any) -> dict[str, list[tuple[str, str, str, bool]]]:
    out: dict[str, list[tuple[int, tuple[str, str, str, bool]]]] = {}
    for ent, nb, prop, sid, fwd, pos in zip(*(rows[c].to_pylist() for c in (
            "entity", "neighbour", "property", "statement_id", "forward", "kept"))):
        if pos is not None:
            out.setdefault(ent, []).append((pos, (nb, prop, sid, fwd)))
    return {e: [n for _, n in sorted(kept)] for e, kept in out.items()}


@pytest.mark.parametrize("k", [1, 3, 30])
def test_the_neighbour_cap_in_sql_is_keep_neighbours(rich: Store, codex_s_file: Path, k: int) -> None:
    with Store(codex_s_file, read_only=True) as world:
        for store, entities in ((rich, ["Q42", "Q1", "Q8413", "Q182397", "Q53713"]),
                                (world, sorted(world.sitelinks())[:400])):
            rows = store.neighbour_table(entities, in_limit=50, max_neighbours=k,
                                         kept_datatypes=KEPT_DATATYPES, literal_types=LITERAL_TYPES)
            assert _kept_in_sql(rows) == _kept_in_python(rows, k)
            assert max(len(v) for v in _kept_in_sql(rows).values()) == k


def test_the_neighbour_cap_in_sql_skips_what_keep_neighbours_skips() -> None:
    with Store() as s:
        edges = [("a", "Q1", "P27", "Q9"), ("b", "Q1", "P27", "Q3"), ("c", "Q1", "P19", "Q7"),
                 ("d", "Q4", "P50", "Q1"), ("e", "Q1", "P31", "Q5"), ("f", "Q1", "P19", "Q3"),
                 ("g", "Q1", "P19", "Q1"), ("h", "Q1", "P10", "Q11")]
        s.write(Batch(statements=[statement_row(sid, a, p, EntityValue(id=b)) for sid, a, p, b in edges]))
        s.write(Batch(statements=[statement_row("i", "Q1", "P10", EntityValue(id="Q12"), rank="deprecated")]))
        rows = s.neighbour_table(["Q1"], in_limit=10, max_neighbours=10)
        assert _kept_in_sql(rows) == _kept_in_python(rows, 10)
        assert [n[0] for n in _kept_in_sql(rows)["Q1"]] == ["Q11", "Q3", "Q4", "Q7", "Q9"]


def test_expand_from_a_subset_copies_what_a_subset_cannot_narrow(codex_s_file: Path) -> None:
    with Store(codex_s_file, read_only=True) as source:
        part, _ = collect_subset(["Q1785"], 4, source=source)
        with part:
            with pytest.raises(StoreError, match="already a subset"):
                part.subset([], [])
            with pytest.raises(InvalidInput, match="cannot be narrowed"):
                collect_subset(["Q1785"], 1, source=part)
            again = expand(["Q1785"], store=part, top=5, min_hops=3, max_hops=4)
            direct = expand(["Q1785"], store=source, top=5, min_hops=3, max_hops=4)
    assert [r.steps for r in again.records] == [r.steps for r in direct.records]
