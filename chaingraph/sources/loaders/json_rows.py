"""A Wikidata JSON entity as rows of the store's tables: every statement with rank,
snaktype and value, every qualifier, every reference (by its ``hash``), English labels,
descriptions and aliases (falling back to ``mul``), the sitelink count, the revision and
property datatypes. :class:`EntityRows` gathers a batch of them;
:mod:`~chaingraph.sources.loaders.json_typed` fills it the same way from typed structs.

>>> from chaingraph.sources.loaders.json_dump import parse_line
>>> line = ('{"type":"item","id":"Q42","labels":{"mul":{"language":"mul","value":"Douglas Adams"}},'
...         '"claims":{"P69":[{"mainsnak":{"snaktype":"value","property":"P69","datavalue":'
...         '{"type":"wikibase-entityid","value":{"id":"Q691283"}}},"id":"Q42$X","rank":"normal"}]}},')
>>> rows = EntityRows(source_id="src1")
>>> rows.add(parse_line(line.encode()))
>>> rows.tables()["statements"].select(["statement_id", "property", "object"]).to_pylist()
[{'statement_id': 'Q42$X', 'property': 'P69', 'object': 'Q691283'}]
"""
from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from chaingraph.errors import InvalidId, InvalidInput
from chaingraph.ids import is_entity_id, is_value_entity_id, pid
from chaingraph.sources.loaders.common import coordinate_digits
from chaingraph.store import ARROW_TYPES, TABLE_COLUMNS, snak_hash_columns
from chaingraph.store_load import whole
from chaingraph.values import VALUE_COLUMNS, value_columns, value_from_json

__all__ = ["BATCH_ENTITIES", "BATCH_ROWS", "EntityRows", "datavalue_columns"]

#: the row-at-a-time loader (``row_at_a_time=True``, the loader before bulk writes) flushes a
#: batch after this many entities or statement rows, whichever comes first
BATCH_ENTITIES = 5_000
BATCH_ROWS = 30_000

_EMPTY = (None,) * (len(VALUE_COLUMNS) - 2)
_ENTITY_KIND = {"Q": "item", "P": "property", "L": "lexeme"}
_PREFIX = {"item": "Q", "property": "P", "lexeme": "L", "entity-schema": "E", "mediainfo": "M"}
RANKS = frozenset({"preferred", "normal", "deprecated"})
SNAKTYPES = frozenset({"value", "somevalue", "novalue"})


def _valid_value_entity(ident: str) -> bool:
    return is_value_entity_id(ident)


def datavalue_columns(datavalue: dict[str, Any]) -> tuple[Any, ...]:
    """The store's value columns for a JSON ``datavalue``; same as
    ``value_columns(value_from_json(datavalue))`` but without building a model for items.

    >>> datavalue_columns({"type": "wikibase-entityid", "value": {"numeric-id": 5,
    ...                    "entity-type": "item"}})[:2]
    ('item', 'Q5')
    """
    if datavalue.get("type") == "wikibase-entityid":
        value = datavalue.get("value")
        if not isinstance(value, dict):
            raise InvalidInput(f"entity value {value!r} is not an object")
        ident = value.get("id")
        if ident is None:
            ident = _PREFIX.get(str(value.get("entity-type", "item")), "Q") + str(value.get("numeric-id"))
        if not isinstance(ident, str) or not _valid_value_entity(ident):
            raise InvalidId(ident, field="entity value")
        return (_ENTITY_KIND.get(ident[0], "entity"), ident, *_EMPTY)
    cols = value_columns(value_from_json(datavalue))
    if cols[0] == "globecoordinate":
        lat, lon, prec = (coordinate_digits(x) for x in cols[14:17])
        cols = (*cols[:14], lat, lon, prec, cols[17])
    return cols


