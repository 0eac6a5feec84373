"""Read N-Triples into DuckDB staging tables, fast (Turtle: :mod:`~chaingraph.sources.loaders.turtle`).

An RDF dump is read in blocks of about :data:`BLOCK_BYTES` decompressed bytes (ISA-L
decompresses gzip on a reader thread). Worker threads (:data:`STAGING_THREADS`) prepare
blocks while this thread commits them in file order, and the rows to stage go to DuckDB
every :data:`APPEND_BYTES` on a thread of their own (:meth:`_Stager.drain`), after the first
:data:`HOLD_BYTES`: a file that stages less is never copied into DuckDB (:meth:`_Stager.finish`),
and one that stages more, by the part read so far (:data:`LARGE_FILE_HOLDS`), holds no more
than :data:`APPEND_BYTES`:

* :func:`~chaingraph.sources.loaders.nt_views.split_lines` finds every line's subject,
  predicate and object (in compiled C where the install built it,
  :mod:`~chaingraph.sources.loaders.nt_native`, else with numpy; the GIL is released either
  way for most of it) and hands them on as Arrow *string views* into the
  block, so no term is copied out of the decompressed bytes; DuckDB checks the literals'
  suffixes and escapes, numpy the ids of ``p:`` triples;
* each *distinct* predicate is classified once in Python (:func:`~.nt_roles.classify_predicate`:
  ``k`` is its role, see :data:`~.nt_roles.PREDICATES`, ``pid`` its property id), and rows that cannot
  matter are dropped before DuckDB sees them: ``rdf:type`` but novalue classes, normal
  ranks, ``wdt:`` triples next to the ``p:`` triple of their subject and property, and labels,
  descriptions and aliases outside ``en``/``mul`` (one ``seen`` row per subject instead);
* the rest is staged in the tables ``(line, k, pid, s, o)``, one per
  :data:`~.nt_roles.STAGING_GROUPS` role group (read through one view), statement nodes as their
  statement ids and the subjects of ``p:`` triples as entity ids
  (:mod:`~chaingraph.sources.loaders.nt_ids`: the ``-`` of a statement id is turned ``$``
  in the block itself, which the reader decompresses into,
  :func:`~chaingraph.sources.loaders.compression.read_blocks_into`).

Memory is a few blocks plus what DuckDB keeps (for a store file it is held to a budget and
spills to disk beyond it: see :mod:`~chaingraph.sources.loaders.rdf`, which also has Arrow
allocate from ``malloc`` meanwhile:
:func:`~chaingraph.sources.loaders.common.system_arrow_memory`).
Lines the fast path does not take (comments, tabs, several spaces) go through a regular
expression one by one; lines that match nothing are bad lines
(:class:`~chaingraph.sources.loaders.common.LineGuard`), and the first one stops staging
exactly where a one-by-one reader would.

"""

from __future__ import annotations

import os
import queue
import threading
import zlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass, field
from typing import IO

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from chaingraph.sources.loaders.common import LineGuard, is_utf8
from chaingraph.sources.loaders.compression import PAUSED, BlockRing, read_blocks_into
from chaingraph.sources.loaders.nt_ids import (
    ENTITY_PREFIX,
    NODE_PREFIX,
    STRIP_ENTITY_VALUE,
    claim_ok,
    claim_problem,
    staged_entity_id,
    staged_statement_id,
)
from chaingraph.sources.loaders.nt_roles import (
    STAGING_GROUPS,
    SURROGATE,
    SURROGATE_ESCAPE,
    classify_predicate,
    line_problem,
    parse_line_slow,
)
from chaingraph.sources.loaders.nt_rows import KIND_CODE, NORMAL_RANK, Append, bad_claims, block_tables
from chaingraph.sources.loaders.nt_views import (
    PLAIN,
    Block,
    Split,
    equals,
    intern,
    release_scratch,
    split_lines,
    views,
)
from chaingraph.store_memory import Connection, current, malloc_trim

