"""SPARQL JSON result terms as the store's values: a property's datatype from its
``wikibase:propertyType`` IRI (:func:`datatype_name`) or, without one, from the term itself
(:func:`infer_datatype`), a rank from its IRI (:func:`rank_name`), an entity id from an
IRI (:func:`entity_from_iri`) and a snak's value (:func:`term_value`). The endpoint
crawl (:mod:`chaingraph.sources.sparql_source`) reads its results with these;
:mod:`chaingraph.sources.sparql` only fetches them.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from chaingraph.errors import InvalidInput
from chaingraph.ids import ENTITY, VALUE_ENTITY_PATTERN, from_iri
from chaingraph.values import (
    CoordinateValue,
    EntityValue,
    MonolingualValue,
    QuantityValue,
    StringValue,
    TimeValue,
    Value,
)

__all__ = ["GENID", "NODE_DATATYPES", "WIKIBASE", "datatype_name", "entity_from_iri", "infer_datatype",
           "is_unknown", "rank_name", "term_value"]

WIKIBASE = "http://wikiba.se/ontology#"
GENID = "http://www.wikidata.org/.well-known/genid/"
_FILEPATH = "http://commons.wikimedia.org/wiki/Special:FilePath/"
_COMMONS_DATA = "http://commons.wikimedia.org/data/main/"
_RANKS = {"PreferredRank": "preferred", "NormalRank": "normal", "DeprecatedRank": "deprecated"}
#: datatypes whose full value lives on a value node (psv:/pqv:/prv:)
NODE_DATATYPES = frozenset({"time", "quantity", "globe-coordinate"})
_WKT = re.compile(r"(?:<[^>]*>\s*)?Point\(\s*(\S+)\s+(\S+)\s*\)", re.IGNORECASE)


def datatype_name(iri: str) -> str:
    """JSON spelling of a ``wikibase:propertyType`` IRI.

    >>> datatype_name("http://wikiba.se/ontology#WikibaseItem"), datatype_name(WIKIBASE + "NewThing")
    ('wikibase-item', 'new-thing')
    """
    from chaingraph.sources.loaders.rdf_terms import datatype_from_rdf  # DuckDB: load it when used

    return datatype_from_rdf(iri)


_XSD = "http://www.w3.org/2001/XMLSchema#"


def infer_datatype(row: dict[str, Any]) -> str:
    """A snak's datatype guessed from its terms, for stores that lack property metadata.

    >>> infer_datatype({"value": {"type": "literal", "value": "x", "xml:lang": "en"}})
    'monolingualtext'
    """
    if row.get("time") is not None:
        return "time"
    if row.get("amount") is not None:
        return "quantity"
    if row.get("lat") is not None:
        return "globe-coordinate"
    if row.get("novalue") is not None:
        return "novalue"
    term = row.get("value") or {}
    if term.get("type") == "uri":
        iri = str(term["value"])
        if iri.startswith(ENTITY):
            return "wikibase-item"
        if iri.startswith(_FILEPATH):
            return "commonsMedia"
        return "geo-shape" if iri.startswith(_COMMONS_DATA) else "url"
    if term.get("xml:lang"):
        return "monolingualtext"
    dt = str(term.get("datatype", ""))
    if dt == _XSD + "dateTime":
        return "time"
    if dt == _XSD + "decimal":
        return "quantity"
    if dt.endswith("#wktLiteral"):
        return "globe-coordinate"
    return "string"


def rank_name(iri: str) -> str:
    """``preferred`` / ``normal`` / ``deprecated`` from a ``wikibase:rank`` IRI."""
    return _RANKS.get(iri.rsplit("#", 1)[-1], "normal")


def _text(b: dict[str, Any] | None) -> str | None:
    return None if b is None else str(b["value"])


def is_unknown(b: dict[str, Any] | None) -> bool:
    """True for Wikidata's "unknown value": a blank node (dumps) or a genid IRI (WDQS)."""
    return b is not None and (b["type"] == "bnode" or str(b["value"]).startswith(GENID))


_VALUE_ENTITY = re.compile(VALUE_ENTITY_PATTERN)


