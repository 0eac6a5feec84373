"""How ``p:`` triples and statement nodes are staged: as their ids, so that building the
statement model joins and copies them and takes no string apart.

:mod:`~chaingraph.sources.loaders.ntriples` stages the subject of a ``p:`` triple as the
entity id (``Q42``) and a statement node of the form a ``p:`` triple names as its statement
id (``Q42$GUID``), both on the fast path (:func:`statement_ids`, numpy, writing the ``$``
into the block) and for the lines it reads one by one and Turtle (:func:`staged_entity_id`,
:func:`staged_statement_id`, SQL over the terms as written).

>>> claim_ok("<http://www.wikidata.org/entity/Q42>", "<http://www.wikidata.org/entity/statement/Q42-A>")
True
>>> import re
>>> bool(re.fullmatch(STATEMENT_ID_PATTERN, "Q42$A-B")), bool(re.fullmatch(STATEMENT_ID_PATTERN, "Q42$A>"))
(True, False)
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.ids import ENTITY_PATTERN, VALUE_ENTITY_PATTERN
from chaingraph.sources.loaders.nt_views import (
    Split,
    same_terms,
    starts_with,
    statement_dashes,
    surely_statements,
    views,
)

__all__ = ["CLAIM_O_RE", "ENTITY_PREFIX", "NODE_PREFIX", "STATEMENT_ID_PATTERN", "STRIP_ENTITY_VALUE",
           "claim_ok", "claim_problem", "pair_statements", "staged_entity_id", "staged_statement_id",
           "statement_ids", "statement_values", "truthy_beside_claims"]

#: Statement nodes are staged without this namespace (``Q42-GUID>``: the rest of the IRI,
#: ``>`` kept so no other term can look the same) in the "claim" and "main" groups, where
#: the statement model joins on them; one of the form a ``p:`` triple names
#: (``[QPLqpl][0-9]+-[^$]+``) is staged as its statement id instead (``Q42$GUID``: the first
#: ``-`` turned ``$``, no ``>``), and the subject of a ``p:`` triple that is an entity IRI
#: with a valid id as the id alone (``Q42``). The build then joins and copies them as they
#: are: no string is taken apart per statement.
NODE_PREFIX = "<http://www.wikidata.org/entity/statement/"
_NODE_RE = r"<http://www\.wikidata\.org/entity/statement/[QPLqpl][0-9]+-[^$]+>"
_ENTITY_RE = r"<http://www\.wikidata\.org/entity/" + ENTITY_PATTERN + ">"
#: a staged term that is a statement id, an entity id (SQL regular expressions; other
#: staged terms start with ``<``, ``_:`` or ``"``, or end with ``>``)
STATEMENT_ID_PATTERN = r"[QPLqpl][0-9]+\$[^$>]+"


def staged_statement_id(col: str) -> str:
    """SQL: the statement node ``col`` as staged (see :data:`NODE_PREFIX`)."""
    return (f"CASE WHEN regexp_full_match({col}, '{_NODE_RE}') "
            f"THEN regexp_replace({col}[{len(NODE_PREFIX) + 1}:-2], '-', '$') "
            f"WHEN starts_with({col}, '{NODE_PREFIX}') THEN {col}[{len(NODE_PREFIX) + 1}:] ELSE {col} END")


def staged_entity_id(col: str) -> str:
    """SQL: the subject ``col`` of a ``p:`` triple as staged (see :data:`NODE_PREFIX`)."""
    return (f"CASE WHEN regexp_full_match({col}, '{_ENTITY_RE}') THEN {col}[{len(ENTITY_PREFIX) + 1}:-2] "
            f"ELSE {col} END")


#: entity IRIs (the id after it is staged alone where it is a valid one, see ``NODE_PREFIX``)
ENTITY_PREFIX = "<http://www.wikidata.org/entity/"

#: The object of a ``ps:``/``pq:``/``pr:`` triple that is an entity IRI with a valid id is
#: staged as the id alone (``Q5``: no other term starts with a letter); the statement
#: model then needs no pattern matching for the bulk of a dump's values (``ENTITY_PREFIX``).
STRIP_ENTITY_VALUE = (
    f"CASE WHEN k IN ('ps', 'pq', 'pr') AND starts_with(o, '{ENTITY_PREFIX}') AND ends_with(o, '>') "
    f"AND regexp_full_match(o[{len(ENTITY_PREFIX) + 1}:-2], '{VALUE_ENTITY_PATTERN}') "
    f"THEN o[{len(ENTITY_PREFIX) + 1}:-2] ELSE o END")


def statement_ids(split: Split, start: npt.NDArray[np.int64], end: npt.NDArray[np.int64], *,
                  valid: bool) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Where the terms ``[start, end)`` of a block are as staged (see :data:`NODE_PREFIX`):
    a statement node of the ``p:`` form becomes its statement id, its first ``-`` turned
    ``$`` in the block itself (it is not read again), any other statement node loses its
    namespace, and other terms stay. ``valid``: every term is a statement node of the
    ``p:`` form (checked before)."""
    buf = split.buf
    if valid:
        dash = statement_dashes(buf, start + len(NODE_PREFIX))
        sure = buf[dash] == _DASH
    else:
        sure, dash = surely_statements(split, start, end)
    unsure = np.flatnonzero(~sure)
    if len(unsure) and not valid:
        unsure = unsure[starts_with(buf, start[unsure], end[unsure], _NODE_BYTES)]
    for i in unsure:  # long digit runs, '$' or no such node: the regular expression decides
        term = bytes(split.data[start[i]:end[i]])
        if valid or CLAIM_O_RE.fullmatch(term.decode()):
            sure[i] = True
            dash[i] = start[i] + term.index(b"-", len(NODE_PREFIX))
    ids = np.flatnonzero(sure)
    buf[dash[ids]] = _DOLLAR
    np.frombuffer(split.data, dtype=np.uint8)[dash[ids]] = _DOLLAR
    if valid:
        return start + len(NODE_PREFIX), end - 1
    stripped = starts_with(buf, start, end, _NODE_BYTES)
    return start + len(NODE_PREFIX) * stripped, end - sure


