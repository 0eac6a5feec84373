"""Build an N-Triples dump's statement model a chunk at a time, in memory that does not grow with the dump.

A whole-file build (:func:`~chaingraph.sources.loaders.rdf.load_rdf` of a file that stages
fewer than :data:`CHUNK_ROWS` rows) keeps every staged triple in DuckDB until the end, and
DuckDB keeps in memory, outside any budget, what it knows of every block of its tables:
about 0.5 MB per million staged rows, so a 40x synthetic dump's build peaked 22 MB above the
10x one's, and a dump of Wikidata's 15 billion triples would not fit. A dump is written
entity by entity, each statement's triples right after the ``p:`` triple that names it, so
it can be built in chunks: every :data:`CHUNK_ROWS` staged rows, the statements staged so far
are built and written (:class:`ChunkedBuild`), the staging tables start again with what the
chunk's last statement may still be missing (the rows from its ``p:`` triple on), and the
store file is attached again (:meth:`Store.reconnect`), so what DuckDB knew of the chunk goes;
every :data:`REOPEN_CHUNKS` chunks the store's database is closed and opened again instead
(:meth:`Store.reopen`), so what DuckDB keeps for as long as a database is open goes too.

What spans chunks is kept in tables of the store file while the load runs (``_cg_load_*``,
dropped at its end), each a small part of the dump:

* labels, descriptions, aliases and the other entity facts (a row each, as staged), and the
  ids of the chunks' subjects: the entities are built once, at the end, from all of them,
  as the whole-file build does;
* value and reference nodes (a dump writes a node once and refers to it again later): a
  chunk that uses a node it does not define takes its triples from there;
* ``p:`` triples that gave no statement (no value at all), so that a ``wdt:`` triple of the
  same entity and property in another chunk makes no truthy statement; one that has a full
  statement elsewhere goes at the end (:meth:`Store.retire_truthy`).

The store is the whole-file build's. Where the file is not in that order — a statement's
triple in another chunk than its ``p:`` triple, a statement or a truthy triple in two chunks,
a node used before the chunk that defines it — the chunks cannot give it:
:class:`NotInDumpOrder` is raised when that shows (at the latest when the file ends), the
rows written are deleted, and the file is loaded again whole. Chunks are built only into a
store file with no statements yet (a dump's load), whose rows can so be taken back.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import pyarrow as pa

from chaingraph.sources.loaders.nt_roles import STAGING_DDL, create_staging, drop_staging
from chaingraph.sources.loaders.rdf_terms import REF
from chaingraph.store import Store

__all__ = ["CHUNK_ROWS", "REOPEN_CHUNKS", "ChunkedBuild", "NotInDumpOrder", "chunkable", "drop_load_tables",
           "undo"]

#: staged rows per chunk: the build's memory is that of a dump of this many. A chunk this
#: small is built within DuckDB's budget (settings.DEFAULT_LOAD_MEMORY_MB) as the world dumps
#: are (each stages fewer, and is built whole): codex-m's 10x synthetic dump peaked at 119 MB
#: above its baseline in chunks of 300,000 rows (two runs; 117-119 at 200,000, 126 at 400,000,
#: 125-131 at a million), the world dump at 116-117. A chunk costs about 0.1 s of its own: at
#: 10x the load took 0.94x the time of chunks of a million (0.91-0.97x, three paired rounds)
CHUNK_ROWS = 300_000
#: chunks built between two reopenings of the store's database (:meth:`Store.reopen`; the
#: chunks between attach its file again, :meth:`Store.reconnect`). A reopening takes about 65
#: ms, against 25 for attaching: at 40x (31 chunks) the load peaked at 123 MB reopening every
#: 3 chunks, 126 every chunk and 137 never (one run each), DuckDB's eviction queues of the
#: blocks its builds spilled growing in between (stop 47's measurement)
REOPEN_CHUNKS = 3
#: tables in the store file that hold what spans chunks, while a chunked load runs
_LOAD_TABLES = {
    "_cg_load_terms": STAGING_DDL,  # the entity facts staged in the "terms" group
    "_cg_load_wdt": "(s VARCHAR, k VARCHAR, chunk INTEGER)",  # subjects of wdt: triples (they name entities)
    "_cg_load_ids": "(subject VARCHAR, chunk INTEGER)",  # subjects of p: triples
    "_cg_load_nodes": STAGING_DDL,  # triples of value and reference nodes
    "_cg_load_unresolved": "(node VARCHAR)",  # nodes used where no chunk so far defined them
    "_cg_load_valueless": "(subject VARCHAR, pid VARCHAR)",  # p: triples that gave no statement
}
_NODE_SUBJECT = f"(starts_with(s, '<http://www.wikidata.org/value/') OR starts_with(s, '<{REF}'))"
#: kinds of staged triples whose subject is a statement node
_STATEMENT_KINDS = "('rank', 'ps', 'psv', 'pq', 'pqv', 'derived')"
_CHUNK_TEMPS = ("_cg_missing", "_cg_split")
#: the views of the staging tables a chunk is built from
_CHUNK = "_cg_chunk"
_CHUNK_VIEWS = tuple(f"{_CHUNK}_{group}" for group in ("claim", "wdt", "main", "terms"))
_ENT_IRI = "<http://www.wikidata.org/entity/"


class NotInDumpOrder(Exception):
    """The file is not in a dump's order (see the module docstring): load it whole."""


