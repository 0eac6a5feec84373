"""The JSON dump parsed in chunks of whole lines on worker processes, written in order.

Parsing (decoding the JSON, :mod:`~chaingraph.sources.loaders.json_typed`, and building
rows) holds the GIL, so threads cannot share it: the main
process decompresses the dump (a reader thread, zlib releases the GIL), hands chunks of
about :data:`CHUNK_BYTES` to :data:`PARSE_WORKERS` forked processes, takes their rows back
as Arrow tables *in file order*, and writes them in batches of about
:data:`~chaingraph.sources.loaders.json_dump.BULK_ROWS` statements (or
:data:`~chaingraph.sources.loaders.json_dump.BULK_BYTES` bytes) on a writer thread while
the workers parse on. At most two chunks per worker are in flight and one batch waits to
be written, so memory does not grow with the dump; chunks are decompressed into a few
reused buffers (:class:`~chaingraph.sources.loaders.compression.BlockRing`), each pickled
to a worker and then refilled, not into a new ``bytes`` object each.

A worker runs exactly the single-process parser (:func:`parse_chunk`:
:func:`~chaingraph.sources.loaders.json_dump.parse_line` and
:class:`~chaingraph.sources.loaders.json_rows.EntityRows`), so the rows are the same. A
chunk's rows are cut where an entity comes again, and a batch is written before it takes
an entity it already holds: every write brings each of its entities whole
(:meth:`Store.write_arrow` ``replace``), in file order, so the last copy wins. A bad line
is reported with its line number in the file; unless skipping, everything before it is
written first and the load stops there.

>>> result = parse_chunk(b'[\\n{"type":"item","id":"Q1","claims":{}},\\n{"id":\\n', 1, "src",
...                      stop_at_bad=False)
>>> [part.ids for part in result.parts], result.bad
([{'Q1'}], [(3, 'the line is not complete JSON (truncated?): Expecting value at column 7')])
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import pickle
import queue
import zlib
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.errors import ChaingraphError
from chaingraph.progress import Progress
from chaingraph.sources.loaders import json_dump, json_typed
from chaingraph.sources.loaders import workers as kept
from chaingraph.sources.loaders.common import LineGuard, loaded_bytes, system_arrow_memory
from chaingraph.sources.loaders.compression import RawCounter, read_blocks_into
from chaingraph.sources.loaders.json_dump import (
    EntityRows,
    describe_bad_line,
    entity_text,
    parse_text,
    plain_text,
    unreadable,
)
from chaingraph.sources.loaders.json_typed import typed_text
from chaingraph.store import Store
from chaingraph.store_file import BATCH_ROW_GROUP_SIZE

__all__ = ["CHUNK_BYTES", "PARALLEL_BYTES", "PARSE_WORKERS", "ChunkResult", "Part", "default_workers",
           "load_chunks", "off_heap", "parse_chunk"]

#: worker processes that parse (the main process decompresses and writes meanwhile)
PARSE_WORKERS = 2
#: decompressed bytes per chunk handed to a worker (whole lines)
CHUNK_BYTES = 1 << 20
#: files smaller than this (as stored) are parsed in the main process: starting workers
#: would cost more than they save
PARALLEL_BYTES = 256 << 10
_TOTALS = ("entities", "properties", "statements", "qualifiers", "references")


@dataclass
class Part:
    """Rows of consecutive entities of one chunk, none of them twice: each table as the
    Arrow IPC bytes of its pieces (what crosses to the main process in one copy;
    :meth:`EntityRows.pieces`) and without ``statement_sources``, which the main process
    derives from ``statements``."""

    tables: dict[str, list[bytes | memoryview]]
    ids: set[str]
    totals: dict[str, int]
    #: the tables whose keys do not repeat within the part
    unique: set[str] = field(default_factory=set)
    #: every statement id starts with its subject's id (:attr:`EntityRows.prefixed`)
    prefixed: bool = True


@dataclass
class ChunkResult:
    """What a chunk gave: its parts in order and its bad lines ``(line, problem)``."""

    parts: list[Part] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)


def _part(rows: EntityRows) -> Part:
    unique = rows.unique()  # statement ids: also over the batch (_Merged.unique)
    return Part({name: [_ipc(t) for t in pieces] for name, pieces in rows.pieces().items()}, rows.ids,
                rows.totals(), unique, rows.prefixed)


def off_heap(result: ChunkResult) -> ChunkResult:
    """``result`` with its parts' rows moved out of the C library's heap, into one anonymous
    mapping of its own, given back to the system whole when the last of its rows is freed.

    A chunk's rows arrive as ``bytes`` objects of every size up to a megabyte, in the heap
    (unpickled from a worker, or written by :func:`parse_chunk` here), and a batch keeps them
    until it is written while the next batch's arrive around them: the holes the freed ones
    left did not fit the next ones, and the heap's free memory grew with the load. Into a
    store file, the main process's free heap at the median was 7-10 MB with codex-m's dump
    and 12-13 with its 10x synthetic dump, and the process peaked 92-94 and 97-100 MB above
    its start; with the rows copied out, 4-5 MB free at both, and peaks of 88 and 93 (two
    runs each). The ``bytes`` now live only while they are copied.

    >>> result = parse_chunk(b'{"type":"item","id":"Q1","claims":{}}\\n', 1, "src", stop_at_bad=False)
    >>> moved = off_heap(result).parts[0].tables["entities"][0]
    >>> type(moved).__name__, _table(moved)["id"].to_pylist()
    ('memoryview', ['Q1'])
    """
    size = sum(len(piece) for part in result.parts for pieces in part.tables.values() for piece in pieces)
    if not size:
        return result
    area = memoryview(_anonymous(size))
    start = 0
    for part in result.parts:
        for name, pieces in part.tables.items():
            moved: list[bytes | memoryview] = []
            for piece in pieces:
                end = start + len(piece)
                area[start:end] = piece
                moved.append(area[start:end])
                start = end
            part.tables[name] = moved
    return result


def _anonymous(size: int) -> mmap.mmap:
    """A new anonymous mapping of ``size`` bytes, its pages made at once where the system
    can (Linux: one call, not a page fault a page; that took the copy's cost from 2-3 % of
    codex-m's load into a store file to none measurable)."""
    if not hasattr(mmap, "MAP_ANONYMOUS"):  # Windows
        return mmap.mmap(-1, size)
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0))


