"""Split a block of N-Triples lines into subject / predicate / object with numpy, copying nothing.

A block (whole lines, as bytes) is searched once per byte class that matters — newlines,
spaces, quotes, backslashes — with numpy; every line's first two spaces then come from
one :func:`numpy.searchsorted`, and the three terms are handed to Arrow (and DuckDB) as
*string views* into the block: each view is an (offset, length) pair, so a term is never
copied out of the decompressed bytes. Python touches no line on this path.

Where the install could compile C (:mod:`~chaingraph.sources.loaders.nt_native`), the
per-row loops — :func:`split_lines` (one pass per line instead of a numpy pass over the
block per byte class), :func:`views`, :func:`starts_with`, the id checks
(:func:`surely_claims` and its kin), :func:`same_terms` and :func:`intern` — run compiled,
with the GIL released; the numpy code here computes exactly the same and is used without it.
Two staging threads spend most of their time in these loops, so what stays in Python
between them decides how far the threads run side by side: with the id checks and the
predicates' numbering compiled too, codex-m's 55 blocks took 0.22 s on two threads against
0.30-0.32 s (on one thread 0.30-0.35 s against 0.38-0.40 s; after warm-up, two rounds each).

Only the common shape of a line takes this path: ``<s> <p> o .`` with single spaces, the
subject an IRI or blank node, the predicate an IRI, the object an IRI or blank node without
spaces or a literal, optionally ``\\r\\n``-terminated and with no space before the dot. A
literal without backslashes is checked here (exactly two quotes; its suffix, a language
tag or datatype, is returned as a view of its own for the caller to check); one with
backslashes is marked for a full check of its escapes. Every other line — blank, comment,
tabs, several spaces, or not a triple at all — is left for the caller's line-by-line path.

>>> split = split_lines(b'<http://a> <http://b> "x y"@en .\\n# note\\n<http://a> <http://c> <http://d> .\\n')
>>> split.ok.tolist(), split.literal.tolist()
([True, False, True], [1, 0, 0])
>>> import numpy as np
>>> rows = np.flatnonzero(split.ok)
>>> views(split.buf, split.o_start[rows], split.o_end[rows], split.data).to_pylist()
['"x y"@en', '<http://d>']
>>> views(split.buf, split.suffix_start[rows], split.o_end[rows], split.data).to_pylist()
['@en', '']
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.sources.loaders import nt_native

__all__ = ["ESCAPED", "PLAIN", "Block", "Split", "equals", "intern", "release_scratch", "same_terms",
           "split_lines", "starts_with", "statement_dashes", "surely_claims", "surely_entity_values",
           "surely_statements", "views"]

#: a block of lines: the reader's ``bytearray`` (which the stager writes statement ids into) or bytes
Block = bytes | bytearray
Index = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

#: :attr:`Split.literal` codes: the object is a literal without backslashes (only its
#: suffix is left to check) or one with backslashes (its escapes are left to check)
PLAIN, ESCAPED = 1, 2
_NL, _CR, _SPACE, _TAB, _QUOTE, _BACKSLASH = 10, 13, 32, 9, 34, 92
_LT, _GT, _UNDERSCORE, _COLON, _DOT = 60, 62, 95, 58, 46


@dataclass(frozen=True)
class Split:
    """The lines of one block: where each starts and ends, and where its terms are.

    Offsets are into :attr:`buf` (the block's bytes followed by zero padding, in an array
    the thread reuses for its next block). ``ok`` marks the lines the fast path split; the
    term offsets of the other lines mean nothing.
    """

    data: Block
    buf: npt.NDArray[np.uint8]
    line_start: Index
    line_end: Index  # the newline (or the end of the block)
    ok: Mask
    s_start: Index
    s_end: Index
    p_start: Index
    p_end: Index
    o_start: Index
    o_end: Index
    literal: npt.NDArray[np.int8]  # 0, PLAIN or ESCAPED
    suffix_start: Index  # after the closing quote of a PLAIN literal (else o_end)

    @property
    def lines(self) -> int:
        return len(self.line_start)

    @cached_property
    def dollars(self) -> Index | None:
        """Where the block's ``$`` bytes are (``None``: it has none), found once."""
        if self.data.find(b"$") < 0:
            return None
        return np.flatnonzero(self.buf[: len(self.data)] == _DOLLAR)


