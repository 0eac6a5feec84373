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
from chaingraph.store import RANKS, TABLE_COLUMNS, Store

__all__ = ["StoreSource"]


def _columns(table: str) -> str:
    """The SELECT list giving rows of ``table`` in :class:`Batch` order."""
    return ", ".join(TABLE_COLUMNS[table])


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
        con = self.source.con
        if not statement_ids:
            return
        rows = con.execute(
            f"SELECT {_columns('statements')} "
            "FROM statements WHERE statement_id IN (SELECT UNNEST(?)) ORDER BY statement_id",
            [statement_ids],
        ).fetchall()
        out.batch.statements += [tuple(r) for r in rows]
        out.batch.qualifiers += [
            tuple(r)
            for r in con.execute(
                f"SELECT {_columns('qualifiers')} FROM qualifiers "
                "WHERE statement_id IN (SELECT UNNEST(?))",
                [statement_ids],
            ).fetchall()
        ]
        out.batch.reference_snaks += [
            tuple(r)
            for r in con.execute(
                f"SELECT {_columns('reference_snaks')} "
                "FROM reference_snaks WHERE statement_id IN (SELECT UNNEST(?))",
                [statement_ids],
            ).fetchall()
        ]
        for sid, *src in con.execute(
            "SELECT ss.statement_id, s.kind, s.location, s.query_file, s.query_hash, s.retrieved_at, "
            "s.dump_date, s.revision FROM statement_sources ss JOIN sources s USING (source_id) "
            "WHERE ss.statement_id IN (SELECT UNNEST(?))",
            [statement_ids],
        ).fetchall():
            out.provenance.append((sid, SourceRef(*src)))
        props = sorted(
            {r[2] for r in rows}
            | {q[1] for q in out.batch.qualifiers}
            | {r[2] for r in out.batch.reference_snaks}
        )
        out.batch.properties += [
            tuple(r)
            for r in con.execute(
                f"SELECT {_columns('properties')} FROM properties "
                "WHERE id IN (SELECT UNNEST(?))",
                [props],
            ).fetchall()
        ]

    def fetch(self, entities: Sequence[str]) -> Neighbourhoods:
        ents = [qid(e) for e in entities]
        out = Neighbourhoods(neighbours={e: [] for e in ents})
        ids: list[str] = []
        for sid, subj, prop, obj, rank, vt in self.source.con.execute(
            "SELECT statement_id, subject, property, object, rank, value_type FROM statements "
            "WHERE subject IN (SELECT UNNEST(?)) ORDER BY subject, property, object, statement_id",
            [ents],
        ).fetchall():
            if not self._kept_property(prop) or (vt is not None and vt != "item" and vt not in LITERAL_TYPES):
                continue
            ids.append(sid)
            if vt == "item":
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
        out.batch.entities += [
            tuple(r)
            for r in self.source.con.execute(
                f"SELECT {_columns('entities')} "
                "FROM entities WHERE id IN (SELECT UNNEST(?))",
                [ents],
            ).fetchall()
        ]
        ids = [
            r[0]
            for r in self.source.con.execute(
                "SELECT statement_id FROM statements "
                "WHERE subject IN (SELECT UNNEST(?)) AND property = 'P31'",
                [ents],
            ).fetchall()
        ]
        self._copy(sorted(ids), out)
        return out
