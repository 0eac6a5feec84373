"""A subset of a store, read in place: what :meth:`Store.subset` and the crawl of
:func:`~chaingraph.collect.collect_subset` build inside DuckDB.

Part of the store (the only modules that write SQL naming the store's tables). A
:class:`SubsetPicks` holds a connection of its own to the store's database with two
temporary tables, the statements and the entities picked so far; a crawl adds to them
batch by batch (:meth:`SubsetPicks.neighbours`, :meth:`SubsetPicks.describe`), so the ids
it names never leave DuckDB, and :meth:`SubsetPicks.subset` turns the connection into the
subset store: temporary views named as the store's tables that show only the picked rows.

>>> from chaingraph.store import Batch, Store, statement_row
>>> from chaingraph.values import EntityValue
>>> s = Store()
>>> s.write(Batch(statements=[statement_row(f"Q{a}$1", f"Q{a}", "P361", EntityValue(id=f"Q{a + 1}"))
...                           for a in (1, 2, 3)]))
>>> picks = SubsetPicks(s)
>>> [row[:2] for row in picks.neighbours(["Q2"], in_limit=10, max_neighbours=5)]
[('Q2', 'Q3'), ('Q2', 'Q1')]
>>> with picks.subset() as part:
...     sorted(e.statement_id for e in part.edges())
['Q1$1', 'Q2$1']
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import duckdb

from chaingraph.store_schema import SCHEMA, SOURCE_COLUMNS, TABLE_COLUMNS

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = ["SubsetPicks", "lookup_scope", "picks_hashed"]

#: what a picked statement brings along, in this order (later views read earlier ones)
_FACTS = ("statements", "qualifiers", "reference_snaks", "statement_sources")
#: DuckDB's optimizer that swaps the sides of a hash join to hash the side it estimates smaller
_FLIP = "build_side_probe_side"
#: the subset's small tables, copied once (as views, every read would scan the picked facts again)
_COPIED = frozenset({"sources", "properties"})


@contextmanager
def picks_hashed(con: duckdb.DuckDBPyConnection, subset: bool) -> Iterator[None]:
    """Run the block's queries on a subset (``subset=True``) with DuckDB's build-side flip
    off, so that joining a store table to the picked ids hashes the ids: DuckDB estimates
    a filtered store table smaller than the ids and would hash every row of it with every
    column read instead (on CoDEx-M, the edge table of a crawl read 45 MB instead of 20 MB
    above what it returns). The setting is the database's; it is put back after the block."""
    if not subset:
        yield
        return
    before = str(con.execute("SELECT current_setting('disabled_optimizers')").fetchall()[0][0] or "")
    names = [n.strip() for n in before.split(",") if n.strip()]
    if _FLIP in names:
        yield
        return
    con.execute(f"SET disabled_optimizers = '{', '.join([*names, _FLIP])}'")
    try:
        yield
    finally:
        con.execute(f"SET disabled_optimizers = '{before}'")


def lookup_scope(con: duckdb.DuckDBPyConnection, subset_source: str | None,
                 statement_ids: list[str]) -> tuple[str, list[str]]:
    """Where to look ``statement_ids`` up, and which of them: a plain store's own tables
    (``subset_source`` is ``None``) and all the ids; for a subset, its source's tables,
    read directly, and only the ids it picked (its views would hash every picked id to
    find a handful of statements)."""
    if subset_source is None:
        return "", statement_ids
    held = con.execute("SELECT statement_id FROM temp.main._cg_subset_ids "
                       "WHERE statement_id IN (SELECT UNNEST(?))", [statement_ids]).fetchall()
    return subset_source, sorted(r[0] for r in held)


