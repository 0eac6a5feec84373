"""Handing memory back to the system between the phases of a run (:meth:`Store.release_memory`).

DuckDB's allocator (jemalloc on Linux), Arrow's (mimalloc by default) and the C
library's keep what a query or a computation frees, for the next one: a crawl's
queries leave tens of MB behind each. A long write can also hold DuckDB to a budget per
phase (:class:`Budget`), so that it spills to disk instead of growing. Part of the store
(it sets a DuckDB setting); kept in its own module so that ``store.py`` stays readable.

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

import re
from collections.abc import Callable
from contextlib import suppress
from functools import cache

import duckdb

__all__ = ["Budget", "malloc_trim", "memory_limit", "release", "reopen", "setting"]


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """A DuckDB setting of ``con`` as DuckDB shows it (``memory_limit``: ``"18.8 GiB"``)."""
    return str(con.execute("SELECT current_setting(?)", [name]).fetchall()[0][0])


def reopen(con: duckdb.DuckDBPyConnection, path: str, *,
           read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Close ``con`` and open the database file at ``path`` again, with the settings ``con``
    had (those a new connection shows otherwise are set as they were shown; a size, which DuckDB
    shows truncated, to within what it shows: '2.7 GiB' to 2.75 GiB). For as long as
    its database is open, DuckDB keeps in memory, outside its buffer manager, what it knows of
    each row group written meanwhile (a dump load's batch: 0.17 MB); opened again, it reads
    that from the file when it needs it. The cursors of ``con`` are closed with it, and the
    database stays open (its memory with it) while another connection in this process holds
    it. Raises ``duckdb.Error``, and ``ValueError`` naming a setting that cannot be set back.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.duckdb")
    >>> con = duckdb.connect(path)
    >>> _ = con.execute("SET threads = 1")
    >>> con = reopen(con, path)
    >>> setting(con, "threads")
    '1'
    """
    before = _settings(con)
    with suppress(duckdb.Error):  # a connection busy on another thread refuses, but closes all the same
        con.close()
    con = duckdb.connect(path, read_only=read_only)
    done: set[str] = set()
    while lost := [name for name, value in _settings(con).items() if before.get(name, value) != value]:
        # one at a time, sizes last: setting one may change others derived from it
        # (threads: worker_threads and write_buffer_row_group_memory_limit)
        name = min(lost, key=lambda n: _SHOWN_SIZE.match(before[n] or "") is not None)
        if name in done:
            raise ValueError(f"DuckDB's {name} cannot be set back to {before[name]!r} "
                             f"(it shows {setting(con, name)!r} when set so)")
        done.add(name)
        _set(con, name, before[name])
        shown = _SHOWN_SIZE.match(before[name] or "")
        if shown and setting(con, name) != before[name]:  # shown truncated: '2.7 GiB' was 2.7-2.8
            _set(con, name, f"{shown[1]}5 {shown[2]}")
    return con


def _set(con: duckdb.DuckDBPyConnection, name: str, value: str | None) -> None:
    if value is None:
        con.execute(f'RESET "{name}"')
    else:
        quoted = value.replace("'", "''")
        con.execute(f"SET \"{name}\" = '{quoted}'")


#: a size as DuckDB shows it: one decimal, truncated ('3GB' shows '2.7 GiB')
_SHOWN_SIZE = re.compile(r"^([0-9]+\.[0-9]) ([KMGTPE]i?B)$")


def _settings(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    return {str(name): None if value is None else str(value) for name, value in
            con.execute("SELECT name, value FROM duckdb_settings()").fetchall()}


def memory_limit(con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's memory limit of ``con``'s database, as DuckDB shows it (``"18.8 GiB"``)."""
    return setting(con, "memory_limit")


class Budget:
    """DuckDB memory budgets for the phases of a long write on ``con``'s database: inside
    ``with``, :meth:`hold` sets DuckDB's memory limit, so that its joins, aggregates and
    temporary tables spill to disk beyond it instead of growing; on leaving, the limit is
    set back with ``RESET``, as :func:`release` does.

    Only when the limit is ``opened_limit``, the one the store opened with: a limit set by
    hand is left alone (it bounds the work already), and ``opened_limit=None`` holds nothing
    (an in-memory store, whose tables cannot spill). Raises ``duckdb.Error``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, opened_limit: str | None) -> None:
        self.connection = con
        self.active = opened_limit is not None and memory_limit(con) == opened_limit

    def hold(self, mb: int) -> None:
        """Hold the database to ``mb`` MiB from now on (nothing if not :attr:`active`): a new
        phase, so what the phase before freed goes back to the system first — Arrow's and the
        C library's free memory (:func:`malloc_trim`), which the next phase would otherwise
        keep resident beside DuckDB's budget (DuckDB's own allocator is flushed by the new limit)."""
        if self.active:
            _release_unused()
            self.connection.execute(f"SET memory_limit = '{int(mb)}MiB'")

    def __enter__(self) -> Budget:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self.connection.execute("RESET memory_limit")


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


def _release_unused() -> None:
    """Arrow's and the C library's free memory back to the system."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    malloc_trim()


@cache
def _libc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (``None`` elsewhere)."""
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def malloc_trim() -> None:
    """Give the C library's free memory back to the system, where it can (glibc)."""
    trim = _libc_trim()
    if trim is not None:
        trim(0)
