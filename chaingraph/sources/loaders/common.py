"""What every loader shares: the load report records and the per-file line policy.

A loader turns one file into batches of store rows and writes each batch in its own
transaction, so a failure later in the file keeps every earlier batch committed. Bad
lines either stop the load with :class:`~chaingraph.errors.BadDumpLine` (after the rows
parsed before the bad line are committed) or, with ``skip_bad_lines``, are counted in
:attr:`FileReport.bad_lines` and the first few are kept as examples.

>>> FileReport(path="q42.json", format="json").model_dump()["bad_lines"]
0
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from chaingraph.errors import BadDumpLine
from chaingraph.progress import Progress, ProgressEvent

__all__ = ["FileReport", "LineGuard", "LoadReport", "StoreSummary", "coordinate_digits", "is_utf8",
           "loaded_bytes", "sql_int", "sql_script", "system_arrow_memory"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class FileReport(BaseModel):
    """What one file contributed (rows parsed from it; rows already in the store count too)."""

    model_config = _FROZEN
    path: str
    format: str
    entities: int = 0
    properties: int = 0
    statements: int = 0
    qualifiers: int = 0
    references: int = 0
    bad_lines: int = 0
    bad_line_examples: tuple[str, ...] = ()
    seconds: float = 0.0
    raised_memory_mb: int | None = Field(
        default=None, description="the DuckDB budget (MiB) the load held instead of its own when the "
        "entities' key index outgrew it (entities out of id order keep all of it in memory); null when "
        "its own held")


class StoreSummary(BaseModel):
    """What a store holds: the figures ``chaingraph summary`` prints."""

    model_config = _FROZEN
    store: str
    sources: int
    entities: int
    properties: int
    statements: int
    qualifiers: int
    references: int = Field(description="distinct (statement, reference hash) pairs")
    reference_snaks: int
    statements_by_value_type: dict[str, int] = Field(
        description="item, time, quantity, string, monolingualtext, globecoordinate, ..., "
                    "somevalue, novalue")
    ranks: dict[str, int]


class LoadReport(BaseModel):
    """The result of :func:`chaingraph.sources.loaders.load`: per-file figures and the store after."""

    model_config = _FROZEN
    files: tuple[FileReport, ...]
    summary: StoreSummary
    seconds: float


def is_utf8(data: bytes | bytearray) -> bool:
    """Is ``data`` UTF-8 text? ASCII first (the usual case), then Arrow's vectorised check,
    which copies nothing (as strict as Python's decoder: no surrogates, no overlong forms).

    >>> is_utf8("Zoë".encode()), is_utf8(b"Zo\\xeb"), is_utf8(b"\\xed\\xa0\\x80")
    (True, False, False)
    """
    if data.isascii():
        return True
    import pyarrow as pa

    offsets = pa.array([0, len(data)], pa.int32()).buffers()[1]
    whole = pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def loaded_bytes(progress: Progress | None, path: str, done: int, total: int) -> None:
    """Tell ``progress`` how many bytes of the file at ``path`` (as stored, compressed) are read.

    >>> seen = []
    >>> loaded_bytes(seen.append, "dump.json", 10, 20)
    >>> seen[0].stage, seen[0].fraction, seen[0].unit
    ('load', 0.5, 'bytes')
    """
    if progress is not None:
        progress(ProgressEvent("load", done, total, unit="bytes", item=path))


def coordinate_digits(x: float | None) -> float | None:
    """A coordinate component kept to 14 significant digits, the precision Wikidata's RDF
    export writes (PHP's float formatting), so JSON and RDF loads store the same double.

    >>> coordinate_digits(51.56652777777778), coordinate_digits(2.777777777777778e-05)
    (51.566527777778, 2.7777777777778e-05)
    """
    return None if x is None else float(f"{x:.14g}")


class LineGuard:
    """Counts bad lines of one file; raises unless skipping.

    >>> g = LineGuard("d.json", skip=True)
    >>> g.bad(7, "not JSON"); g.count, g.examples
    (1, ['d.json:7: not JSON'])
    """

    MAX_EXAMPLES = 5

    def __init__(self, path: str, *, skip: bool) -> None:
        self.path = path
        self.skip = skip
        self.count = 0
        self.examples: list[str] = []

    def bad(self, line: int, problem: str, flush: Callable[[], None] | None = None) -> None:
        """Record a bad line: count it when skipping, otherwise ``flush`` what was parsed
        before it (so it is committed) and raise :class:`BadDumpLine`."""
        if not self.skip:
            if flush is not None:
                flush()
            raise BadDumpLine(self.path, line, problem)
        self.count += 1
        if len(self.examples) < self.MAX_EXAMPLES:
            self.examples.append(f"{self.path}:{line}: {problem}")


_arrow_pool_lock = threading.Lock()
_arrow_pool_users = 0
_arrow_pool_before: pa.MemoryPool | None = None


@contextmanager
def system_arrow_memory() -> Iterator[None]:
    """Within the block Arrow allocates from the C library's ``malloc`` (its *system* pool),
    not from the pool it defaults to (mimalloc in the PyPI wheels), which is set back after.

    A loader's Arrow tables are allocated on worker threads and freed on others, a few MB
    at a time, for as long as the dump lasts; mimalloc keeps what is freed so for the
    thread that allocated it and hands little back, so the process grew while a dump
    staged (10x codex-m N-Triples: from 276 to 305 MB over six seconds), where ``malloc``
    stays flat (about 240 MB) at the same speed. Every buffer remembers the pool it came
    from, so buffers of either pool are freed correctly whichever is the default. Nested
    and concurrent blocks share one switch: the default comes back when the last ends.

    >>> with system_arrow_memory():
    ...     pa.default_memory_pool().backend_name
    'system'
    """
    global _arrow_pool_users, _arrow_pool_before
    with _arrow_pool_lock:
        if _arrow_pool_users == 0:
            _arrow_pool_before = pa.default_memory_pool()
            pa.set_memory_pool(pa.system_memory_pool())
        _arrow_pool_users += 1
    try:
        yield
    finally:
        with _arrow_pool_lock:
            _arrow_pool_users -= 1
            if _arrow_pool_users == 0 and _arrow_pool_before is not None:
                pa.set_memory_pool(_arrow_pool_before)
                _arrow_pool_before = None


def sql_script(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Run ``;``-separated statements one by one (for SQL with no ``;`` in its literals).

    >>> con = duckdb.connect()
    >>> sql_script(con, "CREATE TABLE t (x INT); INSERT INTO t VALUES (1), (2);")
    >>> sql_int(con, "SELECT sum(x) FROM t")
    3
    """
    for statement in sql.split(";"):
        if statement.strip():
            con.execute(statement)


def sql_int(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    """The first column of the first row of a query as an int (0 when it has no row)."""
    rows = con.execute(sql).fetchall()
    return int(rows[0][0]) if rows else 0
