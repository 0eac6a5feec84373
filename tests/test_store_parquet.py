"""Parquet export and load: the same store back, readable by other engines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.errors import InvalidInput
from chaingraph.sources.loaders import load, summarize
from chaingraph.store import Store
from chaingraph.store_parquet import export, load_parquet


@pytest.fixture(scope="module")
def full_store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """Real entities with ranks, qualifiers, references and every value type."""
    path = tmp_path_factory.mktemp("pq") / "full.duckdb"
    with Store(path) as store:
        load([shared_data / "entities_full" / "wikidata_entities_full.jsonl.gz"], store)
    return path


def _rows(store: Store) -> dict[str, list[tuple[object, ...]]]:
    tables = [r[0] for r in store.con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1").fetchall()]
    return {t: store.con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}


def test_export_then_load_gives_the_same_rows_and_summary(full_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "pq"
    manifest = export(full_store, parquet=out)
    assert manifest["tables"]["statements"]["rows"] > 1000
    assert json.loads((out / "manifest.json").read_text())["format"] == "chaingraph.parquet/1"
    with Store(full_store, read_only=True) as a, Store(tmp_path / "back.duckdb") as b:
        load([out], b)
        assert summarize(a).model_dump(exclude={"store"}) == summarize(b).model_dump(exclude={"store"})
        assert _rows(a) == _rows(b)
        sid = a.con.execute("SELECT q.statement_id FROM qualifiers q JOIN reference_snaks r "
                            "USING (statement_id) ORDER BY 1 LIMIT 1").fetchall()[0][0]
        info = b.statement(sid)
        assert info is not None and info.qualifiers and info.references and info == a.statement(sid)


def test_loading_an_export_twice_changes_nothing(full_store: Path, tmp_path: Path) -> None:
    export(full_store, parquet=tmp_path / "pq")
    with Store() as b:
        load_parquet(tmp_path / "pq", b)
        once = _rows(b)
        load_parquet(tmp_path / "pq", b)
        assert _rows(b) == once


def test_duckdb_reads_the_files_without_chaingraph(full_store: Path, tmp_path: Path) -> None:
    export(full_store, parquet=tmp_path / "pq")
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path}/pq/statements.parquet') "
                   "WHERE value_type = 'time'").fetchall()[0][0]
    with Store(full_store, read_only=True) as a:
        assert n == a.counts()["statements:time"] > 0


def test_cli_export_and_load_round_trip(full_store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["export", "--store", str(full_store), "--parquet", str(tmp_path / "pq")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["statements"] > 0
    res = runner.invoke(cli, ["load", str(tmp_path / "pq"), "--store", str(tmp_path / "new.duckdb"),
                              "--format", "json"])
    assert res.exit_code == 0, res.output


def test_a_foreign_manifest_is_refused_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"format": "other/1", "tables": {}}')
    with Store() as b, pytest.raises(InvalidInput, match=re.escape("manifest.json: format is 'other/1'")):
        load_parquet(tmp_path, b)


def test_a_missing_table_file_is_named(full_store: Path, tmp_path: Path) -> None:
    export(full_store, parquet=tmp_path / "pq")
    (tmp_path / "pq" / "qualifiers.parquet").unlink()
    missing = re.escape("table qualifiers lists file 'qualifiers.parquet'")
    with Store() as b, pytest.raises(InvalidInput, match=missing):
        load_parquet(tmp_path / "pq", b)


def test_export_of_a_missing_store_exits_with_a_one_line_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["export", "--store", str(tmp_path / "no.duckdb"), "--parquet",
                                   str(tmp_path / "pq")])
    assert res.exit_code != 0 and "no such store file" in res.output


class Watched:
    """A store's connection that notes DuckDB's setting ``name`` (the memory limit) at each
    statement starting with ``verb`` (``COPY``, ``INSERT``) in ``seen``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, verb: str, seen: list[str],
                 name: str = "memory_limit") -> None:
        self.con, self.verb, self.seen, self.name = con, verb, seen, name

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        from chaingraph.store_memory import setting

        if sql.startswith(self.verb):
            self.seen.append(setting(self.con, self.name))
        return self.con.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.con, name)


def test_export_holds_duckdb_to_its_budget_and_gives_the_limit_back(full_store: Path, tmp_path: Path) -> None:
    """Each table is sorted by its key as it is written, and a sort left to DuckDB's default
    limit keeps the whole table in memory (1.9 GB for a store of 4.6 M statements): a store
    file is held to DEFAULT_EXPORT_MEMORY_MB while the tables are written, so the sort spills,
    and has its own limit back after; an in-memory store, which cannot spill, is left alone."""
    from chaingraph.settings import DEFAULT_EXPORT_MEMORY_MB
    from chaingraph.store_memory import memory_limit

    for store in (Store(full_store, read_only=True), Store()):
        with store:
            opened, seen = memory_limit(store.con), []
            store.con = Watched(store.con, "COPY", seen)  # type: ignore[assignment]
            export(store, parquet=tmp_path / "pq")
            expected = f"{DEFAULT_EXPORT_MEMORY_MB:.1f} MiB" if store.path is not None else opened
            assert len(seen) >= 5 and set(seen) == {expected}
            assert memory_limit(store.con) == opened


