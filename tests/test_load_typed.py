"""The typed path of the JSON loader (:mod:`chaingraph.sources.loaders.json_typed`) gives
exactly the rows and bad-line messages of the general one (``parse_line`` and
``EntityRows.add``), for regular entities and for every oddity a field can hold: odd lines
are handed back to the general parser, never read differently."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.errors import ChaingraphError
from chaingraph.sources.loaders import json_chunks, json_rows, json_typed
from chaingraph.sources.loaders.json_dump import EntityRows, describe_bad_line, parse_line
from chaingraph.store_load import whole

_ENTITY_REF = {"entity-type": "item", "numeric-id": 5, "id": "Q5"}
#: datavalues as dumps write them, and odd ones (each handed to the general parser)
_DATAVALUES = [
    {"type": "wikibase-entityid", "value": _ENTITY_REF},
    {"type": "wikibase-entityid", "value": {"id": "P17"}},
    {"type": "string", "value": "ab\u00e9c"},
    {"type": "time", "value": {"time": "+1952-03-11T00:00:00Z", "precision": 11, "timezone": 0, "before": 0,
                               "after": 0, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}},
    {"type": "quantity", "value": {"amount": "+123456789012345678901234", "unit": "1"}},
    {"type": "quantity", "value": {"amount": "+1.5", "unit": "http://www.wikidata.org/entity/Q11573",
                                   "upperBound": "+2", "lowerBound": "+1"}},
    {"type": "monolingualtext", "value": {"text": "Titel", "language": "de"}},
    {"type": "globecoordinate", "value": {"latitude": 51.56652777777778, "longitude": 7, "precision": 1e-05,
                                          "globe": "http://www.wikidata.org/entity/Q2"}},
]
_ODD_DATAVALUES = [
    {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 7}},  # no id
    {"type": "wikibase-entityid", "value": {"id": "Q12345678901234567890123"}},  # not an id
    {"type": "wikibase-entityid", "value": {"id": 5}},
    {"type": "wikibase-entityid", "value": "Q5"},
    {"type": "string", "value": {"odd": 1}},
    {"type": "time", "value": {"time": "+2020-13-45T00:00:00Z", "precision": 11}},
    {"type": "globecoordinate", "value": {"latitude": "x", "longitude": 7}},
    {"type": "external-id", "value": "x"},
    {"value": "no type"},
    None, "text",
]


def _mostly(regular: list[Any], odd: list[Any]) -> st.SearchStrategy[Any]:
    """A value as dumps write it, now and then an odd one."""
    return st.integers(0, 24).flatmap(lambda k: st.sampled_from(odd if k == 0 else regular))


_ABSENT = "<absent>"  # a key left out of its object


def _present(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v != _ABSENT}


_SNAKS = st.fixed_dictionaries({
    "snaktype": _mostly(["value", "value", "value", "somevalue", "novalue"], ["other", None, _ABSENT]),
    "property": _mostly(["P31", "P17", "P569"], ["p31", "X1", None, 5, _ABSENT]),
    "datavalue": _mostly(_DATAVALUES, [*_ODD_DATAVALUES, _ABSENT]),
}, optional={"datatype": st.just("wikibase-item")}).map(_present)
_REFERENCES = st.fixed_dictionaries({"hash": _mostly(["d1a2", "ffe3"], ["", None, _ABSENT])}, optional={
    "snaks": st.one_of(st.dictionaries(st.sampled_from(["P248", "P854"]), st.lists(_SNAKS, max_size=2),
                                       max_size=2), st.just([])),
    "snaks-order": _mostly([["P248"], ["P854", "P248"], None], [[], [5]]),
}).map(_present)
_STATEMENTS = st.fixed_dictionaries({
    "mainsnak": _mostly([None], [_ABSENT]).flatmap(lambda absent: st.just(absent) if absent else _SNAKS),
    "id": _mostly(["Q1$A", "Q1$B", "q1$C", "Q2$D", "P1$E"], ["Q1-E", None, 7, _ABSENT]),
    "rank": _mostly(["normal", "normal", "preferred", "deprecated"], ["best", None, _ABSENT]),
}, optional={
    "type": st.just("statement"),
    "qualifiers": st.one_of(st.dictionaries(st.sampled_from(["P580", "P582"]), st.lists(_SNAKS, max_size=2),
                                            max_size=2), _mostly([None], [[]])),
    "qualifiers-order": _mostly([["P580"], ["P582", "P580"], None], [[], [5]]),
    "references": st.one_of(st.lists(_REFERENCES, max_size=2), st.none()),
}).map(_present)
_TERM = _mostly([{"language": "en", "value": "Douglas"}, {"language": "mul", "value": "Adams"}],
                [{"value": None}, {"value": 5}, {"language": "en"}, "text", None,
                 {"value": "x", "more": [1]}])
_TERMS = st.one_of(st.dictionaries(st.sampled_from(["en", "mul", "fr"]), _TERM, max_size=3),
                   _mostly([{}], [[], None, "x"]))
_ALIASES = st.one_of(st.dictionaries(st.sampled_from(["en", "mul", "de"]),
                                     st.one_of(st.lists(_TERM, max_size=2), _mostly([[]], [None, {}])),
                                     max_size=3),
                     _mostly([{}], [[], None]))
_ENTITY_FIELDS = st.fixed_dictionaries({"id": _mostly(["Q1", "Q2", "P1"], ["L1", "X", 5, None, _ABSENT])},
                                       optional={
    "datatype": _mostly(["wikibase-item"], [None, 5]),
    "labels": _TERMS, "descriptions": _TERMS, "aliases": _ALIASES,
    "claims": st.one_of(st.dictionaries(st.sampled_from(["P31", "P17", "P569"]),
                                        st.lists(_STATEMENTS, max_size=3),
                                        max_size=3), _mostly([{}], [[], None, {"P31": {"a": 1}}])),
    "sitelinks": _mostly([{"enwiki": {"site": "enwiki", "title": "X"}}, {}], [[], None]),
    "lastrevid": _mostly([12345, 7], ["12", True, None, 1.5, 123456789012345678901]),
    "modified": _mostly(["2024-01-01T00:00:00Z"], [None, 5]),
})


def _typed_as(entity: dict[str, Any], kind: str) -> dict[str, Any]:
    """``entity`` with a ``type`` of its id's kind (``same``), the other kind, or ``kind``."""
    item = str(entity["id"]).startswith("Q")
    if kind in ("same", "other"):
        kind = "item" if item == (kind == "same") else "property"
    return _present({**entity, "type": kind})


