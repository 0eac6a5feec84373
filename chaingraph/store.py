"""The evidence store: Wikidata's statement model in one embedded DuckDB database.

The schema (tables, columns, keys) is :mod:`chaingraph.store_schema`; fact reads beyond
the edge primitive are :mod:`chaingraph.store_reads`, the writes :mod:`chaingraph.store_writes`,
the crawl state and the SPARQL response cache :mod:`chaingraph.store_state` — all of them
methods of :class:`Store`, and the only modules that write SQL naming the store's tables.
Every write keeps the rows whose key is already there (entities and properties: upsert), so
loading the same input twice changes nothing.

Traversal reads go through one primitive, :meth:`Store.edges`:

>>> from chaingraph.values import EntityValue
>>> s = Store()
>>> src = s.add_source("fixture", "doctest")
>>> s.write(Batch(statements=[statement_row("Q42$1", "Q42", "P69", EntityValue(id="Q691283"))],
...               statement_sources=[("Q42$1", src)]))
>>> [(e.subject, e.property, e.object) for e in s.edges(subject="Q42")]
[('Q42', 'P69', 'Q691283')]
>>> s.edges(object="Q691283")[0].statement_id
'Q42$1'
>>> s.statement("Q42$1").sources[0]["kind"]
'fixture'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa

from chaingraph.errors import StoreError
from chaingraph.store_bulk import BulkReads
from chaingraph.store_file import connect_file, use_store
from chaingraph.store_memory import (
    STORE_VACUUM_TASKS,
    StoreMemory,
    duckdb_problem,
    memory_limit,
)
from chaingraph.store_reads import PropertyInfo, SourceInfo, StatementInfo, StatementRows, StoreReads
from chaingraph.store_rows import (
    Batch,
    entity_row,
    property_row,
    qualifier_row,
    reference_row,
    snak_hash,
    snak_hash_columns,
    statement_row,
)
from chaingraph.store_schema import (
    ARROW_TYPES,
    RANKS,
    SCHEMA,
    TABLE_COLUMNS,
    TRAVERSABLE_RANKS,
)
from chaingraph.store_state import CachedResponse, CrawlNeighbour, CrawlState, NeighbourCache, ResponseCache
from chaingraph.store_subset import SubsetPicks
from chaingraph.store_writes import StoreWrites

__all__ = [
    "ARROW_TYPES",
    "RANKS",
    "SCHEMA",
    "TABLE_COLUMNS",
    "TRAVERSABLE_RANKS",
    "Batch",
    "CachedResponse",
    "CrawlNeighbour",
    "Edge",
    "EntityInfo",
    "PropertyInfo",
    "SourceInfo",
    "StatementInfo",
    "StatementRows",
    "Store",
    "check_store_path",
    "entity_row",
    "property_row",
    "qualifier_row",
    "reference_row",
    "snak_hash",
    "snak_hash_columns",
    "statement_row",
]




class Edge(NamedTuple):
    """One statement as an edge. ``object`` is the item id, or ``None`` for a literal."""

    statement_id: str
    subject: str
    property: str
    object: str | None
    rank: str
    value_type: str | None


class EntityInfo(NamedTuple):
    id: str
    label: str | None
    description: str | None
    aliases: tuple[str, ...]
    sitelinks: int | None
    classes: tuple[str, ...]




#: file types a store path must not have: DuckDB would read them as something else (or
#: open a throwaway in-memory database), so nothing would be kept
FOREIGN_SUFFIXES = frozenset({
    ".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".arrow", ".feather", ".xlsx",
    ".sqlite", ".sqlite3", ".db3", ".nt", ".ttl", ".rdf", ".gz", ".bz2", ".zst", ".xz", ".zip"})
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # http://, s3://, md:, motherduck: (not C:)
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def check_store_path(path: str | Path) -> Path:
    """``path`` as a store file, refused (:class:`StoreError`) before anything opens it
    unless it is a local file path that is, or can become, a DuckDB database.

    A store is a local DuckDB file. ``":memory:"``, URLs and connection strings
    (``http://…``, ``s3://…``, ``md:…``) and other file types (``.json``, ``.csv``,
    ``.parquet``, ``.sqlite``, …) are refused, as is an existing file that is not a DuckDB
    database; the library's in-memory store is ``Store()`` (``path=None``).

    >>> check_store_path("work/world.duckdb").name
    'world.duckdb'
    >>> check_store_path("notes.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chaingraph.errors.StoreError: store notes.json: a '.json' file is not a DuckDB store; ...
    """
    text = str(path)
    if not text.strip():
        raise StoreError("store path is empty; pass a file such as world.duckdb")
    if text.startswith(":memory:"):
        raise StoreError(f"store {text}: an in-memory store keeps nothing; pass a file such as "
                         "world.duckdb (the library's in-memory store is Store())")
    if _URL.match(text):
        raise StoreError(f"store {text}: a store is a local DuckDB file, not a URL or connection "
                         "string; pass a file such as world.duckdb")
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in FOREIGN_SUFFIXES:
        raise StoreError(f"store {text}: a {suffix!r} file is not a DuckDB store; pass a file "
                         "such as world.duckdb")
    if p.exists():
        if not p.is_file():
            raise StoreError(f"store {text}: not a regular file; pass a DuckDB file such as world.duckdb")
        try:
            with p.open("rb") as fh:
                head = fh.read(12)
        except OSError as exc:
            raise StoreError(f"store {text}: cannot be read ({exc.strerror}); check its permissions") from exc
        if head and head[8:12] != _DUCKDB_MAGIC:
            raise StoreError(f"store {text}: the file exists and is not a DuckDB database; "
                             "pass a new file or an existing store")
    return p


def _ids(value: str | Collection[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


class Store(StoreReads, StoreWrites, BulkReads, CrawlState, ResponseCache, NeighbourCache, StoreMemory):
    """A DuckDB-backed evidence store; ``path=None`` keeps it in memory.

    Use as a context manager to close the connection. All writes go through :meth:`write`
    (one transaction per batch) or :meth:`transaction`; bulk loaders use the same semantics
    through :meth:`write_arrow` (column batches) and :meth:`insert_select` (rows built in SQL),
    all from :class:`~chaingraph.store_writes.StoreWrites`.
    Reads: :meth:`edges` / :meth:`edge_arrays` here; labels, sitelinks, classes, property
    facts, statements and counts from :class:`~chaingraph.store_reads.StoreReads`; crawl
    state and the SPARQL response cache from :class:`~chaingraph.store_state.CrawlState`
    and :class:`~chaingraph.store_state.ResponseCache`; memory handed back, budgets and
    reconnecting and reopening from :class:`~chaingraph.store_memory.StoreMemory`.
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path = None if path is None else check_store_path(path)
        try:
            if self.path is None:
                self.con = duckdb.connect(":memory:")
            else:
                if not read_only:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                self.con = connect_file(self.path, read_only=read_only)
                self._refuse_foreign()
            if not read_only:
                self.con.execute(SCHEMA)
                if self.path is not None:  # a checkpoint merges one row group's worth of small ones
                    self.con.execute(f"SET max_vacuum_tasks = {STORE_VACUUM_TASKS}")
            #: DuckDB's memory limit when this store opened its database (see release_memory)
            self.opened_memory_limit: str | None = memory_limit(self.con)
        except (duckdb.Error, OSError) as exc:
            raise StoreError(f"cannot open store {self.path or ':memory:'}: "
                             f"{str(exc).splitlines()[0]}; check the path and that no other "
                             "process holds it open for writing") from exc
        self._in_tx = False
        self._read_only = read_only
        #: whether this is a :meth:`subset` of another store (read only)
        self.is_subset = False
        #: a subset's source tables (their qualified prefix, e.g. ``"world".main.``)
        self.subset_source: str | None = None

    def _refuse_foreign(self) -> None:
        """Refuse someone else's DuckDB database before chaingraph writes a table into it."""
        tables = {str(r[0]) for r in self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
            "AND table_schema = 'main'").fetchall()}
        if tables and "statements" not in tables:
            self.con.close()
            shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(f"store {self.path}: a DuckDB database that is not a chaingraph store "
                             f"(it has the tables {shown}); pass a new file or an existing store")

    def subset(self, statement_ids: pa.Array | pa.ChunkedArray | Sequence[str],
               entities: pa.Array | pa.ChunkedArray | Sequence[str] = ()) -> Store:
        """A store holding only ``statement_ids`` (with their qualifiers, references,
        provenance and the property rows they use) and the entity rows of ``entities``:
        what copying them into an empty store gives, without copying them (views of this
        store's tables filtered by the ids, kept in DuckDB: :mod:`chaingraph.store_subset`).
        It is for reading (writing its facts raises :class:`StoreError`) and shares this
        store's database through a connection of its own (temporary views and tables, so
        this store may be read only): close it before this one, and do not change this
        store's rows meanwhile (the views would show the change).

        >>> from chaingraph.values import EntityValue
        >>> s = Store()
        >>> s.write(Batch(entities=[entity_row("Q1", "One"), entity_row("Q3", "Three")],
        ...               statements=[statement_row(f"Q{a}$1", f"Q{a}", "P361", EntityValue(id=f"Q{a + 1}"))
        ...                           for a in (1, 2)]))
        >>> with s.subset(["Q2$1"], ["Q3"]) as part:
        ...     [e.statement_id for e in part.edges()], part.entity_labels()
        (['Q2$1'], {'Q3': 'Three'})
        >>> len(s.edges())
        2
        """
        try:
            picks = self.subset_picks()
            try:
                picks.add(statement_ids, entities)
            except BaseException:
                picks.close()
                raise
            return picks.subset()
        except duckdb.Error as exc:
            raise StoreError(f"cannot read store {self.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc

    def subset_picks(self) -> SubsetPicks:
        """An empty :class:`~chaingraph.store_subset.SubsetPicks` of this store: pick
        statements and entities batch by batch inside DuckDB, then make the :meth:`subset`."""
        if self.is_subset:
            raise StoreError("subset: this store is already a subset (its rows are temporary views of "
                             "another connection); collect into a Store() to narrow it further")
        return SubsetPicks(self)

    # -- life cycle -------------------------------------------------------------------
    def close(self) -> None:
        self.con.close()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A connection of its own to this store's database (DuckDB's ``cursor``), its tables
        the default ones as on :attr:`con`; close it before the store.

        >>> s = Store()
        >>> cur = s.cursor()
        >>> cur.execute("SELECT count(*) FROM statements").fetchall()
        [(0,)]
        >>> cur.close()
        """
        cursor = self.con.cursor()
        return cursor if self.path is None else use_store(cursor)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Run a block in one transaction (nested use joins the outer one)."""
        if self._in_tx:
            yield self.con
            return
        self._in_tx = True
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        else:
            self.con.execute("COMMIT")
        finally:
            self._in_tx = False

    # -- the read primitive -----------------------------------------------------------
    def _edge_sql(self, subject: str | Collection[str] | None, property: str | Collection[str] | None,
                  object: str | Collection[str] | None, ranks: Collection[str], item_only: bool,
                  values_only: bool = True) -> tuple[str, list[Any]]:
        where, params = ["rank IN (SELECT UNNEST(?))"], [list(ranks)]
        if values_only:
            where.append("snaktype = 'value'")
        if item_only:
            where.append("value_type = 'item'")
        for col, val in (("subject", subject), ("property", property), ("object", object)):
            ids = _ids(val)
            if ids is not None:
                where.append(f"{col} IN (SELECT UNNEST(?))")
                params.append(ids)
        sql = ("SELECT statement_id, subject, property, object, rank, value_type FROM statements "
               f"WHERE {' AND '.join(where)} ORDER BY subject, property, object, statement_id")
        return sql, params

    def edges(self, subject: str | Collection[str] | None = None,
              property: str | Collection[str] | None = None,
              object: str | Collection[str] | None = None, *,
              ranks: Collection[str] = TRAVERSABLE_RANKS, item_only: bool = True,
              values_only: bool = True) -> list[Edge]:
        """Statements matching subject / property / object (``None`` is a wildcard; each
        may be one id or a collection). Deprecated statements are excluded unless asked
        for via ``ranks``; literal statements only with ``item_only=False``; ``somevalue`` /
        ``novalue`` statements (no object, no value type) only with ``item_only=False,
        values_only=False``. Order is deterministic (subject, property, object, statement id)."""
        sql, params = self._edge_sql(subject, property, object, ranks, item_only, values_only)
        return [Edge(*row) for row in self.con.execute(sql, params).fetchall()]

    def edge_arrays(self, subject: str | Collection[str] | None = None,
                    property: str | Collection[str] | None = None,
                    object: str | Collection[str] | None = None, *,
                    ranks: Collection[str] = TRAVERSABLE_RANKS, item_only: bool = True
                    ) -> dict[str, Any]:
        """:meth:`edges` as column arrays (numpy), for building graphs over large stores."""
        sql, params = self._edge_sql(subject, property, object, ranks, item_only)
        return dict(self.con.execute(sql, params).fetchnumpy())

    # -- convenience reads (all small) -------------------------------------------------
    def entity(self, entity_id: str) -> EntityInfo | None:
        rows = self.con.execute(
            "SELECT id, label, description, aliases, sitelinks FROM entities WHERE id = ?",
            [entity_id]).fetchall()
        row = rows[0] if rows else None
        classes = self.classes([entity_id]).get(entity_id, ())
        if row is None:
            if not classes and not self.edges(subject=entity_id) and not self.edges(object=entity_id):
                return None
            return EntityInfo(entity_id, None, None, (), None, classes)
        return EntityInfo(row[0], row[1], row[2], tuple(row[3] or ()), row[4], classes)
