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

from chaingraph.ids import is_item_id, qid
from chaingraph.settings import CrawlLimits
from chaingraph.sources.neighbours import (
    CLASS_PROPERTIES,
    KEPT_DATATYPES,
    LITERAL_TYPES,
    Neighbour,
    Neighbourhoods,
    SourceRef,
)
from chaingraph.store import RANKS, Store

__all__ = ["StoreSource"]


class StoreSource:
    """Neighbourhoods read from an existing :class:`Store` (no network).

    The same caps apply as over SPARQL: all statements of an expanded entity whose
    property datatype is item or literal (when the store knows datatypes; external ids
    excluded), in-edges minus ``P31``/``P279`` cut to ``in_limit`` per entity in the
    store's edge order (:meth:`Store.edges`), qualifiers, references and the source's own
    provenance rows.
    """

    def __init__(
        self, source: Store, *, limits: CrawlLimits | None = None, batch_size: int = 500,
        describe_size: int = 2000
    ) -> None:
        self.source = source
        self.in_limit = (limits or CrawlLimits()).in_limit
        self.batch_size = batch_size
        self.describe_size = describe_size
        # an in-memory store has no name that outlives it: tell two of them apart by identity
        self.name = f"store:{source.path}" if source.path else f"store::memory:{id(source):x}"
        self._datatypes = source.datatypes()

    def _kept_property(self, prop: str) -> bool:
        dt = self._datatypes.get(prop)
        return dt is None or dt in KEPT_DATATYPES

    def _copy(self, statement_ids: list[str], out: Neighbourhoods) -> None:
        rows = self.source.statement_rows(statement_ids)
        out.batch.statements += rows.statements
        out.batch.qualifiers += rows.qualifiers
        out.batch.reference_snaks += rows.reference_snaks
        out.batch.properties += rows.properties
        out.provenance += [(sid, SourceRef(*src)) for sid, src in rows.provenance]

    def fetch(self, entities: Sequence[str]) -> Neighbourhoods:
        ents = [qid(e) for e in entities]
        out = Neighbourhoods(neighbours={e: [] for e in ents})
        ids: list[str] = []
        for sid, subj, prop, obj, rank, vt in self.source.edges(
            subject=ents, ranks=RANKS, item_only=False, values_only=False
        ):
            if not self._kept_property(prop) or (vt is not None and vt != "item" and vt not in LITERAL_TYPES):
                continue
            ids.append(sid)
            if vt == "item" and obj is not None:
                out.neighbours[subj].append(Neighbour(obj, prop, sid, True, rank))
        per: dict[str, int] = {}
        for e in self.source.edges(object=ents, ranks=RANKS):
            if e.property in CLASS_PROPERTIES or not is_item_id(e.subject):
                continue
            if per.get(e.object or "", 0) >= self.in_limit:
                continue
            per[e.object or ""] = per.get(e.object or "", 0) + 1
            ids.append(e.statement_id)
            out.neighbours[e.object or ""].append(
                Neighbour(e.subject, e.property, e.statement_id, False, e.rank)
            )
        self._copy(sorted(set(ids)), out)
        return out

    def describe(self, entities: Sequence[str]) -> Neighbourhoods:
        ents = [qid(e) for e in entities]
        out = Neighbourhoods()
        out.batch.entities += self.source.entity_rows(ents)
        ids = [e.statement_id for e in self.source.edges(
            subject=ents, property="P31", ranks=RANKS, item_only=False, values_only=False)]
        self._copy(sorted(ids), out)
        return out
