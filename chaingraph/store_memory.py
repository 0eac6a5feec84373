"""Handing memory back to the system between the phases of a run (:class:`StoreMemory`,
the store's methods for it: :meth:`Store.release_memory`, ``release_cache``, ``reconnect``,
``reopen``).

DuckDB's allocator (jemalloc on Linux), Arrow's (mimalloc by default) and the C
library's keep what a query or a computation frees, for the next one: a crawl's
queries leave tens of MB behind each. A long write can also hold DuckDB to a budget per
phase (:class:`Budget`), so that it spills to disk instead of growing, and let go of what
DuckDB keeps of the row groups it wrote by attaching the store file again
(:func:`~chaingraph.store_file.reattach`), or of all its work by opening the database again
(:func:`~chaingraph.store_file.reopen`).
Part of the store (it sets DuckDB settings); kept in its own module so that ``store.py``
stays readable.

>>> import duckdb
>>> con = duckdb.connect()
>>> opened = memory_limit(con)
>>> release(con, opened)
>>> memory_limit(con) == opened
True
>>> with Budget(con, opened) as budget:
...     budget.hold(64)
...     memory_limit(con)
'64.0 MiB'
>>> memory_limit(con) == opened
True
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

import duckdb

from chaingraph.errors import StoreError
from chaingraph.store_file import reattach, reopen, set_row_group_size

__all__ = ["LOAD_ARENAS", "REPEAT_ROWS_PER_PART", "STORE_VACUUM_TASKS", "Budget", "Connection",
           "StoreMemory", "current", "duckdb_problem", "evict_cache", "glibc", "held_settings", "malloc_trim",
           "memory_limit", "mib", "out_of_memory", "passes", "release", "repeats", "setting",
           "tune_malloc_for_load", "used_mb"]


#: a DuckDB connection, or what gives the one to use now: ``store.live_con`` for work that
#: spans a :meth:`StoreMemory.reopen`, which gives the store a new connection
Connection = duckdb.DuckDBPyConnection | Callable[[], duckdb.DuckDBPyConnection]


def current(con: Connection) -> duckdb.DuckDBPyConnection:
    """The connection ``con`` is, or gives now.

    >>> con = duckdb.connect()
    >>> current(con) is con, current(lambda: con) is con
    (True, True)
    """
    return con() if callable(con) else con


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """A DuckDB setting of ``con`` as DuckDB shows it (``memory_limit``: ``"18.8 GiB"``)."""
    return str(con.execute("SELECT current_setting(?)", [name]).fetchall()[0][0])


@contextmanager
def held_settings(con: Connection, values: Mapping[str, object]) -> Iterator[None]:
    """DuckDB settings ``values`` of ``con``'s database for the block, each set back as it was
    on leaving (after an error too; the block may reconnect the store, which keeps them:
    :meth:`StoreMemory.reconnect`, or reopen it, which sets them on the new database:
    :meth:`StoreMemory.reopen`, with ``con`` a :data:`Connection` that gives the store's).
    DuckDB shows a setting as it takes it back (``'16.0 MiB'``), so what :func:`setting`
    read is set back as it is.

    >>> con = duckdb.connect()
    >>> with held_settings(con, {"checkpoint_threshold": "4MiB"}):
    ...     setting(con, "checkpoint_threshold")
    '4.0 MiB'
    >>> setting(con, "checkpoint_threshold")
    '16.0 MiB'
    """
    before = {name: setting(current(con), name) for name in values}
    for name, value in values.items():
        current(con).execute(f"SET {name} = '{value}'")
    try:
        yield
    finally:
        for name, value in before.items():
            current(con).execute(f"SET {name} = '{value}'")


#: values :func:`repeats` groups at a time when a caller splits a large relation
#: (``parts=passes(rows, REPEAT_ROWS_PER_PART)``): DuckDB's spilling aggregate holds more the
#: more it spills (plain DuckDB, 40-character ids, 64 MiB budget: 135-136 MB peak over 2.3 M
#: ids, 141-156 over 18 M).
#: The 18.2 M statement ids of an 80x synthetic N-Triples dump, grouped at once, ran out of a
#: 48 MiB budget; in four parts they took 3.4-3.5 s against 3.0 and peaked 210 MB resident
REPEAT_ROWS_PER_PART = 5_000_000


def repeats(con: duckdb.DuckDBPyConnection, relation: str, column: str, parts: int = 1) -> bool:
    """Whether a value of ``column`` (never NULL) comes twice in ``relation``, in memory a
    budget bounds: the rows are grouped by the value's 64-bit hash, eight bytes a group, and
    only values whose hash comes twice are compared themselves. ``count(DISTINCT ...)`` of
    the statement ids of a 40x synthetic N-Triples dump (9.1 M), in the transaction that made
    them and the tables they came from, ran out of a 64 MiB budget (as did grouping by the ids);
    grouped by hash it took 1.4 s. ``parts``: the values are grouped in that many passes, each
    those of one part of the hashes (a value's copies share its hash, so they meet in a pass).

    >>> con = duckdb.connect()
    >>> repeats(con, "(VALUES ('a'), ('b')) t(x)", "x"), repeats(con, "(VALUES ('a'), ('a')) t(x)", "x")
    (False, True)
    >>> rows = "(SELECT range % 1000 AS x FROM range(1001))"  # 0 twice
    >>> repeats(con, rows, "x", parts=3), repeats(con, "(SELECT range AS x FROM range(1000))", "x", parts=3)
    (True, False)
    """
    for part in range(parts):
        where = f"hash({column}) % {parts} = {part}" if parts > 1 else "TRUE"
        if _repeats_where(con, relation, column, where):
            return True
    return False


def _repeats_where(con: duckdb.DuckDBPyConnection, relation: str, column: str, where: str) -> bool:
    rows = f"(SELECT {column} FROM {relation} WHERE {where})"
    hashed = f"SELECT hash({column}) AS _cg_h FROM {rows} GROUP BY _cg_h HAVING count(*) > 1"
    if not con.execute(f"SELECT count(*) FROM ({hashed})").fetchall()[0][0]:
        return False
    twice = (f"SELECT {column} FROM {rows} WHERE hash({column}) IN ({hashed}) "
             f"GROUP BY {column} HAVING count(*) > 1")
    return bool(con.execute(f"SELECT count(*) FROM ({twice})").fetchall()[0][0])


def passes(rows: int, per_pass: int) -> int:
    """How many passes of at most ``per_pass`` rows take ``rows`` rows (none for none).

    >>> passes(0, 5_000_000), passes(5_000_000, 5_000_000), passes(18_200_000, 5_000_000)
    (0, 1, 4)
    """
    return -(-rows // per_pass)


def memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's memory limit of ``con``'s database, as DuckDB shows it (``"18.8 GiB"``)."""
    return setting(con, "memory_limit")


#: what DuckDB says when a commit runs out of memory (a ``TransactionException`` "Failed to
#: commit: …", not its out-of-memory error)
_COMMIT_OUT_OF_MEMORY = re.compile(r"Failed to commit: (failed to pin|could not allocate|failed to allocate) "
                                   r"(block|data) of size .*/.* used\)")


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is DuckDB's out-of-memory error or came of one: a relation's query
    reports it as the aborted transaction it leaves (the out-of-memory error its cause), and a
    commit as a transaction error that says what it could not pin or allocate.

    >>> out_of_memory(RuntimeError("cannot write")), out_of_memory(duckdb.OutOfMemoryException("no"))
    (False, True)
    >>> [out_of_memory(duckdb.TransactionException(f"TransactionContext Error: Failed to commit: "
    ...     f"{what} block of size 256.0 KiB (4.0 MiB/4.0 MiB used)")) for what in ("failed to pin",
    ...     "could not allocate")]
    [True, True]
    """
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, duckdb.OutOfMemoryException) or (
                isinstance(seen, duckdb.TransactionException) and _COMMIT_OUT_OF_MEMORY.search(str(seen))):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def duckdb_problem(error: BaseException) -> str:
    """The first line of what DuckDB said, from the error that caused ``error`` when DuckDB
    reports it as the aborted transaction it left (``TransactionException``).

    >>> try:
    ...     raise duckdb.TransactionException("Current transaction is aborted") from \\
    ...         duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block\\nmore")
    ... except duckdb.Error as error:
    ...     duckdb_problem(error)
    'Out of Memory Error: could not allocate block'
    """
    cause = error.__cause__
    if isinstance(error, duckdb.TransactionException) and isinstance(cause, duckdb.Error):
        return duckdb_problem(cause)
    return str(error).splitlines()[0]


_UNITS = {"bytes": 2**-20, "KiB": 2**-10, "MiB": 1, "GiB": 2**10, "TiB": 2**20,
          "KB": 1e3 / 2**20, "MB": 1e6 / 2**20, "GB": 1e9 / 2**20, "TB": 1e12 / 2**20}


def mib(size: str) -> float:
    """A size as DuckDB shows it (``"18.8 GiB"``, ``"512.0 KiB"``) in MiB.

    >>> mib("18.8 GiB"), mib("36.0 MiB"), mib("512.0 KiB"), mib("1.0 GB")
    (19251.2, 36.0, 0.5, 953.67431640625)
    """
    number, _, unit = size.strip().partition(" ")
    try:
        return float(number) * _UNITS[unit or "bytes"]
    except (KeyError, ValueError):
        raise ValueError(f"not a DuckDB size: {size!r}") from None


class Budget:
    """DuckDB memory budgets for the phases of a long write on a store's database: inside
    ``with``, :meth:`hold` sets DuckDB's memory limit, so that its joins, aggregates and
    temporary tables spill to disk beyond it instead of growing; on leaving, the limit is
    set back with ``RESET``, as :func:`release` does. :meth:`StoreMemory.reconnect` keeps
    the limit held, and so does :meth:`StoreMemory.reopen` (``con``: the :data:`Connection`
    that gives the store's).

    Only when the limit is ``opened_limit``, the one the store opened with: a limit set by
    hand is left alone (it bounds the work already), and ``opened_limit=None`` holds nothing
    (an in-memory store, whose tables cannot spill). Raises ``duckdb.Error``."""

    def __init__(self, con: Connection, opened_limit: str | None) -> None:
        self._con = con
        self.active = opened_limit is not None and memory_limit(current(con)) == opened_limit
        self.held_mb: int | None = None  # the limit :meth:`hold` set last
        #: the most :meth:`raise_limit` holds: the limit the store opened with (DuckDB's
        #: default, 80 % of the machine's memory)
        self.ceiling_mb = int(mib(opened_limit)) if opened_limit is not None else None

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection the budget is held on (now)."""
        return current(self._con)

    def hold(self, mb: int) -> None:
        """Hold the database to ``mb`` MiB from now on (nothing if not :attr:`active`): a new
        phase, so what the phase before freed goes back to the system first — Arrow's and the
        C library's free memory (:func:`malloc_trim`), which the next phase would otherwise
        keep resident beside DuckDB's budget (DuckDB's own allocator is flushed by the new limit)."""
        if self.active:
            _release_unused()
            self.con.execute(f"SET memory_limit = '{int(mb)}MiB'")
            self.held_mb = int(mb)

    def raise_limit(self) -> int | None:
        """Hold twice the limit :meth:`hold` set last, at most :attr:`ceiling_mb`; return it,
        or None when nothing is held or it is at the ceiling already. For work that DuckDB
        cannot spill: a load's batch whose entity-index updates do not fit (store_load).

        >>> con = duckdb.connect(config={"memory_limit": "100MiB"})
        >>> budget = Budget(con, memory_limit(con))
        >>> budget.hold(36); budget.raise_limit(), budget.raise_limit(), budget.raise_limit()
        (72, 100, None)
        """
        if self.held_mb is None or self.ceiling_mb is None or self.held_mb >= self.ceiling_mb:
            return None
        self.hold(min(2 * self.held_mb, self.ceiling_mb))
        return self.held_mb

    def evict(self) -> None:
        """Let DuckDB drop the blocks it keeps cached and flush its allocator, the limit held
        as it is (nothing until :meth:`hold`): the limit is lowered to 1 MB for a moment,
        which evicts what is not in use, and set back. Between transactions.

        Under a limit, DuckDB keeps every block it wrote or read until the limit is reached,
        so a long write's memory rises to the limit whatever the work needs, and falls only
        when the database is attached again. A JSON load into a store file, attached again
        every 4 batches (``store_load.RECONNECT_BATCHES``), rose from 77 to 85-92 MB between
        two attaches (10x codex-m, the median of each batch's commit), highest at the fourth
        batch; evicted after every batch, each batch's commit peaked at 84-90 MB, and the
        load at 92-93 MB in place of 100 (four runs each, the same time).
        """
        if self.held_mb is not None:  # set by hold, only when active
            evict_cache(self.con, f"SET memory_limit = '{self.held_mb}MiB'")

    def __enter__(self) -> Budget:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self.con.execute("RESET memory_limit")


#: DuckDB's ``max_vacuum_tasks`` for a store file chaingraph writes (DuckDB's default: 100).
#: A load leaves each batch's rows in row groups of their own (store_load.VACUUM_TASKS), and
#: a checkpoint after a later write to a table merges such runs of small row groups, in
#: memory and outside any budget, as many as its vacuum tasks reach. 1,000 entities added to
#: the store of codex-m's 40x JSON dump (733 k entities in 90 row groups) and checkpointed:
#: with 100 tasks 90 row groups became 8, peaking at 142 MB in 0.69 s (a Wikidata-sized
#: store has thousands of such row groups); with 1, 77, at 40 MB in 0.43 s (2 to 8: 77, at 63-64 MB).
#: Each later checkpoint merges a few more
STORE_VACUUM_TASKS = 1


def used_mb(con: duckdb.DuckDBPyConnection, tag: str | None = None) -> float:
    """The memory DuckDB's buffer manager holds for ``con``'s database (MiB): cached blocks,
    indexes, what running queries use; what a memory limit counts. ``tag``: only what it
    holds of that kind (``duckdb_memory()``'s tags: ``ART_INDEX``, ``BASE_TABLE``, …).

    >>> con = duckdb.connect()
    >>> _ = con.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    >>> _ = con.execute("INSERT INTO t SELECT range FROM range(1000000)")
    >>> used_mb(con) > 1, 0 < used_mb(con, "ART_INDEX") < used_mb(con)
    (True, True)
    """
    where = "" if tag is None else " WHERE tag = ?"
    return float(con.execute(f"SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory(){where}",
                             [] if tag is None else [tag]).fetchall()[0][0]) / 2**20


def release(con: duckdb.DuckDBPyConnection, opened_limit: str | None) -> None:
    """Flush DuckDB's allocator for ``con``'s database, and Arrow's and the C library's.

    DuckDB flushes its allocator when its memory limit is set, so the limit is set back to
    DuckDB's default (``RESET``) if it is ``opened_limit``, what it was when the store
    opened the database (the default, unless the database was already open in this process
    with a limit of its own); a limit set since is left alone, and the database unflushed
    (DuckDB shows a limit rounded, so it could not be set back exactly: setting what it
    shows lowered it by 0.1 GiB a call). Raises ``duckdb.Error``."""
    if opened_limit is not None and memory_limit(con) == opened_limit:
        con.execute("RESET memory_limit")
    _release_unused()


def evict_cache(con: duckdb.DuckDBPyConnection, restore: str) -> None:
    """Let ``con``'s database drop the blocks it keeps cached (read from the file again when
    needed) and flush its allocator: its memory limit lowered to 1 MB for a moment, which
    evicts all that is not in use, then ``restore`` run (the statement that sets the limit
    back). Between transactions.

    >>> con = duckdb.connect()
    >>> evict_cache(con, "SET memory_limit = '64MiB'"); memory_limit(con)
    '64.0 MiB'
    """
    try:
        with suppress(duckdb.Error):  # what is in use stays: the rest is evicted all the same
            con.execute("SET memory_limit = '1MB'")
    finally:
        con.execute(restore)


def _release_unused() -> None:
    """Arrow's and the C library's free memory back to the system."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    malloc_trim()


@cache
def glibc() -> ctypes.CDLL | None:
    """The C library, if it is glibc (``None`` elsewhere); loaded once."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def malloc_trim() -> None:
    """Give the C library's free memory back to the system, where it can (glibc)."""
    libc = glibc()
    if libc is not None:
        libc.malloc_trim(0)


#: ``mallopt``'s parameters (glibc): the most arenas, and the sizes from which a block is a
#: mapping of its own and from which the free top of a heap goes back to the system
_M_ARENA_MAX, _M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD = -8, -3, -1
#: the arenas a load leaves the C library (:func:`tune_malloc_for_load`)
LOAD_ARENAS = 2
#: blocks of at least this many bytes are each a mapping of their own during a load (glibc's
#: ``M_MMAP_THRESHOLD``, fixed: see :func:`tune_malloc_for_load`)
LOAD_MMAP_THRESHOLD = 2 << 20
#: the free top of a heap above this many bytes goes back to the system (``M_TRIM_THRESHOLD``)
LOAD_TRIM_THRESHOLD = 2 << 20
#: each setting of :func:`tune_malloc_for_load`: its ``mallopt`` parameter, its value, and
#: the environment variable that, set, wins over it
_LOAD_MALLOC = {
    "arenas": (_M_ARENA_MAX, LOAD_ARENAS, "MALLOC_ARENA_MAX"),
    "mmap_threshold": (_M_MMAP_THRESHOLD, LOAD_MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_"),
    "trim_threshold": (_M_TRIM_THRESHOLD, LOAD_TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_"),
}


def tune_malloc_for_load() -> list[str]:
    """Set the C library (glibc) up for a load's threads and buffers, from now on in this
    process; return the names of the settings made (``arenas``, ``mmap_threshold``,
    ``trim_threshold``). A setting whose variable is in the environment (``MALLOC_ARENA_MAX``,
    ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``) is left as the environment made it.

    * **At most** :data:`LOAD_ARENAS` **arenas.** glibc gives threads arenas of their own, up
      to eight per core. A load's staging threads allocate Arrow and numpy buffers in theirs
      and free them in others, so the free memory spreads over arenas no thread takes from,
      and the process grew with the dump: the 20x codex-m N-Triples load peaked 153 MB above
      its baseline with the default arenas and 144 with two, and the 40x 162 against 149
      (``benchmarks/bench_load.py --memory``). The threads share two arenas' locks, which
      cost the load no time measurable here. The cap leaves the arenas already made and only
      takes effect before the process has made more than eight, when glibc fixes its own
      limit: a store's DuckDB connection makes nine as it opens, so ``chaingraph load`` calls
      this before it opens the store.
    * **Blocks of** :data:`LOAD_MMAP_THRESHOLD` **bytes or more are mappings of their own,
      at any time.** glibc starts at 128 KiB but raises that bar to the size of every mapped
      block freed, up to 32 MiB: once a load's 4 MB read blocks had come and gone, every
      numpy array and buffer below that size came from the heaps, which the staging threads
      left full of holes. Fixed, a block that size is given back whole when freed. A fixed
      bar also fixes the trim threshold, which otherwise rises with it: at glibc's 128 KiB
      the heaps' tops went back and forth to the system (a third more page faults), so it is
      set to :data:`LOAD_TRIM_THRESHOLD`. At 10x codex-m (N-Triples, into a store file) the
      load peaked 8 MB lower by the median of four interleaved rounds (126-129 against
      133-140 MB), with as many page faults and 1-3 % more time.
    * **A heap keeps at most** :data:`LOAD_TRIM_THRESHOLD` **of free memory at its top**
      (given back once it is larger). The batches of a long load peaked higher the longer it
      ran, in the C library's heaps, not in what they held: at 8 MiB the batches of codex-m's
      40x JSON dump peaked 86 MB above the process's start at the median over the first 20
      and 91-92 from the 120th on, and the load 93.8-95.1 MB, against 91.9-92.2 at 2 MiB
      (three interleaved runs each), in the same time.
    """
    libc = glibc()
    if libc is None:
        return []
    return [name for name, (param, value, variable) in _LOAD_MALLOC.items()
            if variable not in os.environ and libc.mallopt(param, value)]


class StoreMemory:
    """The memory side of :class:`~chaingraph.store.Store`'s life cycle: handing memory back
    between the phases of a run, budgets for long writes, letting go of the store file's
    cached blocks and of what DuckDB keeps of the row groups written."""

    con: duckdb.DuckDBPyConnection
    path: Path | None
    is_subset: bool
    opened_memory_limit: str | None
    _in_tx: bool
    _read_only: bool

    def release_memory(self) -> None:
        """Hand back to the system the memory DuckDB's allocator keeps from the queries run
        so far, for every connection to this store's database (it keeps what a query frees
        for the next ones: a crawl's queries leave tens of MB), and ask Arrow's and the C
        library's allocators to do the same. A few milliseconds; the bulk reads of a crawl
        and of a graph build call it after themselves.

        DuckDB flushes its allocator when its memory limit is set: the limit is set back to
        DuckDB's default if it is what it was when this store opened its database, and left
        alone otherwise (:func:`release`).

        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> s.release_memory()
        >>> s.counts()["statements"]
        0
        """
        try:
            release(self.con, self.opened_memory_limit)
        except duckdb.Error as exc:
            raise StoreError(f"cannot read store {self.path or ':memory:'}: "
                             f"{str(exc).splitlines()[0]}") from exc

    def reconnect(self) -> bool:
        """Detach this store's file and attach it again
        (:func:`~chaingraph.store_file.reattach`), so that what DuckDB holds in memory of the
        row groups written so far is let go: a dump load does it every
        :data:`~chaingraph.store_load.RECONNECT_BATCHES` batches. Settings, temporary tables
        and cursors stay. Nothing happens (``False``) to an in-memory store or a subset, or
        inside a transaction.

        >>> from chaingraph.store import Store
        >>> Store().reconnect()
        False
        """
        if not self._attachable():
            return False
        self._again("attach", lambda: reattach(self.con))
        return True

    def _attachable(self) -> bool:
        """Whether this store's file can be attached or opened again now: a file, not a
        subset, and no transaction open."""
        return self.path is not None and not self.is_subset and not self._in_tx

    def _again(self, what: str, step: Callable[[], object]) -> None:
        """Run ``step``, which attaches or opens (``what``) this store's file again, as a
        :class:`StoreError` when DuckDB cannot."""
        try:
            step()
        except duckdb.Error as exc:
            raise StoreError(f"cannot {what} store {self.path} again: {duckdb_problem(exc)}; "
                             "check that no other process holds it open for writing") from exc

    @contextmanager
    def row_groups(self, rows: int) -> Iterator[None]:
        """Inside ``with``, new rows of this store's file go into row groups of ``rows`` rows
        (:func:`~chaingraph.store_file.set_row_group_size`); on leaving, into row groups of
        :data:`~chaingraph.store_file.ROW_GROUP_SIZE` again. Nothing happens to an in-memory
        store or a subset, or inside a transaction.

        >>> import os, tempfile
        >>> from chaingraph.store import Store
        >>> groups = "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')"
        >>> with Store(os.path.join(tempfile.mkdtemp(), "s.duckdb")) as s:
        ...     with s.row_groups(30_720):
        ...         _ = s.con.execute("CREATE TABLE t AS SELECT range AS x FROM range(100_000)")
        ...         _ = s.con.execute("CHECKPOINT")
        ...         inside = s.con.execute(groups).fetchall()
        ...     _ = s.con.execute("CREATE OR REPLACE TABLE t AS SELECT range AS x FROM range(100_000)")
        ...     _ = s.con.execute("CHECKPOINT")
        ...     inside, s.con.execute(groups).fetchall()
        ([(4,)], [(2,)])
        """
        if not self._attachable():
            yield
            return
        self._again("attach", lambda: set_row_group_size(self.con, rows))
        try:
            yield
        finally:
            if not self._in_tx:
                self._again("attach", lambda: set_row_group_size(self.con, None))

    def live_con(self) -> duckdb.DuckDBPyConnection:
        """The store's connection now: ``store.live_con`` is the :data:`Connection` to give
        work that spans a :meth:`reopen`, which gives the store a new one."""
        return self.con

    def reopen(self) -> bool:
        """Close this store's database and open it again (:func:`~chaingraph.store_file.reopen`),
        with its settings, so that what DuckDB keeps in memory for as long as a database is
        open goes too, which :meth:`reconnect` leaves: a chunked N-Triples load does it every
        few chunks (:data:`~chaingraph.sources.loaders.rdf_chunks.REOPEN_CHUNKS`). The store gets a new
        :attr:`con`: temporary tables and views, registered objects and cursors go, and work
        that spans the call reads ``store.con`` anew (a :data:`Connection`). Nothing happens
        (``False``) to an in-memory store or a subset, or inside a transaction; where another
        connection keeps the database open, the store is only connected again (``True``).

        >>> import os, tempfile
        >>> from chaingraph.store import Store
        >>> with Store(os.path.join(tempfile.mkdtemp(), "s.duckdb")) as s:
        ...     before = s.con
        ...     s.reopen(), s.con is before, s.counts()["statements"]
        (True, False, 0)
        >>> Store().reopen()
        False
        """
        if not self._attachable():
            return False

        def step() -> None:
            self.con, _ = reopen(self.con)

        self._again("open", step)
        return True

    def memory_budget(self) -> Budget:
        """DuckDB memory budgets for the phases of a long write (:class:`Budget`):
        a store file spills beyond them; an in-memory store, whose tables cannot spill, and a
        limit set by hand are left alone."""
        return Budget(self.live_con, self.opened_memory_limit if self.path is not None else None)

    def release_cache(self) -> None:
        """Let DuckDB drop the blocks of the store file it keeps cached (they are read from the
        file again when needed), so a long load's memory does not grow with what it has
        written; between writes, never inside a transaction. Nothing for an in-memory store,
        nor under a memory limit set by hand (which bounds the cache already).

        DuckDB keeps every block it wrote or read until its memory limit is reached: the
        limit is lowered for a moment (it evicts what it can) and reset, when it is what the
        store opened with (as :meth:`release_memory` does; the allocator is not trimmed).
        """
        if self.path is None or self._in_tx or memory_limit(self.con) != self.opened_memory_limit:
            return
        evict_cache(self.con, "RESET memory_limit")