__all__ = [
    "BLOCK_BYTES",
    "ENTITY_PREFIX",
    "NODE_PREFIX",
    "ReadError",
    "stage_ntriples",
]

_LITERAL = r'^"(?:[^"\\]|\\.)*"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<[^>\s]*>)?$'

_SUFFIX = r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^<[^>\s]*>"


#: worker threads that prepare blocks (the reader thread decompresses, this one appends)
STAGING_THREADS = min(2, os.cpu_count() or 1)
#: decompressed bytes per block: a block's line arrays (a few hundred bytes per line) then
#: stay within the CPU caches while the workers pass over them a few dozen times, and the
#: first and last blocks, when one worker waits for the other, are short (codex-m, interleaved
#: runs, load ~1.7: 0.95 s and 1.48 s CPU at 4 MB against 1.02 s and 1.59 s at compression's
#: 8 MB; 16 MB took more CPU still, 2 MB no less than 4)
BLOCK_BYTES = 4 << 20
#: blocks the reader holds in the ring they are read into (compression.BlockRing) besides
#: those in flight to the workers: the one being read and two queued. The ring is no larger
#: (compression.RING_BLOCKS, eight, kept two more with two workers, which held 8 MB more while
#: a dump is staged between its chunk builds; see :data:`APPEND_BYTES`)
READER_BLOCKS = 3


#: staged rows are held as Arrow tables until they reach this many bytes, then appended to their
#: staging tables at once: an INSERT costs about 2 ms of its own besides its rows, and a block
#: stages 6-19 % of its text (codex-m), copied out so that the block's buffer can be reused.
#: The appends run on a thread of their own while the workers prepare the next blocks. Held
#: rows and the ring of blocks (:data:`READER_BLOCKS`) are the staging's memory between a
#: dump's chunk builds: at 10x, in chunks of 300,000 rows, 4 MB and six blocks peaked at 120
#: and 123 MB (the process's high-water mark above its start, two runs), 8 MB and eight at 127
#: and 128, in about the same time (12.5-13.1 s against 12.2-12.7)
APPEND_BYTES = 4 << 20
#: the first staged rows are held until they reach this many bytes (not :data:`APPEND_BYTES`): a
#: file that stages less is never copied into DuckDB, its held tables become the staging tables
#: (:meth:`_Stager.finish`). Appending costs DuckDB about 8 ms per MB, beside the workers, and the
#: last append was the end of staging: codex-m and ILPC-large stage 23 and 26 MB. Held rows are
#: outside DuckDB's memory budget of a store file; this bounds them, and a larger file's first
#: held rows go to DuckDB :data:`APPEND_BYTES` an INSERT (:meth:`_Stager._insert`).
HOLD_BYTES = 32 << 20
#: ... unless the part of the file read so far says that the file stages more than this many
#: times :data:`HOLD_BYTES`: then they go :data:`APPEND_BYTES` at a time from the start, as the
#: rest will. Held whole, the first 32 MB went into DuckDB's staging tables at once, filling its
#: budget while the process still had the Arrow memory they freed: 10x codex-m's load peaked
#: there, a second into it (137-140 MB, and 130-133 from then on). At 2 a file that stages
#: between one and two times :data:`HOLD_BYTES` still did so: codex-m's 2x synthetic dump (46 MB
#: staged) peaked at 137-139 MB, above its 10x and 20x dumps (128-132), and at 120 at 1 (two
#: runs each, the same time). The guess is low, never high, so codex-m and ILPC-large (23 and
#: 26 MB staged) are still held whole; a file that stages just above :data:`HOLD_BYTES` can
#: still be guessed below it until all of it is held
LARGE_FILE_HOLDS = 1