_scratch = threading.local()  # per thread: arrays reused from block to block (no fresh pages)


def _reused(name: str, size: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """A scratch array of ``size`` elements, this thread's own, reused by the next call."""
    array: npt.NDArray[Any] | None = getattr(_scratch, name, None)
    if array is None or len(array) < size:
        array = np.empty(max(size, 1), dtype=dtype)
        setattr(_scratch, name, array)
    return array[:size]


def release_scratch() -> None:
    """Let go of this thread's scratch arrays (a worker pausing while a chunk is built)."""
    _scratch.__dict__.clear()


def _positions(buf: npt.NDArray[np.uint8], byte: int, size: int) -> Index:
    found = _reused("found", size, np.bool_)
    np.equal(buf[:size], byte, out=found)
    return np.flatnonzero(found)


def _count_between(positions: Index, start: Index, end: Index) -> Index:
    """How many of the sorted ``positions`` lie in ``[start, end)``, per row."""
    return np.searchsorted(positions, end) - np.searchsorted(positions, start)


def _records(buf: npt.NDArray[np.uint8], width: int) -> npt.NDArray[np.void]:
    """``records[i]`` = the ``width`` bytes at ``buf[i:i + width]`` as one raw record: a
    gather of records copies each row's bytes at once, and records compare as bytes."""
    return np.ndarray(shape=(len(buf) - width + 1,), dtype=f"V{width}", buffer=buf, offset=0, strides=(1,))


def _gather(buf: npt.NDArray[np.uint8], start: Index, width: int) -> npt.NDArray[np.uint8]:
    """``(rows, width)``: the ``width`` bytes from each ``start`` (clamped inside ``buf``)."""
    records = _records(buf, width)
    return records[np.minimum(start, len(records) - 1)].view(np.uint8).reshape(len(start), width)


def split_lines(data: Block) -> Split:
    """Split every line of ``data`` (whole lines; the last may lack its newline)."""
    size = len(data)
    buf = _reused("block", size + _PAD, np.uint8)  # valid until this thread splits its next block
    buf[:size] = np.frombuffer(data, dtype=np.uint8)
    buf[size:] = 0
    lib = nt_native.library()
    return _split_numpy(data, buf, size) if lib is None else _split_native(lib, data, buf, size)


def _split_native(lib: ctypes.CDLL, data: Block, buf: npt.NDArray[np.uint8], size: int) -> Split:
    """:func:`split_lines` in one compiled pass per line (``cg_split_lines``)."""
    lines = lib.cg_count_lines(buf.ctypes.data, size)
    offsets = np.empty((7, lines), dtype=np.int64)
    ok = np.empty(lines, dtype=np.bool_)
    literal = np.empty(lines, dtype=np.int8)
    starts, ends, s_end, p_end, o_start, o_end, suffix_start = offsets
    lib.cg_split_lines(buf.ctypes.data, size, lines, starts.ctypes.data, ends.ctypes.data, ok.ctypes.data,
                       s_end.ctypes.data, p_end.ctypes.data, o_start.ctypes.data, o_end.ctypes.data,
                       literal.ctypes.data, suffix_start.ctypes.data)
    return Split(data=data, buf=buf, line_start=starts, line_end=ends, ok=ok, s_start=starts, s_end=s_end,
                 p_start=s_end + 1, p_end=p_end, o_start=o_start, o_end=o_end, literal=literal,
                 suffix_start=suffix_start)


def _split_numpy(data: Block, buf: npt.NDArray[np.uint8], size: int) -> Split:
    """:func:`split_lines` in numpy passes over the whole block."""
    newlines = _positions(buf, _NL, size)
    if size and (len(newlines) == 0 or newlines[-1] != size - 1):
        newlines = np.append(newlines, size)
    starts = np.empty_like(newlines)
    if len(newlines):
        starts[0] = 0
        starts[1:] = newlines[:-1] + 1
    end = newlines - ((newlines > starts) & (buf[np.maximum(newlines - 1, 0)] == _CR))
    spaces = _positions(buf, _SPACE, size)
    i1 = np.searchsorted(spaces, starts)
    padded = np.append(spaces, [size + 1, size + 1, size + 1])  # lines without three spaces end before
    sp1, sp2, sp3 = padded[i1], padded[i1 + 1], padded[i1 + 2]
    ok = (sp2 < end) & (end - starts >= 9)  # the shortest triple: <> <> "".
    first = buf[starts]
    ok &= ((first == _LT) & (buf[sp1 - 1] == _GT)) | (
        (first == _UNDERSCORE) & (buf[starts + 1] == _COLON) & (sp1 - starts >= 3))
    ok &= (buf[sp1 + 1] == _LT) & (buf[sp2 - 1] == _GT) & (sp2 - sp1 >= 3)
    dot = end - 1
    ok &= buf[dot] == _DOT
    o_end = dot - (buf[dot - 1] == _SPACE)
    o_start = sp2 + 1
    o_last = buf[o_end - 1]
    ok &= (o_end > o_start) & (o_last != _SPACE) & (o_last != _TAB)
    o_first = buf[o_start]
    is_literal = ok & (o_first == _QUOTE)
    # an IRI or blank node object has no space
    term_ok = (((o_first == _LT) & (o_last == _GT))
               | ((o_first == _UNDERSCORE) & (buf[o_start + 1] == _COLON) & (o_end - o_start >= 3))
               ) & (sp3 >= o_end)
    # an IRI ends at its first '>' and holds no tab: a line where one does not goes the careful
    # way. The line's first '>' must end its subject IRI, the next its predicate and the next its
    # IRI object (a blank-node subject holds none): one search for the three
    closing = np.append(_positions(buf, _GT, size), [-1, -1, -1])
    at = np.searchsorted(closing[:-3], starts)
    iri_subject = first == _LT
    ok &= ~iri_subject | (closing[at] == sp1 - 1)
    at += iri_subject
    ok &= closing[at] == sp2 - 1
    term_ok &= (o_first != _LT) | (closing[at + 1] == o_end - 1)
    if data.find(b"\t") >= 0:
        tabs = _positions(buf, _TAB, size)
        ok &= _count_between(tabs, starts, o_start) == 0
        term_ok &= _count_between(tabs, o_start, o_end) == 0
    escaped = np.zeros(len(starts), dtype=np.bool_)
    if data.find(b"\\") >= 0:
        # a backslash outside a literal object sends the line the careful way
        backslashes = _positions(buf, _BACKSLASH, size)
        term_ok &= _count_between(backslashes, starts, o_end) == 0
        lit = np.flatnonzero(is_literal)
        escaped[lit] = _count_between(backslashes, o_start[lit], o_end[lit]) > 0
        is_literal[lit] &= _count_between(backslashes, starts[lit], o_start[lit]) == 0
    plain = is_literal & ~escaped
    suffix_start = o_end.copy()
    candidates = np.flatnonzero(plain)
    if len(candidates):
        quotes = _positions(buf, _QUOTE, size)
        last = np.searchsorted(quotes, o_end[candidates]) - 1
        two = last - np.searchsorted(quotes, o_start[candidates]) == 1  # exactly two quotes
        plain[candidates] = two
        suffix_start[candidates] = np.where(two, quotes[last] + 1, o_end[candidates])
    ok &= term_ok | plain | (is_literal & escaped)
    literal = (plain * PLAIN + (is_literal & escaped) * ESCAPED).astype(np.int8)
    return Split(data=data, buf=buf, line_start=starts, line_end=newlines, ok=ok,
                 s_start=starts, s_end=sp1, p_start=sp1 + 1, p_end=sp2, o_start=o_start, o_end=o_end,
                 literal=literal, suffix_start=suffix_start)


def views(buf: npt.NDArray[np.uint8], start: Index, end: Index, data: Block) -> pa.Array:
    """An Arrow ``string_view`` array of ``data[start[i]:end[i]]`` (``buf`` is ``data``
    padded, as in :class:`Split`). Nothing is copied but the views themselves; the bytes
    must be valid UTF-8 (the caller checks the block once)."""
    n = len(start)
    lib = nt_native.library()
    if lib is not None:
        out = np.empty((n, 16), dtype=np.uint8)
        start, end = _int64(start), _int64(end)
        lib.cg_views(buf.ctypes.data, start.ctypes.data, end.ctypes.data, n, out.ctypes.data)
        return pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(out), pa.py_buffer(data)])
    lengths = end - start
    # a view is 16 bytes: the length, then up to 12 bytes inline (zero after the string),
    # or a 4-byte prefix, the buffer number (0) and the offset
    out = np.empty((n, 16), dtype=np.uint8)
    out[:, 4:] = _gather(buf, start, 12)
    words = out.view(np.uint32)  # (n, 4)
    words[:, 0] = lengths
    short = np.flatnonzero(lengths < 12)
    if len(short):
        out[short, 4:] *= np.arange(12) < lengths[short, None]
    long = np.flatnonzero(lengths > 12)
    words[long, 2] = 0
    words[long, 3] = start[long]
    return pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(out), pa.py_buffer(data)])


