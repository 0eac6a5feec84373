"""Opening a store file: the DuckDB database it is, attached with chaingraph's row groups.

DuckDB writes a table's rows in row groups of 122,880 by default, and compresses a row group
on the thread that fills it: the statement table of codex-m's dump (228k rows) is two row
groups, so the threads of a load that writes it take turns, and a load spends its time
compressing on one core. A store file is opened with row groups of :data:`ROW_GROUP_SIZE`
rows instead, so two threads fill and compress theirs at once: the N-Triples load of
codex-m into a new store file took a median 1.51 s against 1.82 (six alternated rounds, CPU
2.19 s against 2.30), and ``benchmarks/bench_load.py --paired 4`` puts it at 2.53 times the
loader of 4d9ec7b instead of 2.09. DuckDB takes the size as an option of ``ATTACH``, not of
``duckdb.connect``, so the file is attached to an in-memory database of its own, named for
the file (``duckdb.connect(":memory:<name>")`` gives every connection in this process the
same one, as ``duckdb.connect(path)`` does), and made its default (``USE``). Rows written
before keep their row groups; only new ones are of this size.

A JSON dump's load writes batches of 50,000 statements, fewer than a row group holds, and
DuckDB passes such a batch's rows through the table's uncompressed segments, then reads them
back to compress them as the batch commits. While it loads, the file is attached with row
groups of :data:`BATCH_ROW_GROUP_SIZE` rows (:func:`set_row_group_size`): a batch then fills
a whole row group, which DuckDB compresses and writes as the batch is inserted, and only the
rest waits for the commit. Codex-m's JSON loads into a new store file went 1.06-1.13 times
as fast at 1x and at 10x (paired with 61,440, two measures each), peaked 5-6 MB lower at
every size, and the store file took 19.9 MB against 21.0. An N-Triples load keeps
:data:`ROW_GROUP_SIZE`: with 30,720 it went 1.05 times as fast, but its 20x dump's peak
moved between 120 and 127 MB from one memory check to the next, with either size, which is
not understood yet.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "s.duckdb")
>>> con = connect_file(path)
>>> _ = con.execute("CREATE TABLE t AS SELECT range AS x FROM range(200000)")
>>> _ = con.execute("CHECKPOINT")
>>> con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')").fetchall()
[(4,)]
>>> connect_file(path).execute("SELECT count(*) FROM t").fetchall()  # the same database
[(200000,)]
>>> con.close()
"""

from __future__ import annotations

from pathlib import Path

import duckdb

__all__ = ["ALIAS", "BATCH_ROW_GROUP_SIZE", "ROW_GROUP_SIZE", "connect_file", "reattach", "reopen",
           "set_row_group_size", "sql_string", "use_store"]

