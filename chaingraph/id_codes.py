"""Dense item ids numbered without hashing a string, for the compact graph build.

:func:`item_codes` is what :mod:`chaingraph.compact` numbers its vertices with when the
ids are ``Q`` + digits and dense (a large dump, the synthetic graph); :func:`id_numbers`
reads such ids from their bytes, eight digits to one word.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.keysort import spans as _spans

__all__ = ["id_numbers", "item_codes"]

#: the C allocator's pool, as in :mod:`chaingraph.compact`
_POOL = pa.system_memory_pool()


def item_codes(values: pa.ChunkedArray, prefix: str = "Q") -> tuple[pa.Array, np.ndarray] | None:
    """What :func:`chaingraph.compact._sorted_codes` gives, without hashing a string, when
    every value is an item id (``prefix``, ``Q`` or ``P``, + 1–12 digits, no leading zero) and the ids are
    dense: no larger than the number of values (a large dump, the synthetic graph, or the
    properties of any large graph). Then a table indexed by the number finds the distinct
    ids, and their string order (``Q10`` < ``Q2``) comes from sorting the numbers
    left-aligned to 12 digits, shorter first on a tie. ``None`` otherwise (decided first
    from the longest string, so a sparse store pays almost nothing).

    >>> names, codes = item_codes(pa.chunked_array([["Q2", "Q10", "Q1"], ["Q2"] * 8]))
    >>> names.to_pylist(), codes[:4].tolist()
    (['Q1', 'Q10', 'Q2'], [2, 1, 0, 2])
    >>> item_codes(pa.chunked_array([["Q2", "Q10", "Q01"], ["Q2"] * 8])) is None
    True
    """
    n = len(values)
    if n == 0 or values.null_count:
        return None
    itype: type[np.signedinteger[Any]] = np.int32 if n < 2**31 else np.int64
    number = np.empty(n, dtype=itype)  # dense: every id <= n
    at = 0
    for block in _blocks(values):  # a block at a time, so every pass over it runs in cache
        parsed = id_numbers(block, prefix, 1 + len(str(n)))
        if parsed is None or int(parsed.min()) < 1 or int(parsed.max()) > n:
            return None  # not ids, or sparse ones
        number[at:at + len(parsed)] = parsed
        at += len(parsed)
    top = int(number.max())
    present = np.zeros(top + 1, dtype=bool)
    present[number] = True
    distinct = np.flatnonzero(present)
    del present
    width = _digits(distinct)
    order = np.argsort(distinct * 10 ** (12 - width) * 16 + width, kind="stable")
    rank = np.zeros(top + 1, dtype=np.int32)
    rank[distinct[order]] = np.arange(len(order), dtype=np.int32)
    # in place, a block at a time (``take`` buffers its output): no second array of every row
    codes = number if number.dtype == np.int32 else np.empty(n, dtype=np.int32)
    for a, b in _spans(n):
        np.take(rank, number[a:b], out=codes[a:b])
    names = pc.binary_join_element_wise(prefix, pc.cast(pa.array(distinct[order]), pa.string()), "",
                                        memory_pool=_POOL)
    return names, codes


#: SWAR constants: eight ASCII digits in one little-endian word to their number (the first
#: byte the most significant digit), as simdjson parses them
_ZEROS, _HIGH_NIBBLES, _SIX = 0x3030303030303030, 0xF0F0F0F0F0F0F0F0, 0x0606060606060606
_STEPS = ((0x0F0F0F0F0F0F0F0F, 2561, 8), (0x00FF00FF00FF00FF, 6553601, 16),
          (0x0000FFFF0000FFFF, 42949672960001, 32))


def id_numbers(block: pa.Array, prefix: str, longest: int) -> np.ndarray | None:
    """The numbers of ids ``prefix`` + digits (no leading zero) in a string array without
    nulls, as int64; ``None`` when a string is not such an id or is longer than ``longest``.
    Ids of up to 8 digits are read from their bytes: the last 8 bytes of each id as one
    word, the bytes before its digits set to ``0``, checked to be digits and turned into the
    number by three multiplications, all element-wise over the block.

    >>> id_numbers(pa.array(["Q7", "Q12345678", "Q90"]), "Q", 9).tolist()
    [7, 12345678, 90]
    >>> [id_numbers(pa.array([s]), "Q", 9) for s in ("Q07", "Q1x", "P1", "Q", "Q123456789")]
    [None, None, None, None, None]
    """
    length = pc.binary_length(block).to_numpy(zero_copy_only=False)
    if len(length) == 0:
        return np.zeros(0, dtype=np.int64)
    if int(length.max()) > longest or int(length.min()) < 2:
        return None
    if int(length.max()) > 9:  # more than 8 digits: Arrow parses them
        if not pc.all(pc.starts_with(block, prefix)).as_py():
            return None
        try:
            parsed = pc.cast(pc.utf8_slice_codeunits(block, 1), pa.int64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        # "Q01", "Q+1", "Q 1" parse too, but are not ids
        ok = int(parsed.min()) >= 1 and np.array_equal(length, _digits(parsed) + 1)  # ("Q0", "Q-1")
        return np.asarray(parsed, dtype=np.int64) if ok else None
    offsets = np.frombuffer(block.buffers()[1], dtype=np.int32, count=len(block) + 1, offset=4 * block.offset)
    lo, hi = int(offsets[0]), int(offsets[-1])
    padded = np.full(hi - lo + 8, ord("0"), dtype=np.uint8)  # 8 bytes before the first id
    padded[8:] = np.frombuffer(block.buffers()[2], dtype=np.uint8, count=hi - lo, offset=lo)
    start = offsets[:-1] - (lo - 8)
    if (padded[start] != ord(prefix)).any() or (padded[start + 1] == ord("0")).any():
        return None
    # every 8 bytes of the block as one word (overlapping, unaligned), then those ending where each id ends
    windows = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    word = windows[offsets[1:] - lo]
    keep = np.left_shift(np.uint64(0xFFFFFFFFFFFFFFFF), ((9 - length) * 8).astype(np.uint64))
    word = (word & keep) | (np.uint64(_ZEROS) & ~keep)
    if ((word & np.uint64(_HIGH_NIBBLES)) != np.uint64(_ZEROS)).any() or (
            ((word + np.uint64(_SIX)) & np.uint64(_HIGH_NIBBLES)) != np.uint64(_ZEROS)).any():
        return None
    for mask, factor, shift in _STEPS:
        word = ((word & np.uint64(mask)) * np.uint64(factor)) >> np.uint64(shift)
    numbers: np.ndarray = word.astype(np.int64)
    return numbers


def _blocks(values: pa.ChunkedArray, size: int = 1 << 18) -> Iterator[pa.Array]:
    """The values in order, as zero-copy slices of at most ``size``."""
    for chunk in values.chunks:
        for start in range(0, len(chunk), size):
            yield chunk.slice(start, size)


def _digits(number: np.ndarray) -> np.ndarray:
    """Decimal digits of each positive number below 10**12."""
    out = np.ones(len(number), dtype=np.int64)
    for k in range(1, 12):
        out += number >= 10**k
    return out