_ENTITIES = st.builds(_typed_as, _ENTITY_FIELDS, _mostly(["same", _ABSENT], ["other", "lexeme", None]))


def _general(lines: list[bytes]) -> tuple[dict[str, list[Any]], list[str]]:
    """Rows and bad lines as the general parser gives them (the row-at-a-time loader's code)."""
    _fresh()
    rows, bad = EntityRows("src"), []
    for line in lines:
        try:
            entity = parse_line(line)
            if entity is not None:
                rows.add(entity)
        except (ValueError, KeyError, TypeError, AttributeError, ChaingraphError) as exc:
            bad.append(describe_bad_line(exc, line))
    return _rows(whole(rows.pieces())), bad


def _typed(lines: list[bytes]) -> tuple[dict[str, list[Any]], list[str]]:
    """Rows and bad lines of :func:`json_chunks.parse_chunk`, which takes the typed path."""
    _fresh()
    result = json_chunks.parse_chunk(b"\n".join(lines) + b"\n", 1, "src", stop_at_bad=False)
    pieces: dict[str, list[pa.Table]] = {}
    for part in result.parts:
        for name, data in part.tables.items():
            pieces.setdefault(name, []).extend(json_chunks._table(d) for d in data)
    return _rows(whole(pieces)), [problem for _, problem in result.bad]


def _rows(tables: dict[str, pa.Table]) -> dict[str, list[Any]]:
    """Every row of every table, in no particular order (nor of columns), without its NULLs: a
    column a piece lacks is NULL in the store, and which pieces a statement lands in depends on
    the properties the parser has already seen (a line the typed path hands back has made some
    known to the general parser that follows it)."""
    return {name: sorted(repr(sorted((k, v) for k, v in row.items() if v is not None))
                         for row in t.to_pylist())
            for name, t in tables.items() if t.num_rows}