def _ipc(table: pa.Table) -> bytes:
    """``table`` as an Arrow IPC stream, written once into a buffer of its exact size (a
    first pass that writes nothing measures it), then copied out as ``bytes``. Written into
    a growing buffer, a stream was copied at every doubling and then once more: buffers of
    every size up to a megabyte, whose holes the next chunk's did not fit (:func:`_parse`).

    >>> _table(_ipc(pa.table({"id": ["Q1", None]})))["id"].to_pylist()
    ['Q1', None]
    """
    mock = pa.MockOutputStream()
    with pa.ipc.new_stream(mock, table.schema) as writer:
        writer.write_table(table)
    out = pa.allocate_buffer(mock.size())
    with pa.ipc.new_stream(pa.FixedSizeBufferWriter(out), table.schema) as writer:
        writer.write_table(table)
    return bytes(out)


def _table(data: bytes | memoryview) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def _lines(data: bytes) -> Iterator[bytes]:
    """The lines of ``data`` without their ends, one at a time (none after a last ``\\n``).

    Cut as they are parsed, each line is freed before the next is cut, and the next takes
    its place in the heap, where a list of them (``data.split``) held a megabyte of lines of
    every size until the chunk was parsed (:func:`_parse`).

    >>> list(_lines(b"a\\n\\nbc\\n")), list(_lines(b"a\\nb")), list(_lines(b""))
    ([b'a', b'', b'bc'], [b'a', b'b'], [])
    """
    start, end = 0, len(data)
    while start < end:
        stop = data.find(b"\n", start)
        if stop < 0:
            stop = end
        yield data[start:stop]
        start = stop + 1