_SEEN_PROPERTIES: set[str] = set()  # property ids already validated (a dump uses few thousand)
_SEEN_VALUES: set[str] = set()  # entity-value ids already validated (bounded by _SEEN_LIMIT)
#: the cache is emptied when it holds this many (the ids a dump's values use most come back
#: at once). It is per parse worker: at 200,000 ids each worker grew from 47 to 70 MB of its
#: own between codex-m and a dump 20x its size, at this size from 48 to 53, in the same time
_SEEN_LIMIT = 16_384


def _snak(snak: dict[str, Any]) -> tuple[str, str, tuple[Any, ...]]:
    prop = snak.get("property")
    if prop not in _SEEN_PROPERTIES:
        prop = pid(prop, field="snak property")
        _SEEN_PROPERTIES.add(prop)
    snaktype = snak.get("snaktype", "value")
    if snaktype not in SNAKTYPES:
        raise InvalidInput(f"snaktype {snaktype!r} of a {prop} snak is not value/somevalue/novalue")
    if snaktype == "value":
        datavalue = snak.get("datavalue")
        if not isinstance(datavalue, dict):
            raise InvalidInput(f"a {prop} value snak has no datavalue")
        return prop, snaktype, datavalue_columns(datavalue)
    return prop, snaktype, (None,) * len(VALUE_COLUMNS)


def _term(terms: Any) -> tuple[str | None, str | None]:
    """(text, language) of the English term, else the ``mul`` one."""
    if isinstance(terms, dict):
        for lang in ("en", "mul"):
            term = terms.get(lang)
            if isinstance(term, dict) and term.get("value") is not None:
                return str(term["value"]), lang
    return None, None


def _aliases(aliases: Any) -> list[str] | None:
    if isinstance(aliases, dict):
        for lang in ("en", "mul"):
            got = aliases.get(lang)
            if got:
                return [str(a["value"]) for a in got if isinstance(a, dict) and "value" in a]
    return None


