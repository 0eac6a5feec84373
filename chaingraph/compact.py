"""The compact arrays behind an evidence graph, built with vectorised operations.

:func:`build_arrays` turns statement columns (Arrow string arrays, as the store reads
them) into integer arrays: vertices numbered in id order, edges sorted by (subject,
property, object, statement id) with literal statements after them, property codes, and
a CSR adjacency over both directions of every edge, sorted by (neighbour id, property,
statement id, direction). Memory is a small multiple of the edge count and no Python
object is made per edge: strings are encoded by Arrow, sorting is numpy on integer keys,
and statement ids are compared as strings only where two arcs tie on everything else
(parallel statements). Class edges (``P31``/``P279``) come back as a small table.

>>> import pyarrow as pa
>>> a = build_arrays(pa.array(["s2", "s1"]), pa.array(["Q2", "Q1"]), pa.array(["P1", "P1"]),
...                  pa.array(["Q3", "Q2"]), class_properties=frozenset(), allows=lambda p: True)
>>> a.names.to_pylist(), a.src.tolist(), a.dst.tolist(), a.statement_ids.to_pylist()
(['Q1', 'Q2', 'Q3'], [0, 1], [1, 2], ['s1', 's2'])
>>> a.indptr.tolist(), a.nbr.tolist(), a.fwd.tolist()
([0, 1, 3, 4], [1, 0, 2, 1], [True, False, True, False])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.id_codes import item_codes
from chaingraph.keysort import Key, Workspace, sort_rows
from chaingraph.keysort import spans as _spans
from chaingraph.pages import small_pages

__all__ = ["GraphArrays", "build_arrays", "item_mask"]

_ITEM_PATTERN = "^Q[1-9][0-9]{0,11}$"
#: Arrow's temporaries here come from the C allocator, as numpy's do, so memory one side frees
#: is reused by the other (Arrow's default pool keeps its own, and the build's peak was the sum)
_POOL = pa.system_memory_pool()


@dataclass(frozen=True)
class GraphArrays:
    """Everything :class:`~chaingraph.graph.EvidenceGraph` keeps, as arrays.

    ``names``: vertex ids in sorted order (vertex ``v`` is ``names[v]``); ``src``/``dst``:
    edge endpoints in Wikidata direction; ``prop``: property code per edge into
    ``properties``; ``statement_ids``: per edge; ``indptr``/``nbr``/``arc_edge``/``fwd``:
    the CSR adjacency (arcs of ``v`` are ``indptr[v]:indptr[v + 1]``); ``literal``: per
    vertex; ``classes``: class edges as a table (``subject``, ``property``, ``object``);
    ``excluded``: item edges the policy keeps out (``statement_id``, ``subject``,
    ``property``, ``object``).
    """

    names: pa.Array
    src: np.ndarray
    dst: np.ndarray
    prop: np.ndarray
    properties: tuple[str, ...]
    statement_ids: pa.Array
    indptr: np.ndarray
    nbr: np.ndarray
    arc_edge: np.ndarray
    fwd: np.ndarray
    literal: np.ndarray
    classes: pa.Table
    excluded: pa.Table


def _strings(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    arr = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
    return arr.cast(pa.string()) if arr.type != pa.string() else arr


def _concat(arrays: list[pa.ChunkedArray]) -> pa.ChunkedArray:
    """Concatenate without copying (the chunks are shared)."""
    return pa.chunked_array([c for a in arrays for c in a.chunks], type=pa.string())


def _sorted_codes(values: pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Distinct values in sorted order and the code of every element (int32, as Arrow's
    dictionary indices are)."""
    if len(values) == 0:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int32)
    enc = pc.dictionary_encode(values, memory_pool=_POOL).unify_dictionaries(memory_pool=_POOL)
    dictionary = enc.chunk(0).dictionary
    order = pc.sort_indices(dictionary, memory_pool=_POOL).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    codes = np.empty(len(values), dtype=np.int32)
    at = 0
    for c in enc.chunks:  # written in place: no per-chunk copies to concatenate
        indices = c.indices.to_numpy(zero_copy_only=False)
        for a, b in _spans(len(c)):  # (``take`` copies int32 indices to int64 first: a block at a time)
            np.take(rank, indices[a:b], out=codes[at + a:at + b], mode="clip")
        at += len(c)
    return pc.take(dictionary, pa.array(order, type=pa.int64()), memory_pool=_POOL), codes