def parse_chunk(data: bytes, first_line: int, source_id: str, *, stop_at_bad: bool) -> ChunkResult:
    """Parse whole lines (the first is line ``first_line`` of the file) into parts; with
    ``stop_at_bad`` nothing after the first bad line is parsed."""
    rows = EntityRows(source_id)  # a chunk is one batch's part, whatever its size
    typed = typed_text(data)  # lines may be decoded into typed structs (json_typed)
    plain = not typed and plain_text(data)  # what parse_line would look for in every line, looked for once
    out = ChunkResult()
    for i, line in enumerate(_lines(data)):
        try:
            text = entity_text(line)
            if typed and text.startswith(b"{") and (typed_entity := json_typed.decode(text)) is not None:
                if typed_entity.id in rows.ids:  # a second copy: the parts keep the order
                    out.parts.append(_part(rows))
                    rows = EntityRows(source_id)
                if json_typed.add(rows, typed_entity):
                    continue
            entity = parse_text(text, plain=plain)  # any other line: the general parser
            if entity is not None:
                if entity.get("id") in rows.ids:
                    out.parts.append(_part(rows))
                    rows = EntityRows(source_id)
                rows.add(entity)
        except (ValueError, KeyError, TypeError, AttributeError, ChaingraphError) as exc:
            out.bad.append((first_line + i, describe_bad_line(exc, line)))
            if stop_at_bad:
                break
    if rows.n_entities:
        out.parts.append(_part(rows))
    return out


def _parse(task: tuple[int, int, bytes, str, bool]) -> tuple[int, ChunkResult | BaseException]:
    """A worker's answer to a chunk: its sequence number and rows, or what parsing raised.

    A worker's child parses chunk after chunk (:mod:`~chaingraph.sources.loaders.workers`),
    and every buffer a chunk frees that the next chunk's do not fit stays in its heap: the
    child's memory grew with its age. So a chunk arrives as ``bytes`` (:class:`_Chunk`), its
    lines are cut one at a time (:func:`_lines`) and its tables written into buffers of
    their exact size (:func:`_ipc`). Forty children of codex-m's 10x synthetic dump, at the
    median: a child's own memory after its sixteenth chunk 13.8 MB (15.2 at most) where it
    was 16.4 (18.0), its heap's free memory 4.8 MB where it was 7.3, and from its second
    chunk to its sixteenth it grows 1.4 MB where it grew 2.8. The two workers together
    peaked at 31.5-32.1 MB in that load and at 30.2-30.5 in codex-m's dump, where they
    peaked at 37.1-37.2 and 34.8-35.8, in the same time.
    """
    seq, first_line, data, source_id, stop_at_bad = task
    result: ChunkResult | BaseException
    try:
        # a worker's Arrow buffers from the C library's malloc, not mimalloc, which kept what
        # each chunk's rows freed: the two workers peaked 11-12 MB lower together (codex-m and
        # its 10x synthetic dump, in the same time)
        with system_arrow_memory():
            result = parse_chunk(data, first_line, source_id, stop_at_bad=stop_at_bad)
    except BaseException as exc:  # handed to the main process, which raises it
        result = exc
        try:
            pickle.dumps(exc)
        except Exception:
            result = RuntimeError(f"parsing lines from {first_line} failed: {type(exc).__name__}: {exc}")
    return seq, result


