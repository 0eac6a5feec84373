"""Dump lines decoded straight into the few fields the store keeps (msgspec), not into dicts.

``orjson`` turns every key and string of an entity into a Python object, though the store
keeps one label, description and alias list, the sitelink *count* and, per statement, a
handful of strings; with typed structs (:class:`Entity`) ``msgspec`` skips the rest while
it checks the JSON, and an entity-valued statement becomes one small object instead of
five dicts. :func:`add_line` then fills an :class:`~chaingraph.sources.loaders.json_rows.EntityRows`
exactly as :meth:`EntityRows.add <chaingraph.sources.loaders.json_rows.EntityRows.add>` does
from ``parse_line``'s dict (:func:`decode`, then :func:`add`).

Only regular lines take this path. A line ``msgspec`` refuses (not strict JSON, a field of
an unexpected type or shape — an empty map written ``[]``, a reference without its hash,
an entity value without ``id``) or whose rows would raise is handed back (``False``) with
nothing of it kept, and the caller parses it the general way, which keeps what it can and
says what is wrong with the rest in the words it always has. ``msgspec`` reads numbers and
escapes as ``json`` does (integers of any length, surrogate pairs; NaN and lone surrogates
refused), but it does not check the UTF-8 of the strings it skips: text that is not valid
UTF-8 must not come here (:func:`typed_text`).

>>> from chaingraph.sources.loaders.json_rows import EntityRows
>>> rows = EntityRows(source_id="src1")
>>> line = (b'{"type":"item","id":"Q42","labels":{"fr":{"language":"fr","value":"Douglas Adams"}},'
...         b'"claims":{"P69":[{"mainsnak":{"snaktype":"value","property":"P69","datavalue":'
...         b'{"type":"wikibase-entityid","value":{"id":"Q691283"}}},"id":"Q42$X","rank":"normal"}]}}')
>>> add_line(rows, line), rows.entities[0][:3], rows.tables()["statements"]["object"].to_pylist()
(True, ('Q42', None, None), ['Q691283'])
>>> add_line(rows, b'{"type":"item","id":"Q43","labels":[]}'), rows.n_entities  # [] for {}: handed back
(False, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from chaingraph.ids import is_entity_id
from chaingraph.sources.loaders import json_dump, json_rows
from chaingraph.sources.loaders.common import is_utf8
from chaingraph.store import snak_hash_columns

if TYPE_CHECKING:
    from chaingraph.sources.loaders.json_rows import EntityRows

__all__ = ["Entity", "add", "add_line", "decode", "typed_text"]


class _Term(Struct, gc=False):
    value: str | UnsetType = UNSET


class _Terms(Struct, gc=False):
    en: _Term | None = None
    mul: _Term | None = None


class _Aliases(Struct, gc=False):
    en: list[_Term] | None = None
    mul: list[_Term] | None = None


class _EntityId(Struct, gc=False):
    id: str | None = None


class _EntityValue(Struct, tag_field="type", tag="wikibase-entityid", gc=False):
    value: _EntityId


class _String(Struct, tag_field="type", tag="string", gc=False):
    value: Raw


class _Time(Struct, tag_field="type", tag="time", gc=False):
    value: Raw


class _Quantity(Struct, tag_field="type", tag="quantity", gc=False):
    value: Raw


class _Monolingual(Struct, tag_field="type", tag="monolingualtext", gc=False):
    value: Raw


class _Coordinate(Struct, tag_field="type", tag="globecoordinate", gc=False):
    value: Raw


_DataValue = Union[_EntityValue, _String, _Time, _Quantity, _Monolingual, _Coordinate]


class _Snak(Struct, gc=False):
    property: str | None = None
    snaktype: str = "value"
    datavalue: _DataValue | None = None


class _Reference(Struct, rename={"snaks_order": "snaks-order"}, gc=False):
    hash: str | None = None
    snaks: dict[str, list[_Snak]] | None = None
    snaks_order: list[str] | None = None


class _Statement(Struct, rename={"qualifiers_order": "qualifiers-order"}, gc=False):
    mainsnak: _Snak
    id: str | None = None
    rank: str = "normal"
    qualifiers: dict[str, list[_Snak]] | None = None
    qualifiers_order: list[str] | None = None
    references: list[_Reference] | None = None


class Entity(Struct, gc=False):
    """What the store keeps of one dump entity (the other fields are skipped unread)."""

    id: str
    type: str | UnsetType = UNSET
    datatype: str | None = None
    labels: _Terms | None = None
    descriptions: _Terms | None = None
    aliases: _Aliases | None = None
    claims: dict[str, list[_Statement]] | None = None
    sitelinks: dict[str, Raw] | None = None
    lastrevid: int | None = None
    modified: str | None = None


_DECODE = msgspec.json.Decoder(Entity).decode


class _Irregular(Exception):
    """A line this path does not take: the general parser reads it."""


def typed_text(text: bytes) -> bool:
    """Whether the lines in ``text`` may take this path: valid UTF-8 (``msgspec`` does not
    check the strings it skips; the general parser reports such a line).

    >>> typed_text("Zoë".encode()), typed_text(b"Zo\\xeb")
    (True, False)
    """
    return is_utf8(text)


def decode(text: bytes) -> Entity | None:
    """The entity of one dump line (stripped of its trailing comma), or ``None`` for a line
    ``msgspec`` refuses (the general parser then reads it)."""
    try:
        return _DECODE(text)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None


def add(rows: EntityRows, entity: Entity) -> bool:
    """Add ``entity`` to ``rows`` as ``rows.add`` does the dict of the same line; ``False``,
    with nothing of it kept, for an entity this path does not take (see the module's docstring)."""
    marks = [len(lst) for lst in rows._lists()]
    prefixed = rows.prefixed
    try:
        rows.references += _add(rows, entity)
    except BaseException as exc:
        for lst, mark in zip(rows._lists(), marks):
            del lst[mark:]
        rows.prefixed = prefixed
        if not isinstance(exc, Exception):
            raise  # Ctrl-C: nothing of the entity kept, as EntityRows.add does
        return False
    rows.n_entities += 1
    rows.ids.add(entity.id)
    return True


def add_line(rows: EntityRows, text: bytes) -> bool:
    """:func:`decode` and :func:`add` one line: whether it took this path."""
    entity = decode(text)
    return entity is not None and add(rows, entity)


def _datavalue(value: _DataValue) -> dict[str, Any]:
    """The datavalue as ``parse_line`` gives it (what :func:`json_rows._snak` reads)."""
    if isinstance(value, _EntityValue):
        if value.value.id is None:
            raise _Irregular  # id from entity-type and numeric-id: the general parser
        return {"type": "wikibase-entityid", "value": {"id": value.value.id}}
    return {"type": value.__struct_config__.tag, "value": json_dump._loads(bytes(value.value))}


def _snak(snak: _Snak) -> tuple[str, str, tuple[Any, ...]]:
    as_json: dict[str, Any] = {"property": snak.property, "snaktype": snak.snaktype}
    if snak.datavalue is not None:
        as_json["datavalue"] = _datavalue(snak.datavalue)
    return json_rows._snak(as_json)


def _term(terms: _Terms | None) -> tuple[str | None, str | None]:
    if terms is not None:
        for term, lang in ((terms.en, "en"), (terms.mul, "mul")):
            if term is not None and isinstance(term.value, str):
                return term.value, lang
    return None, None


def _aliases(aliases: _Aliases | None) -> list[str] | None:
    if aliases is not None:
        for got in (aliases.en, aliases.mul):
            if got:
                return [a.value for a in got if isinstance(a.value, str)]
    return None


def _add(rows: EntityRows, entity: Entity) -> int:
    """:meth:`EntityRows._add` for a typed entity; raises on anything irregular."""
    ident = entity.id
    if not is_entity_id(ident):
        raise _Irregular
    kind = entity.type if isinstance(entity.type, str) else ("item" if ident[0] == "Q" else "property")
    if (kind, ident[0]) not in (("item", "Q"), ("property", "P")):
        raise _Irregular
    ids, subjects, props, ranks, kinds, objects = rows.item_columns
    statements, qualifiers, refs = rows.statements, rows.qualifiers, rows.reference_snaks
    n_refs = n_statements = 0
    prefix, width = ident + "$", len(ident) + 1
    seen_properties, seen_values, entity_kind = json_rows._SEEN_PROPERTIES, json_rows._SEEN_VALUES, \
        json_rows._ENTITY_KIND
    ranks_known = json_rows.RANKS
    for group in (entity.claims or {}).values():
        for st in group:
            sid = st.id
            if sid is None or "$" not in sid:
                raise _Irregular
            if not sid.startswith(prefix) and sid[:width].upper() != prefix:
                rows.prefixed = False
            rank = st.rank
            if rank not in ranks_known:
                raise _Irregular
            mainsnak = st.mainsnak
            prop = mainsnak.property
            datavalue = mainsnak.datavalue
            value = None
            if (prop in seen_properties and mainsnak.snaktype == "value"
                    and isinstance(datavalue, _EntityValue)):
                value = datavalue.value.id
                if value not in seen_values:
                    value = _entity_value(value)
            if value is not None:
                ids.append(sid)
                subjects.append(ident)
                props.append(prop)  # type: ignore[arg-type]
                ranks.append(rank)
                kinds.append(entity_kind.get(value[0], "entity"))
                objects.append(value)
            else:
                prop, snaktype, cols = _snak(mainsnak)
                statements.append((sid, ident, prop, rank, snaktype, *cols))
            n_statements += 1
            quals = st.qualifiers
            if quals:
                for qprop in st.qualifiers_order or quals:
                    for q in quals.get(qprop, ()):
                        qp, qt, qc = _snak(q)
                        qualifiers.append((sid, qp, snak_hash_columns(qp, qt, qc), qt, *qc))
            for ref in st.references or ():
                rhash = ref.hash
                if not rhash:
                    raise _Irregular  # a hash made from the snaks' JSON: the general parser
                snaks = ref.snaks or {}
                n_refs += 1
                for rprop in ref.snaks_order or snaks:
                    for r in snaks.get(rprop, ()):
                        rp, rt, rc = _snak(r)
                        refs.append((sid, rhash, rp, snak_hash_columns(rp, rt, rc), rt, *rc))
    label, label_lang = _term(entity.labels)
    description, _ = _term(entity.descriptions)
    aliases = _aliases(entity.aliases)
    if ident[0] == "Q":
        sitelinks, revision = entity.sitelinks, entity.lastrevid
        if revision is not None and not -(2**63) <= revision < 2**63:
            raise _Irregular
        rows.entities.append((ident, label, label_lang, description, aliases,
                              len(sitelinks) if sitelinks is not None else None, revision, entity.modified))
    else:
        rows.properties.append((ident, label, label_lang, description, aliases, entity.datatype))
    rows.n_statements += n_statements
    return n_refs


def _entity_value(ident: str | None) -> str | None:
    """``ident`` if it is a valid entity-value id (remembered), else ``None`` (the snak then
    takes the general path, which reports the problem)."""
    if ident is None or not json_rows._valid_value_entity(ident):
        return None
    seen = json_rows._SEEN_VALUES
    if len(seen) >= json_rows._SEEN_LIMIT:
        seen.clear()
    seen.add(ident)
    return ident