def intern(buf: npt.NDArray[np.uint8], start: Index, end: Index, data: Block
           ) -> tuple[npt.NDArray[np.int32], list[str]]:
    """Number the distinct terms ``data[start[i]:end[i]]`` in the order they first appear:
    each row's number, and the terms so numbered (what :func:`pyarrow.compute.dictionary_encode`
    of their :func:`views` gives, compiled as one pass over a hash table).

    >>> data = b"<a> <b> <a> <c> <b>"
    >>> buf = np.frombuffer(data, dtype=np.uint8)
    >>> entry, terms = intern(buf, np.array([0, 4, 8, 12, 16]), np.array([3, 7, 11, 15, 19]), data)
    >>> entry.tolist(), terms
    ([0, 1, 0, 2, 1], ['<a>', '<b>', '<c>'])
    """
    n = len(start)
    lib = nt_native.library()
    if lib is None or n == 0:
        encoded = pc.dictionary_encode(views(buf, start, end, data))
        return encoded.indices.to_numpy().astype(np.int32), encoded.dictionary.to_pylist()
    slots = 1 << max((2 * n - 1).bit_length(), 4)  # at least twice the rows
    table = _reused("intern", slots, np.int64)
    table.fill(-1)
    entry, firsts = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64)
    start, end = _int64(start), _int64(end)
    count = lib.cg_intern(buf.ctypes.data, start.ctypes.data, end.ctypes.data, n, table.ctypes.data,
                          slots - 1, entry.ctypes.data, firsts.ctypes.data)
    first = firsts[:count]
    return entry, views(buf, start[first], end[first], data).to_pylist()


