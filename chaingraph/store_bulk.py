"""Bulk reads of the store as Arrow tables: what a crawl copies from one store to another.

Part of the store (:class:`~chaingraph.store.Store` inherits :class:`BulkReads`), kept in
its own module so that ``store.py`` stays readable. Every method returns column-oriented
rows without a Python object per row, ready for :meth:`Store.write_arrow`.

>>> from chaingraph.store import Batch, Store, statement_row
>>> from chaingraph.values import EntityValue
>>> s = Store()
>>> src = s.add_source("fixture", "doctest")
>>> rows = [statement_row("Q1$a", "Q1", "P361", EntityValue(id="Q2")),
...         statement_row("Q3$b", "Q3", "P527", EntityValue(id="Q1"))]
>>> s.write(Batch(statements=rows, statement_sources=[(r[0], src) for r in rows]))
>>> t = s.neighbour_table(["Q1"], in_limit=10)
>>> sorted(zip(t["neighbour"].to_pylist(), t["forward"].to_pylist()))
[('Q2', True), ('Q3', False)]
>>> copied = s.statement_tables(t["statement_id"])
>>> copied["statements"].num_rows, copied["provenance"].column_names[:2]
(2, ['statement_id', 'source_id'])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.store_reads import StatementInfo
from chaingraph.store_schema import SOURCE_COLUMNS, TABLE_COLUMNS, TRAVERSABLE_RANKS
from chaingraph.store_subset import lookup_scope, picks_hashed
from chaingraph.values import VALUE_COLUMNS, value_from_columns

if TYPE_CHECKING:
    import duckdb

__all__ = ["BulkReads"]



#: keep_neighbours in SQL over ``nb`` (a neighbour table): candidates are item neighbours,
#: not deprecated, not over a class property, not the entity itself; the i-th of each
#: (direction, property) group, by (neighbour number, statement id), comes in round i, and
#: groups take turns out-edges first, then by property number; a neighbour counts once (its
#: first turn); ``pos`` is the place among the first ``max_neighbours``
_KEEP = """
cand AS (
    SELECT statement_id, entity, neighbour, property, forward,
           row_number() OVER (PARTITION BY entity, forward, property
                              ORDER BY CAST(substr(neighbour, 2) AS BIGINT), statement_id) AS i,
           coalesce(TRY_CAST(substr(property, 2) AS BIGINT), 9223372036854775807) AS pnum
    FROM nb
    WHERE item AND rank <> 'deprecated' AND property NOT IN (SELECT UNNEST(?)) AND neighbour <> entity
      AND regexp_full_match(neighbour, 'Q[1-9][0-9]{0,11}')),
turns AS (
    SELECT * FROM cand
    QUALIFY row_number() OVER (PARTITION BY entity, neighbour ORDER BY i, NOT forward, pnum, property) = 1),
kept AS (
    SELECT statement_id, entity, forward,
           row_number() OVER (PARTITION BY entity ORDER BY i, NOT forward, pnum, property) AS pos
    FROM turns QUALIFY pos <= ?)