@dataclass
class _Prepared:
    """A block ready to append (see :meth:`_Stager.prepare`)."""

    lines: int
    problems: dict[int, str] = field(default_factory=dict)  # row in the block -> problem
    slow_rows: list[tuple[int, str, str, str]] = field(default_factory=list)  # (row, s, p, o)
    tables: list[Append] = field(default_factory=list)
    bad_bytes: tuple[Block, UnicodeDecodeError] | None = None


class _Stager:
    """Appends classified triples to the staging table, block by block."""

    def __init__(self, con: Connection, table: str, guard: LineGuard,
                 read_fraction: Callable[[], float] | None = None) -> None:
        self._con = con
        #: how much of the file is read (0-1; ``None``: its size is not known)
        self.read_fraction = read_fraction
        self.table = table
        self.guard = guard
        self.classes: dict[str, tuple[str | None, str | None]] = {}
        self.groups = [*STAGING_GROUPS, "main"]
        self._group_of = {k: i for i, kinds in enumerate(STAGING_GROUPS.values()) for k in kinds}
        self._lock = threading.Lock()
        self._cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
        self._pending: dict[str, list[pa.Table]] = {}  # group -> staged rows not yet appended
        self._pending_bytes = 0
        #: the thread held rows are appended on (``None``: this one)
        self.appender: ThreadPoolExecutor | None = None
        self._appending: Future[None] | None = None
        self._appended = False  # whether any row went into the staging tables yet
        #: rows staged (held or appended) since staging began or the last chunk
        self.staged = 0

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection the rows are staged on (now: a chunk may reopen the store)."""
        return current(self._con)

    def _classify(self, predicates: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
        """Role, property id and staging-group number of each predicate (role and group are
        null for predicates that do not matter); Python sees each distinct predicate once."""
        enc = pc.dictionary_encode(predicates).combine_chunks() if isinstance(
            predicates, pa.ChunkedArray) else pc.dictionary_encode(predicates)
        kinds, pids, groups = [], [], []
        main = len(self.groups) - 1
        for term in enc.dictionary.to_pylist():
            if term not in self.classes:
                self.classes[term] = classify_predicate(term)
            kind, prop = self.classes[term]
            kinds.append(kind)
            pids.append(prop)
            groups.append(None if kind is None else self._group_of.get(kind, main))
        return (pa.array(kinds, pa.string()).take(enc.indices), pa.array(pids, pa.string()).take(enc.indices),
                pa.array(groups, pa.int8()).take(enc.indices))

    def block(self, data: Block, first_line: int, flush: Callable[[], None]) -> int:
        """Stage one block of whole lines; ``first_line`` is the 1-based number of its first
        line. Returns the number of lines in the block."""
        return self.commit(self.prepare(data), first_line, flush)

    def prepare(self, block: Block) -> _Prepared:
        """Everything of :meth:`block` but writing to the staging tables: split, check and
        classify the lines, and build the Arrow tables to append. Runs on a worker thread
        (numpy, Arrow and DuckDB release the GIL), several blocks at once, before their
        line numbers are known: rows are numbered within the block."""
        data = block if isinstance(block, bytearray) else bytearray(block)  # statement ids go into it
        if not is_utf8(data):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
                return _Prepared(lines, bad_bytes=(data, exc))
        split = split_lines(data)
        ok = split.ok.copy()
        literal_rows = np.flatnonzero(ok & (split.literal > 0))
        if len(literal_rows):
            ok[self._bad_literals(split, literal_rows)] = False
        rows = np.flatnonzero(ok)
        kind, entry, pids = self._classify_views(split, rows)
        problems = bad_claims(split, rows[kind == KIND_CODE["claim"]])  # row -> problem
        # the slow path: lines the fast path did not take (comments, odd spacing, bad lines)
        slow_rows: list[tuple[int, str, str, str]] = []
        for i in np.flatnonzero(~ok):
            text = data[split.line_start[i]:split.line_end[i]].decode("utf-8").strip()
            if not text or text.startswith("#"):
                continue
            parsed = None if SURROGATE.search(text) else parse_line_slow(text)
            if parsed is None:
                problems[int(i)] = line_problem(text)
            elif self._classes(parsed[1])[0] == "claim" and not claim_ok(parsed[0], parsed[2]):
                problems[int(i)] = claim_problem(parsed[0], parsed[2])
            else:
                slow_rows.append((int(i), *parsed))
        take = ~np.isin(rows, list(problems))
        # a bad line stops staging (unless skipping): no pair of rows across it is "side by side"
        stop = min(problems) if problems and not self.guard.skip else split.lines
        tables = block_tables(split, rows[take], kind[take], entry[take], pids, stop, self.groups)
        return _Prepared(split.lines, problems=problems, slow_rows=slow_rows, tables=tables)

    def commit(self, prepared: _Prepared, first_line: int, flush: Callable[[], None]) -> int:
        """Append a prepared block to the staging tables, up to its first bad line unless
        skipping (then ``flush`` commits everything before it and the bad line raises)."""
        if prepared.bad_bytes is not None:
            return self._around_bad_bytes(*prepared.bad_bytes, first_line, flush)
        bad = sorted(prepared.problems)
        stop = bad[0] if bad and not self.guard.skip else prepared.lines  # the first row not to stage
        for group, table in prepared.tables:  # rows at or after stop are not in them
            self._hold(group, table.set_column(0, "line", pc.add(table["line"], first_line)))
        slow = [(first_line + row, s, p, o) for row, s, p, o in prepared.slow_rows if row < stop]
        if slow:
            self._append(_rows_table(slow))
        for row in bad:
            self.guard.bad(first_line + row, prepared.problems[row], self._flushing(flush))
        return prepared.lines

    def _flushing(self, flush: Callable[[], None]) -> Callable[[], None]:
        """``flush``, after the held rows are appended."""
        def run() -> None:
            self.append_held()
            flush()
        return run

    def _hold(self, group: str, table: pa.Table) -> None:
        self._pending.setdefault(group, []).append(table)
        self.staged += table.num_rows
        self._pending_bytes += table.nbytes
        if self._pending_bytes >= (APPEND_BYTES if self._appended or self._large() else HOLD_BYTES):
            self.drain()

    def _large(self) -> bool:
        """Whether the rows held so far (none appended yet), by the part of the file read,
        say that the file stages more than :data:`LARGE_FILE_HOLDS` times :data:`HOLD_BYTES`
        (the part read is ahead of the rows held, by the blocks being prepared: the guess is
        low, never high). Asked once :data:`APPEND_BYTES` are held."""
        if self._pending_bytes < APPEND_BYTES or self.read_fraction is None:
            return False
        read = self.read_fraction()
        return read > 0 and self._pending_bytes / read > LARGE_FILE_HOLDS * HOLD_BYTES

    def finish(self) -> None:
        """The end of staging: the held rows are appended, or, when no row was appended yet
        (a file that stages less than :data:`HOLD_BYTES`), each group's held rows become its
        staging table as they are (a view of the Arrow table, in place of the empty table), so
        that nothing is copied into DuckDB. Only N-Triples staging finishes so (nothing deletes
        staged rows of it; see :func:`~.nt_roles.delete_staged`); :func:`~.nt_roles.drop_staging` removes
        either."""
        if self._appended:
            self.append_held()
            return
        pending, self._pending, self._pending_bytes = self._pending, {}, 0
        for group, tables in pending.items():
            name = f"{self.table}_{group}"
            self.con.execute(f"DROP TABLE {name}")
            self.con.register(name, pa.concat_tables(tables))

    def drain(self) -> None:
        """Append the held rows to the staging tables, one INSERT per group, in file order: on
        the :attr:`appender` thread when there is one (then :meth:`settle` waits for it), so
        this thread goes on handing blocks to the workers meanwhile. One append at a time is
        in flight: the next waits for it, so held rows never pile up."""
        pending, self._pending, self._pending_bytes = self._pending, {}, 0
        if not pending:
            return
        self._appended = True
        if self.appender is None:
            self._insert(pending)
            return
        self.settle()
        self._appending = self.appender.submit(self._insert, pending)

    def append_held(self) -> None:
        """Append the held rows and wait until they are in the staging tables."""
        self.drain()
        self.settle()

    def settle(self) -> None:
        """Wait for the append in flight, if any (and raise its error)."""
        appending, self._appending = self._appending, None
        if appending is not None:
            appending.result()

    def quiesce(self) -> None:
        """Wait for the append in flight, if any, without raising its error: the cleanup after
        an error or Ctrl-C, which reports that one instead."""
        if self._appending is not None:
            wait([self._appending])

    def _insert(self, pending: dict[str, list[pa.Table]]) -> None:
        """One INSERT per group and :data:`APPEND_BYTES` (the first :data:`HOLD_BYTES` take
        several), each piece taken out of ``pending`` as it goes, so it is let go of once
        DuckDB has it: the held rows and their copy in DuckDB are not both whole at once."""
        for group, tables in list(pending.items()):
            while tables:
                piece = [tables.pop(0)]
                size = piece[0].nbytes
                while tables and size + tables[0].nbytes <= APPEND_BYTES:
                    size += tables[0].nbytes
                    piece.append(tables.pop(0))
                columns = ", ".join(piece[0].column_names)
                self.con.register("_cg_block", pa.concat_tables(piece))
                try:
                    self.con.execute(f"INSERT INTO {self.table}_{group} ({columns}) "
                                     f"SELECT {columns} FROM _cg_block")
                finally:
                    self.con.unregister("_cg_block")
            del pending[group]

    def _around_bad_bytes(self, data: Block, exc: UnicodeDecodeError, first_line: int,
                          flush: Callable[[], None]) -> int:
        """A block that is not UTF-8: the line of the first bad byte is a bad line; the lines
        around it are staged."""
        bad = first_line + data.count(b"\n", 0, exc.start)
        keep = data[: data.rfind(b"\n", 0, exc.start) + 1]
        if keep:
            self.block(keep, first_line, flush)
        self.guard.bad(bad, "the line is not UTF-8 text (is this a binary file?)", self._flushing(flush))
        rest = data[data.find(b"\n", exc.start) + 1:] if b"\n" in data[exc.start:] else b""
        if rest:
            self.block(rest, bad + 1, flush)
        return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)

    def _bad_literals(self, split: Split, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The rows among ``rows`` (literal objects) whose literal is malformed: DuckDB checks
        the suffix (language tag, datatype) of a plain literal and the escapes of the others;
        the common suffixes (:data:`_GOOD_SUFFIXES`) are known good without it."""
        buf, data = split.buf, split.data
        plain = rows[split.literal[rows] == PLAIN]
        start, end = split.suffix_start[plain], split.o_end[plain]
        good = end == start
        for suffix in _GOOD_SUFFIXES:
            good |= equals(buf, start, end, suffix)
        rows = np.setdiff1d(rows, plain[good], assume_unique=True)
        if len(rows) == 0:
            return rows
        literals = pa.table({"i": pa.array(rows), "kind": pa.array(split.literal[rows]),
                             "o": views(buf, split.o_start[rows], split.o_end[rows], data),
                             "suffix": views(buf, split.suffix_start[rows], split.o_end[rows], data)})
        try:
            cursor = self._cursors.get_nowait()
        except queue.Empty:
            with self._lock:
                cursor = self.con.cursor()
        cursor.register("_cg_literals", literals)
        try:
            bad = cursor.execute(
                f"SELECT i FROM _cg_literals WHERE NOT (CASE WHEN kind = {PLAIN} "
                f"THEN suffix = '' OR regexp_full_match(suffix, '{_SUFFIX}') "
                f"ELSE regexp_full_match(o, '{_LITERAL}') "
                f"AND NOT regexp_matches(o, '{SURROGATE_ESCAPE}') END)"
            ).fetchnumpy()["i"]
        finally:
            cursor.unregister("_cg_literals")
            self._cursors.put(cursor)
        return np.asarray(bad, dtype=np.int64)

    def close(self) -> None:
        """Close the worker threads' DuckDB cursors."""
        while not self._cursors.empty():
            self._cursors.get_nowait().close()

    def _classes(self, term: str) -> tuple[str | None, str | None]:
        if term not in self.classes:
            self.classes[term] = classify_predicate(term)
        return self.classes[term]

    def _classify_views(self, split: Split, rows: npt.NDArray[np.int64]
                        ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], pa.Array]:
        """Kind code (-1: a predicate that does not matter) and predicate number of each row,
        and the property id of each predicate number; Python sees each distinct predicate once."""
        entry, terms = intern(split.buf, split.p_start[rows], split.p_end[rows], split.data)
        codes, pid_list = [], []
        for term in terms:
            kind, prop = self._classes(term)
            codes.append(-1 if kind is None else KIND_CODE[kind])
            pid_list.append(prop)
        return np.asarray(codes, dtype=np.int8)[entry], entry, pa.array(pid_list, pa.string())

    def _append(self, table: pa.Table) -> None:
        """Stage the rows of ``table`` (line, s, p, o) that have a predicate that matters.
        DuckDB filters while it copies: the Arrow arrays are never copied just to drop rows."""
        if table.num_rows == 0:
            return
        self.append_held()  # rows are staged in file order
        self._appended = True
        self.staged += table.num_rows
        kinds, pids, groups = self._classify(table["p"])
        keep = pc.is_valid(kinds)
        # rdf:type matters only for novalue classes (wdno:); normal rank is the default
        keep = pc.and_(keep, pc.or_(pc.not_equal(kinds, "type"),
                                    pc.starts_with(table["o"], "<http://www.wikidata.org/prop/novalue/")))
        keep = pc.and_(keep, pc.or_(pc.not_equal(kinds, "rank"), pc.not_equal(table["o"], NORMAL_RANK)))
        staged = pa.table({"line": table["line"], "k": kinds, "pid": pids, "s": table["s"], "o": table["o"],
                           "g": pc.if_else(keep, groups, pa.scalar(None, pa.int8()))})
        self.con.register("_cg_block", staged)
        try:
            for number, group in enumerate(self.groups):
                s = {"claim": staged_entity_id("s"), "main": staged_statement_id("s")}.get(group, "s")
                o = {"claim": staged_statement_id("o"), "main": STRIP_ENTITY_VALUE}.get(group, "o")
                self.con.execute(f"INSERT INTO {self.table}_{group} (line, k, pid, s, o) "
                                 f"SELECT line, k, pid, {s}, {o} FROM _cg_block WHERE g = ?", [number])
        finally:
            self.con.unregister("_cg_block")


