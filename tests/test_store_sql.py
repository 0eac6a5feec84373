"""The store owns its SQL: no module outside the store modules names a store table in SQL
or reaches into the store's DuckDB connection (the dump loaders' bulk-insert path may use
the connection for its own staging tables)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from chaingraph.store_schema import TABLES

PACKAGE = Path(__file__).resolve().parents[1] / "chaingraph"
STORE_MODULES = {"store.py", "store_reads.py", "store_schema.py", "store_state.py", "store_bulk.py",
                 "store_load.py", "store_memory.py", "store_parquet.py", "store_subset.py", "store_writes.py"}
BULK_LOADERS = "sources/loaders/"

_SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|VIEW|EXISTS|DESCRIBE|COPY)\s+(?:main\.)?\"?("
                  + "|".join(TABLES) + r")\b", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.add(id(first.value))
    return out


def _strings(source: str) -> list[tuple[int, str]]:
    """Every string literal's text with its line (f-string fields become ``{}``); of a
    docstring only its doctest lines, which are code."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    inside_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                           for v in node.values)
            out.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in inside_fstrings:
                continue
            text = node.value
            if id(node) in docs:
                text = "\n".join(line for line in text.splitlines()
                                 if line.strip().startswith((">>>", "...")))
            out.append((node.lineno, text))
    return out


def sql_naming_store_tables(source: str) -> list[str]:
    """``line: table`` for every string in ``source`` that is SQL naming a store table."""
    return [f"{line}: {m.group(1)}" for line, text in _strings(source) for m in _SQL.finditer(text)]


def connection_uses(source: str) -> list[int]:
    """Lines that read a ``.con`` attribute (the store's DuckDB connection)."""
    return [n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute) and n.attr == "con"]


def _modules() -> list[tuple[str, str]]:
    return [(p.relative_to(PACKAGE).as_posix(), p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))]


def test_the_scanner_finds_sql_in_code_strings_and_doctests_but_not_prose() -> None:
    bad = '''
def f(store, t):
    """Rows from statements, prose only.

    >>> store.con.execute("SELECT count(*) FROM crawl_runs")
    """
    store.con.execute("select body from responses where query_hash = ?", [1])
    store.con.execute(f"INSERT OR IGNORE INTO entities SELECT * FROM {t}")
    store.con.execute("SELECT * FROM _cg_staging")
    return "read from a file"
'''
    assert sorted(sql_naming_store_tables(bad)) == ["3: crawl_runs", "7: responses", "8: entities"]
    assert sorted(connection_uses(bad)) == [7, 8, 9]
    assert "statements" in TABLES and "crawl_neighbours" in TABLES and "entity_classes" in TABLES


def test_no_module_outside_the_store_writes_sql_naming_a_store_table() -> None:
    found = {path: hits for path, text in _modules()
             if path not in STORE_MODULES and (hits := sql_naming_store_tables(text))}
    assert found == {}, f"SQL naming store tables outside the store: {found}; add a Store method instead"


def test_only_the_store_and_the_bulk_loaders_touch_the_store_connection() -> None:
    found = {path: lines for path, text in _modules()
             if path not in STORE_MODULES and not path.startswith(BULK_LOADERS)
             and (lines := connection_uses(text))}
    assert found == {}, f"store.con used outside the store: {found}; add a Store method instead"


def test_the_store_modules_are_where_the_sql_is() -> None:
    # the scan is not vacuous: the store modules do name their tables
    hits = {path: sql_naming_store_tables(text) for path, text in _modules() if path in STORE_MODULES}
    assert all(hits[m] for m in ("store.py", "store_reads.py", "store_state.py", "store_writes.py")), hits
