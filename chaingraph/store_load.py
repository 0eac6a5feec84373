"""Loading a dump into an empty store without keeping its primary keys up to date per write.

Part of the store (:class:`~chaingraph.store.Store` inherits :class:`KeylessLoad`). DuckDB
spends most of a bulk load keeping its primary-key indexes current: appending a million
statements costs several times more with the key than without, and more again in many
writes than in one. So a load into a store that holds no facts yet recreates the fact
tables without their keys (:meth:`KeylessLoad.begin_keyless`), appends each batch as it
comes (:meth:`Store.write_arrow` sees the mode), and at the end
(:meth:`KeylessLoad.end_keyless`, which loaders call in a ``finally``, so Ctrl-C too)
settles repeats the way the keyed writes would have and adds the keys in one pass each.
The store then equals the one the keyed writes give. A store opened while keyless (the
process was killed mid-load) is finished on opening.

>>> import pyarrow as pa
>>> from chaingraph.store import Store
>>> s = Store()
>>> s.begin_keyless()
True
>>> def copy(entity, obj):
...     return {"entities": pa.table({"id": [entity]}),
...             "statements": pa.table({"statement_id": [f"{entity}$a"], "subject": [entity],
...                 "property": ["P31"], "rank": ["normal"], "snaktype": ["value"],
...                 "value_type": ["item"], "object": [obj]})}
>>> s.write_arrow(copy("Q1", "Q5"), replace=["Q1"]); s.write_arrow(copy("Q1", "Q6"), replace=["Q1"])
>>> s.end_keyless(); s.classes(["Q1"]), s.keyless
({'Q1': ('Q6',)}, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import duckdb
import pyarrow as pa

from chaingraph.store_schema import KEYS, SCHEMA, TABLE_COLUMNS

__all__ = ["FACT_TABLES", "KeylessLoad"]

#: the tables a dump fills, children before parents (the order deletes go in)
FACT_TABLES = ("qualifiers", "reference_snaks", "statement_sources", "statements", "entities", "properties")
_OWNED = ("qualifiers", "reference_snaks", "statement_sources")


def _keyless_ddl(table: str) -> str:
    """The schema's CREATE TABLE of ``table`` without its primary key."""
    ddl = next(d for d in SCHEMA.split(";") if re.search(rf"CREATE TABLE IF NOT EXISTS {table} \(", d))
    ddl = re.sub(r",\s*PRIMARY KEY \([^)]*\)\)\s*$", ")", ddl.strip())
    return ddl.replace(" PRIMARY KEY", "").replace("CREATE TABLE IF NOT EXISTS", "CREATE TABLE")


