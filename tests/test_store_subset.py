"""A subset read in place (:mod:`chaingraph.store_subset`) answers as a copy of its rows
would, on real data, and leaves the database's settings as it found them; handing
DuckDB's memory back (:meth:`Store.release_memory`) changes nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chaingraph.collect import collect_subset
from chaingraph.store import Store


def _setting(store: Store, name: str) -> Any:
    return store.con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]


def _edges(table: Any) -> list[tuple[Any, ...]]:
    return sorted(zip(*(table[c].to_pylist() for c in table.column_names)))


def test_point_lookups_on_a_subset_see_only_its_statements(json_entities: Store) -> None:
    """A subset reads statements straight from its source's tables, but only those it holds."""
    rows = json_entities.con.execute("SELECT statement_id FROM statements s WHERE EXISTS "
                                     "(SELECT 1 FROM qualifiers q WHERE q.statement_id = s.statement_id) "
                                     "ORDER BY 1 LIMIT 6").fetchall()
    held, other = [r[0] for r in rows[:3]], [r[0] for r in rows[3:]]
    with json_entities.subset(held) as part:
        found = part.statements([*held, *other])
        assert sorted(found) == held
        assert found == json_entities.statements(held)
        assert part.statements(other) == {}
        assert any(info.qualifiers for info in found.values())


def test_a_subsets_edge_table_is_its_rows_and_the_optimizer_setting_is_put_back(codex_s_file: Path) -> None:
    with Store(codex_s_file, read_only=True) as source:
        source.con.execute("SET disabled_optimizers = 'top_n'")
        part, _ = collect_subset(["Q1785"], 3, source=source)
        with part:
            ids = [e.statement_id for e in part.edges()]
            assert len(ids) > 100
            with source.subset(ids) as again:  # the same rows, picked by id
                assert _edges(part.edge_table()) == _edges(again.edge_table())
            assert {e[0] for e in _edges(part.edge_table())} == set(ids)
            assert _setting(part, "disabled_optimizers") == "top_n"
        assert _setting(source, "disabled_optimizers") == "top_n"


def test_release_memory_keeps_the_memory_limit(codex_s_file: Path) -> None:
    """Setting the limit flushes DuckDB's allocator; it must not creep (DuckDB shows the
    limit rounded down to 0.1 of its unit, so setting what it shows would lower it by
    0.1 GiB a call)."""
    with Store(codex_s_file, read_only=True) as store:
        store.release_memory()
        shown = _setting(store, "memory_limit")
        for _ in range(5):
            store.release_memory()
        assert _setting(store, "memory_limit") == shown
        store.con.execute("SET memory_limit = '1.5GB'")
        limit = _setting(store, "memory_limit")
        for _ in range(5):
            store.release_memory()
        assert _setting(store, "memory_limit") == limit
        assert store.counts()["statements"] > 0
