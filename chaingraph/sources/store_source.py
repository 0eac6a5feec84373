"""An existing :class:`~chaingraph.store.Store` as a neighbour source (no network).

>>> from chaingraph.store import Batch, Store, statement_row
>>> from chaingraph.values import EntityValue
>>> src = Store()
>>> sid = src.add_source("fixture", "doctest")
>>> rows = [statement_row("Q1$1", "Q1", "P361", EntityValue(id="Q2"))]
>>> src.write(Batch(statements=rows, statement_sources=[(r[0], sid) for r in rows]))
>>> [n.entity for n in StoreSource(src).fetch(["Q1"]).neighbours["Q1"]]
['Q2']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.ids import qid
from chaingraph.settings import CrawlLimits
from chaingraph.sources.neighbours import (
    CLASS_PROPERTIES,
    KEPT_DATATYPES,
    LITERAL_TYPES,
    Neighbour,
    Neighbourhoods,
    SourceRef,
)
from chaingraph.store import Store

if TYPE_CHECKING:
    from chaingraph.store_subset import SubsetPicks

__all__ = ["StoreSource"]


class StoreSource:
    """Neighbourhoods read from an existing :class:`Store` (no network).

    The same caps apply as over SPARQL: all statements of an expanded entity whose
    property datatype is item or literal (when the store knows datatypes; external ids
    excluded), in-edges minus ``P31``/``P279`` cut to ``in_limit`` per entity in the
    store's edge order (:meth:`Store.edges`), qualifiers, references and the source's own
    provenance rows. With ``copy=False`` a part copies no row: :meth:`fetch` and
    :meth:`describe` pick the statements and entities they read into :attr:`picks` (a
    :class:`~chaingraph.store_subset.SubsetPicks`, inside DuckDB; the parts say so with
    :attr:`Neighbourhoods.in_place`) and the crawl makes the subset store of them at the
    end (:func:`~chaingraph.collect.collect_subset`); the neighbours :meth:`fetch` returns
    are already cut to ``max_neighbours`` of ``limits`` by the crawl's rule
    (:func:`~chaingraph.sources.neighbours.keep_neighbours`, run in DuckDB), and only they
    reach Python. Close a ``copy=False`` source (or the subset) before ``source``.
    """

    def __init__(
        self, source: Store, *, limits: CrawlLimits | None = None, batch_size: int = 5000,
        describe_size: int = 20000, copy: bool = True
    ) -> None:
        self.source = source
        self.copy = copy
        self.in_limit = (limits or CrawlLimits()).in_limit
        self.max_neighbours = (limits or CrawlLimits()).max_neighbours
        self.batch_size = batch_size
        self.describe_size = describe_size
        # an in-memory store has no name that outlives it: tell two of them apart by identity
        self.name = f"store:{source.path}" if source.path else f"store::memory:{id(source):x}"
        #: what a ``copy=False`` source has picked so far
        self.picks: SubsetPicks | None = None if copy else source.subset_picks()

    def close(self) -> None:
        """Drop what a ``copy=False`` source picked (nothing to do once its subset is made)."""
        if self.picks is not None:
            self.picks.close()

    def _copy(self, tables: dict[str, pa.Table], out: Neighbourhoods) -> None:
        """Put copied rows (Arrow, no Python object per row) and their provenance into ``out``."""
        prov = tables.pop("provenance")
        out.batch.tables.update(tables)
        out.batch.tables_unique = True  # keys are unique in the source store (its writes keep them)
        if prov.num_rows == 0:
            return
        sources = prov.drop_columns(["statement_id"]).group_by(prov.column_names[1:]).aggregate([])
        ids = sources["source_id"]
        out.provenance_refs = [SourceRef(*row[1:]) for row in zip(*(sources[c].to_pylist()
                                                                     for c in sources.column_names))]
        out.provenance_rows = pa.table({"statement_id": prov["statement_id"],
                                        "ref": pc.index_in(prov["source_id"], value_set=ids)})

    def fetch(self, entities: Sequence[str]) -> Neighbourhoods:
        ents = [qid(e) for e in entities]
        out = Neighbourhoods(neighbours={e: [] for e in ents})
        if self.picks is not None:  # only the kept neighbours, each entity's in their order
            kept = self.picks.neighbours(ents, in_limit=self.in_limit, max_neighbours=self.max_neighbours,
                                         kept_datatypes=KEPT_DATATYPES, literal_types=LITERAL_TYPES,
                                         class_properties=CLASS_PROPERTIES)
            for ent, nb, prop, sid, fwd, rank in kept:
                out.neighbours[ent].append(Neighbour(nb, prop, sid, fwd, rank))
            out.capped, out.in_place = self.max_neighbours, True
            return out
        rows = self.source.neighbour_table(ents, in_limit=self.in_limit, kept_datatypes=KEPT_DATATYPES,
                                           literal_types=LITERAL_TYPES, class_properties=CLASS_PROPERTIES)
        items = rows.filter(rows["item"])
        for ent, nb, prop, sid, fwd, rank in zip(*(items[c].to_pylist() for c in (
                "entity", "neighbour", "property", "statement_id", "forward", "rank"))):
            out.neighbours[ent].append(Neighbour(nb, prop, sid, fwd, rank))
        if rows.num_rows:
            self._copy(self.source.statement_tables(pc.unique(rows["statement_id"])), out)
        return out

    def describe(self, entities: Sequence[str]) -> Neighbourhoods:
        ents = [qid(e) for e in entities]
        if self.picks is not None:
            self.picks.describe(ents, "P31")
            return Neighbourhoods(in_place=True)
        out = Neighbourhoods()
        self._copy(self.source.entity_tables(ents), out)
        return out