class _Chunk:
    """A chunk on its way to a worker, pickled as the ``bytes`` the worker parses. A buffer of
    the reader's ring (a ``bytearray``) sent as itself was unpickled as ``bytes``, copied into
    a ``bytearray`` and copied again to be parsed: two more megabytes of the child's heap a
    chunk (:func:`_parse`). The one copy left is made as the queue sends the chunk, as before.

    >>> pickle.loads(pickle.dumps(_Chunk(bytearray(b"{}\\n"))))
    b'{}\\n'
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes | bytearray) -> None:
        self.data = data

    def __reduce__(self) -> tuple[type[bytes], tuple[bytes]]:
        return bytes, (bytes(self.data),)


class _Pool:
    """Chunks to ``workers`` processes and their results back in order (``workers=0``:
    parsed in this process). The processes are kept for the next load when every chunk was
    answered (:mod:`~chaingraph.sources.loaders.workers`)."""

    def __init__(self, workers: int, source_id: str, *, stop_at_bad: bool) -> None:
        self.source_id, self.stop_at_bad = source_id, stop_at_bad
        self.sent = self.done = 0
        self.ready: dict[int, ChunkResult | BaseException] = {}
        self.limit = 2 * workers
        # forked (the workers start at once with everything imported; nothing of the store's
        # DuckDB is used in them), or the kept workers of the last load
        self.workers = kept.take(workers, _parse, "chaingraph-parse") if workers and _can_fork() else None

    def submit(self, data: bytes | bytearray, first_line: int) -> Iterator[ChunkResult]:
        """Hand over a chunk; yield the results due, in order, while too many are in flight."""
        if self.workers is None:
            yield off_heap(parse_chunk(bytes(data), first_line, self.source_id, stop_at_bad=self.stop_at_bad))
            return
        self.workers.tasks.put((self.sent, first_line, _Chunk(data), self.source_id, self.stop_at_bad))
        self.sent += 1
        while self.sent - self.done >= self.limit:
            yield self._next()

    def finish(self) -> Iterator[ChunkResult]:
        """The results of every chunk still in flight, in order."""
        while self.done < self.sent:
            yield self._next()

    def _next(self) -> ChunkResult:
        assert self.workers is not None
        while self.done not in self.ready:
            try:
                seq, result = self.workers.results.get(timeout=1.0)
            except queue.Empty:
                if not self.workers.alive():
                    raise ChaingraphError("a JSON parsing worker process died (killed, or out of "
                                          "memory?); load the file again") from None
                continue
            self.ready[seq] = result
        result = self.ready.pop(self.done)
        self.done += 1
        if isinstance(result, BaseException):
            raise result
        return off_heap(result)

    def close(self) -> None:
        """Keep the workers for the next load if every chunk was answered, else end them."""
        workers, self.workers = self.workers, None
        if workers is None:
            return
        if self.done == self.sent and workers.alive():
            kept.keep(workers)
        else:
            workers.stop(idle=False)


class _Merged:
    """Consecutive parts written as one batch (what the writer thread takes)."""

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id
        self.parts: list[Part] = []
        self.ids: set[str] = set()
        self.statements = 0
        self.nbytes = 0
        self.prefixed = True
        self._unique: set[str] | None = None  # decided by tables(), from the rows it takes

    def add(self, part: Part) -> None:
        self.parts.append(part)
        self.prefixed = self.prefixed and part.prefixed
        self.ids |= part.ids
        self.statements += part.totals["statements"]
        self.nbytes += sum(len(piece) for pieces in part.tables.values() for piece in pieces)

    def tables(self) -> dict[str, list[pa.Table]]:
        """The parts' pieces of each table, those with the same columns as one table, and
        :meth:`unique` decided. Called once: the rows move from the parts to the tables, so
        that they are freed when the writer lets the tables go (``BulkLoad.write``'s
        ``consume``), not when the batch goes."""
        out: dict[str, list[pa.Table]] = {}
        for name in {name for part in self.parts for name in part.tables}:
            groups: dict[pa.Schema, list[pa.Table]] = {}
            for part in self.parts:
                for data in part.tables.get(name, ()):
                    table = _table(data)
                    groups.setdefault(table.schema, []).append(table)
            out[name] = [pa.concat_tables(group) for group in groups.values()]
        for part in self.parts:
            part.tables = {}
        statements = out.get("statements", [])
        ids = pa.chunked_array([c for t in statements for c in t["statement_id"].chunks],
                               pa.string()) if statements else None
        self._unique = self._keys_unique(ids)
        if ids is not None:
            out["statement_sources"] = [pa.table({
                "statement_id": ids, "source_id": _constant(self.source_id, len(ids))})]
        return out

    def unique(self) -> set[str]:
        """The tables whose keys do not repeat in the batch, as :meth:`tables` decided them
        (from the statement ids it takes out of the parts: call it first)."""
        if self._unique is None:
            raise RuntimeError("_Merged.unique() is decided by tables(): call tables() first")
        return self._unique

    def _keys_unique(self, ids: pa.ChunkedArray | None) -> set[str]:
        """The tables whose keys do not repeat in the batch, whose statement ids are ``ids``.
        Every snak row belongs to a statement of its own part, so with statement ids unique
        over the batch a snak table is unique if it is in each part; statement provenance
        has one source per load.

        Statement ids unique in each part are unique over the batch when each starts with
        its subject's id and ``$`` (:attr:`prefixed`): the parts' entities are distinct, and
        so are ``A$`` and ``B$`` for distinct ids. Otherwise they are counted."""
        each = all("statements" in p.unique for p in self.parts)
        if ids is not None and not (each and self.prefixed) and pc.count_distinct(ids).as_py() != len(ids):
            return set()
        snaks = {n for n in ("qualifiers", "reference_snaks") if all(n in p.unique for p in self.parts)}
        return {"statements", "statement_sources", *snaks}


def _constant(text: str, length: int) -> pa.DictionaryArray:
    """``text`` ``length`` times, as one string and a byte of index a row (DuckDB reads it as
    plain strings): a batch's provenance column, 1 MB less per 50,000 statements than the
    string written out for each.

    >>> _constant("abc", 3).to_pylist()
    ['abc', 'abc', 'abc']
    """
    return pa.DictionaryArray.from_arrays(pa.nulls(length, pa.int8()).fill_null(0), pa.array([text]))


def _can_fork() -> bool:
    """Whether this process may start workers by forking (not on Windows, nor inside a
    daemonic process such as a ``multiprocessing.Pool`` worker, which may have no children)."""
    return "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon


def default_workers(path: str | Path) -> int:
    """Parse workers for ``path``: :data:`PARSE_WORKERS`, at most the CPUs this process may
    use, none on one CPU or for a small file."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cpus < 2 or Path(path).stat().st_size < PARALLEL_BYTES:
        return 0
    return min(PARSE_WORKERS, cpus)


