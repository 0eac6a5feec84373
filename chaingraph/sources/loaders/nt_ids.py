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

import numpy as np
import numpy.typing as npt

from chaingraph.ids import ENTITY_PATTERN
from chaingraph.sources.loaders.nt_views import Split, starts_with, statement_dashes, surely_statements

__all__ = ["CLAIM_O_RE", "ENTITY_PREFIX", "NODE_PREFIX", "STATEMENT_ID_PATTERN", "claim_ok", "claim_problem",
           "staged_entity_id", "staged_statement_id", "statement_ids"]

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


_NODE_BYTES = NODE_PREFIX.encode()
_DOLLAR, _DASH = ord("$"), ord("-")


CLAIM_S_RE = re.compile(r"<http://www\.wikidata\.org/entity/" + ENTITY_PATTERN + ">")
CLAIM_O_RE = re.compile(r"<http://www\.wikidata\.org/entity/statement/[QPLqpl][0-9]+-[^$]+>")


def claim_ok(s: str, o: str) -> bool:
    return bool(CLAIM_S_RE.fullmatch(s) and CLAIM_O_RE.fullmatch(o))


def claim_problem(s: str, o: str) -> str:
    return f"subject {s} or statement {o} is not a Wikidata entity / statement IRI"