def _int64(index: Index) -> Index:
    """``index`` as C reads it: contiguous int64 (itself when it is already)."""
    return np.ascontiguousarray(index, dtype=np.int64)


def _per_row(fn: Any, buf: npt.NDArray[np.uint8], *index: Index, extra: tuple[Any, ...] = (),
             dtype: type[np.generic] = np.bool_) -> npt.NDArray[Any]:
    """What the compiled ``fn(buf, *index, n, *extra, out)`` writes into ``out``: a value for
    each of the ``n`` rows of the ``index`` arrays (offsets into ``buf``)."""
    arrays = [_int64(i) for i in index]  # kept alive through the call
    out = np.empty(len(arrays[0]), dtype=dtype)
    fn(buf.ctypes.data, *[a.ctypes.data for a in arrays], len(out), *extra, out.ctypes.data)
    return out


def starts_with(buf: npt.NDArray[np.uint8], start: Index, end: Index, prefix: bytes) -> Mask:
    """Per row: does ``buf[start:end]`` start with ``prefix``? (Each row's first bytes are
    gathered as one record and compared as bytes.)"""
    k = len(prefix)
    lib = nt_native.library()
    if lib is not None and len(start):
        return _per_row(lib.cg_starts_with, buf, start, end, extra=(prefix, k))
    result = end - start >= k
    if len(start) == 0 or k == 0:
        return np.asarray(result, dtype=np.bool_)
    records = _records(buf, k)
    result &= records[np.minimum(start, len(records) - 1)] == np.void(prefix)
    return np.asarray(result, dtype=np.bool_)