def _joined(values: pa.ChunkedArray) -> pa.Array:
    """The chunks as one array (a copy only when there are several; ``combine_chunks``
    would ignore the memory pool)."""
    if values.num_chunks == 1:
        return values.chunk(0)
    if values.num_chunks == 0:
        return pa.array([], type=values.type)
    return pa.concat_arrays(values.chunks, memory_pool=_POOL)


def _take(values: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``values[rows]`` as one array. Arrow's ``take`` on a chunked array first joins every
    chunk (a copy of the whole column, even for a handful of rows), so a few rows are taken
    chunk by chunk instead, and most of the column by :func:`_gather_strings`."""
    index = pa.array(rows)  # int32 or int64, as they come (no copy)
    if values.num_chunks <= 1:
        return pc.take(_joined(values), index, memory_pool=_POOL)
    if len(rows) * 4 >= len(values):
        gathered = _gather_strings(values, rows)
        return gathered if gathered is not None else pc.take(_joined(values), index, memory_pool=_POOL)
    bounds = np.cumsum([0, *(len(c) for c in values.chunks)])
    chunk = np.searchsorted(bounds, rows, side="right") - 1
    by_chunk = np.argsort(chunk, kind="stable")
    ends = np.searchsorted(chunk[by_chunk], np.arange(values.num_chunks + 1))
    parts = [pc.take(values.chunk(c), pa.array(rows[by_chunk[ends[c]:ends[c + 1]]] - bounds[c]),
                     memory_pool=_POOL) for c in range(values.num_chunks)]
    taken = pa.concat_arrays(parts, memory_pool=_POOL)
    back = np.empty(len(rows), dtype=np.int64)
    back[by_chunk] = np.arange(len(rows), dtype=np.int64)
    return pc.take(taken, pa.array(back), memory_pool=_POOL)


def _gather_strings(values: pa.ChunkedArray, rows: np.ndarray, block: int = 1 << 16) -> pa.Array | None:
    """``values[rows]`` for most of a string column in several chunks, written straight
    into the result's buffers: no joined copy of the column (Arrow's ``take`` makes one, the
    build's largest transient). Rows of one chunk and one byte length are moved as
    fixed-width rows (overlapping windows of the byte buffers), ``block`` at a time.
    ``None`` when the column has nulls or is too large for 32-bit offsets, or when its
    strings come in too many distinct lengths for this to pay."""
    if values.null_count or values.type != pa.string() or len(rows) == 0:
        return None
    bounds = np.cumsum([0, *(len(c) for c in values.chunks)])
    chunk = (np.searchsorted(bounds, rows, side="right") - 1).astype(np.int32)
    start = np.empty(len(rows), dtype=np.int64)
    length = np.empty(len(rows), dtype=np.int32)
    for c, part in enumerate(values.chunks):
        sel = np.flatnonzero(chunk == c)
        offsets = np.frombuffer(part.buffers()[1], dtype=np.int32, count=len(part) + 1,
                                offset=4 * part.offset)
        local = rows[sel] - bounds[c]
        start[sel] = offsets[local]
        length[sel] = offsets[local + 1] - offsets[local]
    groups = np.unique(chunk.astype(np.int64) << 32 | length)
    total = int(length.sum(dtype=np.int64))
    if total >= 2**31 or len(groups) > 512:
        return None
    out_offsets = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(length, out=out_offsets[1:])
    data = np.empty(total, dtype=np.uint8)
    for g in groups.tolist():
        c, width = g >> 32, g & 0xFFFFFFFF
        if width == 0:
            continue
        members = np.flatnonzero((chunk == c) & (length == width))
        raw = values.chunk(c).buffers()[2]
        source = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, dtype=np.uint8)
        src = np.lib.stride_tricks.as_strided(source, (len(source) - width + 1, width), (1, 1),
                                              writeable=False)
        dst = np.lib.stride_tricks.as_strided(data, (total - width + 1, width), (1, 1))
        for i in range(0, len(members), block):
            at = members[i:i + block]
            dst[out_offsets[at]] = src[start[at]]
    buffers = [None, pa.py_buffer(out_offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.string(), len(rows), buffers)


def _take_sids(sids: pa.Array, edges: np.ndarray) -> pa.Array:
    """``sids[edges]``."""
    return pc.take(sids, pa.array(edges), memory_pool=_POOL)


def _string_rank(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Dense rank of each string among ``values`` (equal strings, equal rank)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    if isinstance(values, pa.ChunkedArray):
        values = _joined(values)
    ranked = pc.rank(values, sort_keys="ascending", tiebreaker="dense", memory_pool=_POOL)
    return np.asarray(ranked.to_numpy(zero_copy_only=False), dtype=np.int64)


def _order(keys: list[np.ndarray], sids: pa.ChunkedArray, rows_of: np.ndarray | None,
           work: Workspace | None = None, in_place: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Indices sorting rows by ``keys`` (most significant first), ties by statement id
    (row ``i`` has statement id ``sids[rows_of[i]]``, ``sids[i]`` without ``rows_of``),
    and the keys in that order (out of :func:`~chaingraph.keysort.sort_rows`, which
    empties ``keys`` and says which rows tie; ``in_place``: written over the keys given);
    only rows that tie on the keys compare their statement ids as strings. With ``work``
    (lent to the sort), the order is a view of it."""
    n = len(keys[0]) if keys else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64), [k[:0] for k in keys]
    order, kept, tie = sort_rows(keys, work=work, out=list(keys) if in_place else None)
    ordered = [k for k in kept if k is not None]
    if len(tie):
        members, run = _runs(tie, n, numbered=True)
        rows = order[members]
        rank = _string_rank(_take(sids, rows if rows_of is None else rows_of[rows]))
        # runs are in key order already: one sort by (run, rank), stable as a lexsort by
        # (keys, rank) is, instead of a lexsort pass (and a gather) per key
        np.left_shift(run, int(rank.max()).bit_length(), out=run)
        order[members] = rows[np.argsort(run | rank, kind="stable")]
    return order, ordered