#: literal suffixes that need no check (the most common in a dump)
_GOOD_SUFFIXES = (b"@en", b"@mul", *(f"^^<http://www.w3.org/2001/XMLSchema#{t}>".encode()
                                      for t in ("dateTime", "integer", "decimal", "string", "double")))


class ReadError(Exception):
    """The stream could not be read (truncated or corrupt) before line ``line``."""

    def __init__(self, line: int, cause: BaseException) -> None:
        self.line = line
        self.cause = cause
        super().__init__(f"cannot read past line {line - 1}: {cause}")


def stage_ntriples(stream: IO[bytes], con: Connection, table: str, guard: LineGuard,
                   flush: Callable[[], None], tick: Callable[[], None] | None = None,
                   block_bytes: int | None = None, threads: int = STAGING_THREADS, *,
                   chunk: Callable[[], None] | None = None,
                   chunk_rows: int = 0, read_fraction: Callable[[], float] | None = None) -> int:
    """Stage every triple of an N-Triples stream; return the number of lines read.

    ``threads`` workers prepare blocks (:meth:`_Stager.prepare`) while this thread commits
    the prepared ones in file order, so bad lines stop or count exactly as one by one; the
    staged rows are appended to DuckDB on a thread of their own (:meth:`_Stager.drain`).
    ``chunk``: called between two blocks once ``chunk_rows`` rows are staged (see
    :mod:`~chaingraph.sources.loaders.rdf_chunks`), with reading paused, every block read so
    far staged and appended, and what staging holds between blocks let go of (the block
    buffers, the workers' scratch arrays: 30-40 MB that a chunk's build would otherwise have
    beside its own). ``read_fraction``: how much of the file is read (0-1), where its size is
    known, so that a large file's first staged rows are not held (see :data:`LARGE_FILE_HOLDS`).
    """
    stager = _Stager(con, table, guard, read_fraction)
    size = block_bytes or BLOCK_BYTES
    gate = threading.Event()  # reading goes on while it is set (see read_blocks_into)
    gate.set()
    line = 1
    pending: deque[Future[_Prepared]] = deque()
    workers = max(threads, 1)
    # A block per worker and the next one waiting: no worker waits for this thread, and no
    # more blocks (and their arrays) are held. At 10x codex-m the peak of staging was ~10 MB
    # lower than with two blocks waiting per worker, in the same time.
    in_flight = workers + 1
    ring = BlockRing(size, READER_BLOCKS + in_flight)

    def commit_one() -> None:
        nonlocal line
        line += stager.commit(pending.popleft().result(), line, flush)
        if tick is not None:
            tick()
        if chunk is not None and stager.staged >= chunk_rows:
            gate.clear()  # the blocks read until the reader pauses still go into this chunk

    def build_chunk() -> None:
        assert chunk is not None
        while pending:
            commit_one()
        stager.append_held()
        _release_scratch(pool, workers)
        ring.release()
        malloc_trim()
        stager.close()  # the workers' cursors: the chunk may reopen the store's database
        chunk()
        stager.staged = 0
        gate.set()

    failure: BaseException | None = None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chaingraph-stage") as pool, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="chaingraph-append") as appender:
        stager.appender = appender
        try:
            # closing(): the reader thread stops before the stream closes
            with closing(read_blocks_into(stream, size, ring, gate)) as blocks:
                try:
                    for data in blocks:
                        if data is PAUSED:
                            build_chunk()
                            continue
                        pending.append(pool.submit(stager.prepare, data))
                        del data  # the block's buffer is free again once prepared
                        while len(pending) >= in_flight:
                            commit_one()
                except (EOFError, OSError, zlib.error) as exc:
                    failure = exc  # every whole line before the damage is still staged
            while pending:
                commit_one()
            stager.finish()
        finally:
            for future in pending:
                future.cancel()
            wait(pending)
            stager.quiesce()  # an error or Ctrl-C: the append in flight ends first
            stager.close()
    if failure is not None:
        raise ReadError(line, failure) from failure
    return line - 1


def _release_scratch(pool: ThreadPoolExecutor, workers: int) -> None:
    """Have each of the ``workers`` threads of an idle ``pool`` let go of its scratch arrays
    (a task each, held at a barrier until all have started, so no thread runs two)."""
    barrier = threading.Barrier(workers)

    def release() -> None:
        barrier.wait()
        release_scratch()

    wait([pool.submit(release) for _ in range(workers)])


def _rows_table(rows: list[tuple[int, str, str, str]]) -> pa.Table:
    cols = list(zip(*rows)) if rows else [(), (), (), ()]
    return pa.table({"line": pa.array(cols[0], pa.int64()), "s": pa.array(cols[1], pa.string()),
                     "p": pa.array(cols[2], pa.string()), "o": pa.array(cols[3], pa.string())})
