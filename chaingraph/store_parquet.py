"""The store as Parquet files: one file per table and a manifest (DESIGN §13).

:func:`export` writes every table of a store to ``DIR/<table>.parquet`` (rows sorted by
the table's key, so the same store gives the same files) and ``DIR/manifest.json``:

.. code-block:: json

    {"format": "chaingraph.parquet/1", "chaingraph": "0.1.0",
     "tables": {"statements": {"file": "statements.parquet", "rows": 227878,
                               "key": ["statement_id"],
                               "columns": [{"name": "statement_id", "type": "VARCHAR"}, ...]},
                ...}}

Column names and types are the store's own (the docstring of :mod:`chaingraph.store`
says what each table holds); any engine that reads Parquet reads them (DuckDB
``read_parquet``, Polars ``pl.read_parquet``, Spark ``spark.read.parquet``).
:func:`load_parquet` reads such a directory back into a store: the same rows, so the same
``chaingraph summary``. Loading into a store that already holds rows keeps them (rows
whose key is already present are left as they are, as every load does).

>>> import tempfile
>>> from chaingraph.resources import data_file
>>> from chaingraph.sources.loaders import load, summarize
>>> from chaingraph.store import Store
>>> with tempfile.TemporaryDirectory() as tmp, Store() as a, Store() as b:
...     _ = load([data_file("sample/douglas-adams.json")], a)
...     manifest = export(a, parquet=tmp)
...     _ = load_parquet(tmp, b)
...     summarize(a).model_dump(exclude={"store"}) == summarize(b).model_dump(exclude={"store"})
True
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb

from chaingraph import __version__
from chaingraph.errors import InvalidInput, StoreError
from chaingraph.settings import DEFAULT_EXPORT_MEMORY_MB, DEFAULT_PARQUET_LOAD_MEMORY_MB
from chaingraph.store import Store
from chaingraph.store_file import sql_string
from chaingraph.store_load import checkpointed_commits
from chaingraph.store_memory import duckdb_problem, repeats
from chaingraph.store_schema import KEYS, UPSERT

__all__ = ["FORMAT", "KEYED_ROWS_PER_TRANSACTION", "MANIFEST", "export", "is_parquet_export",
           "load_parquet"]

FORMAT = "chaingraph.parquet/1"
MANIFEST = "manifest.json"
#: rows of an entity table read back per transaction (:func:`load_parquet`):
#: DuckDB holds what a transaction adds to the index in memory until it commits, and 5 M
#: entities in one transaction ran out of DEFAULT_PARQUET_LOAD_MEMORY_MB (plain DuckDB too)
KEYED_ROWS_PER_TRANSACTION = 1_000_000


#: each table's columns (name, type) and key
_Tables = dict[str, tuple[list[dict[str, str]], list[str]]]


def _tables(store: Store) -> _Tables:
    """Every base table of the store: its columns (name, type) and key."""
    con = store.con
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND NOT temporary ORDER BY table_name").fetchall()]
    out = {}
    for name in names:
        cols = [{"name": c, "type": t} for c, t in con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND table_name = ? ORDER BY column_index", [name]).fetchall()]
        key = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() "
            "WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? "
            "AND constraint_type = 'PRIMARY KEY'", [name]).fetchall()
        # the fact tables' keys are kept by the writes, without a primary-key index
        out[name] = (cols, list(KEYS[name]) if name in KEYS else
                     list(key[0][0]) if key else [c["name"] for c in cols])
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def export(store: Store | str | Path, *, parquet: str | Path) -> dict[str, Any]:
    """Write every table of ``store`` (a :class:`Store` or a store file, read only) as
    Parquet under the directory ``parquet`` (created; files of an earlier export are
    replaced) and return the manifest written beside them. A store file is held to
    :data:`~chaingraph.settings.DEFAULT_EXPORT_MEMORY_MB` of DuckDB memory meanwhile, so
    that sorting a table by its key spills to disk instead of holding the table."""
    opened = not isinstance(store, Store)
    if opened:
        path = Path(store)  # type: ignore[arg-type]
        if not path.is_file():
            raise InvalidInput(f"--store {path}: no such store file; create one with `chaingraph load`")
        store = Store(path, read_only=True)
    assert isinstance(store, Store)
    out = Path(parquet)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--parquet {out}: cannot create the directory ({exc.strerror})") from exc
    started = time.perf_counter()
    try:
        with store.memory_budget() as budget:  # a store file: the sorts spill beyond it
            budget.hold(DEFAULT_EXPORT_MEMORY_MB)
            tables = _write_tables(store, out)
        manifest = {"format": FORMAT, "chaingraph": __version__,
                    "store": str(store.path) if store.path else ":memory:",
                    "seconds": round(time.perf_counter() - started, 3), "tables": tables}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    finally:
        if opened:
            store.close()
    return manifest


def _write_tables(store: Store, out: Path) -> dict[str, Any]:
    """Write each table of ``store`` to ``out/<table>.parquet``, its rows sorted by its key;
    return the manifest's entries describing them."""
    tables: dict[str, Any] = {}
    for name, (cols, key) in _tables(store).items():
        file = out / f"{name}.parquet"
        order = ", ".join(_quote(k) for k in key)
        store.con.execute(f"COPY (SELECT * FROM {_quote(name)} ORDER BY {order}) TO {sql_string(str(file))} "
                          "(FORMAT parquet, COMPRESSION zstd)")
        rows = store.con.execute(f"SELECT count(*) FROM {_quote(name)}").fetchall()[0][0]
        tables[name] = {"file": file.name, "rows": int(rows), "key": key, "columns": cols}
    return tables