def item_mask(names: pa.Array) -> np.ndarray:
    """True where a string is an item id (``Q`` + digits)."""
    if len(names) == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(pc.fill_null(pc.match_substring_regex(names, _ITEM_PATTERN, memory_pool=_POOL), False)
                      .to_numpy(zero_copy_only=False), dtype=bool)


def build_arrays(statement_id: pa.Array, subject: pa.Array, property: pa.Array, object: pa.Array,
                 *, class_properties: frozenset[str], allows: Callable[[str], bool],
                 literal_statement_id: pa.Array | None = None, literal_subject: pa.Array | None = None,
                 literal_property: pa.Array | None = None) -> GraphArrays:
    """Encode item edges ``(statement_id, subject, property, object)`` and, when given,
    literal statements ``(literal_statement_id, literal_subject, literal_property)`` (each
    becomes a terminal vertex ``"<statement id>#value"``) under a traversal policy given
    as its class properties and its ``allows(property)`` rule.

    The build's arrays get small memory pages (:func:`~chaingraph.pages.small_pages`:
    numpy's huge-page advice off while it runs, restored after)."""
    with small_pages():
        return _build_arrays(statement_id, subject, property, object, class_properties=class_properties,
                             allows=allows, literal_statement_id=literal_statement_id,
                             literal_subject=literal_subject, literal_property=literal_property)