def _fresh() -> None:
    """Forget the properties and entity values the parsers have seen (which decide whether a
    statement takes the entity-valued fast path: the rows are the same, in other pieces)."""
    json_rows._SEEN_PROPERTIES.clear()
    json_rows._SEEN_VALUES.clear()


@settings(max_examples=400, deadline=None)
@given(entities=st.lists(_ENTITIES, min_size=1, max_size=4), ascii_only=st.booleans())
def test_the_typed_path_gives_the_rows_and_errors_of_the_general_one(entities: list[dict[str, Any]],
                                                                     ascii_only: bool) -> None:
    lines = [json.dumps(e, ensure_ascii=ascii_only).encode() + b"," for e in entities]
    assert _typed(lines) == _general(lines)


def test_a_line_handed_back_gives_the_rows_of_the_general_parser() -> None:
    """A qualifier's entity value without ``id`` sends the line back to the general parser after the
    typed path has seen its properties: the rows must still be the general parser's (found by the
    property test above)."""
    value = {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 7}}
    qualifier = {"snaktype": "value", "property": "P31", "datavalue": value}
    entity = {"id": "Q1", "type": "item", "claims": {"P31": [{
        "id": "Q1$a", "rank": "normal", "type": "statement", "qualifiers": {"P580": [qualifier]},
        "mainsnak": {"snaktype": "value", "property": "P31", "datavalue": _DATAVALUES[0]}}]}}
    line = json.dumps(entity).encode() + b","
    assert not json_typed.add_line(EntityRows("src"), line)
    typed, general = _typed([line]), _general([line])
    assert typed == general and len(typed[0]["statements"]) == 1 and len(typed[0]["qualifiers"]) == 1


def _full_entity() -> dict[str, Any]:
    """An item as dumps write it: every value type, qualifiers, references, sitelinks, aliases."""
    statements = {f"P{i}": [{"id": f"Q1${i}", "rank": "normal", "mainsnak": {
        "snaktype": "value", "property": f"P{i}", "datavalue": dv},
        "qualifiers": {"P580": [{"snaktype": "value", "property": "P580", "datavalue": _DATAVALUES[3]}],
                       "P582": [{"snaktype": "somevalue", "property": "P582"}]},
        "qualifiers-order": ["P580", "P582"],
        "references": [{"hash": "abc", "snaks": {
            "P248": [{"snaktype": "value", "property": "P248", "datavalue": _DATAVALUES[0]}],
            "P854": [{"snaktype": "value", "property": "P854", "datavalue": _DATAVALUES[2]}]},
            "snaks-order": ["P248", "P854"]}]}]
        for i, dv in enumerate(_DATAVALUES, start=1)}
    return {"type": "item", "id": "Q1", "labels": {"en": {"language": "en", "value": "One"}},
            "descriptions": {"fr": {"language": "fr", "value": "un"},
                             "mul": {"language": "mul", "value": "1"}},
            "aliases": {"en": [{"language": "en", "value": "Uno"}, {"language": "en", "value": "Eins"}]},
            "sitelinks": {"enwiki": {"site": "enwiki", "title": "One"}}, "lastrevid": 7,
            "modified": "2024-01-01T00:00:00Z", "claims": statements}


def test_regular_entities_of_every_value_type_take_the_typed_path() -> None:
    """Not a vacuous equality: a full entity is read by the typed path itself."""
    line = json.dumps(_full_entity()).encode()
    rows = EntityRows("src")
    assert json_typed.add_line(rows, line)
    n = len(_DATAVALUES)
    assert rows.n_statements == n and len(rows.qualifiers) == 2 * n and len(rows.reference_snaks) == 2 * n
    assert _typed([line]) == _general([line])


def _changed(path: tuple[str | int, ...], value: Any) -> bytes:
    entity = _full_entity()
    at: Any = entity
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return json.dumps(entity).encode() + b","


