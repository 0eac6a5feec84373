"""Stable lexicographic sorts of rows by several non-negative integer keys, in numpy.

:func:`sort_keys` is what the compact graph build (:mod:`chaingraph.compact`) sorts its
edges and arcs with; :func:`argsort_keys` is its fallback for keys too wide for two words.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["argsort_keys", "sort_keys", "spans"]


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
    # (key, shift, width, whole key?), least significant first
    digits: list[tuple[np.ndarray, int, int, bool]] = []
    for k in reversed(keys):
        width = max(int(k.max()).bit_length(), 1)
        digits += [(k, shift, min(room, width - shift), width <= room) for shift in range(0, width, room)]
    passes: list[list[tuple[np.ndarray, int, int, bool]]] = [[]]
    used = 0
    for digit in digits:
        if used + digit[2] > room:
            passes.append([])
            used = 0
        passes[-1].append(digit)
        used += digit[2]
    order: np.ndarray | None = None
    for group in passes:
        packed = np.zeros(n, dtype=np.int64)
        for k, shift, width, whole in reversed(group):  # most significant digit of the pass first
            part = k if order is None else k[order]  # in the key's own dtype: half the bytes of int64
            if not whole:
                part = (part.astype(np.int64) >> shift) & ((1 << width) - 1)
            np.left_shift(packed, width, out=packed)
            np.bitwise_or(packed, part, out=packed)  # cast element by element, no int64 copy
            del part
        np.left_shift(packed, low, out=packed)
        np.bitwise_or(packed, np.arange(n, dtype=np.int32 if n < 2**31 else np.int64), out=packed)
        packed.sort()
        np.bitwise_and(packed, (1 << low) - 1, out=packed)
        order = packed if order is None else order[packed]
        del packed
    assert order is not None
    return order


def sort_keys(keys: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """What :func:`argsort_keys` gives, and the keys in that order (each in its own dtype),
    with at most two random gathers of the rows however many there are. ``keys`` is
    emptied as the keys are done with, so that the caller's list does not keep them alive.

    A gather of millions of rows in random order is a cache miss per row (ten times the
    cost per row at 10^7 rows as at 10^6), so rows are moved by sorting
    words that carry them. When the keys and the row position fit one int64, one sort of
    those words is all. When two words hold them (the less significant keys with the row;
    the more significant with the rank in the first sort), the first sort orders the rows
    by the low keys, the high keys are gathered once in that order, the second sort is
    stable on the first through the rank, and one gather of the first words by the
    second's ranks gives the rows and low keys in the final order. Wider keys go to
    :func:`argsort_keys`, and are gathered. Everything else runs :data:`_BLOCK` rows at a
    time: its temporaries stay in cache and are reused, where whole-array temporaries of
    10^7 rows are fresh pages from the system every time.

    >>> order, (a, b) = sort_keys([np.array([2, 1, 2, 1]), np.array([0, 5, 0, 3], dtype=np.int32)])
    >>> order.tolist(), a.tolist(), b.tolist(), b.dtype.name
    ([3, 1, 0, 2], [1, 1, 2, 2], [3, 5, 0, 0], 'int32')
    """
    n = len(keys[0]) if keys else 0
    low = max((n - 1).bit_length(), 1)
    widths = [max(int(k.max()).bit_length(), 1) if n else 1 for k in keys]
    dtypes = [k.dtype for k in keys]
    if n == 0 or sum(widths) + low <= 63:
        words = _pack(keys, widths, low)
        keys.clear()
        words.sort()
        return _unpack(words, dtypes, widths, low)
    split = next((j for j in range(1, len(keys))
                  if sum(widths[j:]) + low <= 63 and sum(widths[:j]) + low <= 63), None)
    if split is None:
        order = argsort_keys(keys)
        ordered = [k[order] for k in keys]
        keys.clear()
        return order, ordered
    first = _pack(keys[split:], widths[split:], low)
    del keys[split:]
    first.sort()
    mask = (1 << low) - 1
    high = [np.empty(n, dtype=k.dtype) for k in keys]
    for a, b in spans(n):  # the one gather of keys, in the first sort's order
        rows = first[a:b] & mask
        for k, out in zip(keys, high, strict=True):
            np.take(k, rows, out=out[a:b])
    keys.clear()
    second = _pack(high, widths[:split], low)
    del high
    second.sort()
    final = np.empty(n, dtype=np.int64)
    for a, b in spans(n):  # the second gather: the rows and low keys in the final order
        np.take(first, second[a:b] & mask, out=final[a:b])
    del first
    _, high_keys = _unpack(second, dtypes[:split], widths[:split], low)
    del second, _
    order, low_keys = _unpack(final, dtypes[split:], widths[split:], low)
    return order, [*high_keys, *low_keys]


#: rows per block of the element-wise passes (int64 temporaries of 2 MB)
_BLOCK = 1 << 18


def spans(n: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of the blocks of ``n`` rows, :data:`_BLOCK` at a time."""
    for a in range(0, n, _BLOCK):
        yield a, min(a + _BLOCK, n)


def _pack(keys: list[np.ndarray], widths: list[int], low: int) -> np.ndarray:
    """One int64 per row: the keys (most significant first) above ``low`` bits of row position."""
    n = len(keys[0]) if keys else 0
    words = np.empty(n, dtype=np.int64)
    for a, b in spans(n):
        w = words[a:b]
        w[:] = 0
        for k, width in zip(keys, widths, strict=True):
            np.left_shift(w, width, out=w)
            np.bitwise_or(w, k[a:b], out=w)
        np.left_shift(w, low, out=w)
        np.bitwise_or(w, np.arange(a, b, dtype=np.int64), out=w)
    return words


def _unpack(words: np.ndarray, dtypes: list[np.dtype[Any]], widths: list[int], low: int
            ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The keys (in ``dtypes``) of sorted :func:`_pack` words, and ``words`` itself, now
    holding the row positions."""
    n = len(words)
    out = [np.empty(n, dtype=d) for d in dtypes]
    for a, b in spans(n):
        w = words[a:b]
        shift = low
        for k_out, width in zip(reversed(out), reversed(widths), strict=True):
            part = np.right_shift(w, shift)
            np.bitwise_and(part, (1 << width) - 1, out=part)
            k_out[a:b] = part
            shift += width
        np.bitwise_and(w, (1 << low) - 1, out=w)
    return words, out