class EntityRows:
    """Store rows accumulated from parsed entities (one batch).

    Statements whose value is an entity — most of any dump — are kept column-wise
    (``item_columns``), everything else as whole rows; :meth:`tables` turns both into
    Arrow tables for :meth:`Store.write_arrow`.
    """

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id
        self.entities: list[tuple[Any, ...]] = []
        self.properties: list[tuple[Any, ...]] = []
        # statement_id, subject, property, rank, value_type, object of entity-valued statements
        self.item_columns: tuple[list[str], ...] = ([], [], [], [], [], [])
        self.statements: list[tuple[Any, ...]] = []
        self.qualifiers: list[tuple[Any, ...]] = []
        self.reference_snaks: list[tuple[Any, ...]] = []
        self.references = 0
        self.n_entities = 0
        self.n_statements = 0
        self.ids: set[str] = set()  # entities of this batch; the store replaces earlier copies
        #: every statement id starts with its subject's id and ``$``, any case (Wikidata's
        #: form; :class:`~chaingraph.store_load.BulkLoad` then skips the key check)
        self.prefixed = True

    def _lists(self) -> list[list[Any]]:
        return [self.entities, self.properties, *self.item_columns, self.statements, self.qualifiers,
                self.reference_snaks]

    def add(self, entity: dict[str, Any]) -> None:
        """Parse one entity; on error nothing of it is kept and the error propagates."""
        marks = [len(lst) for lst in self._lists()]
        try:
            self.references += self._add(entity)
        except BaseException:
            for lst, mark in zip(self._lists(), marks):
                del lst[mark:]
            raise
        self.n_entities += 1
        self.ids.add(entity["id"])

    def _add(self, entity: dict[str, Any]) -> int:
        ident = entity.get("id")
        if not isinstance(ident, str) or not is_entity_id(ident):
            raise InvalidId(ident, field="entity id")
        kind = entity.get("type", "item" if ident[0] == "Q" else "property")
        if (kind, ident[0]) not in (("item", "Q"), ("property", "P")):
            raise InvalidInput(f"entity {ident} has type {kind!r}; expected an item (Q) or property (P)")
        claims = entity.get("claims") or {}
        if not isinstance(claims, dict):
            raise InvalidInput(f"entity {ident}: 'claims' is not an object")
        ids, subjects, props, ranks, kinds, objects = self.item_columns
        statements, qualifiers, refs = self.statements, self.qualifiers, self.reference_snaks
        n_refs = n_statements = 0
        prefix, width = ident + "$", len(ident) + 1
        seen_properties, seen_values, entity_kind = _SEEN_PROPERTIES, _SEEN_VALUES, _ENTITY_KIND
        # json_typed.add fills the same rows from msgspec structs: a change here goes there too
        for group in claims.values():
            for st in group:
                sid = st.get("id")
                if not isinstance(sid, str) or "$" not in sid:
                    raise InvalidInput(f"entity {ident}: statement id {sid!r} is not of the form "
                                       f"{ident}$GUID")
                if not sid.startswith(prefix) and sid[:width].upper() != prefix:
                    self.prefixed = False
                rank = st.get("rank", "normal")
                if rank not in RANKS:
                    raise InvalidInput(f"statement {sid}: rank {rank!r} is not preferred/normal/deprecated")
                mainsnak = st["mainsnak"]
                # The hot path, inlined: an entity value of an already validated property.
                value = None
                prop = mainsnak.get("property")
                if prop in seen_properties and mainsnak.get("snaktype", "value") == "value":
                    datavalue = mainsnak.get("datavalue")
                    if datavalue.__class__ is dict and datavalue.get("type") == "wikibase-entityid":
                        inner = datavalue.get("value")
                        value = inner.get("id") if inner.__class__ is dict else None
                        if value not in seen_values:
                            value = _entity_value(mainsnak)
                if value is not None:
                    ids.append(sid)
                    subjects.append(ident)
                    props.append(prop)
                    ranks.append(rank)
                    kinds.append(entity_kind.get(value[0], "entity"))
                    objects.append(value)
                else:
                    prop, snaktype, cols = _snak(mainsnak)
                    statements.append((sid, ident, prop, rank, snaktype, *cols))
                n_statements += 1
                quals = st.get("qualifiers")
                if quals:
                    for qprop in st.get("qualifiers-order") or quals:
                        for q in quals.get(qprop, ()):
                            qp, qt, qc = _snak(q)
                            qualifiers.append((sid, qp, snak_hash_columns(qp, qt, qc), qt, *qc))
                for ref in st.get("references") or ():
                    snaks = ref.get("snaks") or {}
                    rhash = ref.get("hash") or snak_hash_columns(
                        "reference", "value", (json.dumps(snaks, sort_keys=True),))
                    n_refs += 1
                    for rprop in ref.get("snaks-order") or snaks:
                        for r in snaks.get(rprop, ()):
                            rp, rt, rc = _snak(r)
                            refs.append((sid, rhash, rp, snak_hash_columns(rp, rt, rc), rt, *rc))
        label, label_lang = _term(entity.get("labels"))
        description, _ = _term(entity.get("descriptions"))
        aliases = _aliases(entity.get("aliases"))
        if ident[0] == "Q":
            sitelinks = entity.get("sitelinks")
            revision = _revision(ident, entity.get("lastrevid"))
            modified = entity.get("modified")
            if modified is not None and not isinstance(modified, str):
                raise InvalidInput(f"entity {ident}: 'modified' is {modified!r}, not a timestamp")
            n_sitelinks = len(sitelinks) if isinstance(sitelinks, dict) else None
            self.entities.append((ident, label, label_lang, description, aliases, n_sitelinks, revision,
                                  modified))
        else:
            datatype = entity.get("datatype")
            self.properties.append((ident, label, label_lang, description, aliases,
                                    str(datatype) if datatype is not None else None))
        self.n_statements += n_statements
        return n_refs

    def tables(self) -> dict[str, pa.Table]:
        """The batch as Arrow tables named and typed like the store's tables."""
        out = whole(self.pieces())
        if "statements" in out:
            statements = out["statements"]
            out["statement_sources"] = pa.table({
                "statement_id": statements["statement_id"],
                "source_id": pa.array([self.source_id] * statements.num_rows, pa.string())})
        return out

    def pieces(self) -> dict[str, list[pa.Table]]:
        """:meth:`tables` without ``statement_sources``, and ``statements`` in two pieces
        with columns of their own: the entity-valued ones (no value column but ``object``
        and ``value_type``), and the rest."""
        out = {name: [_rows_table(name, rows)] for name, rows in (
            ("entities", self.entities), ("properties", self.properties), ("qualifiers", self.qualifiers),
            ("reference_snaks", self.reference_snaks)) if rows}
        names = ("statement_id", "subject", "property", "rank", "value_type", "object")
        n = len(self.item_columns[0])
        items = pa.table({**{c: pa.array(col, pa.string()) for c, col in zip(names, self.item_columns)},
                          "snaktype": pa.array(["value"] * n, pa.string())})
        parts = [items] if n else []
        if self.statements:
            parts.append(_rows_table("statements", self.statements))
        if parts:
            out["statements"] = parts
        return out

    def totals(self) -> dict[str, int]:
        """What the batch holds, as :class:`~chaingraph.sources.loaders.common.FileReport` counts it."""
        return {"entities": len(self.entities), "properties": len(self.properties),
                "statements": self.n_statements, "qualifiers": len(self.qualifiers),
                "references": self.references}

    def full(self) -> bool:
        """Whether the batch has :data:`BATCH_ENTITIES` entities or :data:`BATCH_ROWS` statements."""
        return self.n_entities >= BATCH_ENTITIES or self.n_statements >= BATCH_ROWS

    def unique(self, *, statements: bool = True) -> set[str]:
        """The tables of :meth:`tables` whose keys do not repeat in this batch (the store
        then does not deduplicate them); ``statements=False`` looks at the snak tables only."""
        out = {name for name, rows, width in (("qualifiers", self.qualifiers, 3),
                                              ("reference_snaks", self.reference_snaks, 4))
               if len({row[:width] for row in rows}) == len(rows)}  # the key is the first columns
        n = len(self.item_columns[0]) + len(self.statements)
        if statements and len({*self.item_columns[0], *(row[0] for row in self.statements)}) == n:
            out |= {"statements", "statement_sources"}
        return out


