"""The rows a block of N-Triples stages: from a block's split lines
(:func:`~chaingraph.sources.loaders.nt_views.split_lines`) and each row's classified
predicate, the Arrow tables appended to the staging groups (:func:`block_tables`), and the
``p:`` triples that are not a Wikidata entity and statement (:func:`bad_claims`). What
matters is kept and copied out of the block; what cannot matter is dropped here, before
DuckDB sees it (:mod:`~chaingraph.sources.loaders.ntriples` has the list).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.sources.loaders.nt_ids import (
    ENTITY_PREFIX,
    claim_ok,
    claim_problem,
    statement_ids,
    statement_values,
    truthy_beside_claims,
)
from chaingraph.sources.loaders.nt_roles import GROUP_OF_CODE, KINDS
from chaingraph.sources.loaders.nt_views import (
    ESCAPED,
    PLAIN,
    Split,
    equals,
    starts_with,
    surely_claims,
    surely_entity_values,
    views,
)

__all__ = ["CLAIMS", "KIND_CODE", "NORMAL_RANK", "STAGED", "Append", "bad_claims", "block_tables"]

#: the rank a statement has unless a triple says otherwise (not staged)
NORMAL_RANK = "<http://wikiba.se/ontology#NormalRank>"
#: the code of each staged role (:data:`~.nt_roles.KINDS`)
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
_KIND_NAMES = pa.array(KINDS, pa.string())
_TERM_CODES = [KIND_CODE[k] for k in ("label", "description", "alias")]
_NOVALUE_PREFIX = b"<http://www.wikidata.org/prop/novalue/"
_VALUE_CODES = [KIND_CODE[k] for k in ("ps", "pq", "pr")]

#: staging group and its rows (line within the block, k, pid, s, o), strings copied out of the block
Append = tuple[str, pa.Table]
#: a staging table's rows
STAGED = pa.schema([("line", pa.int64()), ("k", pa.string()), ("pid", pa.string()), ("s", pa.string()),
                     ("o", pa.string())])
#: ``p:`` triples are staged with the plain entity value of their statement where its ``ps:``
#: triple follows them (``v``, see :func:`~chaingraph.sources.loaders.nt_ids.pair_statements`)
CLAIMS = STAGED.append(pa.field("v", pa.string()))


def bad_claims(split: Split, rows: npt.NDArray[np.int64]) -> dict[int, str]:
    """``p:`` triples among ``rows`` whose subject is no entity IRI or whose object is no
    statement IRI: row -> problem."""
    unsure = rows[~surely_claims(split, rows)]
    problems = {}
    for i in unsure:
        s = split.data[split.s_start[i]:split.s_end[i]].decode()
        o = split.data[split.o_start[i]:split.o_end[i]].decode()
        if not claim_ok(s, o):
            problems[int(i)] = claim_problem(s, o)
    return problems


def block_tables(split: Split, rows: npt.NDArray[np.int64], kind: npt.NDArray[np.int8],
                 entry: npt.NDArray[np.int32], pids: pa.Array, stop: int,
                 groups: Sequence[str]) -> list[Append]:
    """The appends that stage the fast-path ``rows`` of a block whose predicate matters
    (``kind``: each row's role code, ``entry``: its predicate's number in ``pids``, the
    property ids; ``stop``: the first row not to stage; ``groups``: the staging groups, in
    the order of :data:`~.nt_roles.GROUP_OF_CODE`'s numbers), as (staging group, Arrow
    table of its rows, numbered within the block and copied out of it)."""
    out: list[Append] = []
    if len(rows) == 0:
        return out
    buf, data = split.buf, split.data
    o_start, o_end = split.o_start[rows], split.o_end[rows]
    keep = kind >= 0
    # rdf:type matters only for novalue classes (wdno:); normal rank is the default
    typed = np.flatnonzero(kind == KIND_CODE["type"])
    keep[typed] = starts_with(buf, o_start[typed], o_end[typed], _NOVALUE_PREFIX)
    ranked = np.flatnonzero(kind == KIND_CODE["rank"])
    keep[ranked] = ~equals(buf, o_start[ranked], o_end[ranked], NORMAL_RANK.encode())
    # labels, descriptions and aliases count in English or mul only; the others just say
    # that their subject is an entity
    terms = np.flatnonzero(np.isin(kind, _TERM_CODES))
    literal, suffix = split.literal[rows[terms]], split.suffix_start[rows[terms]]
    english = (literal == ESCAPED) | ((literal == PLAIN) & (
        equals(buf, suffix, o_end[terms], b"@en") | equals(buf, suffix, o_end[terms], b"@mul")))
    seen = terms[~english]
    keep[seen] = False
    prop = pc.dictionary_encode(pids, null_encoding="encode").indices.to_numpy()[entry]  # per row
    is_claim = kind == KIND_CODE["claim"]
    keep &= ~truthy_beside_claims(split, rows, kind == KIND_CODE["wdt"], is_claim, prop, stop)
    keep &= rows < stop
    lines = rows  # numbered within the block until it is appended
    group = GROUP_OF_CODE[np.maximum(kind, 0)]
    parts: dict[str, list[Any]] = {}  # group -> positions in rows, s and o start and end
    plain = np.zeros(0, dtype=np.int64)
    for number, name in enumerate(groups):
        take = np.flatnonzero(keep & (group == number))
        if len(take) == 0:
            continue
        r = rows[take]
        s_start, s_end, o_from, o_to = split.s_start[r], split.s_end[r], o_start[take], o_end[take]
        if name == "claim":  # entity id and statement id (see NODE_PREFIX); every p: row here is valid
            s_start, s_end = s_start + len(ENTITY_PREFIX), s_end - 1
            o_from, o_to = statement_ids(split, o_from, o_to, valid=True)
        elif name == "main":  # statement nodes as such (see NODE_PREFIX)
            s_start, s_end = statement_ids(split, s_start, s_end, valid=False)
            # entity values of snaks are staged as their ids (see ENTITY_PREFIX)
            values = np.flatnonzero(np.isin(kind[take], _VALUE_CODES))
            plain = values[surely_entity_values(buf, o_from[values], o_to[values])]
            o_from, o_to = o_from.copy(), o_to.copy()
            o_from[plain] += len(ENTITY_PREFIX)
            o_to[plain] -= 1
        parts[name] = [take, s_start, s_end, o_from, o_to]
    if "claim" in parts and "main" in parts:  # p: triples with the plain value of their ps: triple
        ps = plain[kind[parts["main"][0][plain]] == KIND_CODE["ps"]]
        value, parts["main"] = statement_values(split, rows, prop, parts["claim"], parts["main"], ps)
    elif "claim" in parts:
        value = pa.nulls(len(parts["claim"][0]), pa.string())
    for name, (take, s_start, s_end, o_from, o_to) in parts.items():
        columns = [pa.array(lines[take]), _KIND_NAMES.take(pa.array(kind[take])),
                   pids.take(pa.array(entry[take])),
                   views(buf, s_start, s_end, data).cast(pa.string()),  # copied: the block can go
                   views(buf, o_from, o_to, data).cast(pa.string())]
        if name == "claim":
            columns.append(value)
        out.append((name, pa.table(columns, schema=CLAIMS if name == "claim" else STAGED)))
    seen = seen[rows[seen] < stop]
    if len(seen):  # one row per subject: the first
        r = rows[seen]
        subjects = pa.table({"line": pa.array(lines[seen]),
                             "s": views(buf, split.s_start[r], split.s_end[r], data).cast(pa.string())})
        first = subjects.group_by("s", use_threads=False).aggregate([("line", "min")])
        n = first.num_rows
        out.append(("terms", pa.table([first["line_min"], pa.repeat("seen", n), pa.nulls(n, pa.string()),
                                       first["s"], pa.nulls(n, pa.string())], schema=STAGED)))
    return out
