"""The store's tables: DDL, columns, keys (what :class:`chaingraph.store.Store` creates).

Tables (created on open; every write keeps the rows whose key is already there, or upserts,
so loading the same input twice changes nothing):

==================  =====================================================================
``sources``         where facts came from: kind (``json-dump``, ``rdf-dump``, ``sparql``,
                    ``fixture``), file or endpoint URL, query file and hash, retrieval time,
                    dump date / revision
``entities``        items: label (English, else ``mul``), description, aliases, sitelink
                    count when known, revision
``properties``      properties: label, description, aliases, datatype (JSON spelling)
``statements``      one row per statement: id (JSON form ``Q42$GUID``), subject, property,
                    rank, snaktype (``value``/``somevalue``/``novalue``) and the value
                    columns of :data:`chaingraph.values.VALUE_COLUMNS` (``object`` holds the
                    id of an item value)
``qualifiers``      statement id, property, snak hash, snaktype, value columns
``reference_snaks`` statement id, reference hash, property, snak hash, snaktype, value columns
``statement_sources`` which source(s) delivered each statement (provenance)
``responses``       SPARQL response cache, keyed by query hash
``crawl_runs``      one row per collection run (``chaingraph.collect``): source, seeds,
                    parameters; ``finished_at`` stays empty until the run completes
``crawl_entities``  per run, entities whose expansion / description is committed
``crawl_neighbours`` per run and expanded entity, the kept neighbours in order and which
                    the selector picked (so an interrupted run resumes where it stopped)
``neighbour_lists`` per endpoint, traversal policy and item: its step edges as an
                    endpoint told them (JSON), so a whole-endpoint certificate asks once
==================  =====================================================================

and the view ``entity_classes(id, class)``: non-deprecated ``P31`` values.

The statement tables (:data:`INDEXLESS`) have no primary-key index: their keys
(:data:`KEYS`) are kept by :class:`~chaingraph.store.Store`'s writes, one anti-join of each
batch against the table (or, in a dump load that can show no key of a batch can be
there yet, none: :mod:`chaingraph.store_load`), so a dump load neither updates an index per row nor
holds one that grows with the store. Stores written before keep their indexes (:data:`KEYED_SCHEMA`);
every write works on both.

Only the store modules (:mod:`chaingraph.store`, :mod:`chaingraph.store_reads`,
:mod:`chaingraph.store_state`) write SQL naming these tables (``tests/test_store_sql.py``
checks it); everything else calls :class:`~chaingraph.store.Store` methods.

>>> TABLES[:4]
('sources', 'entities', 'properties', 'statements')
>>> "entity_classes" in TABLES
True
"""

from __future__ import annotations

import re

import pyarrow as pa

from chaingraph.values import VALUE_COLUMNS

__all__ = ["ARROW_TYPES", "INDEXLESS", "KEYED_SCHEMA", "KEYS", "RANKS", "SCHEMA", "SOURCE_COLUMNS", "TABLES",
           "TABLE_COLUMNS", "TRAVERSABLE_RANKS", "UPSERT"]

RANKS = ("preferred", "normal", "deprecated")
TRAVERSABLE_RANKS = ("preferred", "normal")

_VALUE_DDL = """
    value_type VARCHAR, object VARCHAR, text VARCHAR, lang VARCHAR,
    time VARCHAR, precision TINYINT, calendar VARCHAR, timezone INTEGER,
    before INTEGER, after INTEGER,
    amount VARCHAR, unit VARCHAR, upper VARCHAR, lower VARCHAR,
    lat DOUBLE, lon DOUBLE, coord_precision DOUBLE, globe VARCHAR"""


_VC = list(VALUE_COLUMNS)
#: the columns of a ``sources`` row, in order (rows are made by :meth:`~chaingraph.store.Store.add_source`)
SOURCE_COLUMNS = ("source_id", "kind", "location", "query_file", "query_hash", "retrieved_at",
                  "dump_date", "revision")
#: the columns of each writable table, in order (what :class:`~chaingraph.store.Batch` rows
#: and :meth:`~chaingraph.store.Store.insert_select` queries provide)
TABLE_COLUMNS: dict[str, list[str]] = {
    "entities": ["id", "label", "label_lang", "description", "aliases", "sitelinks", "revision", "modified"],
    "properties": ["id", "label", "label_lang", "description", "aliases", "datatype"],
    "statements": ["statement_id", "subject", "property", "rank", "snaktype", *_VC],
    "qualifiers": ["statement_id", "property", "snak_hash", "snaktype", *_VC],
    "reference_snaks": ["statement_id", "reference_hash", "property", "snak_hash", "snaktype", *_VC],
    "statement_sources": ["statement_id", "source_id"],
}
#: Arrow types of the non-VARCHAR columns (every other column is a string)
ARROW_TYPES: dict[str, pa.DataType] = {
    "aliases": pa.list_(pa.string()), "sitelinks": pa.int32(), "revision": pa.int64(),
    "precision": pa.int8(), "timezone": pa.int32(), "before": pa.int32(), "after": pa.int32(),
    "lat": pa.float64(), "lon": pa.float64(), "coord_precision": pa.float64(),
}
#: the primary key of each writable table
KEYS: dict[str, tuple[str, ...]] = {
    "entities": ("id",), "properties": ("id",), "statements": ("statement_id",),
    "qualifiers": ("statement_id", "property", "snak_hash"),
    "reference_snaks": ("statement_id", "reference_hash", "property", "snak_hash"),
    "statement_sources": ("statement_id", "source_id"),
}