def chunkable(store: Store) -> bool:
    """Whether a load into ``store`` may build in chunks: a store file without statements,
    qualifiers, references or provenance rows (what a chunked load writes, it can delete)."""
    return store.path is not None and not store.is_subset and not store.has_statement_rows()


def undo(store: Store) -> None:
    """Delete what a chunked load wrote (into a store that had none of it, see :func:`chunkable`);
    the tables it kept go with the load's staging tables (:func:`drop_load_tables`)."""
    store.delete_statement_rows()


def drop_load_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the tables a chunked load keeps while it runs, and a chunk's scratch tables."""
    for name in (*_LOAD_TABLES, *_CHUNK_TEMPS):
        con.execute(f"DROP TABLE IF EXISTS {name}")


class ChunkedBuild:
    """The chunks of one N-Triples file's build: :meth:`chunk` at each chunk's end (the stager
    calls it between blocks), :meth:`finish` when the file ends.

    ``build_statements(store, table)`` builds the statements, qualifiers and references of
    the staged triples (unchecked: see ``rdf._build_statements``)
    and returns their counts; ``entities(store, table)`` builds and writes the entities of
    the staging tables ``table``_terms and ``table``_wdt and the subjects in ``_cg_st``, in
    transactions of its own, and returns their counts; ``building()``
    and ``staging()`` set DuckDB up for a build (while a chunk is built) and for staging
    (after it): its memory budget and threads; ``ending()`` for the steps that end the load
    once the chunks' truthy statements are settled (the key check, the entities)."""

    def __init__(self, store: Store, table: str, source_id: str, *,
                 build_statements: Callable[[Store, str], dict[str, int]],
                 entities: Callable[[Store, str], dict[str, int]],
                 building: Callable[[], None], staging: Callable[[], None], ending: Callable[[], None],
                 temps: tuple[str, ...], views: tuple[str, ...]) -> None:
        self.store = store
        self.table = table
        self.source_id = source_id
        self._build_statements = build_statements
        self._entities = entities
        self._building = building
        self._staging = staging
        self._ending = ending
        self._temps = (*temps, *_CHUNK_TEMPS)
        self._views = (*views, *_CHUNK_VIEWS)
        #: chunks built so far
        self.chunks = 0
        self.counts = {"qualifiers": 0, "references": 0}

    def chunk(self) -> None:
        """Build the chunk staged so far, but for the rows of its last entity (from the first
        on), which stay staged."""
        con, t = self.store.con, self.table
        self._building()
        if self.chunks == 0:
            drop_load_tables(con)
            for name, ddl in _LOAD_TABLES.items():
                con.execute(f"CREATE TABLE {name} {ddl}")
        cut = self._last_entity_start()
        carry: dict[str, pa.Table] = {}
        if cut is not None:
            for group in ("claim", "wdt", "main"):
                carry[group] = con.sql(f"SELECT * FROM {t}_{group} WHERE line >= {cut}").to_arrow_table()
        self._build(cut)
        self._let_go()
        if self.chunks % REOPEN_CHUNKS == 0:
            self.store.reopen()
        else:
            self.store.reconnect()
        con = self.store.con
        create_staging(con, t)
        for group, rows in carry.items():
            con.register("_cg_carry", rows)
            try:
                con.execute(f"INSERT INTO {t}_{group} SELECT * FROM _cg_carry")
            finally:
                con.unregister("_cg_carry")
        self._staging()

    def _last_entity_start(self) -> int | None:
        """The first staged line of the entity of the last ``p:`` triple staged (its claims,
        its statements' triples, its ``wdt:`` triples): the chunk ends before it, since more of
        that entity may follow. ``None``: no ``p:`` triple is staged."""
        t = self.table
        last = self.store.con.execute(f"SELECT s FROM {t}_claim ORDER BY line DESC LIMIT 1").fetchall()
        if not last:
            return None
        entity = str(last[0][0])
        row = self.store.con.execute(f"""SELECT least(
              (SELECT min(line) FROM {t}_claim WHERE s = $e),
              (SELECT min(line) FROM {t}_main WHERE starts_with(upper(s), upper($e) || '$')),
              (SELECT min(line) FROM {t}_wdt WHERE s = '{_ENT_IRI}' || $e || '>'))""",
            {"e": entity}).fetchall()
        return int(row[0][0])

    def finish(self) -> dict[str, int]:
        """Build the last chunk, then what spans the chunks (truthy statements, entities);
        return how many rows of each kind the file gave. Raises :class:`NotInDumpOrder`."""
        store, con = self.store, self.store.con
        self._building()
        self._build()
        self._let_go()  # before what spans the chunks is built
        self._retire_split_truthy()
        self._ending()
        late = con.execute("SELECT EXISTS (FROM _cg_load_unresolved u WHERE u.node IN "
                           "(SELECT s FROM _cg_load_nodes))").fetchall()[0][0]
        counted = None if late else store.source_new_statements(self.source_id)
        if counted is None:  # a node defined after its use, or a statement in two chunks
            raise NotInDumpOrder
        counts = {"statements": counted, **self.counts}
        con.execute("CREATE OR REPLACE TEMP VIEW _cg_st AS SELECT subject FROM _cg_load_ids")
        counts.update(self._entities(store, "_cg_load"))  # gathered and written
        self._drop_temps()
        return counts

    def _retire_split_truthy(self) -> None:
        """A chunk makes a truthy statement of a ``wdt:`` triple whose entity and property
        have no ``p:`` triple in the chunk: where another chunk has one, it goes again (with a
        value: :meth:`Store.retire_truthy`; without: the whole-file build makes none either).
        Only an entity whose triples are in more than one chunk can have such a pair, none in
        a dump's order: the join over all of the statements is then skipped (at 80x codex-m,
        18 M statements, it ran out of the build's 64 MiB)."""
        con, n = self.store.con, len(_ENT_IRI)
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _cg_split AS
          SELECT subject FROM (SELECT subject, chunk FROM _cg_load_ids UNION
            SELECT substr(s, {n + 1}, length(s) - {n + 1}), chunk FROM _cg_load_wdt
            WHERE starts_with(s, '{_ENT_IRI}'))
          GROUP BY subject HAVING count(DISTINCT chunk) > 1""")
        if con.execute("SELECT EXISTS (FROM _cg_split)").fetchall()[0][0]:
            self.store.retire_truthy("FROM _cg_split", valueless="FROM _cg_load_valueless")
        con.execute("DROP TABLE _cg_split")

    def _build(self, cut: int | None = None) -> None:
        """Build the staged chunk, the lines before ``cut`` (``None``: all), DuckDB set up for a
        build by the caller: its entity facts and subjects are kept for the end, its value and
        reference nodes for the chunks to come, its statements written. (The lines from ``cut``
        on are read past, not deleted: DuckDB's scans of a table rows were deleted from peaked
        30 MB higher.)"""
        con, t = self.store.con, self.table
        if cut is not None:
            for group in ("claim", "wdt", "main"):
                con.execute(f"CREATE OR REPLACE TEMP VIEW {_CHUNK}_{group} AS "
                            f"SELECT * FROM {t}_{group} WHERE line < {cut}")
            con.execute(f"CREATE OR REPLACE TEMP VIEW {_CHUNK}_terms AS SELECT * FROM {t}_terms")
            t = _CHUNK
        self._check_order()
        self._share_nodes(t)
        con.execute(f"INSERT INTO _cg_load_terms SELECT line, k, pid, s, o FROM {t}_terms")
        con.execute(f"INSERT INTO _cg_load_wdt SELECT DISTINCT s, k, {self.chunks} FROM {t}_wdt")
        con.execute(f"INSERT INTO _cg_load_ids SELECT DISTINCT s, {self.chunks} FROM {t}_claim")
        with self.store.transaction():
            counts = self._build_statements(self.store, t)
            con.execute("INSERT INTO _cg_load_valueless SELECT DISTINCT st.subject, st.pid FROM _cg_st st "
                        "WHERE st.value IS NULL AND NOT EXISTS (FROM _cg_snak v WHERE v.owner = st.node "
                        "AND v.role = 'S')")
        self.counts["qualifiers"] += counts["qualifiers"]
        self.counts["references"] += counts["references"]
        self.chunks += 1

    def _check_order(self) -> None:
        """A staged triple about a statement whose ``p:`` triple is not staged: the file is not
        in a dump's order (or has a statement no ``p:`` triple names, which a whole-file build
        leaves out)."""
        t = self.table
        stray = self.store.con.execute(
            f"SELECT EXISTS (FROM {t}_main m WHERE m.k IN {_STATEMENT_KINDS} "
            f"AND NOT EXISTS (FROM {t}_claim c WHERE c.o = m.s))").fetchall()[0][0]
        if stray:
            raise NotInDumpOrder

    def _share_nodes(self, t: str) -> None:
        """Keep this chunk's value and reference nodes, and stage those it uses but does not
        define from the earlier chunks (twice: a reference node taken so may use a value node);
        note those no chunk defined yet (``t``: the staging tables or views of the chunk)."""
        con = self.store.con
        con.execute(f"INSERT INTO _cg_load_nodes SELECT line, k, pid, s, o FROM {t}_main "
                    f"WHERE {_NODE_SUBJECT}")
        for _ in range(2):
            con.execute(f"""CREATE OR REPLACE TEMP TABLE _cg_missing AS
              SELECT DISTINCT m.o AS node FROM {t}_main m WHERE m.k IN ('psv', 'pqv', 'prv', 'derived')
                AND NOT EXISTS (FROM {t}_main d WHERE d.s = m.o)""")
            con.execute(f"INSERT INTO {self.table}_main SELECT DISTINCT ON (s, k, pid, o) line, k, pid, s, o "
                        "FROM _cg_load_nodes WHERE s IN (SELECT node FROM _cg_missing)")
        con.execute("INSERT INTO _cg_load_unresolved SELECT node FROM _cg_missing "
                    f"WHERE node NOT IN (SELECT s FROM {t}_main)")

    def _let_go(self) -> None:
        """Drop a built chunk's temporary tables and its staged rows."""
        self._drop_temps()
        drop_staging(self.store.con, self.table)

    def _drop_temps(self) -> None:
        con = self.store.con
        for view in self._views:
            con.execute(f"DROP VIEW IF EXISTS {view}")
        for tmp in self._temps:
            con.execute(f"DROP TABLE IF EXISTS {tmp}")