def equals(buf: npt.NDArray[np.uint8], start: Index, end: Index, value: bytes) -> Mask:
    """Per row: is ``buf[start:end]`` exactly ``value``?"""
    return np.asarray((end - start == len(value)) & starts_with(buf, start, end, value), dtype=np.bool_)


def same_terms(buf: npt.NDArray[np.uint8], a: Index, b: Index, length: Index, width: int = 64) -> Mask:
    """Per row: are the ``length`` bytes at ``a`` and at ``b`` the same? ``False`` for a term
    longer than ``width`` (compared ``width`` bytes at once)."""
    if len(a) == 0:
        return np.zeros(0, dtype=np.bool_)
    lib = nt_native.library()
    if lib is not None:
        return _per_row(lib.cg_same_terms, buf, a, b, length, extra=(width,))
    beyond = np.arange(width)[None, :] >= length[:, None]
    same = ((_gather(buf, a, width) == _gather(buf, b, width)) | beyond).all(axis=1)
    return np.asarray(same & (length <= width), dtype=np.bool_)


_ENTITY_IRI = b"<http://www.wikidata.org/entity/"
_STATEMENT_IRI = b"<http://www.wikidata.org/entity/statement/"
#: bytes of zero padding after a block: the checks read up to this far past a term's first
#: byte (a statement node's namespace and the 15 bytes after it where its ``-`` is looked
#: for, :func:`surely_statements`), whatever the term, so that a term shorter than that on a
#: block's last line (an external id such as ``"5462918"``) is read inside the buffer and is
#: simply not vouched for (with 16 bytes such a line failed with an IndexError); the compiled
#: scan's 16-byte loads need 16 of them
_PAD = len(_STATEMENT_IRI) + 16
_DIGIT_LOW, _DIGIT_HIGH, _DOLLAR, _DASH = 48, 57, 36, 45
_NODE_LETTER = np.zeros(256, dtype=np.bool_)  # the first letter of a statement node's local name
_NODE_LETTER[np.frombuffer(b"QPLqpl", dtype=np.uint8)] = True


def _digits(buf: npt.NDArray[np.uint8], start: Index, width: int) -> npt.NDArray[np.bool_]:
    """``(rows, width)``: is each of the ``width`` bytes from ``start`` an ASCII digit?"""
    block = _gather(buf, start, width)
    return (block >= _DIGIT_LOW) & (block <= _DIGIT_HIGH)


def surely_claims(split: Split, rows: Index) -> Mask:
    """Per row (``p:`` triples): surely ``<…entity/[QP][1-9][0-9]{0,11}>`` as subject and
    ``<…entity/statement/[QPLqpl][0-9]+-[^$]+>`` as object? ``False`` only means "check it
    exactly" (the caller does, with the regular expressions): digit runs longer than 14 are
    left to that check."""
    buf = split.buf
    s0, s1, o0, o1 = split.s_start[rows], split.s_end[rows], split.o_start[rows], split.o_end[rows]
    n = len(rows)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    lib = nt_native.library()
    if lib is not None:
        return _per_row(lib.cg_surely_claims, buf, s0, s1, o0, o1)
    ok = starts_with(buf, s0, s1, _ENTITY_IRI) & (buf[s1 - 1] == _GT)
    local = s0 + len(_ENTITY_IRI)
    width = s1 - 1 - local  # the id's length
    letter = buf[local]
    ok &= (width >= 2) & (width <= 13) & ((letter == ord("Q")) | (letter == ord("P")))
    ok &= (buf[local + 1] >= ord("1")) & (buf[local + 1] <= _DIGIT_HIGH)
    digits = _digits(buf, local + 1, 12)
    ok &= (digits | (np.arange(12)[None, :] >= (width - 1)[:, None])).all(axis=1)
    ok &= surely_statements(split, o0, o1)[0]
    return np.asarray(ok, dtype=np.bool_)