class KeylessLoad:
    """Append-only loading into an empty store, keys added at the end (mixed into :class:`Store`)."""

    con: duckdb.DuckDBPyConnection
    _in_tx: bool
    #: per fact table, the row count before each keyless write (rows are appended in order)
    _marks: dict[str, list[int]] | None = None

    @property
    def keyless(self) -> bool:
        """Whether the fact tables are without their primary keys (a keyless load is on)."""
        return self._marks is not None

    def begin_keyless(self) -> bool:
        """Drop the keys of the fact tables if none holds a row; True if they are now keyless.
        Until :meth:`end_keyless`, :meth:`Store.write_arrow` appends."""
        if self._marks is not None:
            return True
        if self._in_tx or any(self.con.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchall()[0][0]
                              for t in FACT_TABLES):
            return False
        self.con.execute("BEGIN TRANSACTION")
        try:
            for table in FACT_TABLES:
                self.con.execute(f"DROP TABLE {table}")
                self.con.execute(_keyless_ddl(table))
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")
        self._marks = {t: [] for t in FACT_TABLES}
        return True

    def _append_keyless(self, tables: Mapping[str, pa.Table]) -> None:
        assert self._marks is not None
        counts = {t: self._count(t) for t in FACT_TABLES}
        self.con.execute("BEGIN TRANSACTION")
        try:
            for table, data in tables.items():
                if data.num_rows == 0:
                    continue
                cols = ", ".join(f'"{c}"' for c in TABLE_COLUMNS[table] if c in data.column_names)
                self.con.register("_cg_incoming", data)
                try:
                    self.con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _cg_incoming")
                finally:
                    self.con.unregister("_cg_incoming")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")
        for table in FACT_TABLES:
            self._marks[table].append(counts[table])

    def _count(self, table: str) -> int:
        assert self._marks is not None
        return int(self.con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])

    def end_keyless(self) -> None:
        """Settle repeats and add the primary keys back: an entity loaded more than once
        keeps only its last copy (row, statements and what hangs off them), and any other
        key still repeated keeps its first row, as the keyed writes do."""
        if self._marks is None:
            return
        marks = self._marks
        self._transaction(lambda: self._last_copies(marks))
        for table in FACT_TABLES:
            if self._has_key(table):
                continue
            key = ", ".join(f'"{k}"' for k in KEYS[table])
            try:  # the usual case: no repeats, so no pass to look for them
                self.con.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({key})")
            except duckdb.ConstraintException:
                # (committed first: in the same transaction the key would still see the deleted rows)
                self.con.execute(f"DELETE FROM {table} WHERE rowid NOT IN "
                                 f"(SELECT min(rowid) FROM {table} GROUP BY {key})")
                self.con.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({key})")
        self._marks = None

    def _has_key(self, table: str) -> bool:
        return bool(self.con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' "
            "AND database_name = current_database() AND schema_name = 'main' AND table_name = ?",
            [table]).fetchall()[0][0])

    def _finish_interrupted(self) -> None:
        """Add the keys of a store left keyless by a load that was killed before its end
        (repeated entities cannot be told apart by write any more: first rows are kept)."""
        if not all(self._has_key(t) for t in FACT_TABLES):
            self._marks = {t: [] for t in FACT_TABLES}
            self.end_keyless()

    def _transaction(self, work: Callable[[], object]) -> None:
        self.con.execute("BEGIN TRANSACTION")
        try:
            work()
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def _last_copies(self, marks: dict[str, list[int]]) -> None:
        """Delete every copy but the last of entities that more than one write brought."""
        con = self.con
        repeated = [str(r[0]) for r in con.execute(
            "SELECT id FROM (SELECT id FROM entities UNION ALL SELECT id FROM properties) "
            "GROUP BY id HAVING count(*) > 1").fetchall()]
        if not repeated or not any(marks.values()):
            return
        for table, starts in marks.items():
            con.register(f"_cg_marks_{table}", pa.table({"batch": list(range(len(starts))), "start": starts}))
        try:
            def batch(table: str, alias: str) -> str:
                return (f"(SELECT max(batch) FROM _cg_marks_{table} WHERE start <= {alias}.rowid)")

            con.execute("CREATE TEMP TABLE _cg_last AS SELECT id, max(b) AS last FROM ("
                        f"SELECT id, {batch('entities', 'e')} AS b FROM entities e "
                        "WHERE id IN (SELECT UNNEST(?)) UNION ALL "
                        f"SELECT id, {batch('properties', 'p')} AS b FROM properties p "
                        "WHERE id IN (SELECT UNNEST(?))) GROUP BY id", [repeated, repeated])
            owner = ("(SELECT DISTINCT statement_id, last FROM statements s JOIN _cg_last l "
                     "ON s.subject = l.id)")
            for table in _OWNED:
                con.execute(f"DELETE FROM {table} t USING {owner} o WHERE t.statement_id = o.statement_id "
                            f"AND {batch(table, 't')} < o.last")
            for table, col in (("statements", "subject"), ("entities", "id"), ("properties", "id")):
                con.execute(f"DELETE FROM {table} t USING _cg_last l WHERE t.{col} = l.id "
                            f"AND {batch(table, 't')} < l.last")
        finally:
            con.execute("DROP TABLE IF EXISTS _cg_last")
            for table in marks:
                con.unregister(f"_cg_marks_{table}")
