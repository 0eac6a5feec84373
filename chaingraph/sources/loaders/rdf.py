"""Load RDF in the Wikidata Query Service statement model (N-Triples, Turtle) into the store.

The file is staged by :mod:`chaingraph.sources.loaders.ntriples`; the statement model is then
rebuilt with set-based SQL inside DuckDB (joins on statement, reference and value-node
IRIs; the SQL that reads terms and values is :mod:`~chaingraph.sources.loaders.rdf_terms`)
and written in one transaction, but for the items, which follow in transactions of their
own (:mod:`~chaingraph.sources.loaders.rdf_entities`: the entity index DuckDB grows in a
transaction stays in memory until it ends; should a load stop among them, loading the file
again completes it). The result is the store the JSON dump of the same entities gives:

* ``p:Pn`` links an entity to a statement node; its id ``Q42-GUID`` becomes ``Q42$GUID``;
  ``wikibase:rank`` gives the rank;
* the main value comes from the ``psv:`` value node when there is one (time with
  precision, calendar, timezone via :meth:`TimeValue.from_rdf` — BCE shift, ``01``
  month/day, Julian reconversion; quantity amount, unit (``wd:Q199`` = ``"1"``), bounds;
  globe coordinates), otherwise from ``ps:`` (items, strings, monolingual text, URLs,
  Commons media names); a blank node or ``.well-known/genid`` IRI is *somevalue*, the
  statement typed ``wdno:Pn`` is *novalue*; qualifiers (``pq:``/``pqv:``) and references
  (``prov:wasDerivedFrom`` → ``pr:``/``prv:``, hash = the ``wdref:`` local name) likewise;
* ``wdt:`` truthy triples are used only for (entity, property) pairs that have no ``p:``
  statement at all: they become rank ``normal`` statements with the id
  ``<entity>$TRUTHY-<md5 of property and object>``;
* ``rdfs:label``/``schema:description``/``skos:altLabel`` in ``en``, else ``mul``;
  ``wikibase:propertyType`` → the JSON datatype spelling; ``wikibase:sitelinks``,
  ``schema:version`` and ``schema:dateModified`` on the entity or its data node.

Without a value node (some exports drop them) a time literal gets the coarsest precision
its lexical form allows (day, month or year) in the Gregorian calendar, and a quantity
the unit ``"1"``: the RDF does not say more.

Memory: the staged triples live in DuckDB. For a store *file* DuckDB is held to
:data:`~chaingraph.settings.DEFAULT_STAGING_MEMORY_MB` while the file is staged (the
blocks in flight take the rest) and to :data:`~chaingraph.settings.DEFAULT_LOAD_MEMORY_MB`
while the statement model is built (:class:`~chaingraph.store_memory.Budget`; a dump built
in chunks ends, from its key check on, under
:data:`~chaingraph.settings.DEFAULT_LOAD_END_MEMORY_MB`), so the staging tables and the
build's joins spill to the store's temporary directory instead of
growing with the dump (each step of the build is one join, aggregate or sort, and no
aggregate keeps a text per group: those cannot spill), snak hashes are computed
:data:`HASH_BATCH` rows at a time (their values in Python :data:`HASH_SLICE` rows at a time)
and aliases gathered a part at a time (:mod:`~chaingraph.sources.loaders.rdf_entities`); an
in-memory store keeps it all in memory, as it keeps the store. While a file is staged DuckDB runs on
:data:`STAGING_DUCKDB_THREADS` thread, the build on all it had.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO

import duckdb
import pyarrow as pa

from chaingraph.errors import BadDumpLine, StoreError
from chaingraph.ids import ENTITY_PATTERN
from chaingraph.progress import Progress
from chaingraph.settings import DEFAULT_LOAD_END_MEMORY_MB, DEFAULT_LOAD_MEMORY_MB, DEFAULT_STAGING_MEMORY_MB
from chaingraph.sources.loaders import rdf_chunks, rdf_entities
from chaingraph.sources.loaders.common import (
    FileReport,
    LineGuard,
    loaded_bytes,
    sql_int,
    sql_script,
    system_arrow_memory,
)
from chaingraph.sources.loaders.compression import Format, RawCounter, dump_date, open_dump
from chaingraph.sources.loaders.nt_ids import STATEMENT_ID_PATTERN, staged_entity_id
from chaingraph.sources.loaders.nt_roles import create_staging, delete_staged, drop_staging
from chaingraph.sources.loaders.ntriples import ReadError, stage_ntriples
from chaingraph.sources.loaders.rdf_terms import (
    ENT,
    ENTITY_LOCAL,
    NODE_LOCAL,
    NOVALUE,
    PLAIN_ENTITY,
    REF,
    STAGED_TERM,
    VALUE_NODE_KINDS,
    WB,
    local_name,
    plain_values,
    register_functions,
    value_sql,
)
from chaingraph.sources.loaders.turtle import stage_turtle
from chaingraph.store import Store, snak_hash_columns
from chaingraph.store_load import VACUUM_TASKS
from chaingraph.store_memory import duckdb_problem, held_settings, repeats, setting
from chaingraph.values import VALUE_COLUMNS

__all__ = ["load_rdf"]

_TEMPS = ("_cg_vn", "_cg_nodes", "_cg_snak", "_cg_val", "_cg_statements", "_cg_statements_v", "_cg_terms",
          "_cg_alias", "_cg_facts", "_cg_latest", "_cg_named", "_cg_described", "_cg_dated", "_cg_aliased",
          "_cg_ent", "_cg_hash", "_cg_hashed_all")
#: DuckDB's threads while a file is staged (the builds get back those it had): its work then
#: is appending the staged rows, beside the staging workers, and one thread appends an Arrow
#: table sooner than two (a million staged rows: 0.44 s against 0.55) and leaves the other
#: core to the workers. 10x codex-m into a store file, two cores: 1.06x as fast (1.05-1.09x,
#: four paired rounds), with 13 % fewer page faults
STAGING_DUCKDB_THREADS = 1
_TEMP_VIEWS = ("_cg_values", "_cg_st")


def _build(store: Store, t: str, source_id: str, *, claims_as_ids: bool = False) -> dict[str, int]:
    """Turn the staged triples into store rows (inside the caller's transaction); return
    how many rows of each kind the file gave. ``claims_as_ids``: every staged ``p:`` triple
    is an entity id and a statement id (N-Triples stages no other: an invalid one is a bad
    line), so they are read as they are, with none of the checks the terms of a Turtle file
    need, which may be built before its ids are checked (a syntax error, a cut file)."""
    counts = _build_statements(store, t, source_id, claims_as_ids=claims_as_ids)
    counts.update(rdf_entities.gather_entities(store, t))
    return counts


def _build_statements(store: Store, t: str, source_id: str, *, claims_as_ids: bool = False,
                     chunk: bool = False) -> dict[str, int]:
    """The statements, qualifiers and references of :func:`_build`, without the entities
    (which leaves ``_cg_st``, ``_cg_snak`` and the other temporary tables in place). ``chunk``:
    the staged triples are one chunk of a dump (:mod:`~chaingraph.sources.loaders.rdf_chunks`),
    whose statements are in no other chunk: the rows go in unchecked (every key is checked
    once, when the dump ends) and ``statements`` is not counted."""
    con = store.con
    register_functions(con)
    ent_s, ent_x, ent_owner = (ENTITY_LOCAL.format(c=c) for c in ("s", "x.s", "v.owner"))
    pivot = ", ".join(f"first(o) FILTER (WHERE k = '{k}') AS {a}" for a, k in VALUE_NODE_KINDS.items())
    node_kinds = "('psv', 'pqv', 'prv')"
    node_predicates = ", ".join(repr(k) for k in VALUE_NODE_KINDS.values())
    role = "CASE WHEN k IN ('ps', 'psv') THEN 'S' WHEN k IN ('pq', 'pqv') THEN 'Q' ELSE 'R' END"
    claims, truthy, main = f"{t}_claim", f"{t}_wdt", f"{t}_main"  # the staging tables (see ntriples)
    statement_local = NODE_LOCAL.format(c="o")
    subject, statement_id = ("s", "o") if claims_as_ids else (
        f"CASE WHEN {STAGED_TERM.format(c='s')} THEN {ent_s} ELSE s END",
        f"""CASE WHEN NOT {STAGED_TERM.format(c='o')} AND NOT ends_with(o, '>') THEN o
                  WHEN instr({statement_local}, '-') > 0  -- Q42-GUID -> Q42$GUID
                  THEN {statement_local}[:instr({statement_local}, '-') - 1] || '$'
                       || {statement_local}[instr({statement_local}, '-') + 1:]
                  ELSE {statement_local} END""")
    sql_script(con, f"""
    CREATE OR REPLACE TEMP VIEW _cg_st AS  -- p: triples are staged with their ids (see NODE_PREFIX)
      SELECT o AS node, {subject} AS subject, pid, {statement_id} AS statement_id,
             v AS value  -- the plain entity value of the statement, staged with it (see pair_statements)
      FROM {claims};
    CREATE OR REPLACE TEMP TABLE _cg_vn AS
      SELECT s AS node, {pivot} FROM {main} WHERE k IN ({node_predicates}) GROUP BY s;
    CREATE OR REPLACE TEMP TABLE _cg_nodes AS  -- snaks with a value node present in the file
      SELECT s AS owner, {role} AS role, pid, NULL AS o, o AS vn, false AS novalue
      FROM {main} WHERE k IN {node_kinds} AND o IN (SELECT node FROM _cg_vn);
    CREATE OR REPLACE TEMP TABLE _cg_snak AS
      SELECT *, coalesce({PLAIN_ENTITY}, false) AS plain FROM (
      SELECT * FROM _cg_nodes
      UNION ALL  -- simple values, where no value node says more (an anti-join with the few
      -- value-node snaks as its build side: NOT EXISTS would group every snak first)
      SELECT m.owner, m.role, m.pid, m.o, NULL AS vn, false AS novalue
      FROM (SELECT s AS owner, {role} AS role, pid, o FROM {main} WHERE k IN ('ps', 'pq', 'pr')) m
      LEFT JOIN (SELECT DISTINCT owner, pid, role FROM _cg_nodes) n
        ON n.owner = m.owner AND n.pid = m.pid AND n.role = m.role
      WHERE n.owner IS NULL OR starts_with(m.o, '_:')
            OR starts_with(m.o, '<http://www.wikidata.org/.well-known/genid/')
      UNION ALL  -- truthy triples count only without a full statement
      SELECT s AS owner, 'T' AS role, pid, o, NULL AS vn, false AS novalue FROM {truthy} w
      WHERE NOT EXISTS (SELECT 1 FROM {claims} c WHERE c.s = {staged_entity_id('w.s')} AND c.pid = w.pid)
      UNION ALL
      SELECT x.s AS owner,
             CASE WHEN st.node IS NOT NULL AND st.pid = x.wpid AND NOT EXISTS (
                    SELECT 1 FROM {main} y WHERE y.s = x.s AND y.k IN ('ps', 'psv'))
                  AND NOT EXISTS (SELECT 1 FROM {claims} c WHERE c.o = x.s AND c.v IS NOT NULL) THEN 'S'
                  WHEN st.node IS NOT NULL THEN 'Q'
                  WHEN {ent_x} IS NOT NULL THEN 'T' ELSE 'R' END AS role,
             x.wpid AS pid, NULL AS o, NULL AS vn, true AS novalue
      FROM (SELECT s, {local_name('o', NOVALUE)} AS wpid FROM {main} WHERE k = 'type') x
      LEFT JOIN _cg_st st ON st.node = x.s);
    CREATE OR REPLACE TEMP TABLE _cg_val AS {value_sql()};
    UPDATE _cg_val SET value_type = 'string', text = raw_lexical, time = NULL, precision = NULL,
        calendar = NULL, timezone = NULL, before = NULL, after = NULL
      WHERE value_type = 'time' AND time IS NULL;  -- not a valid date: keep the text, as WDQS does
    CREATE OR REPLACE TEMP VIEW _cg_values AS  -- every snak's value, plain entity values included
      SELECT owner, role, pid, o, snaktype, {', '.join(VALUE_COLUMNS)} FROM _cg_val
      UNION ALL
      SELECT owner, role, pid, o, 'value' AS snaktype, {plain_values()} FROM _cg_snak WHERE plain;
    """)
    rank = (f"CASE r.o WHEN '<{WB}PreferredRank>' THEN 'preferred' WHEN '<{WB}DeprecatedRank>' "
            "THEN 'deprecated' ELSE 'normal' END")
    vcols = ", ".join(f"v.{c}" for c in VALUE_COLUMNS)
    truthy_id = f"{ent_owner} || '$TRUTHY-' || upper(md5(v.pid || ' ' || coalesce(v.o, 'novalue')))"
    ranks = f"(SELECT s, o FROM {main} WHERE k = 'rank') r ON r.s = st.node"
    plain = f"""  -- plain entity values: the bulk, few columns
      SELECT st.statement_id, st.subject, st.pid AS property, {rank} AS rank, 'value' AS snaktype,
             {plain_values("v.", narrow=True)}
      FROM _cg_st st JOIN _cg_snak v ON v.owner = st.node AND v.role = 'S' AND v.plain
      LEFT JOIN {ranks}
      UNION ALL  -- p: triples staged with their plain value, where no value node says more
      SELECT st.statement_id, st.subject, st.pid AS property, {rank} AS rank, 'value' AS snaktype,
             {plain_values("st.", narrow=True, column="value")}
      FROM _cg_st st LEFT JOIN (SELECT DISTINCT owner, pid FROM _cg_nodes WHERE role = 'S') n
        ON n.owner = st.node AND n.pid = st.pid
      LEFT JOIN {ranks}
      WHERE st.value IS NOT NULL AND n.owner IS NULL"""
    other = f"""  -- every other value, with all value columns
      SELECT st.statement_id, st.subject, st.pid AS property, {rank} AS rank, v.snaktype, {vcols}
      FROM _cg_st st JOIN _cg_val v ON v.owner = st.node AND v.role = 'S'
      LEFT JOIN {ranks}
      UNION ALL
      SELECT {truthy_id} AS statement_id, {ent_owner} AS subject, v.pid AS property, 'normal' AS rank,
             v.snaktype, {vcols}
      FROM _cg_values v
      WHERE v.role = 'T' AND regexp_full_match(coalesce({ent_owner}, ''), '{ENTITY_PATTERN}')
        AND NOT EXISTS (SELECT 1 FROM _cg_st st WHERE st.subject = {ent_owner} AND st.pid = v.pid)"""
    counts = {"statements": _statements(store, plain, other, source_id, chunk=chunk)}
    counts["qualifiers"] = _hashed(store, "qualifiers", f"""
      SELECT st.statement_id, v.pid AS property, v.snaktype, {vcols}
      FROM _cg_values v JOIN _cg_st st ON st.node = v.owner WHERE v.role = 'Q'""", chunk=chunk)
    _hashed(store, "reference_snaks", f"""
      SELECT st.statement_id, {local_name('d.o', REF)} AS reference_hash, v.pid AS property, v.snaktype,
             {vcols}
      FROM (SELECT s, o FROM {main} WHERE k = 'derived') d
      JOIN _cg_st st ON st.node = d.s JOIN _cg_values v ON v.owner = d.o AND v.role = 'R'""", chunk=chunk)
    counts["references"] = sql_int(con, f"""
      SELECT count(*) FROM (SELECT DISTINCT d.s, d.o FROM {main} d JOIN _cg_st st ON st.node = d.s
      WHERE d.k = 'derived')""")
    return counts


def _statements(store: Store, plain: str, other: str, source_id: str, *, chunk: bool = False) -> int:
    """Insert the statements of the queries ``plain`` and then ``other`` (a key in both: the
    first is kept) with their source; return how many distinct statements they gave.

    Into a store without statements (a new one, the usual case) the rows go straight in,
    and their keys are checked in the table afterwards: that costs what the check on the
    queries did, and the rows are not copied into a table of their own first. A file that
    repeats a statement then takes the general path instead, as a load into a store with
    statements does: both queries into tables, their keys checked, and the rows inserted
    past those already there."""
    con = store.con
    if chunk:  # a chunk of a dump: its keys are checked when the dump ends (see rdf_chunks)
        store.insert_select("statements", f"SELECT * FROM ({plain})", unique=True, check=False)
        store.insert_select("statements", f"SELECT * FROM ({other})", unique=True, check=False)
        con.execute("DROP TABLE _cg_nodes")
        return 0
    had_statements = store.statement_count() > 0
    if not had_statements:
        store.insert_select("statements", f"SELECT * FROM ({plain})", unique=True, check=False)
        store.insert_select("statements", f"SELECT * FROM ({other})", unique=True, check=False)
        counted = store.source_new_statements(source_id)  # None: a statement twice in the file
        if counted is not None:
            con.execute("DROP TABLE _cg_nodes")
            return counted
    con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_statements AS {plain}")
    con.execute("DROP TABLE _cg_nodes")  # intermediate tables go as soon as they are used: peak memory
    con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_statements_v AS {other}")
    both = ("(SELECT statement_id, subject FROM _cg_statements "
            "UNION ALL SELECT statement_id, subject FROM _cg_statements_v)")
    unique = not repeats(con, both, "statement_id")  # then the fast insert path applies
    distinct = sql_int(con, f"SELECT {'count(*)' if unique else 'count(DISTINCT statement_id)'} FROM {both}")
    for part in ("_cg_statements", "_cg_statements_v"):  # a key in both: the first is kept
        store.insert_select("statements", f"SELECT * FROM {part}", unique=unique)
    store.insert_select("statement_sources",
                        f"SELECT statement_id, '{source_id}' AS source_id FROM {both}", unique=unique)
    # A truthy placeholder of an earlier, interrupted load goes once the full statement is
    # here, and one made now goes if the store already had the full statement. A store that
    # had no statement has neither: a placeholder is made only without a full statement in
    # the file.
    if had_statements:
        store.retire_truthy(f"SELECT DISTINCT subject FROM {both}")
    con.execute("DROP TABLE _cg_statements")
    con.execute("DROP TABLE _cg_statements_v")
    return int(distinct)


#: snak rows hashed in Python at a time (:func:`_hashed`): its memory does not grow with the dump
HASH_BATCH = 100_000
#: rows of a batch whose values are Python objects at once, while their hashes are computed
#: (:func:`_snak_hashes`): a whole batch's were 40-60 MB for a moment, the peak of a 10x
#: synthetic wikipeople dump's chunk builds (174 MB against 115 for the dump itself)
HASH_SLICE = 4096


def _hashed(store: Store, table: str, select: str, *, chunk: bool = False) -> int:
    """Insert snak rows after adding their content hash (computed exactly as the JSON loader
    does), :data:`HASH_BATCH` rows at a time; return how many rows the query gave. ``chunk``
    (a chunk of a dump, whose statements no other chunk has): the hashed rows are gathered
    and go in at once, their keys checked among themselves only."""
    con = store.con
    # numbered rows (a streaming window), so each slice is read by its zone maps
    con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_hash AS SELECT row_number() OVER () AS _n, * "
                f"FROM ({select})")
    total = sql_int(con, "SELECT count(*) FROM _cg_hash")
    if chunk:
        con.execute(f"CREATE OR REPLACE TEMP TABLE _cg_hashed_all AS SELECT * FROM {table} LIMIT 0")
    for first in range(0, total, HASH_BATCH):
        tbl = con.sql(f"SELECT * EXCLUDE (_n) FROM _cg_hash WHERE _n > {first} AND _n <= {first + HASH_BATCH}"
                      ).to_arrow_table()
        tbl = tbl.append_column("snak_hash", _snak_hashes(tbl))
        con.register("_cg_hashed", tbl)
        try:
            if chunk:
                con.execute("INSERT INTO _cg_hashed_all BY NAME SELECT * FROM _cg_hashed")
            else:
                store.insert_select(table, "SELECT * FROM _cg_hashed")
        finally:
            con.unregister("_cg_hashed")
    con.execute("DROP TABLE _cg_hash")
    if chunk:
        store.insert_select(table, "SELECT * FROM _cg_hashed_all", check=False)
        con.execute("DROP TABLE _cg_hashed_all")
    return total


def _snak_hashes(rows: pa.Table) -> pa.ChunkedArray:
    """The content hash of each snak row (``property``, ``snaktype`` and the value columns),
    :data:`HASH_SLICE` rows' values in Python at a time."""
    parts = []
    for at in range(0, rows.num_rows, HASH_SLICE):
        part = rows.slice(at, HASH_SLICE)
        props, types = part["property"].to_pylist(), part["snaktype"].to_pylist()
        values = [part[c].to_pylist() for c in VALUE_COLUMNS]
        hashes = [snak_hash_columns(p, st, row) for p, st, row in zip(props, types, zip(*values))]
        parts.append(pa.array(hashes, pa.string()))
    return pa.chunked_array(parts, pa.string())


def _validate_ids(store: Store, t: str, guard: LineGuard) -> int | None:
    """Check entity and statement ids of the staged claims; return the first bad line when not
    skipping (the caller stops there), else drop bad triples and count them."""
    # the valid ones are staged as ids (see NODE_PREFIX); the others are shown as they were
    entity = f"regexp_full_match(s, '{ENTITY_PATTERN}')"
    statement = f"regexp_full_match(o, '{STATEMENT_ID_PATTERN}')"
    rows = store.con.execute(f"""
      SELECT line, CASE WHEN {entity} THEN '<{ENT}' || s || '>' ELSE s END,
             CASE WHEN {statement} THEN regexp_replace(o, '\\$', '-') || '>' ELSE o END FROM {t}
      WHERE k = 'claim' AND NOT ({entity} AND {statement})
      ORDER BY line LIMIT 1000""").fetchall()
    if not rows:
        return None
    if not guard.skip:
        return int(rows[0][0])
    for line, s, o in rows:
        guard.bad(int(line), f"subject {s} or statement {o} is not a Wikidata entity / statement IRI")
    delete_staged(store.con, t, "line IN (SELECT UNNEST(?))", [[int(r[0]) for r in rows]])
    return None


def load_rdf(path: str | Path, store: Store, *, fmt: Format = "nt", skip_bad_lines: bool = False,
             progress: Progress | None = None) -> FileReport:
    """Load one N-Triples (``fmt="nt"``) or Turtle (``fmt="ttl"``) file into ``store``.

    An N-Triples file that stages more than :data:`~.rdf_chunks.CHUNK_ROWS` rows into a
    store file without statements is built a chunk at a time (:mod:`~.rdf_chunks`); should it
    not be in a dump's order, it is loaded again whole."""
    started = time.perf_counter()
    location = str(Path(path).resolve())
    chunked = fmt == "nt" and rdf_chunks.chunkable(store)
    source_id: str | None = None  # one source, kept if the file is loaded again whole
    while True:
        stream, counter = open_dump(path, fmt)  # a file that is no dump is refused here, before any write
        source_id = source_id or store.add_source("rdf-dump", location, dump_date=dump_date(path))
        try:
            totals, guard = _load_file(stream, counter, path, store, fmt, skip_bad_lines, progress, source_id,
                                       chunked)
            break
        except rdf_chunks.NotInDumpOrder:
            rdf_chunks.undo(store)
            chunked = False
    return FileReport(path=str(path), format=fmt, bad_lines=guard.count,
                      bad_line_examples=tuple(guard.examples), seconds=time.perf_counter() - started,
                      **totals)


def _load_file(stream: IO[bytes], counter: RawCounter, path: str | Path, store: Store, fmt: Format,
               skip_bad_lines: bool, progress: Progress | None, source_id: str,
               chunked: bool) -> tuple[dict[str, int], LineGuard]:
    """Stage and build one file, opened as ``stream`` (closed here), under ``source_id`` (see
    :func:`load_rdf`); return the counts and the bad lines."""
    guard = LineGuard(str(path), skip=skip_bad_lines)
    table = "_cg_triples"
    totals = {"entities": 0, "properties": 0, "statements": 0, "qualifiers": 0, "references": 0}
    # a store file: DuckDB spills beyond a fixed budget (an in-memory store cannot); the
    # staged Arrow tables come and go on several threads (see system_arrow_memory); and its
    # checkpoints leave the load's row groups as written, as a JSON load's do (VACUUM_TASKS)
    unvacuumed = {"max_vacuum_tasks": VACUUM_TASKS} if store.path is not None else {}
    threads = setting(store.con, "threads")
    # store.con is read anew at each use (store.live_con): a chunked load reopens the store
    with stream, store.memory_budget() as budget, system_arrow_memory(), \
            held_settings(store.live_con, {**unvacuumed, "threads": threads}):

        def staging() -> None:
            budget.hold(DEFAULT_STAGING_MEMORY_MB)  # appends spill as they go
            store.con.execute(f"SET threads = {STAGING_DUCKDB_THREADS}")

        def building() -> None:
            budget.hold(DEFAULT_LOAD_MEMORY_MB)  # joins and aggregates need room to spill well
            store.con.execute(f"SET threads = {threads}")

        def ending() -> None:
            budget.hold(DEFAULT_LOAD_END_MEMORY_MB)  # scans of the whole dump, in parts

        create_staging(store.con, table)
        staging()
        chunks = rdf_chunks.ChunkedBuild(
            store, table, source_id, building=building, staging=staging, ending=ending,
            temps=_TEMPS, views=_TEMP_VIEWS, entities=rdf_entities.load_entities,
            build_statements=lambda s, t: _build_statements(s, t, source_id, claims_as_ids=True, chunk=True),
        ) if chunked else None

        def build() -> None:
            if chunks is not None and chunks.chunks:  # the last chunk, then the entities
                totals.update(chunks.finish())
                return
            building()
            with store.transaction():
                totals.update(_build(store, table, source_id, claims_as_ids=fmt == "nt"))
            rdf_entities.write_entities(store)  # then the items, a transaction per chunk

        def tick() -> None:
            loaded_bytes(progress, str(path), counter.position(), counter.size)

        def stage_and_build() -> None:
            try:
                if fmt == "ttl":
                    stage_turtle(stream, store.live_con, table, guard, build, tick)
                else:
                    stage_ntriples(stream, store.live_con, table, guard, build, tick,
                                   chunk_rows=rdf_chunks.CHUNK_ROWS,
                                   chunk=None if chunks is None else chunks.chunk,
                                   read_fraction=counter.fraction)
            except ReadError as exc:
                build()
                raise BadDumpLine(str(path), exc.line, f"the file cannot be read past here ({exc.cause})",
                                  "the file is truncated or corrupt: download it again; everything "
                                  "before this line is loaded") from exc
            # N-Triples checks these ids while staging, block by block
            stop = _validate_ids(store, table, guard) if fmt == "ttl" else None
            if stop is not None:
                delete_staged(store.con, table, "line >= ?", [stop])
                guard.bad(stop, "the subject or statement IRI is not a Wikidata entity / statement id (in "
                          "Turtle the number counts triples, not lines)", build)
            build()

        try:
            try:
                stage_and_build()
            finally:
                _drop_scratch(store.con, table, chunked)
            if unvacuumed:  # what waits in DuckDB's log, checkpointed now, under the load's settings
                store.con.execute("CHECKPOINT")
            tick()
        except duckdb.Error as exc:
            raise StoreError(f"cannot load {path} into store {store.path or ':memory:'}: "
                             f"{duckdb_problem(exc)}") from exc
        # What DuckDB keeps of the row groups the file wrote goes with it (see Store.reconnect):
        # the parts of a dump loaded one after another (four 10x synthetic dumps: peaks of 140,
        # 150, 159 and 159 MB, against 142, 156, 159 and 165 without). Still under the load's
        # budget and settings: detaching checkpoints what the log holds, and outside them that
        # checkpoint now and then peaked above the whole load (10x codex-m: 143 MB against 128).
        store.reconnect()
    return totals, guard


def _drop_scratch(con: duckdb.DuckDBPyConnection, table: str, chunked: bool) -> None:
    """Drop what a load of one file staged and built from (its staging tables, temporary
    views and tables, and a chunked load's tables in the store file), once it is built or
    has failed: before the checkpoint that ends it, so the drops are checkpointed with it."""
    drop_staging(con, table)
    for view in _TEMP_VIEWS:
        con.execute(f"DROP VIEW IF EXISTS {view}")
    for tmp in _TEMPS:
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
    if chunked:
        rdf_chunks.drop_load_tables(con)