def _schema(keyed: bool) -> str:
    """The DDL; ``keyed`` gives the fact tables the primary keys they had before
    :data:`INDEXLESS` (each write then also keeps an in-memory index per table)."""
    def pk(table: str, inline: bool = False) -> str:
        if not keyed:
            return " NOT NULL" if inline else ""
        return " PRIMARY KEY" if inline else f", PRIMARY KEY ({', '.join(KEYS[table])})"

    return f"""
CREATE TABLE IF NOT EXISTS sources (
    source_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, location VARCHAR NOT NULL,
    query_file VARCHAR, query_hash VARCHAR, retrieved_at TIMESTAMPTZ,
    dump_date VARCHAR, revision VARCHAR);
CREATE TABLE IF NOT EXISTS entities (
    id VARCHAR PRIMARY KEY, label VARCHAR, label_lang VARCHAR, description VARCHAR,
    aliases VARCHAR[], sitelinks INTEGER, revision BIGINT, modified VARCHAR);
CREATE TABLE IF NOT EXISTS properties (
    id VARCHAR PRIMARY KEY, label VARCHAR, label_lang VARCHAR, description VARCHAR,
    aliases VARCHAR[], datatype VARCHAR);
CREATE TABLE IF NOT EXISTS statements (
    statement_id VARCHAR{pk("statements", inline=True)}, subject VARCHAR NOT NULL, property VARCHAR NOT NULL,
    rank VARCHAR NOT NULL, snaktype VARCHAR NOT NULL, {_VALUE_DDL});
CREATE TABLE IF NOT EXISTS qualifiers (
    statement_id VARCHAR NOT NULL, property VARCHAR NOT NULL, snak_hash VARCHAR NOT NULL,
    snaktype VARCHAR NOT NULL, {_VALUE_DDL}{pk("qualifiers")});
CREATE TABLE IF NOT EXISTS reference_snaks (
    statement_id VARCHAR NOT NULL, reference_hash VARCHAR NOT NULL, property VARCHAR NOT NULL,
    snak_hash VARCHAR NOT NULL, snaktype VARCHAR NOT NULL, {_VALUE_DDL}{pk("reference_snaks")});
CREATE TABLE IF NOT EXISTS statement_sources (
    statement_id VARCHAR NOT NULL, source_id VARCHAR NOT NULL{pk("statement_sources")});
CREATE TABLE IF NOT EXISTS responses (
    query_hash VARCHAR PRIMARY KEY, endpoint VARCHAR NOT NULL, query_file VARCHAR,
    query_text VARCHAR NOT NULL, body VARCHAR NOT NULL, retrieved_at TIMESTAMPTZ NOT NULL);
CREATE TABLE IF NOT EXISTS crawl_runs (
    run_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, seeds VARCHAR[] NOT NULL,
    params VARCHAR NOT NULL, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ);
CREATE TABLE IF NOT EXISTS crawl_entities (
    run_id VARCHAR NOT NULL, entity VARCHAR NOT NULL, stage VARCHAR NOT NULL, depth INTEGER,
    done_at TIMESTAMPTZ, PRIMARY KEY (run_id, entity, stage));
CREATE TABLE IF NOT EXISTS crawl_neighbours (
    run_id VARCHAR NOT NULL, entity VARCHAR NOT NULL, position INTEGER NOT NULL,
    neighbour VARCHAR NOT NULL, property VARCHAR NOT NULL, statement_id VARCHAR NOT NULL,
    forward BOOLEAN NOT NULL, selected BOOLEAN NOT NULL, PRIMARY KEY (run_id, entity, position));
CREATE TABLE IF NOT EXISTS neighbour_lists (
    endpoint VARCHAR NOT NULL, policy VARCHAR NOT NULL, node VARCHAR NOT NULL,
    payload VARCHAR NOT NULL, retrieved_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (endpoint, policy, node));
CREATE OR REPLACE VIEW entity_classes AS
    SELECT subject AS id, object AS class FROM statements
    WHERE property = 'P31' AND rank <> 'deprecated' AND value_type = 'item';
"""

#: the fact tables whose key the writes enforce set-based (an anti-join per write) rather
#: than through a primary-key index: DuckDB keeps such an index in memory and updates it
#: per row, which cost most of a dump load and made its memory grow with the dump
INDEXLESS = ("statements", "qualifiers", "reference_snaks", "statement_sources")
SCHEMA = _schema(keyed=False)
#: the schema as stores written before :data:`INDEXLESS` have it (primary keys on every
#: fact table); every write works on both, and such a store is opened as it is
KEYED_SCHEMA = _schema(keyed=True)

#: every table and view the schema creates, in creation order
TABLES: tuple[str, ...] = tuple(re.findall(r"CREATE (?:TABLE IF NOT EXISTS|OR REPLACE VIEW) (\w+)", SCHEMA))

#: entities and properties are upserted: a later source may know a label an earlier lacked
UPSERT: dict[str, str] = {
    "entities": "label = COALESCE(excluded.label, entities.label), "
                "label_lang = COALESCE(excluded.label_lang, entities.label_lang), "
                "description = COALESCE(excluded.description, entities.description), "
                "aliases = COALESCE(excluded.aliases, entities.aliases), "
                "sitelinks = COALESCE(excluded.sitelinks, entities.sitelinks), "
                "revision = COALESCE(excluded.revision, entities.revision), "
                "modified = COALESCE(excluded.modified, entities.modified)",
    "properties": "label = COALESCE(excluded.label, properties.label), "
                  "label_lang = COALESCE(excluded.label_lang, properties.label_lang), "
                  "description = COALESCE(excluded.description, properties.description), "
                  "aliases = COALESCE(excluded.aliases, properties.aliases), "
                  "datatype = COALESCE(excluded.datatype, properties.datatype)",
}