class SubsetPicks:
    """Statements and entities picked from ``store`` for a subset, kept in temporary
    tables of a connection of their own (so ``store`` may be read only); see the module doc.
    Close it, or the store :meth:`subset` returns, before ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.con: duckdb.DuckDBPyConnection = store.cursor()
        try:
            self.con.execute("CREATE TEMP TABLE _cg_picked_statements (statement_id VARCHAR)")
            self.con.execute("CREATE TEMP TABLE _cg_picked_entities (id VARCHAR)")
        except BaseException:
            self.con.close()
            raise

    def close(self) -> None:
        self.con.close()

    def add(self, statement_ids: Any = (), entities: Any = ()) -> None:
        """Pick these statements and entities (sequences of ids, or Arrow string arrays)."""
        import pyarrow as pa

        for table, column, ids in (("_cg_picked_statements", "statement_id", statement_ids),
                                   ("_cg_picked_entities", "id", entities)):
            if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
                ids = pa.array(list(ids), pa.string())
            if len(ids):
                self.con.register("_cg_incoming_ids", pa.table({column: ids}))
                try:
                    self.con.execute(f"INSERT INTO {table} SELECT {column} FROM _cg_incoming_ids")
                finally:
                    self.con.unregister("_cg_incoming_ids")

    def neighbours(self, entities: Sequence[str], *, in_limit: int, max_neighbours: int,
                   kept_datatypes: Collection[str] | None = None,
                   literal_types: Collection[str] | None = None,
                   class_properties: Collection[str] = ("P31", "P279")
                   ) -> list[tuple[str, str, str, str, bool, str]]:
        """Pick every statement :meth:`~chaingraph.store.Store.neighbour_table` finds around
        ``entities`` and return the neighbours the cap keeps, as ``(entity, neighbour,
        property, statement_id, forward, rank)`` rows, each entity's in the cap's order.
        Only those rows reach Python."""
        sql, params = self.store._neighbour_sql(
            list(entities), in_limit=in_limit, kept_datatypes=kept_datatypes, literal_types=literal_types,
            class_properties=class_properties, max_neighbours=max_neighbours)
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_nb AS {sql}", params)
        try:
            self.con.execute("INSERT INTO _cg_picked_statements SELECT statement_id FROM _cg_nb")
            rows = self.con.execute("SELECT entity, neighbour, property, statement_id, forward, rank "
                                    "FROM _cg_nb WHERE kept IS NOT NULL ORDER BY entity, kept").fetchall()
        finally:
            self.con.execute("DROP TABLE _cg_nb")
        self.store.release_memory()  # or a crawl keeps the high-water memory of every batch's query
        return rows

    def describe(self, entities: Sequence[str], class_property: str = "P31") -> None:
        """Pick the entity rows of ``entities`` and their ``class_property`` statements (all
        ranks): what describing a node brings (:meth:`~chaingraph.store.Store.entity_tables`)."""
        ents = list(entities)
        if not ents:
            return
        self.con.execute("INSERT INTO _cg_picked_entities SELECT UNNEST(?::VARCHAR[])", [ents])
        self.con.execute("INSERT INTO _cg_picked_statements SELECT statement_id FROM statements "
                         "WHERE property = ? AND subject IN (SELECT UNNEST(?::VARCHAR[]))",
                         [class_property, ents])

    def subset(self) -> Store:
        """The subset store of what was picked (see :meth:`Store.subset`); it owns this
        connection from now on."""
        from chaingraph.store import Store

        con = self.con
        try:
            db = con.execute("SELECT current_database()").fetchall()[0][0]
            src = '"' + str(db).replace('"', '""') + '".main.'
            con.execute("CREATE TEMP TABLE _cg_subset_ids AS "
                        "SELECT DISTINCT statement_id FROM _cg_picked_statements")
            con.execute("CREATE TEMP TABLE _cg_subset_ents AS SELECT DISTINCT id FROM _cg_picked_entities")
            con.execute("DROP TABLE _cg_picked_statements")
            con.execute("DROP TABLE _cg_picked_entities")
            wanted = "statement_id IN (SELECT statement_id FROM temp.main._cg_subset_ids)"
            used = " UNION ".join(f"SELECT property FROM temp.main.{t}"
                                  for t in ("statements", "qualifiers", "reference_snaks"))
            picks = {**dict.fromkeys(_FACTS, wanted),
                     "sources": "source_id IN (SELECT source_id FROM temp.main.statement_sources)",
                     "properties": f"id IN ({used})",
                     "entities": "id IN (SELECT id FROM temp.main._cg_subset_ents)"}
            for table, where in picks.items():  # in this order: later picks read earlier ones
                cols = ", ".join(f'"{c}"' for c in TABLE_COLUMNS.get(table, SOURCE_COLUMNS))
                if table in _COPIED:
                    con.execute(f"CREATE TEMP TABLE _cg_{table} AS SELECT {cols} FROM {src}{table} "
                                f"WHERE {where}")
                    con.execute(f"CREATE TEMP VIEW {table} AS SELECT * FROM temp.main._cg_{table}")
                else:
                    con.execute(f"CREATE TEMP VIEW {table} AS SELECT {cols} FROM {src}{table} WHERE {where}")
            for ddl in SCHEMA.split(";"):
                if re.search(r"\b(responses|crawl_\w+|entity_classes)\b", ddl.split("(")[0]):
                    con.execute(ddl.replace("CREATE TABLE IF NOT EXISTS ", "CREATE TEMP TABLE ")
                                .replace("CREATE OR REPLACE VIEW ", "CREATE TEMP VIEW "))
        except BaseException:
            con.close()
            raise
        out = Store.__new__(Store)
        out.path, out._in_tx, out.is_subset, out.con = self.store.path, False, True, con
        out.subset_source, out.opened_memory_limit = src, self.store.opened_memory_limit
        out.release_memory()
        return out