def entity_from_iri(iri: str) -> str:
    """The id of a Wikidata entity IRI (``http://www.wikidata.org/entity/`` + an item,
    property, lexeme, form, sense, schema or media id), else :class:`InvalidInput`: an
    IRI elsewhere that merely ends in ``/Q5`` is not the item Q5.

    >>> entity_from_iri(ENTITY + "L7-S1")
    'L7-S1'
    >>> entity_from_iri("http://evil.example/x/Q5")
    Traceback (most recent call last):
    ...
    chaingraph.errors.InvalidInput: 'http://evil.example/x/Q5' is not a Wikidata entity IRI (http://www.wikidata.org/entity/…)
    """
    local = iri[len(ENTITY):] if iri.startswith(ENTITY) else None
    if local is None or not _VALUE_ENTITY.fullmatch(local):
        raise InvalidInput(f"{iri[:100]!r} is not a Wikidata entity IRI ({ENTITY}…)")
    return local


def term_value(datatype: str, row: dict[str, Any]) -> tuple[str, Value | None]:
    """``(snaktype, value)`` of one result row.

    ``row`` holds the SPARQL JSON terms of ``?value`` (the simple value), ``?novalue`` and,
    for time / quantity / coordinate, the value-node columns (``?time ?precision
    ?calendar ?timezone``, ``?amount ?unit ?upper ?lower``, ``?lat ?lon ?geoPrecision
    ?globe``). Conversion goes through :meth:`TimeValue.from_rdf` and
    :meth:`QuantityValue.from_rdf`, so the result is what the JSON dump would give.
    A time or quantity without its value node is refused (:class:`InvalidInput`): the
    simple value lacks the precision, calendar and unit, and chaingraph does not guess
    them. A coordinate without a node is read from its WKT point (precision unknown).

    >>> lit = lambda v: {"type": "literal", "value": v}
    >>> term_value("time", {"time": lit("0000-01-01T00:00:00Z"), "precision": lit("9")})[0]
    'value'
    >>> snaktype, t = term_value("time", {"time": lit("0000-01-01T00:00:00Z"), "precision": lit("9")})
    >>> snaktype, t.time, t.precision
    ('value', '-0001-00-00T00:00:00Z', 9)
    >>> term_value("wikibase-item", {"value": {"type": "uri", "value": ENTITY + "Q5"}})
    ('value', EntityValue(kind='entity', id='Q5'))
    >>> term_value("wikibase-item", {"value": {"type": "bnode", "value": "b0"}})
    ('somevalue', None)
    """
    if row.get("novalue") is not None:
        return "novalue", None
    simple = row.get("value")
    if is_unknown(simple):
        return "somevalue", None
    text = _text(simple)
    if datatype == "time":
        if row.get("time") is not None and row.get("precision") is not None:
            return "value", TimeValue.from_rdf(
                str(row["time"]["value"]),
                int(row["precision"]["value"]),
                _text(row.get("calendar")),
                int(_text(row.get("timezone")) or 0),
            )
        raise InvalidInput(f"time {text!r} without its value node (precision and calendar unknown)")
    if datatype == "quantity":
        amount = _text(row.get("amount"))
        if amount is None:
            raise InvalidInput(f"quantity {text!r} without its value node (unit unknown)")
        return "value", QuantityValue.from_rdf(
            amount, unit=_text(row.get("unit")), upper=_text(row.get("upper")), lower=_text(row.get("lower"))
        )
    if datatype == "globe-coordinate":
        if row.get("lat") is not None and row.get("lon") is not None:
            lat, lon = float(row["lat"]["value"]), float(row["lon"]["value"])
        else:
            m = _WKT.fullmatch((text or "").strip())
            if not m:
                raise InvalidInput(f"coordinate {text!r} is not a WKT point")
            lon, lat = float(m.group(1)), float(m.group(2))
        prec = _text(row.get("geoPrecision"))
        globe = _text(row.get("globe"))
        return "value", CoordinateValue(
            latitude=lat,
            longitude=lon,
            precision=None if prec is None else float(prec),
            globe=(from_iri(globe) if globe else None) or "Q2",
        )
    if text is None:
        raise InvalidInput(f"{datatype} snak without a value")
    if datatype.startswith("wikibase-") or datatype == "entity-schema":
        return "value", EntityValue(id=entity_from_iri(text))
    if datatype == "monolingualtext":
        return "value", MonolingualValue(text=text, language=str((simple or {}).get("xml:lang", "")))
    if datatype == "commonsMedia" and text.startswith(_FILEPATH):
        return "value", StringValue(text=unquote(text[len(_FILEPATH) :]))
    if datatype in ("geo-shape", "tabular-data") and text.startswith(_COMMONS_DATA):
        return "value", StringValue(text=unquote(text[len(_COMMONS_DATA) :]))
    return "value", StringValue(text=text)