_STATEMENT = ("claims", "P1", 0)
_ODD_LINES = [
    _changed(("labels",), []), _changed(("labels",), {"en": {"value": None}, "mul": {"value": "M"}}),
    _changed(("labels",), {"en": {"value": 5}}), _changed(("labels", "en"), "One"),
    _changed(("aliases",), {"en": [{"language": "en"}, {"value": "A"}]}),
    _changed(("aliases",), {"en": [], "mul": [{"value": "M"}]}), _changed(("aliases",), {"en": {"a": 1}}),
    _changed(("sitelinks",), []), _changed(("sitelinks",), {}), _changed(("lastrevid",), "12"),
    _changed(("lastrevid",), 2**70), _changed(("lastrevid",), True), _changed(("modified",), 5),
    _changed(("type",), "property"), _changed(("type",), None), _changed(("id",), "L1"),
    _changed(("claims",), []),
    _changed((*_STATEMENT, "rank"), "best"), _changed((*_STATEMENT, "id"), "Q1-A"),
    _changed((*_STATEMENT, "id"), "Q2$A"), _changed((*_STATEMENT, "qualifiers"), []),
    _changed((*_STATEMENT, "qualifiers-order"), ["P580"]), _changed((*_STATEMENT, "qualifiers-order"), []),
    _changed((*_STATEMENT, "references", 0, "hash"), ""),
    _changed((*_STATEMENT, "references", 0, "hash"), None),
    _changed((*_STATEMENT, "references", 0, "snaks-order"), ["P854"]),
    _changed((*_STATEMENT, "references", 0, "snaks"), []),
    *(_changed((*_STATEMENT, "mainsnak", "datavalue"), dv) for dv in _ODD_DATAVALUES),
    _changed((*_STATEMENT, "mainsnak", "snaktype"), "novalue"),
    _changed((*_STATEMENT, "mainsnak", "property"), "P2"),
    _changed(("labels", "fr"), {"value": "\ud800 lone"}),  # a lone surrogate escape in a label skipped
    b'{"type":"item","id":"Q1","labels":{"fr":{"value":"\\ud800"}}}',  # a lone surrogate, skipped
    b'{"type":"item","id":"Q1","labels":{"fr":{"value":"\\ud83d\\ude00"}}}',  # a pair, skipped
    b'{"type":"item","id":"Q1","labels":{"en":{"value":"\\ud83d\\ude00"}}}',  # a pair, read
    b'{"type":"item","id":"Q1","labels":{"fr":{"value":NaN}}}', b'{"type":"item","id":"Q1","x":1e400}',
    b'{"type":"item","id":"Q1","id":"Q2"}', b'{"type":"item","id":"Q1"} x', b'{"type":"item","id":"Q1"},,',
    b'{"type":"item","id":"Q1","claims":{"P31":[{"id":"Q1$a","mainsnak":{"property":"P31",'
    b'"datavalue":{"value":{"id":"Q5"},"type":"wikibase-entityid"}}}]}}',  # the tag after the value
    b"[", b"]", b"", b"[]", b"5", b'"Q1"',
]


@pytest.mark.parametrize("line", _ODD_LINES)
def test_an_odd_field_gives_the_rows_or_error_of_the_general_parser(line: bytes) -> None:
    assert _typed([line]) == _general([line])


def test_a_label_that_is_not_utf8_is_the_general_parsers_bad_line() -> None:
    """``msgspec`` does not check the UTF-8 of the labels it skips: such a chunk is parsed
    the general way, which reports the line."""
    good = b'{"type":"item","id":"Q1","labels":{"fr":{"value":"Zo\xc3\xab"}}},'
    bad = b'{"type":"item","id":"Q2","labels":{"fr":{"value":"Zo\xeb"}}},'
    assert json_typed.typed_text(good) and not json_typed.typed_text(good + bad)
    rows, problems = _typed([good, bad])
    assert (rows, problems) == _general([good, bad])
    assert problems == ["the line is not UTF-8 text (is this a binary file?)"]


@given(data=st.lists(st.sampled_from([b"a", b"\n", b"", b"{}", b" ,", b"\xe9"]), max_size=12).map(b"".join))
def test_a_chunks_lines_are_cut_one_at_a_time_as_split_cuts_them(data: bytes) -> None:
    """``_lines`` gives what ``data.split(b"\\n")`` gave, less the empty piece after a last
    ``\\n`` (and the one empty line of an empty chunk, which parsed to nothing)."""
    expected = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        expected.pop()
    assert list(json_chunks._lines(data)) == expected
