"""Crawling a store in place (:func:`collect_subset`) gives the store and the report that
copying the crawl into an empty store (:func:`collect`) gives, on real data: the rich
statement model of ``entities_full`` (qualifiers, references, every rank) and CoDEx-S."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chaingraph.collect import collect, collect_subset
from chaingraph.errors import StoreError
from chaingraph.expand import expand
from chaingraph.settings import CrawlLimits
from chaingraph.sources.loaders import load
from chaingraph.store import Batch, Store, entity_row

#: every table a crawl fills with facts (the crawl state differs by design: the subset keeps none)
FACT_TABLES = ("entities", "properties", "statements", "qualifiers", "reference_snaks", "statement_sources",
               "sources", "entity_classes")


def rows(store: Store, table: str) -> list[tuple[Any, ...]]:
    return sorted(store.con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


@pytest.fixture(scope="module")
def rich(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    link = tmp_path_factory.mktemp("entities-json") / "entities.json.gz"
    link.symlink_to(shared_data / "entities_full" / "wikidata_entities_full.jsonl.gz")
    with Store() as s:
        load([link], s)
        yield s


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
