"""The store's write paths: row batches, Arrow tables and SQL selects all keep the same
semantics — existing rows stay, repeated keys inside one batch collapse, entities are
upserted — whether the fast (anti-join) path or the deduplicating fallback runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.errors import StoreError
from chaingraph.sources.loaders import load
from chaingraph.store import (
    Batch,
    Store,
    entity_row,
    qualifier_row,
    reference_row,
    statement_row,
)
from chaingraph.store_file import BATCH_ROW_GROUP_SIZE, ROW_GROUP_SIZE
from chaingraph.values import EntityValue, QuantityValue, TimeValue


def _rows(store: Store, table: str) -> list[tuple[Any, ...]]:
    return sorted(store.con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def _batch(n: int, repeat: bool = False) -> Batch:
    statements = [statement_row(f"Q{i}$s", f"Q{i}", "P31", EntityValue(id="Q5")) for i in range(1, n + 1)]
    if repeat:
        statements.append(statement_row("Q1$s", "Q1", "P31", EntityValue(id="Q6")))  # same id, later
    quals = [qualifier_row("Q1$s", "P580", TimeValue.make(1971, precision=9))] * (2 if repeat else 1)
    refs = [reference_row("Q1$s", "abc", "P248", EntityValue(id="Q36578"))]
    return Batch(statements=statements, qualifiers=quals, reference_snaks=refs,
                 statement_sources=[(r[0], "src") for r in statements])


def test_a_batch_that_repeats_a_key_is_deduplicated_not_refused(store: Store) -> None:
    store.write(_batch(3, repeat=True))
    assert len(_rows(store, "statements")) == 3
    assert len(_rows(store, "qualifiers")) == 1
    assert len(_rows(store, "statement_sources")) == 3


def test_writing_twice_changes_nothing_and_keeps_the_first_value(tmp_path: Path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        store.write(_batch(5))
        before = {t: _rows(store, t) for t in ("statements", "qualifiers", "reference_snaks")}
        changed = _batch(5)
        changed.statements[0] = statement_row("Q1$s", "Q1", "P31", EntityValue(id="Q6"))
        store.write(changed)
        assert {t: _rows(store, t) for t in before} == before


def test_entities_are_upserted_a_later_source_fills_what_an_earlier_lacked(store: Store) -> None:
    store.write(Batch(entities=[entity_row("Q42", None, "writer")]))
    store.write(Batch(entities=[entity_row("Q42", "Douglas Adams", None, label_lang="mul", sitelinks=129)]))
    info = store.entity("Q42")
    assert (info.label, info.description, info.sitelinks) == ("Douglas Adams", "writer", 129)


def test_write_arrow_fills_missing_value_columns_with_null(store: Store) -> None:
    store.write_arrow({"statements": pa.table({
        "statement_id": ["Q1$q"], "subject": ["Q1"], "property": ["P2048"], "rank": ["normal"],
        "snaktype": ["value"], "value_type": ["quantity"], "amount": ["+1.96"], "unit": ["Q11573"]})})
    assert store.statement("Q1$q").value == QuantityValue(amount="+1.96", unit="Q11573")
    with pytest.raises(StoreError, match="unknown tables"):
        store.write_arrow({"nope": pa.table({"a": [1]})})


def test_insert_select_collapses_repeats_and_keeps_rows_already_there(store: Store) -> None:
    """The statement tables have no primary-key index: the write itself keeps the key."""
    select = ("SELECT 'Q1$a' AS statement_id, 'Q1' AS subject, 'P31' AS property, 'normal' AS rank, "
              "'novalue' AS snaktype FROM range(2)")
    store.insert_select("statements", select)
    assert store.counts()["statements"] == 1
    store.insert_select("statements", select.replace("novalue", "somevalue") + " LIMIT 1", unique=True)
    assert store.counts()["statements"] == 1 and store.statement("Q1$a").snaktype == "novalue"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 12), max_size=15), st.lists(st.integers(1, 12), max_size=25),
       st.integers(1, 4), st.booleans())
def test_the_key_check_apart_keeps_the_same_rows(there: list[int], rows: list[int], per_pass: int,
                                                 unique: bool) -> None:
    """Into a large table the keys already there are found in a query of their own and left out
    a part of their hashes a pass (PRESENT_KEYS_PER_PASS, here as small as 1-4): the rows kept
    must be those of the one anti-join a small table gets, for a one-column key (statements)
    and a key of three (qualifiers), with repeats in the rows or without."""
    import chaingraph.store_writes as store_writes

    if unique:
        rows = list(dict.fromkeys(rows))

    def select(ids: list[int], marker: str, table: str) -> str:
        if not ids:
            columns = "'Q1' AS subject" if table == "statements" else "'P1' AS property, 'h' AS snak_hash"
            return f"SELECT 'Q1$x' AS statement_id, {columns} WHERE false"
        values = ", ".join(f"('Q{i}$s', {n})" for n, i in enumerate(ids))
        if table == "statements":
            return (f"SELECT statement_id, split_part(statement_id, '$', 1) AS subject, 'P31' AS property, "
                    f"'normal' AS rank, '{marker}' AS snaktype FROM (VALUES {values}) v(statement_id, n)")
        return (f"SELECT statement_id, 'P' || (n % 2) AS property, 'h' || (n % 3) AS snak_hash, "
                f"'{marker}' AS snaktype FROM (VALUES {values}) v(statement_id, n)")

    def load(store: Store) -> None:
        for table in ("statements", "qualifiers"):
            store.insert_select(table, select(there, "novalue", table))
            store.insert_select(table, select(rows, "somevalue", table), unique=unique)

    with Store() as small, Store() as large, pytest.MonkeyPatch.context() as patch:
        load(small)
        patch.setattr(store_writes, "PRESENT_KEYS_PER_PASS", per_pass)
        load(large)
        for table in ("statements", "qualifiers"):
            assert _rows(large, table) == _rows(small, table)


def test_rows_checked_against_a_large_table_fit_a_small_budget(tmp_path: Path) -> None:
    """A million statements written beside a million already there, under 32 MiB: the anti-join
    inside the INSERT built its hash table on the whole table and ran out of memory (as loading
    the third of four N-Triples parts of a dump did under a load's 64 MiB); the keys found
    first spill, and none being there, the rows go in with one plain insert."""
    rows = ("SELECT 'Q' || i || '$' || md5(i::VARCHAR) AS statement_id, 'Q' || i AS subject, "
            "'P31' AS property, 'normal' AS rank, 'value' AS snaktype, 'item' AS value_type, "
            "'Q' || (i % 1000) AS object FROM range({first}, 2000000, 2) t(i)")
    with Store(tmp_path / "large.duckdb") as s:
        s.insert_select("statements", rows.format(first=0), unique=True, check=False)
        s.con.execute(f"CREATE TEMP TABLE incoming AS {rows.format(first=1)} UNION ALL "  # and two there
                      "SELECT statement_id, subject, property, rank, snaktype, value_type, object "
                      "FROM statements WHERE subject IN ('Q0', 'Q2')")
        s.con.execute("SET memory_limit = '32MiB'")
        s.insert_select("statements", "SELECT * FROM incoming", unique=True)
        assert s.statement_count() == 2_000_000
        distinct = s.con.execute("SELECT count(DISTINCT statement_id) FROM statements").fetchall()
        assert distinct == [(2_000_000,)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 30), max_size=60), st.integers(1, 9))
def test_any_split_into_batches_gives_the_same_store(ids: list[int], size: int) -> None:
    """Invariant: however rows (with repeats) are split into batches, the store ends the same."""
    rows = [statement_row(f"Q{i}$s", f"Q{i}", "P31", EntityValue(id=f"Q{i % 4 + 5}")) for i in ids]
    with Store() as split, Store() as whole:
        for start in range(0, len(rows), size):
            split.write(Batch(statements=rows[start:start + size]))
        whole.write(Batch(statements=list(dict.fromkeys(rows))))
        assert _rows(split, "statements") == _rows(whole, "statements")


@pytest.mark.parametrize("own_limit", [False, True])
def test_release_cache_drops_the_cached_blocks_and_keeps_rows_and_limit(tmp_path: Path,
                                                                         own_limit: bool) -> None:
    """A load's memory must not grow with what it wrote: the file's blocks go, the rows and
    the memory limit stay (a limit set by hand bounds the cache itself: it is left alone)."""
    def cached(s: Store) -> int:
        return int(s.con.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() "
                                 "WHERE tag = 'BASE_TABLE'").fetchall()[0][0])

    with Store(tmp_path / "cache.duckdb") as s:  # 300k statements: a few MB of blocks
        if own_limit:
            s.con.execute("SET memory_limit = '3GB'")
        limit = s.con.execute("SELECT current_setting('memory_limit')").fetchall()
        s.insert_select("statements", "SELECT 'Q' || i || '$a' AS statement_id, 'Q' || i AS subject, "
                        "'P31' AS property, 'normal' AS rank, 'value' AS snaktype, 'item' AS value_type, "
                        "'Q5' AS object FROM range(1, 300001) t(i)", unique=True)
        s.con.execute("CHECKPOINT")
        assert s.counts()["statements"] == 300_000
        s.edges(subject="Q1")  # reads every block
        before = cached(s)
        s.release_cache()
        assert cached(s) == before if own_limit else cached(s) <= 1 << 20 < before  # what 1 MB leaves
        assert s.con.execute("SELECT current_setting('memory_limit')").fetchall() == limit
        assert s.counts()["statements"] == 300_000 and len(s.edges(subject="Q7")) == 1


def test_reconnect_attaches_the_file_again_with_its_rows_settings_and_temporary_tables(
        tmp_path: Path) -> None:
    """A long load reconnects so that DuckDB lets go of what it kept of the row groups it
    wrote: the rows, every setting changed by hand, temporary tables and cursors are there
    afterwards (the file is detached and attached again, the database stays), and a read-only
    store stays read only. In memory, a subset or a transaction there is nothing to do."""
    import duckdb

    path = tmp_path / "r.duckdb"
    with Store(path) as s:
        s.write(_batch(5))
        s.con.execute("SET threads = 1")
        s.con.execute("SET memory_limit = '3GB'")
        s.con.execute("CREATE TEMPORARY TABLE picked AS SELECT 1 AS x")
        shown = "SELECT name, value FROM duckdb_settings() ORDER BY name"
        before, cursor = s.con.execute(shown).fetchall(), s.cursor()
        for _ in range(3):
            assert s.reconnect() is True
            assert s.con.execute(shown).fetchall() == before
        assert s.con.execute("SELECT x FROM picked").fetchall() == [(1,)]
        assert cursor.execute("SELECT count(*) FROM statements").fetchall() == [(5,)]
        cursor.close()
        with s.transaction():
            assert s.reconnect() is False
        s.write(_batch(7))  # writes go on
        assert s.counts()["statements"] == 7
    with Store(path, read_only=True) as s:
        assert s.reconnect() is True
        with pytest.raises(duckdb.Error, match="read-only"):
            s.con.execute("DELETE FROM statements")
        assert s.counts()["statements"] == 7
        subset = s.subset([])
        assert subset.reconnect() is False
        subset.close()
    assert Store().reconnect() is False


def test_a_store_file_has_row_groups_of_its_own_size_and_is_one_database_in_a_process(tmp_path: Path) -> None:
    """Row groups of ROW_GROUP_SIZE rows, so that two threads compress theirs at once; every
    Store of the same file in a process (and the store's cursors) sees the same database, and
    one that asks for it read-only while it is open for writing is refused, as DuckDB refuses it."""
    path = tmp_path / "r.duckdb"
    with Store(path) as s, Store(path) as again:
        s.con.execute("CREATE TABLE t AS SELECT range AS x FROM range(?)", [3 * ROW_GROUP_SIZE])
        s.con.execute("CHECKPOINT")
        assert s.con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')"
                             ).fetchall() == [(3,)]
        s.write(_batch(4))
        cursor = s.cursor()
        assert cursor.execute("SELECT count(*) FROM statements").fetchall() == [(4,)]
        cursor.close()
        assert again.counts()["statements"] == 4
        with pytest.raises(StoreError, match=r"r\.duckdb is open for writing in this process"):
            Store(path, read_only=True)
    with Store(path, read_only=True) as s:  # closed, it opens read-only
        assert s.counts()["statements"] == 4


def test_a_json_load_fills_row_groups_of_its_own_size_and_gives_the_store_its_size_back(
        shared_data: Path, tmp_path: Path) -> None:
    """While a JSON dump loads, each batch of 50,000 statements fills a row group of
    BATCH_ROW_GROUP_SIZE rows (compressed as it is inserted) and leaves the rest in another;
    afterwards new rows go into row groups of ROW_GROUP_SIZE again, also after a reopen."""
    path = tmp_path / "j.duckdb"

    def groups_of_a_new_table(s: Store) -> list[tuple[Any, ...]]:
        s.con.execute("CREATE OR REPLACE TABLE t AS SELECT range AS x FROM range(?)", [2 * ROW_GROUP_SIZE])
        s.con.execute("CHECKPOINT")
        return s.con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')").fetchall()

    with Store(path) as s:
        load([shared_data / "world" / "codex-s.json.gz"], s)
        sizes = [n for (n,) in s.con.execute(
            "SELECT max(count) FROM pragma_storage_info('statements') WHERE column_id = 0 "
            "GROUP BY row_group_id ORDER BY row_group_id").fetchall()]
        assert sizes[0] == BATCH_ROW_GROUP_SIZE and max(sizes) == BATCH_ROW_GROUP_SIZE
        assert sum(sizes) == s.counts()["statements"] and len(sizes) >= 2
        assert groups_of_a_new_table(s) == [(2,)]
        s.reopen()
        assert groups_of_a_new_table(s) == [(2,)]
