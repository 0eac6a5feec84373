"""The entities of an RDF load, built in SQL from the staged terms: labels, descriptions and
aliases in English (else ``mul``), sitelinks, revision, modification time and property
datatypes, one row per entity (:func:`gather_entities`), then written in id order
(:func:`write_entities`): properties as they are gathered, items :data:`ENTITY_CHUNK` a
transaction. A dump built in chunks (:mod:`~chaingraph.sources.loaders.rdf_chunks`) gathers
and writes them a range of ids at a time (:func:`load_entities`), so that what DuckDB keeps
of the temporary tables does not grow with the dump.
"""

from __future__ import annotations

import itertools

import duckdb
import pyarrow as pa

from chaingraph.ids import ENTITY_PATTERN
from chaingraph.sources.loaders.common import sql_int, sql_script
from chaingraph.sources.loaders.rdf_terms import (
    DATA,
    ENTITY_LOCAL,
    TERM_LANG,
    TERM_TEXT,
    datatype_from_rdf,
    lexical_form,
    local_name,
)
from chaingraph.store import Store
from chaingraph.store_file import sql_string
from chaingraph.store_load import checkpointed_commits
from chaingraph.store_memory import passes

__all__ = ["ALIAS_ROWS_PER_PASS", "ENTITIES_PER_PASS", "ENTITY_BOUND_SAMPLE", "ENTITY_CHUNK",
           "entity_ranges", "gather_entities", "load_entities", "write_entities"]

#: items upserted per transaction at the end of an RDF file's build (:func:`write_entities`)
ENTITY_CHUNK = 100_000
#: entities gathered and written per pass at the end of a chunked dump's build
#: (:func:`load_entities`). DuckDB keeps a record of every segment of the temporary tables
#: a pass gathers into, outside its buffers and its budget, so gathering a whole dump's
#: entities at once held memory that grew with them: what the step allocated and held at its
#: peak, outside DuckDB's buffers (memray), was 9.6 MB at 80x codex-m (1.4 M items) in one
#: pass, 6.8 in passes (3.8 at 10x, one pass; 5.8 at 40x), in 9.2-9.4 s against 9.7. In one
#: pass it grew ~6 MB a million items from 40x (5.2 MB) to 80x: ~0.6 GB for Wikidata's ~100 M
ENTITIES_PER_PASS = 200_000
#: subjects sampled to draw the passes' id bounds from
ENTITY_BOUND_SAMPLE = 20_000
#: the ids of a pass, ``lo <= id < hi``; ``None``: unbounded
IdRange = tuple[str | None, str | None]

#: 2^62: a term's sort key is its line, plus this when it is not in English (see gather_entities)
_MUL_BIT = 1 << 62


def load_entities(store: Store, t: str) -> dict[str, int]:
    """Gather and write the entities of a chunked dump (:mod:`~.rdf_chunks`), a range of ids
    at a time (:func:`entity_ranges`); each range's are written before the next is gathered,
    and in id order, as the ranges are. Each pass starts on the store file attached again, so
    what DuckDB kept of the row groups written before (the dump's statement sources, the last
    pass's items) is let go: at 80x codex-m the C heap in use at the first pass's start was
    23 MB, 32 without (21 at 10x)."""
    counts = {"entities": 0, "properties": 0}
    for ids in entity_ranges(store, ENTITIES_PER_PASS):
        store.reconnect()
        with store.transaction():
            for kind, n in gather_entities(store, t, ids).items():
                counts[kind] += n
        write_entities(store)
    return counts


