"""The store's writes: sources, batches of rows (Python tuples or Arrow tables), rows built
in SQL, and the deletes a load needs. Each keeps the rows whose key is already there
(entities and properties: upsert), so loading the same input twice changes nothing.

These are :class:`~chaingraph.store.Store` methods (:class:`StoreWrites` is a mixin of
``Store``; import ``Store`` from :mod:`chaingraph.store`). The statement tables have no
primary-key index (:data:`~chaingraph.store_schema.INDEXLESS`): their keys are kept here, by
an anti-join of the rows against the table; a dump load that can show no key of a batch is
there yet writes through :class:`~chaingraph.store_load.BulkLoad` instead.

>>> from chaingraph.store import Batch, Store, statement_row
>>> from chaingraph.values import EntityValue
>>> s = Store()
>>> row = statement_row("Q42$1", "Q42", "P69", EntityValue(id="Q691283"))
>>> s.write(Batch(statements=[row])); s.write(Batch(statements=[row]))  # the same key twice
>>> s.statement_count()
1
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import duckdb
import numpy as np
import pyarrow as pa

from chaingraph.errors import StoreError
from chaingraph.store_memory import REPEAT_ROWS_PER_PART, duckdb_problem, passes, repeats
from chaingraph.store_rows import Batch
from chaingraph.store_schema import ARROW_TYPES, KEYS, TABLE_COLUMNS, UPSERT

if TYPE_CHECKING:
    from chaingraph.store import Store
    from chaingraph.store_load import BulkLoad

__all__ = ["PRESENT_KEYS_PER_PASS", "StoreWrites"]

#: the column :meth:`StoreWrites._insert_arrow` numbers the rows of a batch in (never a table column)
_ROW = "_cg_row"
#: rows written into a table of up to this many rows have their keys checked by one anti-join
#: inside the INSERT (its hash table, built on the table, does not spill there); a larger table
#: has the keys already in it found first and left out this many a pass (:meth:`StoreWrites._insert_from`)
PRESENT_KEYS_PER_PASS = 100_000


class StoreWrites:
    """Writes of :class:`~chaingraph.store.Store` (see the module doc)."""

    con: duckdb.DuckDBPyConnection
    path: Path | None
    _in_tx: bool
    #: the tables with a primary key, read at the first insert (:meth:`_has_key`)
    _keyed: frozenset[str] | None = None

    if TYPE_CHECKING:
        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

    def add_source(self, kind: str, location: str, *, query_file: str | None = None,
                   query_hash: str | None = None, dump_date: str | None = None,
                   revision: str | None = None, retrieved_at: datetime | None = None) -> str:
        """Register a source and return its id (deterministic: same inputs, same id)."""
        key = "|".join(str(x) for x in (kind, location, query_file, query_hash, dump_date, revision))
        source_id = hashlib.sha1(key.encode()).hexdigest()[:16]
        when = retrieved_at or datetime.now(timezone.utc)
        self.con.execute(
            "INSERT OR IGNORE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [source_id, kind, location, query_file, query_hash, when, dump_date, revision])
        return source_id

    def write(self, batch: Batch) -> None:
        """Insert a batch in one transaction; rows already present are left as they are."""
        try:
            self._write(batch)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc

    def write_arrow(self, tables: Mapping[str, pa.Table], *, replace: Collection[str] = (),
                    unique: Collection[str] = ()) -> None:
        """:meth:`write` for column-oriented rows: Arrow tables whose columns are named as
        the table's columns (:data:`TABLE_COLUMNS`; missing value columns are NULL).

        ``unique`` names the tables whose rows the caller promises repeat no key (rows may
        still be in the store already): they are not deduplicated first, which saves a pass
        over them. A broken promise stores the repeated rows.

        ``replace`` names entities this write brings whole (a dump's copy of each): those
        already in the store lose their row, statements, qualifiers, references and
        statement provenance first, in the same transaction, so the last copy loaded wins
        and statements with the same ids are updated.

        >>> import pyarrow as pa
        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> s.write_arrow({"statements": pa.table({"statement_id": ["Q1$a"], "subject": ["Q1"],
        ...     "property": ["P31"], "rank": ["normal"], "snaktype": ["value"],
        ...     "value_type": ["item"], "object": ["Q5"]})}, unique=["statements"])
        >>> s.classes(["Q1"])
        {'Q1': ('Q5',)}
        """
        unknown = set(tables) - set(TABLE_COLUMNS)
        if unknown:
            raise StoreError(f"write_arrow: unknown tables {sorted(unknown)}; use {sorted(TABLE_COLUMNS)}")
        try:
            self._write_arrow(tables, replace=replace, unique=unique)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc

    def _write_arrow(self, tables: Mapping[str, pa.Table], *, replace: Collection[str] = (),
                     unique: Collection[str] = ()) -> None:
        with self.transaction():
            if replace:
                self._forget_entities(list(replace))
            for table in TABLE_COLUMNS:
                data = tables.get(table)
                if data is None or data.num_rows == 0:
                    continue
                self._insert_arrow(table, data, unique=table in unique)

    def bulk_load(self, *, threads: int | None = None, row_groups: int | None = None) -> BulkLoad:
        """The writes of one dump load, batch after batch, without reading what earlier
        batches wrote when no key can repeat (:class:`~chaingraph.store_load.BulkLoad`;
        ``threads``: DuckDB's threads inside its ``with``; ``row_groups``: the rows of a row
        group of the store file written inside it, :meth:`row_groups`)."""
        from chaingraph.store_load import BulkLoad

        return BulkLoad(cast("Store", self), threads=threads, row_groups=row_groups)

    def _forget_entities(self, ids: list[str]) -> None:
        """Delete what the store holds of those ``ids`` that it has an entity/property row for."""
        known = [str(r[0]) for r in self.con.execute(
            "SELECT id FROM entities WHERE id IN (SELECT UNNEST(?)) "
            "UNION ALL SELECT id FROM properties WHERE id IN (SELECT UNNEST(?))", [ids, ids]).fetchall()]
        if not known:
            return
        owned = "SELECT statement_id FROM statements WHERE subject IN (SELECT UNNEST(?))"
        for table in ("qualifiers", "reference_snaks", "statement_sources"):
            self.con.execute(f"DELETE FROM {table} WHERE statement_id IN ({owned})", [known])
        self.con.execute("DELETE FROM statements WHERE subject IN (SELECT UNNEST(?))", [known])
        self.con.execute("DELETE FROM entities WHERE id IN (SELECT UNNEST(?))", [known])
        self.con.execute("DELETE FROM properties WHERE id IN (SELECT UNNEST(?))", [known])

    def retire_truthy(self, subjects: str, params: Sequence[Any] | None = None, *,
                      valueless: str | None = None) -> int:
        """Delete truthy placeholder statements (ids ``<entity>$TRUTHY-…``, made from ``wdt:``
        triples when an RDF file had no full statement for the pair) of the subjects the SQL
        query ``subjects`` yields, wherever the store now has a full statement for the same
        (subject, property). Returns how many went. An interrupted RDF load followed by the
        whole file, in either order, so ends with exactly the store of a clean load.
        ``valueless``: an SQL query of (subject, property) pairs an RDF file had a ``p:`` triple
        without a value for; their placeholders go too (a whole-file build makes none for them).

        >>> from chaingraph.store import Batch, Store, statement_row
        >>> from chaingraph.values import EntityValue
        >>> s = Store()
        >>> s.write(Batch(statements=[statement_row("Q1$TRUTHY-AB", "Q1", "P31", EntityValue(id="Q5")),
        ...                           statement_row("Q1$G", "Q1", "P31", EntityValue(id="Q5"))]))
        >>> s.retire_truthy("SELECT 'Q1' AS subject"), [e.statement_id for e in s.edges("Q1")]
        (1, ['Q1$G'])
        """
        doomed = ("SELECT t.statement_id FROM statements t WHERE t.statement_id LIKE '%$TRUTHY-%' "
                  f"AND t.subject IN (SELECT * FROM ({subjects})) AND EXISTS (SELECT 1 FROM statements f "
                  "WHERE f.subject = t.subject AND f.property = t.property "
                  "AND f.statement_id NOT LIKE '%$TRUTHY-%')")
        if valueless is not None:
            doomed += (" UNION SELECT t.statement_id FROM statements t "
                       "WHERE t.statement_id LIKE '%$TRUTHY-%' AND t.subject IN (SELECT * FROM "
                       f"({subjects})) AND EXISTS (SELECT 1 FROM ({valueless}) v(subject, property) "
                       "WHERE v.subject = t.subject AND v.property = t.property)")
        try:
            with self.transaction():
                ids = [str(r[0]) for r in self.con.execute(doomed, params).fetchall()]
                if ids:
                    for table in ("qualifiers", "reference_snaks", "statement_sources", "statements"):
                        self.con.execute(f"DELETE FROM {table} WHERE statement_id IN (SELECT UNNEST(?))",
                                         [ids])
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc
        return len(ids)

    def has_statement_rows(self) -> bool:
        """Whether the store has a statement, qualifier, reference snak or provenance row."""
        return bool(self.con.execute(
            "SELECT EXISTS (FROM statements) OR EXISTS (FROM qualifiers) OR EXISTS (FROM reference_snaks) "
            "OR EXISTS (FROM statement_sources)").fetchall()[0][0])

    def delete_statement_rows(self) -> None:
        """Delete every statement, qualifier, reference snak and provenance row (what an RDF
        load built in chunks wrote into a store that had none, see ``rdf_chunks``)."""
        with self.transaction():
            for table in ("qualifiers", "reference_snaks", "statement_sources", "statements"):
                self.con.execute(f"DELETE FROM {table}")

    def source_new_statements(self, source_id: str) -> int | None:
        """After a loader inserted the statements of one source into a store that had none
        (:meth:`insert_select` with ``check=False``): if no statement id repeats, record
        ``source_id`` as the source of each and return how many there are; if one repeats,
        delete them all again and return ``None`` (the loader then inserts them the general
        way, which keeps the first row of a key). Joins the current transaction, if any.

        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> src = s.add_source("fixture", "doctest")
        >>> rows = "SELECT 'Q1$a' AS statement_id, 'Q1' AS subject, 'P31' AS property, 'normal' AS rank, "
        >>> s.insert_select("statements", rows + "'novalue' AS snaktype", unique=True, check=False)
        >>> s.source_new_statements(src), s.statement("Q1$a").sources[0]["kind"]
        (1, 'fixture')
        >>> t = Store()
        >>> twice = f"{rows}'novalue' AS snaktype UNION ALL {rows}'somevalue'"
        >>> t.insert_select("statements", twice, unique=True, check=False)
        >>> t.source_new_statements(t.add_source("fixture", "doctest")), t.statement_count()
        (None, 0)
        """
        try:
            with self.transaction():
                rows = self.con.execute("SELECT count(*) FROM statements").fetchall()[0][0]
                if repeats(self.con, "statements", "statement_id", passes(rows, REPEAT_ROWS_PER_PART)):
                    self.con.execute("DELETE FROM statements")
                    return None
                self._insert_from("statement_sources", ["statement_id", "source_id"],
                                  "(SELECT statement_id, ? AS source_id FROM statements)", [source_id],
                                  unique=True, check=False)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc
        return int(rows)  # each id once

    def _write(self, batch: Batch) -> None:
        with self.transaction():
            for table, columns in TABLE_COLUMNS.items():
                rows = getattr(batch, table)
                if rows:
                    self._insert(table, columns, rows)
            if batch.tables:
                self._write_arrow(batch.tables, unique=list(batch.tables) if batch.tables_unique else ())

    def _insert(self, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        arrays = {col: pa.array(data, type=ARROW_TYPES.get(col, pa.string()))
                  for col, data in zip(columns, zip(*rows))}
        self._insert_arrow(table, pa.table(arrays), unique=False)

    def _insert_arrow(self, table: str, data: pa.Table, *, unique: bool, check: bool = True) -> None:
        """:meth:`_insert_from` an Arrow table: when it may repeat a key, its rows are numbered
        first, so the row kept is the first of its key in ``data`` — DuckDB's ``DISTINCT ON``
        keeps an arbitrary one without an order, and which one changed from run to run when
        DuckDB scanned the table on several threads."""
        present = [c for c in TABLE_COLUMNS[table] if c in data.column_names]
        if not unique:
            data = data.append_column(_ROW, pa.array(np.arange(data.num_rows, dtype=np.int64)))
        if not self._has_key(table):
            # a relation the queries name, not a registered view: DuckDB keeps a view's Arrow
            # table until the transaction commits (its catalog entry), so a load's batch stayed
            # in memory beside DuckDB's copy of it while DuckDB compressed and wrote that. (Into
            # a table with a primary key, a refused row must raise DuckDB's ConstraintException,
            # which a relation's query turns into a TransactionException: registered there.)
            self._insert_from(table, present, "_cg_incoming", unique=unique, check=check,
                              numbered=not unique, rows=self.con.from_arrow(data))
            return
        self.con.register("_cg_incoming", data)
        try:
            self._insert_from(table, present, "_cg_incoming", unique=unique, check=check,
                              numbered=not unique)
        finally:
            with suppress(duckdb.Error):  # an aborted transaction refuses even this
                self.con.unregister("_cg_incoming")

    def _has_key(self, table: str) -> bool:
        """Whether ``table`` has a primary key in this store (the statement tables have none,
        but in stores written before :data:`~chaingraph.store_schema.INDEXLESS`)."""
        if self._keyed is None:
            self._keyed = frozenset(str(r[0]) for r in self.con.execute(
                "SELECT DISTINCT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
                "AND database_name = current_database()").fetchall())
        return table in self._keyed

    def _insert_from(self, table: str, columns: list[str], relation: str, params: Any = None, *,
                     unique: bool = False, check: bool = True, numbered: bool = False,
                     rows: duckdb.DuckDBPyRelation | None = None) -> None:
        """Insert the rows of ``relation`` whose key is not in ``table`` yet (entities and
        properties: upsert), the first row of each key when ``relation`` repeats one (unless
        ``unique`` promises it does not).

        The fact tables have no primary-key index (:data:`~chaingraph.store_schema.INDEXLESS`):
        their key is kept here, by an anti-join of the rows against the table. DuckDB builds
        its hash table on the table, and inside an INSERT that does not spill, so into a
        table of more than :data:`PRESENT_KEYS_PER_PASS` rows the keys already there are
        found first, in queries of their own that each hash about that many of the rows, and
        the rows inserted after, those keys left out a part of their hashes at a time (usually
        none is there: one plain insert). Stores written before keep their primary keys; the
        same statements work on them. ``check=False`` leaves out the anti-join (a
        :class:`~chaingraph.store_load.BulkLoad` that knows no key of ``relation`` is there),
        and the upsert of an entity table: its rows are plainly inserted, and its primary key
        refuses one that is there (``duckdb.ConstraintException``; an upsert joins the rows
        with the whole table in DuckDB 2, where a plain insert looks each key up in the index).
        ``numbered``: ``relation`` has a column ``_cg_row`` and the row kept of a repeated key is
        the one it numbers first. ``rows``: the relation the name ``relation`` stands for in the
        queries (each run on it, ``params`` unused)."""

        def run(sql: str, params: Any) -> duckdb.DuckDBPyConnection | duckdb.DuckDBPyRelation | None:
            return self.con.execute(sql, params) if rows is None else rows.query(relation, sql)

        cols = ", ".join(f'"{c}"' for c in columns)
        key = ", ".join(f'"{k}"' for k in KEYS[table])
        order = f" ORDER BY {key}, {_ROW}" if numbered else ""
        source = relation if unique else f"(SELECT DISTINCT ON ({key}) {cols} FROM {relation}{order})"
        if table in UPSERT and check:
            run(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source} "
                f"ON CONFLICT DO UPDATE SET {UPSERT[table]}", params)
            return
        if not check:
            run(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source}", params)
            return
        match = " AND ".join(f'_t."{k}" = _n."{k}"' for k in KEYS[table])
        # (count(*) of a whole table is read from DuckDB's row counts: half a millisecond)
        if self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] <= PRESENT_KEYS_PER_PASS:
            run(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source} AS _n "
                f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS _t WHERE {match})", params)
            return
        # A large table: its keys among the rows are found first, in queries of their own, and
        # the rows inserted after. An anti-join inside the INSERT builds its hash table on the
        # whole table beside the insert's buffers, which does not spill: a 2.3 M-statement
        # N-Triples file into a store of 4.6 M ran out of the 64 MiB of a load's build. The keys
        # are found a part of the rows' key hashes at a time, each join's hash table at most
        # about PRESENT_KEYS_PER_PASS rows: one join of a million rows ran out of 32 MiB one
        # time in three (its hash table has to spill, and did not always manage). Usually no
        # key is there (the parts of a dump): a plain insert.
        def part(alias: str, parts: int, nth: int) -> str:
            """SQL: the rows of ``alias`` in the ``nth`` of ``parts`` parts of the key hashes."""
            hashed = ", ".join(f'{alias}."{k}"' for k in KEYS[table])
            return f"hash({hashed}) % {parts} = {nth}" if parts > 1 else "true"

        counted = run(f"SELECT count(*) FROM {relation}", params)
        assert counted is not None  # a query's result
        looked = passes(counted.fetchall()[0][0], PRESENT_KEYS_PER_PASS)
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_present AS SELECT {key} FROM {table} LIMIT 0")
        for nth in range(looked):
            run(f"INSERT INTO _cg_present SELECT {key} FROM {table} AS _t WHERE EXISTS "
                f"(SELECT 1 FROM {relation} AS _n WHERE {part('_n', looked, nth)} AND {match})",
                params)
        present = self.con.execute("SELECT count(*) FROM _cg_present").fetchall()[0][0]
        parts = passes(present, PRESENT_KEYS_PER_PASS)  # the keys there: a part of their hashes a pass
        if not parts:
            run(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source}", params)
        for nth in range(parts):
            run(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source} AS _n "
                f"WHERE {part('_n', parts, nth)} AND NOT EXISTS (SELECT 1 FROM _cg_present "
                f"AS _t WHERE {part('_t', parts, nth)} AND {match})", params)
        self.con.execute("DROP TABLE _cg_present")

    def insert_select(self, table: str, select: str, params: Sequence[Any] | None = None, *,
                      unique: bool = False, check: bool = True) -> None:
        """Insert the rows of a SQL query with the semantics of :meth:`write` (duplicates in the
        query collapse, existing rows are kept, entities/properties are upserted): the bulk
        path for loaders that build rows inside DuckDB. The query's columns must be named as
        the table's columns (see :data:`TABLE_COLUMNS`). Joins the current transaction, if any.
        ``unique=True`` promises that the query yields each key at most once (it is then not
        deduplicated first; a broken promise stores the repeated rows), and ``check=False``
        that no key of it is in the table yet (it is then not looked up there: a loader
        writing into an empty table; into an entity table a key that is there is refused,
        :class:`~chaingraph.errors.StoreError` caused by ``duckdb.ConstraintException``, and
        the transaction rolled back).

        Outside a transaction, entities and properties are first inserted plainly, the primary
        key's index looking each id up, and upserted only if it finds one there: an upsert is
        a join of the rows with the whole table in DuckDB 2, and each left DuckDB's records of
        its hash tables' blocks behind (an 80x N-Triples dump's items, written a chunk at a
        time, peaked at 143 MB inserted plainly, 148 upserted). Inside one a refused insert would end
        the caller's transaction: they are upserted.

        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> s.insert_select("statements", "SELECT 'Q1$a' AS statement_id, 'Q1' AS subject, "
        ...                 "'P31' AS property, 'normal' AS rank, 'novalue' AS snaktype")
        >>> s.statement("Q1$a").snaktype
        'novalue'
        >>> for label in ("first", "again"):  # new: inserted; there: upserted
        ...     s.insert_select("entities", f"SELECT 'Q1' AS id, '{label}' AS label", unique=True)
        >>> s.con.execute("SELECT label FROM entities").fetchall()
        [('again',)]
        """
        if table not in TABLE_COLUMNS:
            raise StoreError(f"insert_select: unknown table {table!r}; use one of {sorted(TABLE_COLUMNS)}")

        def insert(check: bool) -> None:
            with self.transaction():
                described = self.con.execute(f"SELECT * FROM ({select}) LIMIT 0", params).description
                present = [d[0] for d in described or ()]
                columns = [c for c in TABLE_COLUMNS[table] if c in present]
                self._insert_from(table, columns, f"({select})", params, unique=unique, check=check)

        try:
            if table in UPSERT and check and not self._in_tx:
                try:
                    insert(check=False)
                    return
                except duckdb.ConstraintException:
                    pass  # an id is there: rolled back, upserted below
            insert(check)
        except duckdb.Error as exc:
            raise StoreError(f"cannot write to store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc
