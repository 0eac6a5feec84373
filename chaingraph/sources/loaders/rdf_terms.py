"""How the RDF loader reads terms: the Wikidata namespaces, the SQL that takes a staged
N-Triples term apart (an IRI's local name, a literal's lexical form and language), and the
SQL that turns a snak's term or value node into the store's value columns
(:func:`value_sql`, :func:`plain_values`), with the DuckDB functions it calls
(:func:`register_functions`). :mod:`~chaingraph.sources.loaders.rdf` builds the statement
model with them.

>>> local_name("o", ENT)
"CASE WHEN starts_with(o, '<http://www.wikidata.org/entity/') AND ends_with(o, '>') THEN o[33:-2] END"
"""

from __future__ import annotations

import contextlib
import re

import duckdb
import pyarrow as pa

from chaingraph.errors import ChaingraphError
from chaingraph.ids import VALUE_ENTITY_PATTERN
from chaingraph.sources.loaders.common import coordinate_digits
from chaingraph.values import VALUE_COLUMNS, TimeValue

__all__ = ["DATA", "ENT", "ENTITY_LOCAL", "NODE_LOCAL", "NOVALUE", "PLAIN_ENTITY", "REF", "STAGED_TERM",
           "STMT", "TERM_LANG", "TERM_TEXT", "VALUE_NODE_KINDS", "WB", "WD_ENTITY", "XSD",
           "datatype_from_rdf", "lexical_form", "local_name", "plain_values", "register_functions",
           "unescape_literal", "value_sql"]

ENT = WD_ENTITY = "http://www.wikidata.org/entity/"
STMT = "http://www.wikidata.org/entity/statement/"
REF = "http://www.wikidata.org/reference/"
DATA = "https://www.wikidata.org/wiki/Special:EntityData/"
NOVALUE = "http://www.wikidata.org/prop/novalue/"
WB = "http://wikiba.se/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"

