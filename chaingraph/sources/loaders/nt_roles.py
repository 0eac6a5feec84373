"""What an N-Triples line is to the loader: the role (``k``) and property of its predicate
(:func:`classify_predicate`), the staging table each role goes to (:data:`STAGING_GROUPS`,
:func:`create_staging`), and the grammar of one line for the lines the fast path of
:mod:`~chaingraph.sources.loaders.ntriples` does not take (:func:`parse_line_slow`).

>>> classify_predicate("<http://www.wikidata.org/prop/qualifier/value/P580>")
('pqv', 'P580')
>>> classify_predicate("<http://wikiba.se/ontology#rank>"), classify_predicate("<http://schema.org/name>")
(('rank', None), (None, None))
>>> parse_line_slow('<http://a>\\t<http://b>  "x y"@en .')
('<http://a>', '<http://b>', '"x y"@en')
"""

from __future__ import annotations

import re
from typing import Any

import duckdb
import numpy as np

__all__ = ["GROUP_OF_CODE", "KINDS", "PREDICATES", "STAGING_DDL", "STAGING_GROUPS", "SURROGATE",
           "SURROGATE_ESCAPE", "classify_predicate", "create_staging", "delete_staged", "drop_staging",
           "line_problem", "parse_line_slow"]

_WB = "http://wikiba.se/ontology#"
#: predicate IRI -> role, for predicates that are not per-property families
PREDICATES: dict[str, str] = {
    _WB + "rank": "rank",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "type",
    "http://www.w3.org/ns/prov#wasDerivedFrom": "derived",
    "http://www.w3.org/2000/01/rdf-schema#label": "label",
    "http://schema.org/description": "description",
    "http://www.w3.org/2004/02/skos/core#altLabel": "alias",
    _WB + "propertyType": "ptype",
    _WB + "sitelinks": "sitelinks",
    "http://schema.org/version": "version",
    "http://schema.org/dateModified": "modified",
    "http://schema.org/about": "about",
    **{_WB + name: name for name in (
        "timeValue", "timePrecision", "timeTimezone", "timeCalendarModel",
        "quantityAmount", "quantityUpperBound", "quantityLowerBound", "quantityUnit",
        "geoLatitude", "geoLongitude", "geoPrecision", "geoGlobe")},
}
FAMILY = re.compile(r"<http://www\.wikidata\.org/prop/(?:(direct|statement|qualifier|reference)/"
                     r"(?:(value)/)?)?(P[1-9][0-9]*)>")
FAMILY_KIND = {(None, None): "claim", ("direct", None): "wdt", ("statement", None): "ps",
                ("statement", "value"): "psv", ("qualifier", None): "pq", ("qualifier", "value"): "pqv",
                ("reference", None): "pr", ("reference", "value"): "prv"}
NT_LINE = re.compile(r'\s*(<[^>\s]*>|_:\S+)\s+(<[^>\s]*>)\s+(<[^>\s]*>|_:\S+|"(?:[^"\\]|\\.)*"'
                      r'(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<[^>\s]*>)?)\s*\.\s*')

#: every role a staged triple can have; ``seen`` stands for labels, descriptions and
#: aliases in other languages than English and ``mul``, which only tell that their
#: subject is an entity (one row per subject and block)
KINDS: tuple[str, ...] = (*dict.fromkeys(PREDICATES.values()), *dict.fromkeys(FAMILY_KIND.values()), "seen")
STAGING_DDL = "(line BIGINT, k VARCHAR, pid VARCHAR, s VARCHAR, o VARCHAR)"
#: Staged triples are split by role into one table each, behind one view: every query
#: filters on ``k``, and DuckDB's zone maps then skip the tables that cannot match.
STAGING_GROUPS: dict[str, tuple[str, ...]] = {
    "claim": ("claim",),
    "wdt": ("wdt",),
    "terms": ("label", "description", "alias", "ptype", "sitelinks", "version", "modified", "about", "seen"),
}  # everything else (ps/pq/pr, value nodes, rank, type, derived) goes to "main"
#: staging-group number of each kind code (groups in the order of STAGING_GROUPS, then "main")
GROUP_OF_CODE = np.array([next((i for i, kinds in enumerate(STAGING_GROUPS.values()) if k in kinds),
                                len(STAGING_GROUPS)) for k in KINDS], dtype=np.int8)


def create_staging(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Create the staging tables and the view ``table`` over them."""
    names = [*STAGING_GROUPS, "main"]
    for group in names:  # p: triples with the value of their statement, where it is plain (column v)
        ddl = STAGING_DDL[:-1] + ", v VARCHAR)" if group == "claim" else STAGING_DDL
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table}_{group} {ddl}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS "
                + " UNION ALL ".join(f"SELECT line, k, pid, s, o FROM {table}_{g}" for g in names))


def drop_staging(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Drop the staging tables and their view (a group staged as held Arrow rows, see
    :meth:`_Stager.finish`, is a registered view instead of a table)."""
    con.execute(f"DROP VIEW IF EXISTS {table}")
    for group in [*STAGING_GROUPS, "main"]:
        con.unregister(f"{table}_{group}")
        con.execute(f"DROP TABLE IF EXISTS {table}_{group}")


def delete_staged(con: duckdb.DuckDBPyConnection, table: str, where: str, params: list[Any]) -> None:
    """``DELETE FROM`` every staging table (the view itself cannot be deleted from). For
    Turtle staging, whose staging tables are always tables (see :meth:`_Stager.finish`)."""
    for group in [*STAGING_GROUPS, "main"]:
        con.execute(f"DELETE FROM {table}_{group} WHERE {where}", params)


def classify_predicate(term: str) -> tuple[str | None, str | None]:
    """``(role, property id)`` of a predicate term; ``(None, None)`` for ignored predicates."""
    m = FAMILY.fullmatch(term)
    if m:
        return FAMILY_KIND.get((m.group(1), m.group(2))), m.group(3)
    return PREDICATES.get(term[1:-1]) if term.startswith("<") else None, None


def parse_line_slow(line: str) -> tuple[str, str, str] | None:
    """Split one N-Triples line by regular expression; ``None`` if it is not a triple."""
    m = NT_LINE.fullmatch(line)
    return (m.group(1), m.group(2), m.group(3)) if m else None


#: a ``\uD800``-``\uDFFF`` escape: a UTF-16 surrogate, which is no character (RE2 and Python)
SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
SURROGATE = re.compile(SURROGATE_ESCAPE)


def line_problem(text: str) -> str:
    """Why ``text``, which :func:`parse_line_slow` did not read, is not a triple.

    >>> line_problem('<http://a> <http://b> "x"')
    "the line does not end with ' .' (truncated?)"
    """
    if SURROGATE.search(text):
        return ("a \\uD800-\\uDFFF escape is half of a UTF-16 pair, not a character (N-Triples writes "
                "\\U0001F600 for such code points)")
    if not text.endswith("."):
        return "the line does not end with ' .' (truncated?)"
    return "the line is not an N-Triples triple (<subject> <predicate> object .)"