def _revision(ident: str, revision: Any) -> int | None:
    """The ``lastrevid`` of entity ``ident`` as the store keeps it (a 64-bit integer)."""
    if revision is None:
        return None
    number = int(revision)
    if not -(2**63) <= number < 2**63:
        raise InvalidInput(f"entity {ident}: 'lastrevid' {number} is past a 64-bit integer")
    return number


def _entity_value(snak: dict[str, Any]) -> str | None:
    """The id of an entity-valued value snak with a known-good property, else ``None``."""
    if snak.get("snaktype", "value") != "value" or snak.get("property") not in _SEEN_PROPERTIES:
        return None
    datavalue = snak.get("datavalue")
    if not isinstance(datavalue, dict) or datavalue.get("type") != "wikibase-entityid":
        return None
    value = datavalue.get("value")
    ident = value.get("id") if isinstance(value, dict) else None
    if not isinstance(ident, str) or (ident not in _SEEN_VALUES and not _valid_value_entity(ident)):
        return None  # the slow path reports the problem
    if len(_SEEN_VALUES) >= _SEEN_LIMIT:  # a cache, not a record: memory must not grow with the dump
        _SEEN_VALUES.clear()
    _SEEN_VALUES.add(ident)
    return ident


def _arrow_type(column: str) -> pa.DataType:
    return ARROW_TYPES.get(column, pa.string())


def _rows_table(table: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    columns = TABLE_COLUMNS[table]
    return pa.table({c: pa.array(col, _arrow_type(c)) for c, col in zip(columns, zip(*rows))})