_DATATYPES = {"WikibaseItem": "wikibase-item", "WikibaseProperty": "wikibase-property",
              "WikibaseLexeme": "wikibase-lexeme", "WikibaseForm": "wikibase-form",
              "WikibaseSense": "wikibase-sense", "ExternalId": "external-id", "Quantity": "quantity",
              "Time": "time", "String": "string", "Monolingualtext": "monolingualtext",
              "GlobeCoordinate": "globe-coordinate", "Globecoordinate": "globe-coordinate",
              "Url": "url", "CommonsMedia": "commonsMedia", "GeoShape": "geo-shape",
              "TabularData": "tabular-data", "Math": "math", "MusicalNotation": "musical-notation",
              "EntitySchema": "entity-schema"}
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def datatype_from_rdf(iri: str) -> str:
    """JSON spelling of a ``wikibase:propertyType`` IRI.

    >>> datatype_from_rdf("http://wikiba.se/ontology#WikibaseItem"), datatype_from_rdf("<http://wikiba.se/ontology#CommonsMedia>")
    ('wikibase-item', 'commonsMedia')
    """
    name = iri.strip("<>").rsplit("#", 1)[-1]
    return _DATATYPES.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def unescape_literal(text: str) -> str:
    r"""Undo N-Triples string escapes.

    >>> unescape_literal(r'Eug\u00E8ne \"Loiseau\"\n')
    'Eugène "Loiseau"\n'
    """
    def repl(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        return _SIMPLE_ESCAPES.get(m.group(3), m.group(0))
    return _ESCAPE.sub(repl, text)


def _time_json(lexical: str | None, precision: int | None, calendar: str | None) -> str | None:
    if lexical is None or precision is None:
        return None
    return TimeValue.from_rdf(lexical, precision=int(precision), calendar=calendar).time


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    def time_udf(lex: pa.Array, prec: pa.Array, cal: pa.Array) -> pa.Array:
        out = []
        for lx, pr, ca in zip(lex.to_pylist(), prec.to_pylist(), cal.to_pylist()):
            try:
                out.append(_time_json(lx, pr, ca))
            except ChaingraphError:
                out.append(None)
        return pa.array(out, pa.string())

    def unescape_udf(text: pa.Array) -> pa.Array:
        return pa.array([None if t is None else unescape_literal(t) for t in text.to_pylist()], pa.string())

    def digits_udf(x: pa.Array) -> pa.Array:
        return pa.array([coordinate_digits(v) for v in x.to_pylist()], pa.float64())

    for name, fn, params, returns in (
            ("_cg_time", time_udf, ["VARCHAR", "INTEGER", "VARCHAR"], "VARCHAR"),
            ("_cg_unescape", unescape_udf, ["VARCHAR"], "VARCHAR"),
            ("_cg_digits", digits_udf, ["DOUBLE"], "DOUBLE")):
        with contextlib.suppress(duckdb.InvalidInputException, duckdb.CatalogException):
            con.remove_function(name)
        con.create_function(name, fn, params, returns, type="arrow",  # type: ignore[call-overload]
                            side_effects=False)


def local_name(col: str, prefix: str) -> str:
    return (f"CASE WHEN starts_with({col}, '<{prefix}') AND ends_with({col}, '>') "
            f"THEN {col}[{len(prefix) + 2}:-2] END")


ENTITY_LOCAL = local_name("{c}", ENT)
#: the local name of a statement node staged without its namespace (``Q42-GUID>``, see ``NODE_PREFIX``);
#: NULL for other terms
NODE_LOCAL = "CASE WHEN NOT starts_with({c}, '<') AND NOT starts_with({c}, '_:') THEN {c}[:-2] END"
#: is the staged term ``{c}`` an N-Triples term as written? (Not an id: see ``NODE_PREFIX``)
STAGED_TERM = "(left({c}, 1) IN ('<', '\"') OR starts_with({c}, '_:'))"
#: ids an entity value may have (items, properties, lexemes and their forms/senses, schemas, media);
#: any other IRI under wd: is kept as a string, never as an entity id
_VALUE_ENTITY = VALUE_ENTITY_PATTERN
#: the language tag of a literal in ``o`` ('' when it has none)
_LANG = "regexp_extract(o, '\"@([A-Za-z0-9-]+)$', 1)"
_LEX = "_cg_unescape(regexp_extract({c}, '^\"(.*)\"', 1))"


#: the language and text (as :func:`lexical_form` reads it) of a staged term in English or ``mul``
#: (``o`` ends with ``"@en`` or ``"@mul``), by string functions: the regular expressions
#: took most of the time of the entities' build
TERM_LANG = "CASE WHEN ends_with(o, '\"@en') THEN 'en' ELSE 'mul' END"
_TERM_BODY = "CASE WHEN ends_with(o, '\"@en') THEN o[2:-5] ELSE o[2:-6] END"  # between the quotes
TERM_TEXT = (f"CASE WHEN NOT starts_with(o, '\"') THEN '' "
              f"WHEN contains(o, '\\') THEN _cg_unescape({_TERM_BODY}) ELSE {_TERM_BODY} END")


def lexical_form(col: str) -> str:
    return (f"CASE WHEN contains({col}, '\\') THEN {_LEX.format(c=col)} "
            f"ELSE regexp_extract({col}, '^\"(.*)\"', 1) END")


def _signed(expr: str) -> str:
    return (f"CASE WHEN {expr} IS NULL THEN NULL WHEN {expr}[1] IN ('+', '-') THEN {expr} "
            f"ELSE '+' || {expr} END")


# precision of a time literal that has no value node: the coarsest its lexical form allows
_INFERRED_PRECISION = ("(CASE WHEN md['d'] NOT IN ('01', '00') THEN 11 "
                       "WHEN md['m'] NOT IN ('01', '00') THEN 10 ELSE 9 END)")


def value_sql() -> str:
    """SELECT over the snaks of ``_cg_snak`` (owner, role, pid, o, vn) that are not plain entity
    values, giving snaktype + the value columns."""
    local_o = ENTITY_LOCAL.format(c="o")
    eid = f"CASE WHEN regexp_full_match({local_o}, '{_VALUE_ENTITY}') THEN {local_o} END"
    lex = lexical_form("o")
    dt = "regexp_extract(o, '\\^\\^<([^>]*)>$', 1)"
    wkt = (f"regexp_extract({lex}, '^(?:<([^>]*)> )?Point\\(([-+0-9.eE]+) ([-+0-9.eE]+)\\)$', "
           "['globe', 'lon', 'lat'])")
    md = "regexp_extract(o, '^\"[+-]?[0-9]+-([0-9][0-9])-([0-9][0-9])T', ['m', 'd'])"
    vkind = (f"CASE WHEN vn IS NOT NULL THEN (CASE WHEN v.tv IS NOT NULL THEN 'time' "
             f"WHEN v.qa IS NOT NULL THEN 'quantity' WHEN v.glat IS NOT NULL THEN 'globecoordinate' END) "
             f"WHEN o IS NULL THEN NULL "
             f"WHEN starts_with(o, '_:') OR starts_with(o, '<http://www.wikidata.org/.well-known/genid/') "
             f"THEN 'somevalue' "
             f"WHEN {eid} IS NOT NULL THEN 'entity' "
             f"WHEN starts_with(o, '<') THEN 'iri' "
             f"WHEN {dt} = '{XSD}dateTime' THEN 'time' WHEN {dt} = '{XSD}decimal' THEN 'quantity' "
             f"WHEN {dt} = 'http://www.opengis.net/ont/geosparql#wktLiteral' THEN 'globecoordinate' "
             f"WHEN {_LANG} <> '' THEN 'monolingualtext' ELSE 'string' END")
    def lit(expr: str) -> str:  # only literals need their lexical form, language, ... parsed
        return f"CASE WHEN starts_with(o, '\"') THEN {expr} END"

    return f"""
    SELECT owner, role, pid, o, coalesce(tv_lex, lexical) AS raw_lexical,
      CASE WHEN novalue THEN 'novalue' WHEN kind = 'somevalue' THEN 'somevalue' ELSE 'value' END AS snaktype,
      CASE WHEN kind = 'entity' THEN (CASE ent[1] WHEN 'Q' THEN 'item' WHEN 'P' THEN 'property'
                                       WHEN 'L' THEN 'lexeme' ELSE 'entity' END)
           WHEN kind = 'iri' THEN 'string' WHEN kind = 'somevalue' THEN NULL ELSE kind END AS value_type,
      CASE WHEN kind = 'entity' THEN ent END AS object,
      CASE WHEN kind = 'iri' THEN (CASE
             WHEN starts_with(o, '<http://commons.wikimedia.org/wiki/Special:FilePath/')
               THEN url_decode(o[53:-2])
             WHEN starts_with(o, '<http://commons.wikimedia.org/data/main/') THEN url_decode(o[41:-2])
             ELSE o[2:-2] END)
           WHEN kind IN ('string', 'monolingualtext') THEN lexical END AS text,
      CASE WHEN kind = 'monolingualtext' THEN lang END AS lang,
      CASE WHEN kind = 'time' THEN (CASE WHEN vn IS NOT NULL
                                         THEN _cg_time(tv_lex, tp, {local_name('tcal', ENT)})
           ELSE _cg_time(lexical, {_INFERRED_PRECISION}, 'Q1985727') END) END AS time,
      CASE WHEN kind = 'time' THEN (CASE WHEN vn IS NOT NULL THEN tp ELSE {_INFERRED_PRECISION} END)
           END::TINYINT AS precision,
      CASE WHEN kind = 'time' THEN coalesce({local_name('tcal', ENT)}, 'Q1985727') END AS calendar,
      CASE WHEN kind = 'time' THEN coalesce(ttz, 0) END AS timezone,
      CASE WHEN kind = 'time' THEN 0 END AS before,
      CASE WHEN kind = 'time' THEN 0 END AS after,
      CASE WHEN kind = 'quantity' THEN {_signed('coalesce(qa_lex, lexical)')} END AS amount,
      CASE WHEN kind = 'quantity' THEN (CASE WHEN qunit IS NULL OR qunit IN ('Q199', '1') THEN '1'
           ELSE qunit END) END AS unit,
      CASE WHEN kind = 'quantity' THEN {_signed('qub_lex')} END AS upper,
      CASE WHEN kind = 'quantity' THEN {_signed('qlb_lex')} END AS lower,
      CASE WHEN kind = 'globecoordinate' THEN _cg_digits(coalesce(glat, TRY_CAST(wkt['lat'] AS DOUBLE)))
           END AS lat,
      CASE WHEN kind = 'globecoordinate' THEN _cg_digits(coalesce(glon, TRY_CAST(wkt['lon'] AS DOUBLE)))
           END AS lon,
      CASE WHEN kind = 'globecoordinate' THEN _cg_digits(gprec) END AS coord_precision,
      CASE WHEN kind = 'globecoordinate'
           THEN coalesce(gglobe, {local_name("'<' || wkt['globe'] || '>'", WD_ENTITY)}, 'Q2') END AS globe
    FROM (
      SELECT sn.owner, sn.role, sn.pid, sn.o, sn.vn, sn.novalue,
             CASE WHEN sn.novalue THEN NULL ELSE {vkind} END AS kind,
             {eid} AS ent, {lit(lex)} AS lexical, {lit(_LANG)} AS lang, {lit(wkt)} AS wkt, {lit(md)} AS md,
             {lexical_form('v.tv')} AS tv_lex, TRY_CAST({lexical_form('v.tp')} AS INTEGER) AS tp, v.tcal,
             TRY_CAST({lexical_form('v.ttz')} AS INTEGER) AS ttz,
             {lexical_form('v.qa')} AS qa_lex, {lexical_form('v.qub')} AS qub_lex,
             {lexical_form('v.qlb')} AS qlb_lex,
             {local_name('v.qu', ENT)} AS qunit,
             TRY_CAST({lexical_form('v.glat')} AS DOUBLE) AS glat,
             TRY_CAST({lexical_form('v.glon')} AS DOUBLE) AS glon,
             TRY_CAST({lexical_form('v.gprec')} AS DOUBLE) AS gprec, {local_name('v.gglobe', ENT)} AS gglobe
      FROM _cg_snak sn LEFT JOIN _cg_vn v ON v.node = sn.vn
      WHERE NOT sn.plain)
    """


# The bulk of a dump is item values: they take a short path with no pattern matching and
# are never materialised with the other value columns.
#: is the snak in ``_cg_snak`` (columns owner, role, pid, o, vn, novalue) a plain entity
#: value? Those are staged as the bare id (see ``ENTITY_PREFIX``), every other term starts
#: with ``<``, ``_:`` or ``"``.
PLAIN_ENTITY = "NOT novalue AND vn IS NULL AND left(o, 1) IN ('Q', 'P', 'L', 'E', 'M')"


def plain_values(alias: str = "", *, narrow: bool = False, column: str = "o") -> str:
    """The value columns of a plain entity snak of ``_cg_snak`` (table alias ``alias``; the id in
    ``column``); with ``narrow`` only those that are not NULL (a table insert leaves the others NULL)."""
    o = f"{alias}{column}"
    cols = {"value_type": f"CASE {o}[1] WHEN 'Q' THEN 'item' WHEN 'P' THEN 'property' "
                          f"WHEN 'L' THEN 'lexeme' ELSE 'entity' END", "object": o}
    return ", ".join(f"{cols.get(c, 'NULL')} AS {c}" for c in VALUE_COLUMNS if not narrow or c in cols)


#: the columns a value node's triples are pivoted into (``_cg_vn``), by their ``wikibase:`` predicate
VALUE_NODE_KINDS = {"tv": "timeValue", "tp": "timePrecision", "ttz": "timeTimezone",
                    "tcal": "timeCalendarModel", "qa": "quantityAmount", "qu": "quantityUnit",
                    "qub": "quantityUpperBound", "qlb": "quantityLowerBound", "glat": "geoLatitude",
                    "glon": "geoLongitude", "gprec": "geoPrecision", "gglobe": "geoGlobe"}