#: rows per row group of the tables of a store file (DuckDB's default: 122,880); a multiple
#: of DuckDB's vector size (2,048)
ROW_GROUP_SIZE = 61_440
#: rows per row group while a JSON dump's load writes into a store file (its batches of 50,000
#: statements fill one; :func:`set_row_group_size`)
BATCH_ROW_GROUP_SIZE = 30_720
#: the row group size of each store file (by path) attached in this process, where it is not
#: :data:`ROW_GROUP_SIZE`: every connection to the file shares its database, and each attach
#: of it (:func:`reattach`, :func:`reopen`) keeps the size
_ROW_GROUPS: dict[str, int] = {}
#: the name of the store file's database on a connection (``current_database()``)
ALIAS = "chaingraph"


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal.

    >>> sql_string("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def connect_file(path: str | Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection whose default database is the DuckDB file at ``path`` (created if it is
    not there and ``read_only`` is false), with row groups of :data:`ROW_GROUP_SIZE` rows and
    DuckDB's temporary files beside it (``<path>.tmp``, as for ``duckdb.connect(path)``).
    Every connection to the same file in this process shares one database, and one that asks
    for it read-only while it is open for writing, or the other way round, is refused as
    DuckDB refuses it. Raises ``duckdb.Error``."""
    where = str(Path(path).resolve())
    con = duckdb.connect(f":memory:chaingraph:{where}")
    try:
        held = con.execute("SELECT readonly FROM duckdb_databases() WHERE database_name = ?",
                           [ALIAS]).fetchall()
        if not held:
            _attach(con, where, read_only)
            con.execute(f"SET temp_directory = {sql_string(where + '.tmp')}")
        elif bool(held[0][0]) != read_only:
            raise duckdb.ConnectionException(
                f"Can't open a connection to same database file with a different configuration than "
                f"existing connections: {where} is open {'read-only' if held[0][0] else 'for writing'} "
                "in this process")
        use_store(con)
    except BaseException:
        con.close()
        raise
    return con


def _attach(con: duckdb.DuckDBPyConnection, where: str, read_only: bool) -> None:
    rows = _ROW_GROUPS.get(where, ROW_GROUP_SIZE)
    options = f"{'READ_ONLY, ' if read_only else ''}ROW_GROUP_SIZE {rows}"
    con.execute(f"ATTACH {sql_string(where)} AS {ALIAS} ({options})")


def reattach(con: duckdb.DuckDBPyConnection) -> None:
    """Detach the store file from ``con``'s database (one of :func:`connect_file`) and attach
    it again, as it was (its path and read-only mode are DuckDB's), so that what DuckDB keeps
    in memory of the row groups written since it was attached goes (it reads that from the
    file when it needs it). Settings, temporary tables and the other connections to the
    database stay, and see the file again once it is back. A few milliseconds, where closing
    and opening the database took 40-60, besides the checkpoint of what waits in DuckDB's log,
    which detaching makes. Raises ``duckdb.Error``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.duckdb")
    >>> con = connect_file(path)
    >>> _ = con.execute("CREATE TABLE t AS SELECT 1 AS x")
    >>> _ = con.execute("CREATE TEMP TABLE kept AS SELECT 2 AS y")
    >>> reattach(con)
    >>> con.execute("SELECT x, y FROM t, kept").fetchall()
    [(1, 2)]
    """
    where, read_only = _attached(con)
    con.execute("USE memory")  # the default database cannot be detached
    con.execute(f"DETACH {ALIAS}")
    _attach(con, where, read_only)
    use_store(con)


def set_row_group_size(con: duckdb.DuckDBPyConnection, rows: int | None) -> None:
    """Write new rows of ``con``'s store file (a connection of :func:`connect_file`) in row
    groups of ``rows`` rows from now on, ``None`` for :data:`ROW_GROUP_SIZE`: the file is
    attached again (:func:`reattach`) with that size, for every connection to it in this
    process, and keeps it when attached or opened again. Rows written before keep their row
    groups. Raises ``duckdb.Error``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.duckdb")
    >>> con = connect_file(path)
    >>> groups = "SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')"
    >>> set_row_group_size(con, BATCH_ROW_GROUP_SIZE)
    >>> _ = con.execute("CREATE TABLE t AS SELECT range AS x FROM range(100_000)")
    >>> _ = con.execute("CHECKPOINT")
    >>> con.execute(groups).fetchall()
    [(4,)]
    >>> set_row_group_size(con, None)
    >>> _ = con.execute("DROP TABLE t")
    >>> _ = con.execute("CREATE TABLE t AS SELECT range AS x FROM range(100_000)")
    >>> _ = con.execute("CHECKPOINT")
    >>> con.execute(groups).fetchall()
    [(2,)]
    >>> con.close()
    """
    where, _ = _attached(con)
    if rows is None or rows == ROW_GROUP_SIZE:
        _ROW_GROUPS.pop(where, None)
    else:
        _ROW_GROUPS[where] = rows
    reattach(con)


def _attached(con: duckdb.DuckDBPyConnection) -> tuple[str, bool]:
    """The store file attached to ``con``'s database, and whether it is attached read-only."""
    where, read_only = con.execute("SELECT path, readonly FROM duckdb_databases() WHERE database_name = ?",
                                   [ALIAS]).fetchall()[0]
    return str(where), bool(read_only)


#: a table of DuckDB's in-memory database that tells whether the database outlived the
#: connection :func:`reopen` closed
_MARK = "_cg_reopened"


def reopen(con: duckdb.DuckDBPyConnection) -> tuple[duckdb.DuckDBPyConnection, bool]:
    """Close ``con`` (one of :func:`connect_file`) and connect to its store file again, with
    the global settings ``con``'s database had; return the new connection and whether it
    is on a new database.

    When ``con`` was its database's last connection, DuckDB closes the database, and with it
    all it kept in memory that :func:`reattach` leaves: its buffer pool's queues of the blocks
    it may evict, which grow with every temporary block a long load spills (``True``). When
    another connection (another store's; ``con``'s cursors close with it) keeps the database
    open, the new connection joins it and nothing else is let go (``False``). ``con``'s
    temporary tables and views and the Arrow objects registered on it go either way; the
    settings a new database would not have (a memory limit, threads, the temporary directory)
    are set on it as they were. About 65 ms at a dump's load (the checkpoint of what DuckDB's
    log holds included). Raises ``duckdb.Error``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.duckdb")
    >>> con = connect_file(path)
    >>> _ = con.execute("CREATE TABLE t AS SELECT 1 AS x")
    >>> _ = con.execute("SET memory_limit = '64MiB'")
    >>> con, new = reopen(con)
    >>> new, con.execute("SELECT x, current_setting('memory_limit') FROM t").fetchall()
    (True, [(1, '64.0 MiB')])
    >>> other = connect_file(path)  # keeps the database open (a cursor of con would close with it)
    >>> con, new = reopen(con)
    >>> new, con.execute("SELECT x FROM t").fetchall()
    (False, [(1,)])
    >>> other.close(); con.close()
    """
    where, read_only = _attached(con)
    settings = _global_settings(con)
    con.execute(f"CREATE OR REPLACE TABLE memory.main.{_MARK} AS SELECT 1 AS x")
    con.close()
    new = connect_file(where, read_only=read_only)
    try:
        outlived = bool(new.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'memory' "
                                    "AND table_name = ?", [_MARK]).fetchall()[0][0])
        if outlived:
            new.execute(f"DROP TABLE memory.main.{_MARK}")
        fresh = _global_settings(new)
        for name, value in settings.items():
            if fresh.get(name) != value:
                new.execute(f"SET {name} = {sql_string(value)}")
    except BaseException:
        new.close()
        raise
    return new, not outlived


def _global_settings(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The settings of ``con``'s database (DuckDB's global ones), as DuckDB shows them."""
    return {str(name): str(value) for name, value in con.execute(
        "SELECT name, value FROM duckdb_settings() WHERE scope = 'GLOBAL' AND value IS NOT NULL").fetchall()}


def use_store(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Make the store file the default database of ``con`` (a cursor of a connection from
    :func:`connect_file` starts in DuckDB's in-memory one); return ``con``."""
    con.execute(f"USE {ALIAS}")
    return con