"""


class BulkReads:
    """Arrow-table reads over the store's tables (mixed into :class:`Store`)."""

    con: duckdb.DuckDBPyConnection
    is_subset: bool
    subset_source: str | None
    release_memory: Callable[[], None]  # Store.release_memory

    def _columns(self, table: str) -> str:
        return ", ".join(f'"{c}"' for c in TABLE_COLUMNS[table])

    def neighbour_table(self, entities: Sequence[str], *, in_limit: int,
                        kept_datatypes: Collection[str] | None = None,
                        literal_types: Collection[str] | None = None,
                        class_properties: Collection[str] = ("P31", "P279"),
                        max_neighbours: int | None = None) -> pa.Table:
        """Statements around ``entities`` as a crawl expands them: every statement whose
        subject is one of them (all ranks; properties of a datatype in ``kept_datatypes``
        or unknown; values that are items, of ``literal_types``, or no value), and item
        in-edges (all ranks, no class properties, item subjects) cut to ``in_limit`` per
        entity in edge order (subject, property, statement id).

        Columns: ``statement_id``, ``entity``, ``neighbour`` (the item at the other end,
        or null), ``property``, ``forward`` (entity is the subject), ``rank``, ``item``;
        with ``max_neighbours``, also ``kept``: the row's place (1, 2, ...) among the
        neighbours :func:`~chaingraph.sources.neighbours.keep_neighbours` keeps for its
        entity, null for the rest (the same rule, computed here for every entity at once)."""
        sql, params = self._neighbour_sql(entities, in_limit=in_limit, kept_datatypes=kept_datatypes,
                                          literal_types=literal_types, class_properties=class_properties,
                                          max_neighbours=max_neighbours)
        return self.con.sql(sql, params=params).to_arrow_table()

    def _neighbour_sql(self, entities: Sequence[str], *, in_limit: int,
                       kept_datatypes: Collection[str] | None, literal_types: Collection[str] | None,
                       class_properties: Collection[str], max_neighbours: int | None
                       ) -> tuple[str, list[object]]:
        """The query of :meth:`neighbour_table` and its parameters."""
        kept = sorted(kept_datatypes) if kept_datatypes is not None else None
        lits = sorted(literal_types) if literal_types is not None else None
        sql = f"""
        WITH ents AS (SELECT UNNEST(?::VARCHAR[]) AS entity),
        outs AS (
            SELECT s.statement_id, s.subject AS entity, s.object AS neighbour, s.property,
                   true AS forward, s.rank, coalesce(s.value_type = 'item', false) AS item
            FROM statements s LEFT JOIN properties p ON p.id = s.property
            WHERE s.subject IN (SELECT entity FROM ents)
              AND ({'true' if kept is None else 'p.datatype IS NULL OR p.datatype IN (SELECT UNNEST(?))'})
              AND ({'true' if lits is None else
                    "s.value_type IS NULL OR s.value_type = 'item' OR s.value_type IN (SELECT UNNEST(?))"})),
        ins AS (
            SELECT statement_id, object AS entity, subject AS neighbour, property, false AS forward, rank,
                   true AS item,
                   row_number() OVER (PARTITION BY object ORDER BY subject, property, statement_id) AS nth
            FROM statements
            WHERE object IN (SELECT entity FROM ents) AND snaktype = 'value' AND value_type = 'item'
              AND property NOT IN (SELECT UNNEST(?)) AND regexp_full_match(subject, 'Q[1-9][0-9]{{0,11}}'))
        SELECT statement_id, entity, neighbour, property, forward, rank, item FROM outs
        UNION ALL
        SELECT statement_id, entity, neighbour, property, forward, rank, item FROM ins WHERE nth <= ?
        """
        params: list[object] = [list(entities)]
        params += [p for p in (kept, lits) if p is not None]
        params += [sorted(class_properties), in_limit]
        if max_neighbours is not None:
            sql = f"WITH nb AS ({sql}), {_KEEP} SELECT nb.*, kept.pos AS kept FROM nb " \
                  "LEFT JOIN kept USING (statement_id, entity, forward)"
            params += [sorted(class_properties), max_neighbours]
        return sql, params

    def statement_tables(self, statement_ids: pa.Array | pa.ChunkedArray | Sequence[str]
                         ) -> dict[str, pa.Table]:
        """Rows of ``statements``, ``qualifiers``, ``reference_snaks`` and ``properties``
        (the properties those rows use) for ``statement_ids``, plus ``provenance``
        (``statement_id``, then :data:`SOURCE_COLUMNS`): everything needed to copy the
        statements into another store."""
        ids = pa.table({"statement_id": pa.array(statement_ids, type=pa.string())
                        if not isinstance(statement_ids, (pa.Array, pa.ChunkedArray)) else statement_ids})
        self.con.register("_cg_ids", ids)
        try:
            pick = "WHERE statement_id IN (SELECT statement_id FROM _cg_ids)"
            out = {t: self.con.sql(f"SELECT {self._columns(t)} FROM {t} {pick}").to_arrow_table()
                   for t in ("statements", "qualifiers", "reference_snaks")}
            used = sorted({p for t in out.values() for p in pc.unique(t["property"]).to_pylist()})
            out["properties"] = self.con.sql(
                f"SELECT {self._columns('properties')} FROM properties "
                "WHERE id IN (SELECT UNNEST(?::VARCHAR[]))", params=[used]).to_arrow_table()
            out["provenance"] = self.con.sql(
                f"SELECT ss.statement_id, {', '.join('s.' + c for c in SOURCE_COLUMNS)} "
                "FROM statement_sources ss JOIN sources s USING (source_id) "
                "WHERE ss.statement_id IN (SELECT statement_id FROM _cg_ids)").to_arrow_table()
        finally:
            self.con.unregister("_cg_ids")
        return out

    def entity_tables(self, entities: Sequence[str], class_property: str = "P31") -> dict[str, pa.Table]:
        """``entities`` rows of these ids, and :meth:`statement_tables` of their
        ``class_property`` statements: what describing a node copies."""
        ents = list(entities)
        rows = self.con.sql(f"SELECT {self._columns('entities')} FROM entities "
                            "WHERE id IN (SELECT UNNEST(?::VARCHAR[]))", params=[ents]).to_arrow_table()
        out = self.statement_tables(self.class_statement_ids(ents, class_property))
        out["entities"] = rows
        return out

    def class_statement_ids(self, entities: Sequence[str], class_property: str = "P31") -> pa.Array:
        """Ids of the ``class_property`` statements of ``entities`` (all ranks): the
        statements describing a node brings along (:meth:`entity_tables`)."""
        rows = self.con.sql("SELECT statement_id FROM statements WHERE property = ? "
                            "AND subject IN (SELECT UNNEST(?::VARCHAR[]))",
                            params=[class_property, list(entities)]).to_arrow_table()
        return rows["statement_id"].combine_chunks()

    def edge_table(self, *, ranks: Collection[str] = TRAVERSABLE_RANKS, item_only: bool = True,
                   literal_types: Collection[str] | None = None) -> pa.Table:
        """Every edge of :meth:`Store.edges` as one Arrow table (columns ``statement_id``,
        ``subject``, ``property``, ``object``, ``value_type``), in no particular order: the
        bulk read the evidence graph is built from, without a Python object per row.
        ``literal_types`` (with ``item_only=False``) keeps only items and literal statements
        of those property datatypes (and of properties whose datatype is unknown)."""
        where, params = ["rank IN (SELECT UNNEST(?))", "snaktype = 'value'"], [list(ranks)]
        join = ""
        if item_only:
            where.append("value_type = 'item'")
        elif literal_types is not None:
            join = "LEFT JOIN (SELECT id AS property, datatype FROM properties) USING (property) "
            where.append("(value_type = 'item' OR coalesce(datatype IN (SELECT UNNEST(?)), true))")
            params.append(sorted(literal_types))
        sql = ("SELECT statement_id, subject, property, object, value_type FROM statements "
               f"{join}WHERE {' AND '.join(where)}")
        with picks_hashed(self.con, self.is_subset):
            out = self.con.sql(sql, params=params).to_arrow_table()
        self.release_memory()  # what DuckDB's allocator kept from the scan: the graph build comes next
        return out

    def statements(self, statement_ids: Collection[str]) -> dict[str, StatementInfo]:
        """:meth:`Store.statement` for many ids in four queries (ids not in the store are
        left out)."""
        scope, ids = lookup_scope(self.con, self.subset_source if self.is_subset else None,
                                  sorted(set(statement_ids)))
        vc = list(VALUE_COLUMNS)
        cols = ["statement_id", "subject", "property", "rank", "snaktype", *vc]
        rows = self.con.execute(f"SELECT {', '.join(cols)} FROM {scope}statements "
                                "WHERE statement_id IN (SELECT UNNEST(?))", [ids]).fetchall()
        if not rows:
            return {}
        quals = self._many_snaks(f"{scope}qualifiers", ["property", "snaktype"], ids)
        refs = self._many_snaks(f"{scope}reference_snaks", ["reference_hash", "property", "snaktype"], ids)
        srcs: dict[str, list[dict[str, Any]]] = {}
        for sid, *src in self.con.execute(
                f"SELECT ss.statement_id, {', '.join('s.' + c for c in SOURCE_COLUMNS)} "
                f"FROM {scope}statement_sources ss JOIN {scope}sources s USING (source_id) "
                "WHERE ss.statement_id IN (SELECT UNNEST(?)) ORDER BY ss.statement_id, s.source_id",
                [ids]).fetchall():
            srcs.setdefault(sid, []).append(dict(zip(SOURCE_COLUMNS, src)))
        out = {}
        for row in rows:
            rec = dict(zip(cols, row))
            sid = rec["statement_id"]
            out[sid] = StatementInfo(sid, rec["subject"], rec["property"], rec["rank"], rec["snaktype"],
                                     value_from_columns(rec), tuple(quals.get(sid, ())),
                                     tuple(refs.get(sid, ())), tuple(srcs.get(sid, ())))
        return out

    def _many_snaks(self, table: str, keys: list[str], statement_ids: list[str]
                    ) -> dict[str, list[tuple[Any, ...]]]:
        cols = [*keys, *VALUE_COLUMNS]
        rows = self.con.execute(f"SELECT statement_id, {', '.join(cols)} FROM {table} "
                                "WHERE statement_id IN (SELECT UNNEST(?)) "
                                f"ORDER BY statement_id, {', '.join(keys)}, snak_hash",
                                [statement_ids]).fetchall()
        out: dict[str, list[tuple[Any, ...]]] = {}
        for sid, *row in rows:
            out.setdefault(sid, []).append((*row[: len(keys)], value_from_columns(dict(zip(cols, row)))))
        return out