Index = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


def pair_statements(buf: npt.NDArray[np.uint8], claim: tuple[Index, Index, Index, Index],
                    value: tuple[Index, Index, Index, Index]) -> tuple[Index, Index]:
    """The ``p:`` triples of a block whose statement's ``ps:`` triple with a plain entity
    value follows (its value can be staged with the ``p:`` triple, see ``NODE_PREFIX``).

    ``claim`` is (row in the block, start and end of the staged statement id, property number)
    per ``p:`` triple, ``value`` the same per ``ps:`` triple (its subject as staged), both in
    row order. A ``p:`` triple pairs with the first ``ps:`` triple after it when that names
    the same statement id and property; returns the (claim, value) positions of the pairs.
    A dump writes a statement's triples together, so this pairs nearly all of them; the rest
    are staged as they are and joined by the build.
    """
    (c_row, c_from, c_to, c_prop), (v_row, v_from, v_to, v_prop) = claim, value
    none = np.zeros(0, dtype=np.int64)
    if len(c_row) == 0 or len(v_row) == 0:
        return none, none
    after = np.searchsorted(v_row, c_row)
    ci = np.flatnonzero(after < len(v_row))
    vi = after[ci]
    length = c_to[ci] - c_from[ci]
    ok = (length == v_to[vi] - v_from[vi]) & (c_prop[ci] == v_prop[vi])
    ci, vi, length = ci[ok], vi[ok], length[ok]
    same = same_terms(buf, c_from[ci], v_from[vi], length)
    return ci[same], vi[same]


def statement_values(split: Split, rows: Index, prop: npt.NDArray[np.int64], claims: list[Any],
                     main: list[Any], ps: Index) -> tuple[pa.Array, list[Any]]:
    """The plain entity value of each ``p:`` triple whose ``ps:`` triple follows it in the
    block (:func:`pair_statements`; null for the others), and ``main`` without those ``ps:``
    triples. ``claims`` and ``main`` are (position in ``rows``, subject start and end, object
    start and end) of the block's ``p:`` triples and of its other staged triples as staged,
    ``ps`` the positions in ``main`` of the ``ps:`` triples with a plain entity value, ``prop``
    the property number of each row."""
    take, s_start, s_end, o_from, o_to = main
    ps = ps[s_end[ps] == split.s_end[rows[take[ps]]] - 1]  # the subject is staged as a statement id
    c, v = pair_statements(split.buf, (rows[claims[0]], claims[3], claims[4], prop[claims[0]]),
                           (rows[take[ps]], s_start[ps], s_end[ps], prop[take[ps]]))
    n = len(claims[0])
    starts, ends = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    starts[c], ends[c] = o_from[ps[v]], o_to[ps[v]]
    paired = np.zeros(n, dtype=np.bool_)
    paired[c] = True
    strings = views(split.buf, starts, ends, split.data).cast(pa.string())  # '' where not paired
    values = pa.Array.from_buffers(pa.string(), n, [pa.py_buffer(np.packbits(paired, bitorder="little")),
                                                    *strings.buffers()[1:]], null_count=n - len(c))
    kept = np.ones(len(take), dtype=np.bool_)
    kept[ps[v]] = False
    return values, [column[kept] for column in main]


def truthy_beside_claims(split: Split, rows: Index, truthy: Mask, claim: Mask, prop: npt.NDArray[np.int64],
                         stop: int) -> Mask:
    """``wdt:`` rows (``truthy``) next to (just before or after) the ``p:`` row (``claim``) of
    the same subject and property (``prop``, a number per row): they would be ignored anyway
    (a truthy triple counts only where its subject has no ``p:`` statement of that property),
    and a dump writes an entity's truthy and full statements side by side, so this drops
    nearly all of them before they are staged. Any other ``wdt:`` row is staged, and the build
    decides; so is one whose ``p:`` row is at or after ``stop``, the row of a bad line that
    stops staging."""
    out = np.zeros(len(rows), dtype=np.bool_)
    at = np.flatnonzero(truthy)
    if len(at) == 0:
        return out

    def subjects(i: Index) -> pa.Array:
        return views(split.buf, split.s_start[rows[i]], split.s_end[rows[i]], split.data)

    for step in (1, -1):
        other = at + step
        near = at[(other >= 0) & (other < len(rows))]
        other = near + step
        pair = claim[other] & (prop[near] == prop[other]) & (rows[other] < stop)
        near, other = near[pair], other[pair]
        if len(near):
            out[near[pc.equal(subjects(near), subjects(other)).to_numpy(zero_copy_only=False)]] = True
    return out


_NODE_BYTES = NODE_PREFIX.encode()
_DOLLAR, _DASH = ord("$"), ord("-")


CLAIM_S_RE = re.compile(r"<http://www\.wikidata\.org/entity/" + ENTITY_PATTERN + ">")
CLAIM_O_RE = re.compile(r"<http://www\.wikidata\.org/entity/statement/[QPLqpl][0-9]+-[^$]+>")


def claim_ok(s: str, o: str) -> bool:
    return bool(CLAIM_S_RE.fullmatch(s) and CLAIM_O_RE.fullmatch(o))


def claim_problem(s: str, o: str) -> str:
    return f"subject {s} or statement {o} is not a Wikidata entity / statement IRI"
