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

from collections.abc import Callable
from functools import cache

import duckdb

__all__ = ["Budget", "malloc_trim", "memory_limit", "release", "setting"]


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    """A DuckDB setting of ``con`` as DuckDB shows it (``memory_limit``: ``"18.8 GiB"``)."""
    return str(con.execute("SELECT current_setting(?)", [name]).fetchall()[0][0])


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
