"""Wikidata identifiers: validation and IRI conversion.

Every id that comes from input passes through here before it reaches a query, a
table or a graph. Nothing else in chaingraph builds an IRI by string pasting.

>>> qid("Q42")
'Q42'
>>> pid(" P31 ")
'P31'
>>> entity_iri("Q42")
'http://www.wikidata.org/entity/Q42'
>>> from_iri("http://www.wikidata.org/entity/P569")
'P569'
>>> statement_id_from_rdf("http://www.wikidata.org/entity/statement/Q42-D8404CDA-25E4-4334-AF13-A3290BCD9C0F")
'Q42$D8404CDA-25E4-4334-AF13-A3290BCD9C0F'
>>> qid("Q0x")
Traceback (most recent call last):
...
chaingraph.errors.InvalidId: 'Q0x' is not a Wikidata id (expected Q followed by digits, e.g. Q42)
"""

from __future__ import annotations

import re

from chaingraph.errors import InvalidId

__all__ = [
    "ENTITY",
    "ENTITY_PATTERN",
    "VALUE_ENTITY_PATTERN",
    "entity_iri",
    "from_iri",
    "is_entity_id",
    "is_item_id",
    "is_value_entity_id",
    "pid",
    "qid",
    "statement_id_from_rdf",
    "statement_iri",
]

ENTITY = "http://www.wikidata.org/entity/"
STATEMENT = "http://www.wikidata.org/entity/statement/"

#: the one id rule: a letter and 1-12 digits, no leading zero (Wikidata's largest ids
#: have 9); ``--seed``, task files, dumps and SPARQL answers all go through it
_DIGITS = "[1-9][0-9]{0,11}"
#: entity values of snaks: items, properties, lexemes with their forms and senses, entity
#: schemas, media (a POSIX regular expression, used by the loaders in Python and in SQL)
VALUE_ENTITY_PATTERN = f"[QPLEM]{_DIGITS}(-[FS]{_DIGITS})?"
_VALUE_ENTITY = re.compile(VALUE_ENTITY_PATTERN)
#: items and properties (subjects of statements)
ENTITY_PATTERN = f"[QP]{_DIGITS}"
_ITEM = re.compile(f"Q{_DIGITS}")
_PROP = re.compile(f"P{_DIGITS}")
_ENTITY = re.compile(ENTITY_PATTERN)
_RDF_STATEMENT = re.compile(r"([QqPpLl][0-9]+)-(.+)")


def qid(value: object, *, field: str | None = None) -> str:
    """Return ``value`` as an item id (``Q`` + digits, surrounding blanks removed) or raise."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _ITEM.fullmatch(text):
        raise InvalidId(value, field=field, expected="Q")
    return text


def pid(value: object, *, field: str | None = None) -> str:
    """Return ``value`` as a property id (``P`` + digits) or raise :class:`InvalidId`."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _PROP.fullmatch(text):
        raise InvalidId(value, field=field, expected="P")
    return text


def is_item_id(value: object) -> bool:
    """True for ``Q`` + digits."""
    return isinstance(value, str) and _ITEM.fullmatch(value) is not None


def is_value_entity_id(value: object) -> bool:
    """True for an entity a snak's value may name (``Q5``, ``L7-S1``, ``E10``, ``M42``).

    >>> is_value_entity_id("L7-S1"), is_value_entity_id("Q" + "1" * 23)
    (True, False)
    """
    return isinstance(value, str) and _VALUE_ENTITY.fullmatch(value) is not None


def is_entity_id(value: object) -> bool:
    """True for ``Q`` or ``P`` + digits."""
    return isinstance(value, str) and _ENTITY.fullmatch(value) is not None


def entity_iri(entity_id: str) -> str:
    """The ``wd:`` IRI of a validated item or property id."""
    if not is_entity_id(entity_id):
        raise InvalidId(entity_id)
    return ENTITY + entity_id


def from_iri(iri: str) -> str | None:
    """The Q/P id of a ``wd:`` entity IRI, or ``None`` for anything else (genids, literals)."""
    if iri.startswith(ENTITY):
        local = iri[len(ENTITY) :]
        if _ENTITY.fullmatch(local):
            return local
    return None


def statement_id_from_rdf(iri_or_local: str) -> str:
    """WDQS writes ``Q42-GUID`` where the JSON dump writes ``Q42$GUID``; the store keeps JSON form."""
    local = iri_or_local[len(STATEMENT) :] if iri_or_local.startswith(STATEMENT) else iri_or_local
    if "$" in local:
        return local
    m = _RDF_STATEMENT.fullmatch(local)
    if not m:
        raise InvalidId(local, field="statement id", expected="an entity id and a GUID,")
    return f"{m.group(1)}${m.group(2)}"


def statement_iri(statement_id: str) -> str:
    """The ``wds:`` IRI of a JSON-form statement id."""
    return STATEMENT + statement_id.replace("$", "-", 1)