def surely_statements(split: Split, start: Index, end: Index) -> tuple[Mask, Index]:
    """Per term: surely ``<…entity/statement/[QPLqpl][0-9]+-[^$]+>``, a statement node as
    a ``p:`` triple names it? And where its first ``-`` is (meaningful where surely).
    ``False`` only means "check it exactly": digit runs longer than 14 are left to that
    check."""
    buf = split.buf
    if len(start) == 0:
        return np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.int64)
    lib = nt_native.library()
    if lib is not None:
        sure, dash = np.empty(len(start), dtype=np.bool_), np.empty(len(start), dtype=np.int64)
        start, end = _int64(start), _int64(end)
        lib.cg_surely_statements(buf.ctypes.data, start.ctypes.data, end.ctypes.data, len(start),
                                 sure.ctypes.data, dash.ctypes.data)
        return sure, dash
    ok = starts_with(buf, start, end, _STATEMENT_IRI) & (buf[end - 1] == _GT)
    local = start + len(_STATEMENT_IRI)  # inside the padding for a shorter term (see _PAD)
    ok &= _NODE_LETTER[buf[local]]
    dash = statement_dashes(buf, local)
    ok &= (dash > local + 1) & (buf[dash] == _DASH) & (end - 1 - (dash + 1) >= 1)
    dollars = split.dollars
    if dollars is not None:
        ok &= np.searchsorted(dollars, end) == np.searchsorted(dollars, dash)
    return np.asarray(ok, dtype=np.bool_), dash


def statement_dashes(buf: npt.NDArray[np.uint8], local: Index) -> Index:
    """Per statement node whose local name (``Q42-GUID``) starts at ``local``: where the
    ``-`` after its letter and digits is (meaningful only where ``buf`` has a ``-`` there:
    a digit run longer than 14 is left to the caller)."""
    lib = nt_native.library()
    if lib is not None and len(local):
        return _per_row(lib.cg_statement_dashes, buf, local, dtype=np.int64)
    run = _digits(buf, local + 1, 15)
    return np.asarray(local + 1 + np.argmin(run, axis=1), dtype=np.int64)  # the first non-digit


def surely_entity_values(buf: npt.NDArray[np.uint8], start: Index, end: Index) -> Mask:
    """Per object term: surely ``<…entity/[QPLEM][1-9][0-9]{0,11}>``, an entity value? (Form
    and sense ids, ``L1-F1``, are left to the caller's exact check, like anything else
    ``False``.)"""
    if len(start) == 0:
        return np.zeros(0, dtype=np.bool_)
    lib = nt_native.library()
    if lib is not None:
        return _per_row(lib.cg_surely_entity_values, buf, start, end)
    local = start + len(_ENTITY_IRI)
    width = end - 1 - local
    ok = starts_with(buf, start, end, _ENTITY_IRI) & (buf[end - 1] == _GT) & (width >= 2) & (width <= 13)
    ok &= np.isin(buf[local], np.frombuffer(b"QPLEM", dtype=np.uint8))
    ok &= (buf[local + 1] >= ord("1")) & (buf[local + 1] <= _DIGIT_HIGH)
    digits = _digits(buf, local + 1, 12)
    ok &= (digits | (np.arange(12)[None, :] >= (width - 1)[:, None])).all(axis=1)
    return np.asarray(ok, dtype=np.bool_)