def is_parquet_export(path: str | Path) -> bool:
    """True for a directory written by :func:`export` (it holds ``manifest.json``)."""
    return Path(path).is_dir() and (Path(path) / MANIFEST).is_file()


def _manifest(directory: Path) -> dict[str, Any]:
    where = directory / MANIFEST
    try:
        manifest = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{where}: not a readable chaingraph Parquet manifest ({exc}); "
                           "write one with `chaingraph export --parquet`") from exc
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != FORMAT:
        raise InvalidInput(f"{where}: format is {found!r}, expected {FORMAT!r}; "
                           "write it with `chaingraph export --parquet`")
    for name, table in manifest.get("tables", {}).items():
        if not (directory / str(table.get("file", ""))).is_file():
            raise InvalidInput(f"{directory}: table {name} lists file {table.get('file')!r}, "
                               "which is missing; export the store again")
    return dict(manifest)


def load_parquet(directory: str | Path, store: Store) -> dict[str, int]:
    """Read a directory written by :func:`export` into ``store``; returns the rows read per
    table. Tables the store does not have, and files that lack a column of their table, are
    refused before anything is written. A store file is held to
    :data:`~chaingraph.settings.DEFAULT_PARQUET_LOAD_MEMORY_MB` of DuckDB memory meanwhile.

    A table whose keys come once (as an export's do: one pass over their hashes tells,
    :func:`~chaingraph.store_memory.repeats`) is not grouped by key. Each table is read in one
    transaction, but ``entities`` and ``properties``: :data:`KEYED_ROWS_PER_TRANSACTION` rows
    a transaction, in the file's order (its key's), each commit checkpointed, since DuckDB
    holds what a transaction adds to their primary-key index in memory, and an export of 5 M
    entities read in one transaction ran out of the budget and invalidated the store. A load
    that stops keeps what it committed; loading the directory again completes it (rows whose
    key is there are kept as every load keeps them)."""
    root = Path(directory)
    manifest = _manifest(root)
    known = _tables(store)
    unknown = sorted(set(manifest["tables"]) - set(known))
    if unknown:
        raise InvalidInput(f"{root / MANIFEST}: tables {unknown} are not store tables; "
                           "was it written by another chaingraph version?")
    counts: dict[str, int] = {}
    try:
        files = _checked_files(store, root, manifest, known)
        # each part's commit checkpointed, as a dump's load does
        with store.memory_budget() as budget, checkpointed_commits(store):
            budget.hold(DEFAULT_PARQUET_LOAD_MEMORY_MB)
            for name, (file, wanted) in files.items():
                _load_table(store, name, file, wanted, known[name][1])
                counts[name] = int(manifest["tables"][name]["rows"])
    except duckdb.Error as exc:  # a corrupt or foreign file
        raise StoreError(f"{root}: cannot read the Parquet export ({duckdb_problem(exc)})") from exc
    return counts


def _checked_files(store: Store, root: Path, manifest: dict[str, Any],
                   known: _Tables) -> dict[str, tuple[str, list[str]]]:
    """Each table's file and the columns the store wants of it; a file without one of them is
    refused (:class:`InvalidInput`) before anything is written."""
    files = {}
    for name, table in manifest["tables"].items():
        wanted = [c["name"] for c in known[name][0]]
        file = root / table["file"]
        rows = f"read_parquet({sql_string(str(file))})"
        present = {r[0] for r in store.con.execute(f"DESCRIBE SELECT * FROM {rows}").fetchall()}
        missing = [c for c in wanted if c not in present]
        if missing:
            raise InvalidInput(f"{file}: columns {missing} of table {name} are missing")
        files[name] = (str(file), wanted)
    return files


def _load_table(store: Store, name: str, file: str, wanted: list[str], key: list[str]) -> None:
    """One table's rows: a table of :data:`KEYS` by the store's own write, which keeps its
    key (grouped by key only when one comes twice in the file), any other ``INSERT OR
    IGNORE``. The entity tables (:data:`UPSERT`), when their keys come once, are read
    :data:`KEYED_ROWS_PER_TRANSACTION` rows a transaction by :meth:`Store.insert_select`
    (each part inserted plainly, upserted only if the index refuses a key that is there;
    DuckDB reads only the row groups of a part, the filter on the file's row number pushed
    into the reader); every other table in one transaction."""
    rows = f"read_parquet({sql_string(file)})"
    select = ", ".join(_quote(c) for c in wanted)
    # an export's keys come once: not grouped
    unique = name in KEYS and not repeats(store.con, rows, ", ".join(_quote(k) for k in key))
    if name in UPSERT and unique:
        per = KEYED_ROWS_PER_TRANSACTION
        count = int(store.con.execute(f"SELECT count(*) FROM {rows}").fetchall()[0][0])  # the file's own
        numbered = f"read_parquet({sql_string(file)}, file_row_number = true)"
        for start in range(0, count, per):
            part = f"file_row_number >= {start} AND file_row_number < {start + per}"
            store.insert_select(name, f"SELECT {select} FROM {numbered} WHERE {part}", unique=True)
        return
    with store.transaction() as con:
        if name in KEYS:
            store._insert_from(name, wanted, rows, unique=unique)
        else:
            con.execute(f"INSERT OR IGNORE INTO {_quote(name)} ({select}) SELECT {select} FROM {rows}")
