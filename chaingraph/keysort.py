"""Stable lexicographic sorts of rows by several non-negative integer keys, in numpy.

:func:`sort_rows` is what the compact graph build (:mod:`chaingraph.compact`) sorts its
edges and arcs with (one int64 word per row, in buckets of the first key's top bits when
the keys are a few bits too wide for one, two words beyond), its words lent by one
:class:`Workspace` per build; :func:`sort_keys` is it keeping every key, and
:func:`argsort_keys` the fallback for keys too wide for two words.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["Key", "Workspace", "argsort_keys", "sort_keys", "sort_rows", "spans"]


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


#: a sort key: one integer per row, or two arrays whose rows interleave (row ``2i`` is
#: ``first[i]``, row ``2i + 1`` is ``second[i]``), so that the two directions of an edge
#: are keyed without an interleaved copy of its columns
Key = np.ndarray | tuple[np.ndarray, np.ndarray]


def sort_keys(keys: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """What :func:`argsort_keys` gives, and the keys in that order (each in its own dtype):
    :func:`sort_rows` keeping every key. ``keys`` is emptied as the keys are done with.

    >>> order, (a, b) = sort_keys([np.array([2, 1, 2, 1]), np.array([0, 5, 0, 3], dtype=np.int32)])
    >>> order.tolist(), a.tolist(), b.tolist(), b.dtype.name
    ([3, 1, 0, 2], [1, 1, 2, 2], [3, 5, 0, 0], 'int32')
    """
    order, ordered, _ = sort_rows(keys)
    return order, [k for k in ordered if k is not None]


class Workspace:
    """Int64 buffers of ``rows`` each, lent to one sort after another (the sorts of one
    build), each made when a sort first asks for it: their pages are faulted in once, where
    arrays made per sort would be new mappings every time (above 32 MB the C allocator
    maps and unmaps each array, and the kernel zeroes every page again).

    >>> work = Workspace(8)
    >>> a = work.words(0, 5)
    >>> a.shape, work.words(0, 3).base is a.base, work.words(1, 2).base is a.base
    ((5,), True, False)
    """

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self._buffers: list[np.ndarray] = []

    def words(self, i: int, n: int) -> np.ndarray:
        """The first ``n`` rows of buffer ``i``."""
        if n > self.rows:
            raise ValueError(f"a workspace of {self.rows:,} rows lent for {n:,}")
        while len(self._buffers) <= i:
            self._buffers.append(np.empty(self.rows, dtype=np.int64))
        return self._buffers[i][:n]


def _words(work: Workspace | None, i: int, n: int) -> np.ndarray:
    return np.empty(n, dtype=np.int64) if work is None else work.words(i, n)


#: most bits of the first key that choose a bucket (so at most 4,096 buckets, each one sort)
_BUCKET_BITS = 12


def sort_rows(keys: list[np.ndarray] | list[Key], keep: tuple[bool, ...] | None = None,
              work: Workspace | None = None, out: Sequence[np.ndarray | None] | None = None
              ) -> tuple[np.ndarray, list[np.ndarray | None], np.ndarray]:
    """The stable lexicographic order of rows by non-negative integer ``keys`` (most
    significant first), the keys ``keep`` asks for (default: all) in that order (each in
    its own dtype; ``None`` for the others), and the sorted positions ``i`` where rows
    ``i`` and ``i + 1`` tie on every key. ``keys`` is emptied as the keys are done with,
    so that the caller's list does not keep them alive.

    A gather of millions of rows in random order is a cache miss per row (three times the
    cost per row at 10^7 rows as at 10^6), so rows are moved by sorting words that carry
    them. When the keys and the row position fit one int64, one sort of those words is
    all. When they are up to :data:`_BUCKET_BITS` bits too wide, the top bits of the first
    key choose a bucket, each word (the other bits and the row) is written straight into
    its bucket (a block at a time: one sequential stream per bucket, no random access),
    and the buckets are sorted one by one: still one word per row, one pass of sorting.
    Wider still, two words hold them (the less significant keys with the row; the more
    significant with the rank in the first sort): the first sort orders the rows by the
    low keys, the high keys are gathered once in that order straight into the second
    words, the second sort is stable on the first through the rank, and one gather of the
    first words by the second's ranks, written over the second words, gives the rows and
    low keys in the final order. Those words are all this allocates besides what it
    returns, from ``work`` when given (the order returned is then a view of it). Wider
    keys go to :func:`argsort_keys`, and are gathered. Everything else runs
    :data:`_BLOCK` rows at a time, so its temporaries stay in cache.

    ``out`` gives, per key, an array (of the key's dtype and length) to write the kept key
    into instead of a new one; it may be the key itself, which is read in full before
    anything is written (a key the caller is done with then takes its sorted values, and
    no new memory is touched for them).

    >>> order, (a, b), ties = sort_rows([np.array([2, 1, 2, 1]), (np.array([0, 0]), np.array([5, 3]))],
    ...                                 keep=(True, True))
    >>> order.tolist(), a.tolist(), b.tolist(), ties.tolist()
    ([3, 1, 0, 2], [1, 1, 2, 2], [3, 5, 0, 0], [2])
    """
    n = _rows(keys[0]) if keys else 0
    keep = keep if keep is not None else (True,) * len(keys)
    low = max((n - 1).bit_length(), 1)
    widths = [_width(k) if n else 1 for k in keys]
    dtypes = [_dtype(k) for k in keys]
    excess = sum(widths) + low - 63
    if n == 0 or excess <= 0:
        words = _pack(keys, widths, low, _words(work, 0, n))
        keys.clear()
        words.sort()
        return _unpack(words, None, dtypes, widths, keep, low, out=out)
    if excess <= _BUCKET_BITS and widths[0] > excess:
        words, ends = _pack_buckets(keys, widths, low, excess, _words(work, 0, n))
        keys.clear()
        start = 0
        for end in ends.tolist():
            words[start:end].sort()
            start = end
        return _unpack(words, None, dtypes, [widths[0] - excess, *widths[1:]], keep, low, ends=ends, out=out)
    split = next((j for j in range(1, len(keys))
                  if sum(widths[j:]) + low <= 63 and sum(widths[:j]) + low <= 63), None)
    if split is None:
        plain = [k if isinstance(k, np.ndarray) else _interleave(k) for k in keys]
        keys.clear()
        order = argsort_keys(plain)
        ordered = [k[order] if o is None else _into(k[order], o)
                   for k, o in zip(plain, out if out is not None else [None] * len(plain), strict=True)]
        tie = np.ones(max(n - 1, 0), dtype=bool)
        for k in ordered:
            tie &= k[1:] == k[:-1]
        kept = [k if want else None for k, want in zip(ordered, keep, strict=True)]
        return order, kept, np.flatnonzero(tie)
    first = _pack(keys[split:], widths[split:], low, _words(work, 0, n))
    del keys[split:]
    first.sort()
    mask = (1 << low) - 1
    second = _words(work, 1, n)
    for a, b in spans(n):  # the one gather of keys, in the first sort's order, packed as it comes
        rows = first[a:b] & mask
        w = second[a:b]
        w[:] = 0
        for k, width in zip(keys, widths[:split], strict=True):
            np.left_shift(w, width, out=w)
            np.bitwise_or(w, _gather(k, rows), out=w)
        np.left_shift(w, low, out=w)
        np.bitwise_or(w, np.arange(a, b, dtype=np.int64), out=w)
    keys.clear()
    second.sort()
    return _unpack(second, first, dtypes, widths, keep, low, split, out=out)


def _pack_buckets(keys: Sequence[Key], widths: list[int], low: int, bits: int, words: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pack` without the top ``bits`` of the first key, each word written into the
    bucket those bits choose (buckets in order, rows in any order within one), and where
    each bucket ends."""
    n = len(words)
    shift = widths[0] - bits
    buckets = 1 << bits
    counts = np.zeros(buckets, dtype=np.int64)
    for part in (keys[0],) if isinstance(keys[0], np.ndarray) else keys[0]:
        for a, b in spans(len(part)):
            counts += np.bincount(part[a:b] >> shift, minlength=buckets)
    ends = np.cumsum(counts)
    at = ends - counts  # where each bucket's next word goes
    kind = np.uint8 if buckets <= 256 else np.uint16
    for a, b in spans(n):
        k0 = _slice(keys[0], a, b)
        bucket = np.right_shift(k0, shift).astype(kind)
        w = np.bitwise_and(k0, (1 << shift) - 1, dtype=np.int64)
        for k, width in zip(keys[1:], widths[1:], strict=True):
            np.left_shift(w, width, out=w)
            np.bitwise_or(w, _slice(k, a, b), out=w)
        np.left_shift(w, low, out=w)
        np.bitwise_or(w, np.arange(a, b, dtype=np.int64), out=w)
        w = w[np.argsort(bucket, kind="stable")]  # a radix sort of small integers, in cache
        count = np.bincount(bucket, minlength=buckets)
        some = count > 0
        start = 0
        for to, c in zip(at[some].tolist(), count[some].tolist(), strict=True):
            words[to:to + c] = w[start:start + c]  # each bucket's words, appended to it
            start += c
        at += count
    return words, ends


#: rows per block of the element-wise passes (int64 temporaries of 2 MB)
_BLOCK = 1 << 18


def spans(n: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of the blocks of ``n`` rows, :data:`_BLOCK` at a time."""
    for a in range(0, n, _BLOCK):
        yield a, min(a + _BLOCK, n)


def _into(values: np.ndarray, out: np.ndarray) -> np.ndarray:
    out[:] = values
    return out


def _rows(key: Key) -> int:
    return len(key) if isinstance(key, np.ndarray) else len(key[0]) + len(key[1])


def _width(key: Key) -> int:
    top = int(key.max()) if isinstance(key, np.ndarray) else max(int(k.max()) if len(k) else 0 for k in key)
    return max(top.bit_length(), 1)


def _dtype(key: Key) -> np.dtype[Any]:
    return key.dtype if isinstance(key, np.ndarray) else np.result_type(*key)


def _interleave(key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    out = np.empty(_rows(key), dtype=_dtype(key))
    out[0::2], out[1::2] = key
    return out


def _slice(key: Key, a: int, b: int) -> np.ndarray:
    """Rows ``a:b`` of ``key``."""
    if isinstance(key, np.ndarray):
        return key[a:b]
    out = np.empty(b - a, dtype=_dtype(key))
    out[a % 2::2] = key[0][(a + 1) // 2:(b + 1) // 2]  # rows 2i
    out[1 - a % 2::2] = key[1][a // 2:b // 2]  # rows 2i + 1
    return out


def _gather(key: Key, rows: np.ndarray) -> np.ndarray:
    """``key[rows]``."""
    out: np.ndarray = key[rows] if isinstance(key, np.ndarray) else np.where(rows & 1, key[1][rows >> 1],
                                                                             key[0][rows >> 1])
    return out


def _pack(keys: Sequence[Key], widths: list[int], low: int, words: np.ndarray | None = None) -> np.ndarray:
    """One int64 per row: the keys (most significant first) above ``low`` bits of row position."""
    n = _rows(keys[0]) if keys else 0
    words = np.empty(n, dtype=np.int64) if words is None else words
    for a, b in spans(n):
        w = words[a:b]
        w[:] = 0
        for k, width in zip(keys, widths, strict=True):
            np.left_shift(w, width, out=w)
            np.bitwise_or(w, _slice(k, a, b), out=w)
        np.left_shift(w, low, out=w)
        np.bitwise_or(w, np.arange(a, b, dtype=np.int64), out=w)
    return words


def _unpack(words: np.ndarray, first: np.ndarray | None, dtypes: list[np.dtype[Any]], widths: list[int],
            keep: tuple[bool, ...], low: int, split: int = 0, ends: np.ndarray | None = None,
            out: Sequence[np.ndarray | None] | None = None
            ) -> tuple[np.ndarray, list[np.ndarray | None], np.ndarray]:
    """The kept keys (in ``dtypes``) of sorted :func:`_pack` words, ``words`` itself, now
    holding the row positions, and the positions that tie with the next row. With
    ``first``, the words are second words (the ``split`` high keys and a rank into the
    sorted ``first``), and each is replaced by the first word it ranks, in place. With
    ``ends``, the words are in the buckets of :func:`_pack_buckets` that end there, and the
    bucket is the top of the first key (``widths[0]`` the bits of it in the word). ``out``:
    where to write the kept keys (``None``: new arrays)."""
    n = len(words)
    n_keys = len(widths)
    given = out if out is not None else [None] * n_keys
    out = [(g if g is not None else np.empty(n, dtype=d)) if want else None
           for d, want, g in zip(dtypes, keep, given, strict=True)]
    mask = (1 << low) - 1
    ties: list[np.ndarray] = []
    before: tuple[int, int] | None = None  # the keys of the previous block's last row
    for a, b in spans(n):
        w = words[a:b]
        high = w >> low if first is not None else None
        if ends is not None:  # the bucket of each row, run by run
            lo, hi = np.searchsorted(ends, [a, b - 1], side="right").tolist()
            high = np.repeat(np.arange(lo, hi + 1), np.diff(np.clip(ends[lo:hi + 1], a, b), prepend=a))
        shift = low
        for j in reversed(range(split)):
            _unpack_key(w, shift, widths[j], out[j], a, b)
            shift += widths[j]
        if first is not None:
            np.take(first, w & mask, out=w)  # in place: the index is a temporary
        low_keys = w >> low
        shift = low
        for j in reversed(range(split, n_keys)):
            _unpack_key(w, shift, widths[j], out[j], a, b)
            shift += widths[j]
        top = out[0]
        if ends is not None and top is not None and high is not None:
            top[a:b] |= high << widths[0]
        same = low_keys[1:] == low_keys[:-1]
        if high is not None:
            same &= high[1:] == high[:-1]
        if before is not None and before == (int(high[0]) if high is not None else 0, int(low_keys[0])):
            ties.append(np.array([a - 1], dtype=np.int64))
        ties.append(np.flatnonzero(same) + a)
        before = (int(high[-1]) if high is not None else 0, int(low_keys[-1]))
        np.bitwise_and(w, mask, out=w)
    return words, out, np.concatenate(ties) if ties else np.zeros(0, dtype=np.int64)


def _unpack_key(w: np.ndarray, shift: int, width: int, out: np.ndarray | None, a: int, b: int) -> None:
    if out is not None:
        part = np.right_shift(w, shift)
        np.bitwise_and(part, (1 << width) - 1, out=part)
        out[a:b] = part