def _build_arrays(statement_id: pa.Array, subject: pa.Array, property: pa.Array, object: pa.Array,
                  *, class_properties: frozenset[str], allows: Callable[[str], bool],
                  literal_statement_id: pa.Array | None, literal_subject: pa.Array | None,
                  literal_property: pa.Array | None) -> GraphArrays:
    sid, subj, prop, obj = (_strings(a) for a in (statement_id, subject, property, object))
    has_lit = all(a is not None for a in (literal_statement_id, literal_subject, literal_property))
    empty = pa.chunked_array([], type=pa.string())
    lsid = _strings(literal_statement_id) if has_lit else empty
    lsubj = _strings(literal_subject) if has_lit else empty
    lprop = _strings(literal_property) if has_lit else empty

    # properties: one code each, in id order; policy decided once per property
    all_props, pcodes = _sorted_codes(_concat([prop, lprop]))  # (few: hashing beats parsing)
    properties = tuple(all_props.to_pylist())
    is_class = np.fromiter((p in class_properties for p in properties), dtype=bool, count=len(properties))
    allowed = np.fromiter((allows(p) for p in properties), dtype=bool, count=len(properties))
    m_all = len(sid)
    ip, lp = pcodes[:m_all], pcodes[m_all:]
    class_mask, step_mask = is_class[ip], allowed[ip]
    excluded_mask = ~class_mask & ~step_mask
    lit_keep = np.flatnonzero(allowed[lp]) if len(lp) else np.zeros(0, dtype=np.int64)

    def pick(a: pa.ChunkedArray, mask: np.ndarray) -> pa.ChunkedArray:
        return pc.filter(a, pa.array(mask, type=pa.bool_()), memory_pool=_POOL)

    def take(a: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
        return pc.take(a, pa.array(rows, type=pa.int64()), memory_pool=_POOL)

    # the sorts' words (one int64 per arc, two for keys too wide for buckets) are one
    # workspace for them all, its pages faulted in once; until the arc sort needs all of it,
    # its last half (as int32) holds the step rows, then the statement rows of the edges
    k = int(np.count_nonzero(step_mask))
    every = k == m_all  # every statement a step: no rows to select, and when every vertex
    # is then used, no renumbering (each a gather of millions of rows saved)
    ml = len(lit_keep)
    arcs = 2 * (k + ml)
    work = Workspace(arcs)
    spare = work.words(0, arcs).view(np.int32)[arcs:] if m_all < 2**31 else None
    step_rows = None if every else _flatnonzero(step_mask, spare)
    class_rows = np.flatnonzero(class_mask)
    lit_node = (pc.binary_join_element_wise(take(lsid, lit_keep), "#value", "", memory_pool=_POOL)
                if len(lit_keep) else empty)

    # vertices: every step endpoint, class-edge subject, literal subject and literal node,
    # numbered in id order (strings are encoded once, then only integers move)
    ends = _concat([subj, obj, lsubj, lit_node])
    dictionary, vcodes = item_codes(ends) or _sorted_codes(ends)
    del ends
    ml_all = len(lsid)
    s_all, o_all = vcodes[:m_all], vcodes[m_all:2 * m_all]
    ls_all, ln_code = vcodes[2 * m_all:2 * m_all + ml_all], vcodes[2 * m_all + ml_all:]
    used = np.zeros(len(dictionary), dtype=bool)
    for a, b in _spans(k):  # a block of step rows at a time: no array of their codes
        rows = slice(a, b) if step_rows is None else step_rows[a:b]
        used[s_all[rows]] = True
        used[o_all[rows]] = True
    for part in (s_all[class_rows], ls_all[lit_keep], ln_code):
        used[part] = True
    if used.all():
        names, n, renumber = dictionary, len(dictionary), None
        ls_code, ln_code = ls_all[lit_keep], ln_code.copy()  # (not views that keep every code alive)
    else:
        renumber = np.cumsum(used, dtype=np.int32) - 1
        names = pc.take(dictionary, pa.array(np.flatnonzero(used), type=pa.int64()), memory_pool=_POOL)
        n = len(names)
        ls_code, ln_code = renumber[ls_all[lit_keep]], renumber[ln_code]
    # the step rows' codes, renumbered, written over the codes of all rows (no new arrays)
    s_code = _select(s_all, step_rows, renumber, vcodes[:k])
    o_code = _select(o_all, step_rows, renumber, vcodes[k:2 * k])
    p_code, lp_code = _select(ip, step_rows, None, pcodes[:k]), lp[lit_keep]
    keys = [s_code, p_code, o_code]  # the sort lets go of each key when done with it
    del s_all, o_all, ls_all, used, renumber, ip, lp

    # edges: literals by (subject, property, statement id), then items by (subject,
    # property, object, statement id), whose keys take their sorted values
    l_order, (ls_l, lp_l) = _order([ls_code, lp_code], lsid, lit_keep, work)
    ln_l, lit_rows = ln_code[l_order], m_all + lit_keep[l_order]
    del ls_code, ln_code, lp_code, l_order, lit_keep
    e_order, (s_e, p_e, o_e) = _order(keys, sid, step_rows, work, in_place=True)
    del s_code, o_code, p_code
    m = len(e_order)
    # the statement row of each edge, written over the order (int32, a block at a time)
    front = work.words(0, m).view(np.int32)[:m] if m_all < 2**31 else None
    sid_rows = _select(e_order, None, step_rows, front)
    if sid_rows is e_order:  # (every statement a step, too many for int32 rows)
        sid_rows = e_order.copy()
    del e_order, step_rows, spare, step_mask, front
    if ml:
        sid_rows = np.concatenate([sid_rows, lit_rows])
    # statement ids in edge order, before the arc sort takes the whole workspace (its ties
    # read theirs from here)
    all_sids = _concat([sid, lsid])
    sids = _take(all_sids, sid_rows)
    del sid_rows, lit_rows, all_sids
    if ml:
        src, dst, eprop = (np.concatenate([a, b], dtype=np.int32)
                           for a, b in ((s_e, ls_l), (o_e, ln_l), (p_e, lp_l)))
    else:  # the sorted keys themselves, unless they would keep much larger code arrays alive
        views = 8 * vcodes.nbytes <= 9 * (s_e.nbytes + o_e.nbytes)
        src, dst = (s_e, o_e) if views else (s_e.copy(), o_e.copy())
        eprop = p_e if 8 * pcodes.nbytes <= 9 * p_e.nbytes else p_e.copy()
    del s_e, p_e, o_e, ls_l, lp_l, ln_l, vcodes, pcodes
    del class_rows
    # CSR adjacency over both directions, by (neighbour, property, statement id, forward)
    edge_dtype = np.int32 if m + ml < 2**31 else np.int64
    sid_of = partial(_take_sids, sids)
    degree, arc_order, nbr_sorted = _arc_order(src, dst, eprop, n, sid_of, work)
    del work  # a buffer that does not hold the order goes now
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    arc_edge_sorted, nbr_sorted, fwd = _split_arcs(arc_order, nbr_sorted, edge_dtype)
    del arc_order

    classes = pa.table({"subject": pick(subj, class_mask), "property": pick(prop, class_mask),
                        "object": pick(obj, class_mask)})
    excluded = pa.table({"statement_id": pick(sid, excluded_mask), "subject": pick(subj, excluded_mask),
                         "property": pick(prop, excluded_mask), "object": pick(obj, excluded_mask)})
    pa.default_memory_pool().release_unused()  # hand the temporaries back before the caller goes on
    return GraphArrays(names=names, src=src, dst=dst, prop=eprop, properties=properties,
                       statement_ids=sids, indptr=indptr, nbr=nbr_sorted, arc_edge=arc_edge_sorted,
                       fwd=fwd, literal=~item_mask(names), classes=classes, excluded=excluded)


def _split_arcs(order: np.ndarray, nbr: np.ndarray, edge_dtype: type[np.signedinteger[Any]]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edge (``order >> 1``), neighbour and direction (``order & 1``) of each sorted arc.
    When ``order`` (int64) is all of its memory and edges and neighbours fit int32, that
    memory holds the edges (its first half) and the neighbours (its second half), which are
    copied there: two arrays of int32 in pages the sort has touched, one of them new.

    >>> order = np.array([5, 0, 3])
    >>> [a.tolist() for a in _split_arcs(order, np.array([7, 8, 9], dtype=np.int32), np.int32)]
    [[2, 0, 1], [7, 8, 9], [True, False, True]]
    >>> np.shares_memory(order, _split_arcs(order, np.array([7, 8, 9], dtype=np.int32), np.int32)[1])
    True
    """
    n = len(order)
    fwd = np.empty(n, dtype=bool)
    owner = order if order.base is None else order.base
    if not (order.dtype == np.int64 and owner.nbytes == order.nbytes and order.flags.c_contiguous
            and edge_dtype == np.int32 and nbr.dtype == np.int32 and n):
        edge = np.empty(n, dtype=edge_dtype)
        for a, b in _spans(n):
            np.bitwise_and(order[a:b], 1, out=fwd[a:b], casting="unsafe")
            np.right_shift(order[a:b], 1, out=edge[a:b], casting="unsafe")
        return edge, nbr, fwd
    halves = order.view(np.int32)  # 2n int32 over the same bytes
    for a, b in _spans(n):  # edge i lands in word i // 2, read before: a block at a time, read first
        block = order[a:b].copy()
        np.bitwise_and(block, 1, out=fwd[a:b], casting="unsafe")
        np.right_shift(block, 1, out=halves[a:b], casting="unsafe")
    halves[n:] = nbr  # the second half: words n // 2 on, all read
    return halves[:n], halves[n:], fwd


def _flatnonzero(mask: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.flatnonzero(mask)``, in int32 when that holds every position (half the bytes),
    into the front of ``out`` (int32) when given.

    >>> _flatnonzero(np.array([False, True, True])).tolist()
    [1, 2]
    """
    if len(mask) >= 2**31:
        return np.flatnonzero(mask)
    count = int(np.count_nonzero(mask))
    out = np.empty(count, dtype=np.int32) if out is None else out[:count]
    at = 0
    for a, b in _spans(len(mask)):
        part = np.flatnonzero(mask[a:b])
        np.add(part, a, out=out[at:at + len(part)], casting="unsafe")
        at += len(part)
    return out


def _select(codes: np.ndarray, rows: np.ndarray | None, table: np.ndarray | None,
            out: np.ndarray | None = None) -> np.ndarray:
    """``table[codes[rows]]`` (``codes`` when ``rows`` is ``None``; no ``table``: the codes
    themselves), a block at a time: no whole-array temporary between the two gathers.
    A copy only when something is selected or renumbered, into ``out`` when given, which
    may be ``codes`` itself, or where rows not yet read are not written (``out[i]`` before
    ``codes[rows[i]]``, ``rows`` ascending).

    >>> _select(np.array([5, 6, 7]), np.array([2, 0]), np.arange(10) * 10).tolist()
    [70, 50]
    """
    if rows is None and table is None and (out is None or out is codes):
        return codes
    count = len(codes) if rows is None else len(rows)
    out = np.empty(count, dtype=codes.dtype if table is None else table.dtype) if out is None else out
    for a, b in _spans(count):
        part = codes[a:b].copy() if rows is None else codes[rows[a:b]]
        if table is None:
            out[a:b] = part
        else:
            np.take(table, part, out=out[a:b])
    return out


@overload
def _runs(tie: np.ndarray, n: int) -> np.ndarray: ...
@overload
def _runs(tie: np.ndarray, n: int, numbered: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...
def _runs(tie: np.ndarray, n: int, numbered: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Positions in runs of equal sorted keys, given where ``key[i] == key[i + 1]``, and
    with ``numbered`` the run of each (0, 1, ...: two runs may be adjacent).

    >>> [a.tolist() for a in _runs(np.array([0, 2, 3]), 6, numbered=True)]
    [[0, 1, 2, 3, 4], [0, 0, 1, 1, 1]]
    """
    mask = np.zeros(n, dtype=bool)
    mask[tie] = True
    mask[tie + 1] = True
    members = np.flatnonzero(mask)
    if not numbered:
        return members
    follows = np.zeros(n, dtype=bool)  # position i ties with i - 1: same run
    follows[tie + 1] = True
    run = np.cumsum(~follows[members], dtype=np.int64) - 1
    return members, run


def _arc_order(src: np.ndarray, dst: np.ndarray, eprop: np.ndarray, n: int,
               sid_of: Callable[[np.ndarray], pa.Array], work: Workspace | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The degree of each of the ``n`` vertices, and the order of the arcs of the edges
    ``src``→``dst`` by (at, neighbour) — vertices are numbered in id order, so this is
    neighbour-id order — then (property, edge, forward); where one property links two
    different vertices both ways (mutual statements), by (statement id, forward) instead.

    Arc ``2e`` is edge ``e`` walked backward (from its object), ``2e + 1`` forward: the
    arc's position is its (edge, forward) key, so a stable sort by (at, neighbour,
    property) needs no key for it. Edges are in (subject, property, object, statement id)
    order, so among parallel arcs of one direction and property the edge index is the
    statement-id order; statement ids are compared as strings only where both directions
    meet. Returns the degrees, the order (a view of ``work`` when given, which the sort
    borrows) and the neighbours in it (out of the sort)."""
    degree = np.zeros(n, dtype=np.int64)
    step = max(n, 1 << 20)  # (``bincount`` copies its input to int64 first: a block at a time)
    for ends in (src, dst):
        for a in range(0, len(ends), step):
            degree += np.bincount(ends[a:a + step], minlength=n)
    if len(src) == 0:
        return degree, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    # arc 2e: edge e from its object to its subject; 2e + 1: from its subject to its object
    keys: list[Key] = [(dst, src), (src, dst), (eprop, eprop)]
    order, (_, nbr_sorted, _), tie = sort_rows(keys, keep=(False, True, False), work=work)
    assert nbr_sorted is not None
    if len(tie) == 0:
        return degree, order, nbr_sorted
    members = _runs(tie, len(order))
    rows = order[members]
    forward = (rows & 1).astype(bool)
    edge = rows >> 1
    key_at, key_nbr, key_p = np.where(forward, src[edge], dst[edge]), nbr_sorted[members], eprop[edge]
    del edge
    # groups of equal (at, neighbour, property) holding both directions between two different vertices
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (key_at[1:] != key_at[:-1]) | (key_nbr[1:] != key_nbr[:-1]) | (key_p[1:] != key_p[:-1])
    group = np.cumsum(new) - 1
    has_f = np.zeros(group[-1] + 1, dtype=bool)
    has_b = np.zeros(group[-1] + 1, dtype=bool)
    has_f[group[forward]] = True
    has_b[group[~forward]] = True
    mixed = (has_f & has_b)[group] & (key_at != key_nbr)
    if mixed.any():
        idx = np.flatnonzero(mixed)
        e = rows[idx] >> 1
        rank = _string_rank(sid_of(e))
        fix = np.lexsort((forward[idx], rank, group[idx]))
        rows[idx] = rows[idx][fix]
        order[members] = rows
    return degree, order, nbr_sorted
