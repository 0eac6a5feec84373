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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["GraphArrays", "argsort_keys", "build_arrays", "item_mask"]

_ITEM_PATTERN = "^Q[1-9][0-9]{0,11}$"


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
    """Distinct values in sorted order and the code of every element (int64)."""
    if len(values) == 0:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int64)
    enc = pc.dictionary_encode(values).unify_dictionaries()
    dictionary = enc.chunk(0).dictionary
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    codes = np.concatenate([rank[c.indices.to_numpy(zero_copy_only=False)] for c in enc.chunks])
    return dictionary.take(pa.array(order, type=pa.int64())), codes


def _string_rank(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Dense rank of each string among ``values`` (equal strings, equal rank)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    ranked = pc.rank(values, sort_keys="ascending", tiebreaker="dense")
    return np.asarray(ranked.to_numpy(zero_copy_only=False), dtype=np.int64)


def argsort_keys(keys: list[np.ndarray]) -> np.ndarray:
    """The stable lexicographic order of rows by non-negative integer ``keys`` (most
    significant first), like ``np.lexsort(keys[::-1])``, in time linear in the rows per pass.

    Each pass packs up to ``63 - log2(rows)`` bits of the keys above the row's current
    position into one int64 and sorts those with ``np.sort`` (vectorised, cache friendly:
    an ``argsort`` of millions of rows is several times slower and grows faster than
    linearly); passes go from the least significant bits up, each stable on the last.

    >>> argsort_keys([np.array([2, 1, 2, 1]), np.array([0, 5, 0, 3])]).tolist()
    [3, 1, 0, 2]
    """
    n = len(keys[0]) if keys else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    low = max((n - 1).bit_length(), 1)  # bits of the position
    room = 63 - low
    digits: list[tuple[np.ndarray, int, int]] = []  # (key, shift, width), least significant first
    for k in reversed(keys):
        width = max(int(k.max()).bit_length(), 1)
        digits += [(k, shift, min(room, width - shift)) for shift in range(0, width, room)]
    passes: list[list[tuple[np.ndarray, int, int]]] = [[]]
    used = 0
    for digit in digits:
        if used + digit[2] > room:
            passes.append([])
            used = 0
        passes[-1].append(digit)
        used += digit[2]
    position = np.arange(n, dtype=np.int64)
    order: np.ndarray | None = None
    for group in passes:
        packed = np.zeros(n, dtype=np.int64)
        for k, shift, width in reversed(group):  # most significant digit of the pass first
            part = (k if order is None else k[order]).astype(np.int64)
            if shift:
                part >>= shift
            if width < 63:
                part &= (1 << width) - 1
            packed <<= width
            packed |= part
            del part
        packed <<= low
        packed |= position
        packed.sort()
        packed &= (1 << low) - 1
        order = packed if order is None else order[packed]
    assert order is not None
    return order


def _order(keys: list[np.ndarray], sids: pa.ChunkedArray, rows_of: np.ndarray) -> np.ndarray:
    """Indices sorting rows by ``keys`` (most significant first), ties by statement id
    (row ``i`` has statement id ``sids[rows_of[i]]``); only rows that tie on the keys
    compare their statement ids as strings."""
    n = len(rows_of)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = argsort_keys(keys)
    same = np.ones(n - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
        del ks
    tie = np.flatnonzero(same)
    del same
    if len(tie):
        members = _runs(tie, n)
        rows = order[members]
        row_sids = sids.take(pa.array(rows_of[rows], type=pa.int64()))
        rank = _string_rank(row_sids)
        order[members] = rows[np.lexsort((rank, *[k[rows] for k in keys[::-1]]))]
    return order


def item_mask(names: pa.Array) -> np.ndarray:
    """True where a string is an item id (``Q`` + digits)."""
    if len(names) == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(pc.fill_null(pc.match_substring_regex(names, _ITEM_PATTERN), False)
                      .to_numpy(zero_copy_only=False), dtype=bool)


def build_arrays(statement_id: pa.Array, subject: pa.Array, property: pa.Array, object: pa.Array,
                 *, class_properties: frozenset[str], allows: Callable[[str], bool],
                 literal_statement_id: pa.Array | None = None, literal_subject: pa.Array | None = None,
                 literal_property: pa.Array | None = None) -> GraphArrays:
    """Encode item edges ``(statement_id, subject, property, object)`` and, when given,
    literal statements ``(literal_statement_id, literal_subject, literal_property)`` (each
    becomes a terminal vertex ``"<statement id>#value"``) under a traversal policy given
    as its class properties and its ``allows(property)`` rule."""
    sid, subj, prop, obj = (_strings(a) for a in (statement_id, subject, property, object))
    has_lit = all(a is not None for a in (literal_statement_id, literal_subject, literal_property))
    empty = pa.chunked_array([], type=pa.string())
    lsid = _strings(literal_statement_id) if has_lit else empty
    lsubj = _strings(literal_subject) if has_lit else empty
    lprop = _strings(literal_property) if has_lit else empty

    # properties: one code each, in id order; policy decided once per property
    all_props, pcodes = _sorted_codes(_concat([prop, lprop]))
    properties = tuple(all_props.to_pylist())
    is_class = np.fromiter((p in class_properties for p in properties), dtype=bool, count=len(properties))
    allowed = np.fromiter((allows(p) for p in properties), dtype=bool, count=len(properties))
    m_all = len(sid)
    ip, lp = pcodes[:m_all], pcodes[m_all:]
    class_mask, step_mask = is_class[ip], allowed[ip]
    excluded_mask = ~class_mask & ~step_mask
    lit_keep = np.flatnonzero(allowed[lp]) if len(lp) else np.zeros(0, dtype=np.int64)

    def pick(a: pa.ChunkedArray, mask: np.ndarray) -> pa.ChunkedArray:
        return a.filter(pa.array(mask, type=pa.bool_()))

    def take(a: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
        return a.take(pa.array(rows, type=pa.int64()))

    step_rows, class_rows = np.flatnonzero(step_mask), np.flatnonzero(class_mask)
    lit_node = pc.binary_join_element_wise(take(lsid, lit_keep), "#value", "") if len(lit_keep) else empty

    # vertices: every step endpoint, class-edge subject, literal subject and literal node,
    # numbered in id order (strings are encoded once, then only integers move)
    dictionary, vcodes = _sorted_codes(_concat([subj, obj, lsubj, lit_node]))
    ml_all = len(lsid)
    s_all, o_all = vcodes[:m_all], vcodes[m_all:2 * m_all]
    ls_all, ln_code = vcodes[2 * m_all:2 * m_all + ml_all], vcodes[2 * m_all + ml_all:]
    used = np.zeros(len(dictionary), dtype=bool)
    for part in (s_all[step_rows], o_all[step_rows], s_all[class_rows], ls_all[lit_keep], ln_code):
        used[part] = True
    renumber = np.cumsum(used) - 1
    names = dictionary.take(pa.array(np.flatnonzero(used), type=pa.int64()))
    n = len(names)
    s_code, o_code = renumber[s_all[step_rows]], renumber[o_all[step_rows]]
    ls_code, ln_code = renumber[ls_all[lit_keep]], renumber[ln_code]
    p_code, lp_code = ip[step_rows], lp[lit_keep]
    del vcodes, s_all, o_all, ls_all, used, renumber

    # edges: items by (subject, property, object, statement id), then literals by
    # (subject, property, statement id)
    e_order = _order([s_code, p_code, o_code], sid, step_rows)
    l_order = _order([ls_code, lp_code], lsid, lit_keep)
    m, ml = len(e_order), len(l_order)
    src = np.concatenate([s_code[e_order], ls_code[l_order]]).astype(np.int32)
    dst = np.concatenate([o_code[e_order], ln_code[l_order]]).astype(np.int32)
    eprop = np.concatenate([p_code[e_order], lp_code[l_order]]).astype(np.int32)
    sids = _concat([take(sid, step_rows[e_order]), take(lsid, lit_keep[l_order])]).combine_chunks()
    del s_code, o_code, p_code

    # CSR adjacency over both directions, by (neighbour, property, statement id, forward)
    total = m + ml
    edge_dtype = np.int32 if total < 2**31 else np.int64
    at = np.concatenate([src, dst])
    nbr = np.concatenate([dst, src])
    arc_edge = np.concatenate([np.arange(total, dtype=edge_dtype)] * 2)
    arc_order = _arc_order(at, nbr, arc_edge, eprop, sids, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(at, minlength=n), out=indptr[1:])
    nbr_sorted = nbr[arc_order]
    arc_edge_sorted = arc_edge[arc_order]
    fwd = arc_order < total
    del at, nbr, arc_edge, arc_order

    classes = pa.table({"subject": pick(subj, class_mask), "property": pick(prop, class_mask),
                        "object": pick(obj, class_mask)})
    excluded = pa.table({"statement_id": pick(sid, excluded_mask), "subject": pick(subj, excluded_mask),
                         "property": pick(prop, excluded_mask), "object": pick(obj, excluded_mask)})
    pa.default_memory_pool().release_unused()  # hand the temporaries back before the caller goes on
    return GraphArrays(names=names, src=src, dst=dst, prop=eprop, properties=properties,
                       statement_ids=sids, indptr=indptr, nbr=nbr_sorted, arc_edge=arc_edge_sorted,
                       fwd=fwd, literal=~item_mask(names), classes=classes, excluded=excluded)


def _runs(tie: np.ndarray, n: int) -> np.ndarray:
    """Positions in runs of equal sorted keys, given where ``key[i] == key[i + 1]``."""
    mask = np.zeros(n, dtype=bool)
    mask[tie] = True
    mask[tie + 1] = True
    return np.flatnonzero(mask)


def _arc_order(at: np.ndarray, nbr: np.ndarray, arc_edge: np.ndarray, eprop: np.ndarray,
               sids: pa.Array, n: int) -> np.ndarray:
    """Order of the arcs by (at, neighbour) — vertices are numbered in id order, so this is
    neighbour-id order — then (property, edge, forward); where one property links two
    different vertices both ways (mutual statements), by (statement id, forward) instead.

    Arc ``i`` is forward for ``i < len(at) // 2``. Edges are in (subject, property, object,
    statement id) order, so among parallel arcs of one direction and property the edge
    index is the statement-id order; statement ids are compared as strings only where
    both directions meet."""
    if len(at) == 0:
        return np.zeros(0, dtype=np.int64)
    half = len(at) // 2
    arc_prop = eprop[arc_edge]
    edge_dir: np.ndarray = arc_edge.astype(np.int64 if half >= 2**30 else np.int32) * 2
    edge_dir[:half] += 1  # (edge, forward): an edge's backward arc before its forward arc
    order = argsort_keys([at, nbr, arc_prop, edge_dir])
    del edge_dir
    sa, sb, sp = at[order], nbr[order], arc_prop[order]
    same = (sa[1:] == sa[:-1]) & (sb[1:] == sb[:-1]) & (sp[1:] == sp[:-1])
    del sa, sb, sp
    tie = np.flatnonzero(same)
    del same
    if len(tie) == 0:
        return order
    members = _runs(tie, len(at))
    rows = order[members]
    forward = rows < half
    # groups of equal (at, neighbour, property) holding both directions between two different vertices
    key_at, key_nbr, key_p = at[rows], nbr[rows], arc_prop[rows]
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
        e = arc_edge[rows[idx]].astype(np.int64)
        rank = _string_rank(sids.take(pa.array(e, type=pa.int64())))
        fix = np.lexsort((forward[idx], rank, group[idx]))
        rows[idx] = rows[idx][fix]
        order[members] = rows
    return order