def load_chunks(path: str | Path, stream: IO[bytes], counter: RawCounter, store: Store, source_id: str,
                guard: LineGuard, *, progress: Progress | None = None,
                workers: int | None = None) -> dict[str, int]:
    """Load the opened dump ``stream`` into ``store`` under ``source_id``; return the totals
    of :class:`~chaingraph.sources.loaders.common.FileReport`."""
    pool = _Pool(default_workers(path) if workers is None else workers, source_id, stop_at_bad=not guard.skip)
    try:
        # the workers keep the cores busy: DuckDB inserts on one thread (less CPU and memory);
        # a batch fills a row group, which DuckDB compresses as it is inserted (store_file)
        load = store.bulk_load(threads=1 if pool.workers else None, row_groups=BATCH_ROW_GROUP_SIZE)
    except BaseException:
        pool.close()
        raise
    with load:
        writer = json_dump._Writer(store, load, wait=True)
        totals = _load(path, stream, counter, source_id, guard, progress, pool, writer)
    if load.raised_mb is not None:
        totals["raised_memory_mb"] = load.raised_mb
    return totals


def _load(path: str | Path, stream: IO[bytes], counter: RawCounter, source_id: str, guard: LineGuard,
          progress: Progress | None, pool: _Pool, writer: json_dump._Writer) -> dict[str, int]:
    totals = dict.fromkeys(_TOTALS, 0)
    batch = _Merged(source_id)

    def submit() -> None:
        nonlocal batch
        if batch.parts:
            writer.submit(batch)
            batch = _Merged(source_id)

    def flush() -> None:  # before raising on a bad line: commit everything parsed so far
        submit()
        writer.drain()

    def take(result: ChunkResult) -> None:
        for part in result.parts:
            if not batch.ids.isdisjoint(part.ids):  # an entity again: its earlier copy goes first
                submit()
            batch.add(part)
            for name in _TOTALS:
                totals[name] += part.totals[name]
            if (batch.statements >= json_dump.BULK_ROWS or len(batch.ids) >= json_dump.BULK_ENTITIES
                    or batch.nbytes >= json_dump.BULK_BYTES):
                submit()
        for line, problem in result.bad:
            guard.bad(line, problem, flush)
        loaded_bytes(progress, str(path), counter.position(), counter.size)

    lineno = 0  # lines handed to the pool
    try:
        try:
            # chunks are read into reused buffers (compression.BlockRing): each is pickled
            # to a worker, then its buffer takes a later chunk
            with closing(read_blocks_into(stream, CHUNK_BYTES)) as chunks:
                for chunk in chunks:
                    first = lineno + 1
                    lineno += chunk.count(b"\n") + (not chunk.endswith(b"\n"))
                    for result in pool.submit(chunk, first):
                        take(result)
            for result in pool.finish():
                take(result)
            flush()
        except (EOFError, OSError, zlib.error) as exc:
            for result in pool.finish():
                take(result)
            flush()
            raise unreadable(path, lineno, exc) from exc
    finally:
        pool.close()
        writer.close()
    return totals