def test_loading_an_export_holds_duckdb_to_its_budget(full_store: Path, tmp_path: Path) -> None:
    """Loading a Parquet directory into a store file holds DuckDB to
    DEFAULT_PARQUET_LOAD_MEMORY_MB (unheld, a 4.6 M-statement export took 2.7-3.0 GB) and
    gives the store its own limit back."""
    from chaingraph.settings import DEFAULT_PARQUET_LOAD_MEMORY_MB
    from chaingraph.store_memory import memory_limit

    export(full_store, parquet=tmp_path / "pq")
    seen: list[str] = []
    with Store(tmp_path / "back.duckdb") as store:
        opened = memory_limit(store.con)
        store.con = Watched(store.con, "INSERT", seen)  # type: ignore[assignment]
        load_parquet(tmp_path / "pq", store)
        assert len(seen) >= 5 and set(seen) == {f"{DEFAULT_PARQUET_LOAD_MEMORY_MB:.1f} MiB"}
        assert memory_limit(store.con) == opened and store.statement_count() > 1000


def test_a_statement_file_that_repeats_a_key_loads_it_once(full_store: Path, tmp_path: Path) -> None:
    """An export's keys come once, so its rows are not grouped by key; a file that repeats
    one (written by hand) is, and keeps the first row of each key as every load does."""
    out = tmp_path / "pq"
    export(full_store, parquet=out)
    statements = out / "statements.parquet"
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT * FROM read_parquet('{statements}') UNION ALL "
                    f"(SELECT * FROM read_parquet('{statements}') ORDER BY statement_id LIMIT 3)) "
                    f"TO '{tmp_path / 'twice.parquet'}' (FORMAT parquet)")
    (tmp_path / "twice.parquet").replace(statements)
    with Store(full_store, read_only=True) as a, Store(tmp_path / "back.duckdb") as b:
        load_parquet(out, b)
        assert _rows(a)["statements"] == _rows(b)["statements"]


def test_a_table_with_a_primary_key_is_read_back_a_part_a_transaction(
        full_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB holds what a transaction adds to an index in memory: an export of 5 M entities
    read back in one transaction ran out of the 256 MiB budget and invalidated the store. A
    table with a primary key is read a part of the file a transaction (the file's row numbers,
    pushed into the reader), each part committed: here 10 rows a part, so the entities
    take many commits, and the store is the one the export came from. Into a store that holds
    some of the entities already, a part's plain insert is refused and the part upserted."""
    import chaingraph.store_parquet as store_parquet

    monkeypatch.setattr(store_parquet, "KEYED_ROWS_PER_TRANSACTION", 10)
    export(full_store, parquet=tmp_path / "pq")
    seen: list[str] = []
    with Store(full_store, read_only=True) as a, Store(tmp_path / "back.duckdb") as b:
        entities = a.con.execute("SELECT count(*) FROM entities").fetchall()[0][0]
        b.con = Watched(b.con, "INSERT INTO entities", seen, "checkpoint_threshold")  # type: ignore[assignment]
        load_parquet(tmp_path / "pq", b)
        assert entities > 30 and len(seen) == -(-entities // 10)  # a part a transaction
        assert set(seen) == {"4.0 MiB"}  # each part's commit checkpointed
        assert _rows(a) == _rows(b)
    with Store(full_store, read_only=True) as a, Store() as c:
        # fifteen of them without their labels and sitelinks, which only an upsert fills in
        c.con.execute("INSERT INTO entities SELECT * REPLACE (NULL AS label, NULL AS sitelinks) "
                      "FROM read_parquet(?) ORDER BY id LIMIT 15 OFFSET 5",
                      [str(tmp_path / "pq" / "entities.parquet")])
        assert c.con.execute("SELECT count(*) FROM entities WHERE label IS NULL").fetchall()[0][0] == 15
        load_parquet(tmp_path / "pq", c)
        assert _rows(a) == _rows(c)


def test_a_file_without_a_column_is_refused_before_anything_is_written(full_store: Path,
                                                                        tmp_path: Path) -> None:
    """The tables are read in transactions of their own, so every file is checked first: a
    statements file without its rank column leaves the store as it was, entities included."""
    out = tmp_path / "pq"
    export(full_store, parquet=out)
    statements = out / "statements.parquet"
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT * EXCLUDE (rank) FROM read_parquet('{statements}')) "
                    f"TO '{tmp_path / 'cut.parquet'}' (FORMAT parquet)")
    (tmp_path / "cut.parquet").replace(statements)
    with Store(tmp_path / "back.duckdb") as b:
        with pytest.raises(InvalidInput, match=re.escape("columns ['rank'] of table statements are missing")):
            load_parquet(out, b)
        assert b.con.execute("SELECT count(*) FROM entities").fetchall()[0][0] == 0