def entity_ranges(store: Store, per_pass: int) -> list[IdRange]:
    """Ranges of ids that split the subjects of ``_cg_st`` into parts of about ``per_pass``
    entities, their bounds drawn from a sample of them. Every id is in one range, whatever the
    sample (the first and last are open): the bounds decide how many entities a pass takes,
    never which are loaded.

    >>> from chaingraph.store import Store
    >>> with Store(None) as store:
    ...     _ = store.con.execute("CREATE TEMP VIEW _cg_st AS SELECT 'Q' || range AS subject "
    ...                           "FROM range(1000)")
    ...     ranges = entity_ranges(store, per_pass=400)
    >>> len(ranges), ranges[0][0], ranges[-1][1]
    (3, None, None)
    >>> all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    True
    """
    con = store.con
    entities = sql_int(con, "SELECT approx_count_distinct(subject) FROM _cg_st")
    parts = passes(entities, per_pass)
    if parts <= 1:
        return [(None, None)]
    sample = sorted(str(r[0]) for r in con.execute(
        f"SELECT subject FROM _cg_st USING SAMPLE reservoir({ENTITY_BOUND_SAMPLE} ROWS) REPEATABLE (1)"
    ).fetchall())
    bounds = sorted({sample[len(sample) * i // parts] for i in range(1, parts)})
    edges: list[str | None] = [None, *bounds, None]
    return list(itertools.pairwise(edges))


def _in_range(expr: str, ids: IdRange) -> str:
    """SQL: is ``expr`` in ``ids``? (``TRUE`` for the whole range)."""
    lo, hi = (None if b is None else sql_string(b) for b in ids)
    terms = [*([f"{expr} >= {lo}"] if lo else []), *([f"{expr} < {hi}"] if hi else [])]
    return " AND ".join(terms) or "TRUE"


def gather_entities(store: Store, t: str, ids: IdRange = (None, None)) -> dict[str, int]:
    """Gather the entities whose ids are in ``ids`` (all by default) into ``_cg_ent``, in id
    order, and insert their properties; return how many items and properties there are."""
    owner = f"coalesce({ENTITY_LOCAL.format(c='s')}, {local_name('s', DATA)})"
    terms = f"{t}_terms"  # every kind read here is staged there (wdt: in its own table)
    lex = lexical_form("o")
    # each source's rows of entities outside the range are left out where they are read
    mine, subject, about = (_in_range(e, ids) for e in (owner, "subject", ENTITY_LOCAL.format(c="o")))
    # one step at a time, each a single aggregate or join, which spills beyond the build's
    # memory budget: as one query of five joins and aggregates, the step ran out of memory
    # on a dump twice the size of one that fitted in the same budget
    sql_script(store.con, f"""
    CREATE OR REPLACE TEMP TABLE _cg_terms AS  -- terms in English or mul (see TERM_LANG)
      SELECT {owner} AS id, k, {TERM_LANG} AS lang, {TERM_TEXT} AS text, line FROM {terms}
      WHERE k IN ('label', 'description', 'alias') AND (ends_with(o, '"@en') OR ends_with(o, '"@mul'))
        AND {mine};
    """)
    _aliases(store.con)
    sql_script(store.con, f"""
    CREATE OR REPLACE TEMP TABLE _cg_facts AS  -- one row per entity, terms as the line of the one kept
      WITH facts AS (  -- what tells of an entity, a row each: 'id' rows name the entities
        SELECT subject AS id, 'id' AS k, NULL::VARCHAR AS lang, NULL::VARCHAR AS text,
               NULL::BIGINT AS line, NULL::BIGINT AS n
        FROM _cg_st WHERE {subject}  -- the subjects of claims
        UNION ALL
        SELECT {owner}, 'id', NULL, NULL, NULL, NULL
        FROM (SELECT s, k FROM {terms} UNION ALL SELECT s, k FROM {t}_wdt)
        WHERE k IN ('label', 'description', 'alias', 'seen', 'wdt', 'sitelinks', 'version',
                    'modified', 'ptype') AND {mine}
        UNION ALL
        SELECT id, k, lang, text, line, NULL FROM _cg_terms WHERE k IN ('label', 'description')
        UNION ALL
        SELECT {owner}, k, NULL, NULL, NULL, TRY_CAST({lex} AS BIGINT) FROM {terms}
        WHERE k IN ('sitelinks', 'version') AND {mine}
        UNION ALL  -- sitelinks counted from the articles about the entity, where no count is given
        SELECT {ENTITY_LOCAL.format(c='o')}, 'about', NULL, NULL, NULL, NULL FROM {terms}
        WHERE k = 'about' AND {local_name('s', DATA)} IS NULL AND {about})
      -- the English term first, then the earliest: the least of line + (not English) * 2^62
      -- (numbers only: an aggregate that keeps a text for every group, as arg_min or max of a
      -- text does, ran out of memory instead of spilling)
      SELECT f.id,
             min(line + {_MUL_BIT} * (lang <> 'en')::BIGINT) FILTER (WHERE k = 'label') AS label_key,
             min(line + {_MUL_BIT} * (lang <> 'en')::BIGINT) FILTER (WHERE k = 'description')
               AS description_key,
             coalesce(max(n) FILTER (WHERE k = 'sitelinks'),
                      nullif(count(*) FILTER (WHERE k = 'about'), 0))::INTEGER AS sitelinks,
             max(n) FILTER (WHERE k = 'version') AS revision
      FROM facts f GROUP BY f.id
      HAVING bool_or(k = 'id') AND regexp_full_match(coalesce(f.id, ''), '{ENTITY_PATTERN}');
    CREATE OR REPLACE TEMP TABLE _cg_latest AS  -- the greatest modified and property type of each
      -- entity, as max(text) would give them, by a sort (which spills) in place of an aggregate
      SELECT id, k, text FROM (
        SELECT {owner} AS id, k, CASE k WHEN 'ptype' THEN o ELSE {lex} END AS text FROM {terms}
        WHERE k IN ('modified', 'ptype') AND {mine})
      QUALIFY row_number() OVER (PARTITION BY id, k ORDER BY text DESC NULLS LAST) = 1;
    CREATE OR REPLACE TEMP TABLE _cg_named AS  -- the label's text (a line is one triple)
      SELECT f.*, l.text AS label,
             CASE WHEN f.label_key >= {_MUL_BIT} THEN 'mul' WHEN f.label_key >= 0 THEN 'en' END AS label_lang
      FROM _cg_facts f LEFT JOIN _cg_terms l ON l.line = f.label_key % {_MUL_BIT};
    DROP TABLE _cg_facts;  -- each step's input goes once read for the last time (below)
    CREATE OR REPLACE TEMP TABLE _cg_described AS  -- and the description's
      SELECT n.*, d.text AS description
      FROM _cg_named n LEFT JOIN _cg_terms d ON d.line = n.description_key % {_MUL_BIT};
    DROP TABLE _cg_named;
    DROP TABLE _cg_terms;
    CREATE OR REPLACE TEMP TABLE _cg_dated AS  -- and the modified time
      SELECT d.*, m.text AS modified
      FROM _cg_described d LEFT JOIN (SELECT id, text FROM _cg_latest WHERE k = 'modified') m USING (id);
    DROP TABLE _cg_described;
    CREATE OR REPLACE TEMP TABLE _cg_aliased AS  -- and the aliases and property type
      SELECT e.id, e.label, e.label_lang, e.description, a.aliases, e.sitelinks, e.revision, e.modified,
             p.text AS ptype
      FROM _cg_dated e LEFT JOIN _cg_alias a USING (id)
      LEFT JOIN (SELECT id, text FROM _cg_latest WHERE k = 'ptype') p USING (id);  -- properties: few
    DROP TABLE _cg_dated;
    DROP TABLE _cg_alias;
    DROP TABLE _cg_latest;
    CREATE OR REPLACE TEMP TABLE _cg_ent AS SELECT * FROM _cg_aliased ORDER BY id;  -- see write_entities
    DROP TABLE _cg_aliased;
    """)
    ptypes = [r[0] for r in store.con.execute(
        "SELECT DISTINCT ptype FROM _cg_ent WHERE ptype IS NOT NULL").fetchall()]
    mapping = pa.table({"ptype": pa.array(ptypes, pa.string()),
                        "datatype": pa.array([datatype_from_rdf(p) for p in ptypes], pa.string())})
    store.con.register("_cg_ptypes", mapping)
    try:  # an entity a row (grouped by id above): not grouped again
        store.insert_select("properties", "SELECT e.id, label, label_lang, description, aliases, m.datatype "
                            "FROM _cg_ent e LEFT JOIN _cg_ptypes m USING (ptype) WHERE id[1] = 'P'",
                            unique=True)
    finally:
        store.con.unregister("_cg_ptypes")
    items, properties = store.con.execute("SELECT count(*) FILTER (WHERE id[1] = 'Q'), "
                                          "count(*) FILTER (WHERE id[1] = 'P') FROM _cg_ent").fetchall()[0]
    return {"entities": int(items), "properties": int(properties)}


#: alias rows gathered into lists in one pass (:func:`_aliases`): an ordered list aggregate
#: keeps every row of its groups in memory, unspilled (an 80x synthetic dump's 650k alias rows
#: ran out of 64 MiB; its 40x dump's 320k fitted)
ALIAS_ROWS_PER_PASS = 200_000


def _aliases(con: duckdb.DuckDBPyConnection) -> None:
    """``_cg_alias``: each entity's aliases in the first of their languages, in file order, in
    as many passes over ``_cg_terms`` as :data:`ALIAS_ROWS_PER_PASS` asks for, each pass the
    entities of one part of the id hashes."""
    rows = sql_int(con, "SELECT count(*) FROM _cg_terms WHERE k = 'alias'")
    parts = max(1, passes(rows, ALIAS_ROWS_PER_PASS))
    con.execute("CREATE OR REPLACE TEMP TABLE _cg_alias (id VARCHAR, aliases VARCHAR[])")
    for part in range(parts):  # one pass (the usual case): no hash to compute
        alias = f"k = 'alias' AND hash(id) % {parts} = {part}" if parts > 1 else "k = 'alias'"
        con.execute(f"""
          INSERT INTO _cg_alias
          WITH alias_lang AS (SELECT id, min(lang) AS lang FROM _cg_terms WHERE {alias} GROUP BY id)
          SELECT id, list(a.text ORDER BY a.line) FROM _cg_terms a
          JOIN alias_lang l USING (id, lang) WHERE {alias} GROUP BY id""")


def write_entities(store: Store) -> None:
    """Upsert the items :func:`gather_entities` gathered, :data:`ENTITY_CHUNK` a transaction, in id
    order. The entity table's primary-key index must be in memory where an upsert looks a
    key up or adds one, and the part a transaction added stays there until it commits and
    is checkpointed (DuckDB checkpoints a commit past its WAL threshold); ids in a random
    order reach every part of the index in every chunk, so its memory grew with the items
    written (a 40x synthetic dump's 700k items: 6, 10, 14 ... 29 MB a chunk, out of a budget
    of 80 MiB at the seventh), while ids in order reach the part they are added to (6-14 MB
    a chunk, flat). Into a store file each chunk's commit is checkpointed
    (:func:`~chaingraph.store_load.checkpointed_commits`), so the part of the index it added
    is written out and let go of: unwritten, the index stayed whole in memory and grew with
    the items (33 MB at 1.1 M ids in plain DuckDB), and a 40x dump ran out of a 64 MiB budget
    in this step (an in-memory store keeps the index anyway, and checkpoints there took ~0.1 s
    of codex-m's 1.3 s load)."""
    rows = sql_int(store.con, "SELECT count(*) FROM _cg_ent")
    select = ("SELECT id, label, label_lang, description, aliases, sitelinks, revision, modified "
              "FROM _cg_ent WHERE id[1] = 'Q' AND rowid >= ? AND rowid < ?")
    with checkpointed_commits(store):
        for start in range(0, rows, ENTITY_CHUNK):
            # a dump's items are new: plainly inserted, unless the store holds one (insert_select)
            store.insert_select("entities", select, params=[start, start + ENTITY_CHUNK], unique=True)
