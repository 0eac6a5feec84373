"""The JSON loader's parse workers and large batches give the store the row-at-a-time
loader gives (every table, every row): on a real world dump and on the bundled sample cut
into many small chunks, with an entity repeated across batches, into a store that already
holds the entities, and into a store with the old primary keys; and
:meth:`Store.write_arrow` keeps what :meth:`Store.write` keeps."""

from __future__ import annotations

import contextlib
import itertools
import json
import mmap
import multiprocessing
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from test_load_json import CONTENT_TABLES, contents
from test_store_parquet import Watched

from chaingraph import store_load, store_memory
from chaingraph.errors import BadDumpLine
from chaingraph.resources import data_file
from chaingraph.settings import DEFAULT_BULK_LOAD_MEMORY_MB
from chaingraph.sources.loaders import json_chunks, json_dump, json_rows, json_typed
from chaingraph.sources.loaders.common import FileReport
from chaingraph.sources.loaders.json_dump import load_json_dump
from chaingraph.store import Batch, Store
from chaingraph.store_load import BulkLoad
from chaingraph.store_memory import STORE_VACUUM_TASKS, memory_limit, out_of_memory, setting
from chaingraph.store_schema import INDEXLESS, KEYED_SCHEMA, TABLE_COLUMNS

SAMPLE = data_file("sample/douglas-adams.json")


def everything(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table the loaders write (``sources`` without its load time)."""
    out = contents(store, (*CONTENT_TABLES, "statement_sources"))
    out["sources"] = sorted(store.con.execute("SELECT source_id, kind, location, query_file, query_hash, "
                                              "dump_date, revision FROM sources").fetchall())
    return out


def _both(path: Path, *, into: Path | None = None,
          workers: int | None = 2) -> tuple[dict[str, list[tuple[object, ...]]], ...]:
    """The store the default loader (on ``workers`` processes) and the row-at-a-time one give."""
    out = []
    for rows in (False, True):
        with Store() as store:
            if into is not None:
                load_json_dump(into, store, row_at_a_time=True)
            report = load_json_dump(path, store, row_at_a_time=rows, workers=None if rows else workers)
            assert report.statements > 0
            out.append(everything(store))
    return tuple(out)


@pytest.mark.slow
def test_codex_s_loads_to_the_same_store_either_way(shared_data: Path) -> None:
    bulk, rows = _both(shared_data / "world" / "codex-s.json.gz")
    assert bulk == rows
    assert len(bulk["statements"]) == 39985 and len(bulk["statement_sources"]) == 39985


@pytest.mark.parametrize("workers", [0, 2])
def test_the_sample_in_small_chunks_and_batches_loads_to_the_same_store(
        workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hundreds of chunks and batches: every entity, chunk and batch boundary of the
    sample crossed, in this process and on two workers."""
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)
    monkeypatch.setattr(json_dump, "BULK_ROWS", 40)
    bulk, rows = _both(SAMPLE, workers=workers)
    assert bulk == rows
    assert len(bulk["qualifiers"]) > 10 and len(bulk["reference_snaks"]) > 10  # more than items


def test_a_batch_decides_its_unique_tables_from_the_rows_it_hands_over() -> None:
    """A batch's tables whose keys do not repeat are decided from the statement ids its
    tables() takes out of the parts: asked first, it says so instead of guessing."""
    batch = json_chunks._Merged("src")
    for part in json_chunks.parse_chunk(SAMPLE.read_bytes(), 1, "src", stop_at_bad=False).parts:
        batch.add(part)
    with pytest.raises(RuntimeError, match="tables"):
        batch.unique()
    tables = batch.tables()
    assert tables["statements"] and "statements" in batch.unique()
    assert all(not part.tables for part in batch.parts)  # the rows moved to the tables


def test_a_batch_ends_at_its_bytes_whatever_its_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches cut by their rows' bytes (``BULK_BYTES``), the statement cap out of reach:
    a batch ends with the first part that takes it to the cap (or before an entity it
    holds comes again), and the store is the same."""
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 1024)
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10**9)
    batches: list[list[tuple[int, set[str]]]] = []  # each batch's parts: their bytes and entities
    tables = json_chunks._Merged.tables

    def spy(batch: json_chunks._Merged) -> dict[str, list[pa.Table]]:
        batches.append([(sum(len(piece) for pieces in part.tables.values() for piece in pieces), part.ids)
                        for part in batch.parts])
        assert sum(size for size, _ in batches[-1]) == batch.nbytes
        return tables(batch)

    monkeypatch.setattr(json_chunks._Merged, "tables", spy)
    with Store() as store:
        load_json_dump(SAMPLE, store, workers=0)
        whole_file = everything(store)
    cap = sum(size for parts in batches for size, _ in parts) // 8
    batches.clear()
    monkeypatch.setattr(json_dump, "BULK_BYTES", cap)
    with Store() as store:
        load_json_dump(SAMPLE, store, workers=0)
        assert everything(store) == whole_file
    assert len(batches) >= 4
    for parts, after in itertools.pairwise(batches):
        sizes = [size for size, _ in parts]
        if sum(sizes) >= cap:
            assert sum(sizes[:-1]) < cap  # ended by the part that reached the cap
        else:  # ended before an entity it holds came again
            assert any(not ids.isdisjoint(after[0][1]) for _, ids in parts)


def test_a_written_batch_lets_its_rows_go_before_its_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON writer's batch hands its rows to its tables, and the load empties them once
    DuckDB has them: at the commit no Arrow memory of the batch is left (where DuckDB's own
    memory peaks, compressing the rows)."""
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 2048)
    seen: list[tuple[int, int]] = []  # (Arrow bytes while the rows were inserted, at the commit)
    inserted: list[int] = []
    insert, transaction = BulkLoad._insert_batch, Store.transaction

    def spy_insert(self: BulkLoad, *args: object, **kwargs: object) -> None:
        insert(self, *args, **kwargs)  # type: ignore[arg-type]
        inserted.append(pa.total_allocated_bytes())

    @contextlib.contextmanager
    def spy_transaction(self: Store) -> Iterator[object]:
        with transaction(self) as con:
            yield con
            if inserted:
                seen.append((inserted.pop(), pa.total_allocated_bytes()))

    monkeypatch.setattr(BulkLoad, "_insert_batch", spy_insert)
    monkeypatch.setattr(Store, "transaction", spy_transaction)
    def counted(data: bytes) -> pa.Table:  # a piece copied into Arrow's memory, which it counts
        table = pa.ipc.open_stream(data).read_all()
        return table.take(pa.array(range(table.num_rows)))

    monkeypatch.setattr(json_chunks, "_table", counted)
    with Store() as store:
        load_json_dump(SAMPLE, store, workers=0)
    assert seen and all(during > at_commit for during, at_commit in seen)


@pytest.mark.parametrize("workers", [0, 1])
def test_a_chunks_rows_arrive_in_one_mapping_of_their_own_freed_with_them(workers: int) -> None:
    """A chunk's rows reach the batch outside the C library's heap, where rows of every size
    kept for a batch fragmented it (``json_chunks.off_heap``): every piece of a chunk's result
    is a view of one anonymous mapping, parsed on a worker or here, with the rows
    :func:`parse_chunk` gives, and the mapping is unmapped once the last of its rows goes."""
    data = SAMPLE.read_bytes()
    expected = json_chunks.parse_chunk(data, 1, "src", stop_at_bad=False)
    pool = json_chunks._Pool(workers, "src", stop_at_bad=False)
    try:
        [result] = [*pool.submit(bytearray(data), 1), *pool.finish()]
    finally:
        pool.close()
    pieces = [piece for part in result.parts for pieces in part.tables.values() for piece in pieces]
    assert pieces and all(isinstance(piece, memoryview) for piece in pieces)
    assert len({id(piece.obj) for piece in pieces}) == 1 and isinstance(pieces[0].obj, mmap.mmap)

    def rows(parts: list[json_chunks.Part]) -> list[dict[str, list[str]]]:
        # each table's rows, whichever of its pieces holds them: a statement goes to the
        # piece of its value's type or the general one by what the process validated before
        return [{name: sorted(json.dumps({k: v for k, v in row.items() if v is not None}, sort_keys=True,
                                         default=str)
                              for piece in pieces for row in json_chunks._table(piece).to_pylist())
                 for name, pieces in part.tables.items()} for part in parts]

    assert rows(result.parts) == rows(expected.parts)
    mapping = weakref.ref(pieces[0].obj)
    table = json_chunks._table(pieces[0])  # Arrow's rows keep the mapping, not a copy
    del pieces, result
    assert mapping() is not None
    del table
    assert mapping() is None


def test_a_store_with_the_old_primary_keys_loads_the_same(tmp_path: Path) -> None:
    """A store written before the statement tables lost their indexes is opened as it is:
    loading into it (twice) gives the rows a new store gets."""
    db = tmp_path / "old.duckdb"
    with Store(db) as old:
        _rekey(old)
    with Store(db) as old, Store() as new:
        for _ in range(2):
            load_json_dump(SAMPLE, old, workers=2)
        load_json_dump(SAMPLE, new)
        assert everything(old) == everything(new)


def _sample_entities() -> list[dict[str, object]]:
    lines = SAMPLE.read_bytes().splitlines()
    return [json.loads(line.rstrip(b",")) for line in lines if line.strip() not in (b"[", b"]", b"")]


def test_an_entity_twice_across_small_batches_keeps_its_last_copy(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few statements, so the two copies of Q42 land in different writes; the
    second copy drops one statement and renames another."""
    monkeypatch.setattr(json_dump, "BULK_ROWS", 7)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 4096)  # and in different chunks
    entities = _sample_entities()
    q42 = next(e for e in entities if e["id"] == "Q42")
    second = json.loads(json.dumps(q42))
    claims = second["claims"]
    dropped = next(iter(claims))
    del claims[dropped]
    first_group = next(iter(claims.values()))
    first_group[0]["id"] = "Q42$RENAMED"
    dump = tmp_path / "twice.json"
    dump.write_text("[\n" + ",\n".join(json.dumps(e) for e in [*entities, second]) + "\n]\n")
    for workers in (0, 2):
        bulk, rows = _both(dump, workers=workers)
        assert bulk == rows
    ids = {r[0] for r in bulk["statements"]}
    assert "Q42$RENAMED" in ids and not any(r[1] == "Q42" and r[2] == dropped for r in bulk["statements"])


def test_loading_over_a_store_that_holds_the_entities_gives_the_same_store(tmp_path: Path) -> None:
    """Every key of the second load is already there: each write's anti-join against the
    table leaves out every row, and the entities' upserts keep the last copy."""
    bulk, rows = _both(SAMPLE, into=SAMPLE)
    assert bulk == rows


def _entity(ident: str, claims: dict[str, str]) -> dict[str, object]:
    """An item whose P361 statements are ``{statement id: value}``."""
    return {"type": "item", "id": ident, "claims": {"P361": [
        {"id": sid, "rank": "normal", "mainsnak": {"snaktype": "value", "property": "P361", "datavalue": {
            "type": "wikibase-entityid", "value": {"id": value}}}} for sid, value in claims.items()]}}


@pytest.mark.parametrize("workers", [0, 2])
def test_a_statement_id_of_another_entitys_form_loads_as_row_at_a_time(
        workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Q1 holds a statement whose id is Q2's form, then Q2 holds the same id, each in a
    batch of its own: the first one written stays (as an anti-join keeps it), so the load
    cannot skip the key check once it meets such an id; Q3 repeats later, whole."""
    monkeypatch.setattr(json_dump, "BULK_ROWS", 1)
    monkeypatch.setattr(json_rows, "BATCH_ROWS", 1)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 64)  # a line each
    entities = [_entity("Q1", {"Q1$a": "Q5", "Q2$x": "Q6"}), _entity("Q3", {"Q3$c": "Q7"}),
                _entity("Q2", {"Q2$x": "Q8", "q2$y": "Q9"}), _entity("Q3", {"Q3$d": "Q9"})]
    dump = tmp_path / "shared.json"
    dump.write_text("[\n" + ",\n".join(json.dumps(e) for e in entities) + "\n]\n")
    bulk, rows = _both(dump, workers=workers)
    assert bulk == rows
    objects = {r[0]: r[6] for r in bulk["statements"]}
    assert objects == {"Q1$a": "Q5", "Q2$x": "Q6", "q2$y": "Q9", "Q3$d": "Q9"}


def test_a_load_skips_the_key_check_until_it_cannot() -> None:
    """BulkLoad writes without reading the tables while every statement id has its
    subject's form (any case), and with :meth:`Store.write_arrow` from the first that has not;
    a load into a store holding a key that is not its entity's is checked from the start."""
    def tables(subject: str, sid: str) -> dict[str, pa.Table]:
        return {"entities": pa.table({"id": [subject]}), "statements": pa.table({
            "statement_id": [sid], "subject": [subject], "property": ["P31"], "rank": ["normal"],
            "snaktype": ["novalue"]})}

    with Store() as store:
        load = store.bulk_load()
        for subject, sid, prefixed in (("Q1", "Q1$a", True), ("Q2", "q2$b", True), ("Q3", "Q1$a", False),
                                       ("Q4", "Q4$d", True)):
            load.write(tables(subject, sid), replace={subject}, prefixed=prefixed)
        assert load.checked == 2
        assert sorted(store.con.execute("SELECT statement_id, subject FROM statements").fetchall()) == [
            ("Q1$a", "Q1"), ("Q4$d", "Q4"), ("q2$b", "Q2")]
        again = store.bulk_load()  # every key of the store is its entity's
        again.write(tables("Q5", "Q5$e"), replace={"Q5"}, prefixed=True)
        assert again.checked == 0
        head = "statement_id, property, snak_hash, snaktype"
        loose = [("statements", "('Q9$x', 'Q1', 'P31', 'normal', 'novalue')"),
                 ("statements", "('Q7$x', 'Q7', 'P31', 'normal', 'novalue')"),
                 ("qualifiers", "('Q6$x', 'P31', 'h', 'novalue')"),
                 ("reference_snaks", "('Q6$x', 'r', 'P31', 'h', 'novalue')"),
                 ("statement_sources", "('Q6$x', 's')")]
        columns = {"statements": "statement_id, subject, property, rank, snaktype", "qualifiers": head,
                   "reference_snaks": head.replace("property", "reference_hash, property"),
                   "statement_sources": "statement_id, source_id"}
        for table, row in loose:  # Q9$x is not Q1's form; Q7 has no entity row; no statement Q6$x
            store.con.execute(f"INSERT INTO {table} ({columns[table]}) VALUES {row}")
            assert not store.bulk_load().unchecked, (table, row)
            store.con.execute(f"DELETE FROM {table} WHERE statement_id LIKE '%$x'")
            assert store.bulk_load().unchecked


def _recorded_loads(monkeypatch: pytest.MonkeyPatch) -> list[BulkLoad]:
    """Every :class:`BulkLoad` a :meth:`Store.bulk_load` gives from now on, in order."""
    loads: list[BulkLoad] = []
    bulk_load = Store.bulk_load

    def recorded(store: Store, **options: Any) -> BulkLoad:
        loads.append(bulk_load(store, **options))
        return loads[-1]

    monkeypatch.setattr(Store, "bulk_load", recorded)
    return loads


def test_a_second_dump_overlapping_the_first_loads_as_row_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store holds the first two thirds of the sample (each key its entity's), the load
    brings the last two: the entities of the middle third are replaced, the rest added,
    without a key check."""
    entities = _sample_entities()
    third = len(entities) // 3
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    for path, part in ((first, entities[: 2 * third]), (second, entities[third:])):
        path.write_text("[\n" + ",\n".join(json.dumps(e) for e in part) + "\n]\n")
    loads = _recorded_loads(monkeypatch)
    bulk, rows = _both(second, into=first)
    assert bulk == rows
    assert loads and all(load.unchecked and load.checked == 0 for load in loads)  # no key check
    assert len(bulk["entities"]) + len(bulk["properties"]) == len({e["id"] for e in entities})


def _rekey(store: Store) -> None:
    """Give an empty store the fact tables of a store written before they lost their
    primary-key indexes (:data:`KEYED_SCHEMA`)."""
    for table in INDEXLESS:
        store.con.execute(f"DROP TABLE {table}")
    store.con.execute(KEYED_SCHEMA)
    assert store.con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'statements' "
                             "AND constraint_type = 'PRIMARY KEY'").fetchall()[0][0] == 1


def _batch(ids: list[str], objects: list[str]) -> dict[str, pa.Table]:
    return {"statements": pa.table({
        "statement_id": ids, "subject": [i.split("$")[0] for i in ids], "property": ["P31"] * len(ids),
        "rank": ["normal"] * len(ids), "snaktype": ["value"] * len(ids), "value_type": ["item"] * len(ids),
        "object": objects})}


@pytest.mark.parametrize("second", [
    (["Q1$a", "Q3$c"], ["Q9", "Q10"]),  # a key already in the store
    (["Q4$d", "Q4$d"], ["Q11", "Q11"]),  # a key twice in the batch
    (["Q5$e", "Q6$f"], ["Q12", "Q13"]),  # new keys only
])
def test_write_arrow_matches_the_row_write_on_a_keyed_and_an_indexless_store(
        second: tuple[list[str], list[str]]) -> None:
    """write_arrow, with and without the caller's promise of unique keys (made only for a
    batch that repeats none), keeps what write keeps, on the store's indexless tables and
    on a store with the old primary keys."""
    got = []
    promise = len(set(second[0])) == len(second[0])
    for keyed in (False, True):
        for how in ("row", "arrow", *(["arrow, unique"] if promise else [])):
            with Store() as store:
                if keyed:
                    _rekey(store)
                for batch in (_batch(["Q1$a", "Q2$b"], ["Q7", "Q8"]), _batch(*second)):
                    if how != "row":
                        store.write_arrow(batch, unique=["statements"] if how == "arrow, unique" else ())
                    else:
                        width = len(TABLE_COLUMNS["statements"])
                        store.write(Batch(statements=[(*r.values(), *[None] * (width - len(r)))
                                                      for r in batch["statements"].to_pylist()]))
                got.append(contents(store, ("statements",)))
    assert len(got) == (6 if promise else 4) and all(g == got[0] for g in got)
    assert len(got[0]["statements"]) == len({r[0] for r in got[0]["statements"]})


def test_an_interrupted_load_keeps_every_batch_handed_to_the_store_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of the sample: the batches parsed before it are in the store
    file, each entity with all its statements; nothing half-written."""
    with Store() as full:
        load_json_dump(SAMPLE, full)
        expected = {sid: subject for sid, subject, *_ in contents(full, ("statements",))["statements"]}
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 4096)  # chunks are handed over whole
    add, add_typed, seen = json_rows.EntityRows.add, json_typed.add, []

    def count(ident: str) -> None:
        if ident.startswith("Q"):
            seen.append(ident)
            if len(seen) == 10:
                raise KeyboardInterrupt

    def interrupt_at_the_tenth_item(self: json_rows.EntityRows, entity: dict[str, object]) -> None:
        count(str(entity["id"]))
        add(self, entity)

    def interrupt_typed(rows: json_rows.EntityRows, entity: json_typed.Entity) -> bool:
        count(entity.id)
        return add_typed(rows, entity)

    monkeypatch.setattr(json_rows.EntityRows, "add", interrupt_at_the_tenth_item)
    monkeypatch.setattr(json_typed, "add", interrupt_typed)  # the path regular lines take
    db = tmp_path / "interrupted.duckdb"
    with Store(db) as store, pytest.raises(KeyboardInterrupt):
        load_json_dump(SAMPLE, store)
    with Store(db) as store:
        stored = {sid: subject for sid, subject, *_ in contents(store, ("statements",))["statements"]}
    subjects = set(stored.values())
    assert stored and subjects <= set(seen[:9])
    assert stored == {sid: s for sid, s in expected.items() if s in subjects}


def _load_into(path: str, db: str) -> None:
    with Store(db) as store:
        load_json_dump(path, store, workers=2)


def test_a_daemonic_process_which_may_not_fork_parses_in_process(tmp_path: Path) -> None:
    """A multiprocessing pool worker (daemonic) may have no children: the loader parses
    there itself rather than failing."""
    ctx = multiprocessing.get_context("spawn")
    db = tmp_path / "daemon.duckdb"
    proc = ctx.Process(target=_load_into, args=(str(SAMPLE), str(db)), daemon=True)
    proc.start()
    proc.join(timeout=120)
    assert proc.exitcode == 0
    with Store(db, read_only=True) as loaded, Store() as here:
        load_json_dump(SAMPLE, here)
        assert contents(loaded) == contents(here)


def test_duckdb_inserts_on_one_thread_and_checkpoints_each_batch_unvacuumed_and_gets_its_settings_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse workers keep the cores busy: each batch is written with DuckDB on one
    thread, without merging row groups (whose rewrite grew with the store, and took a
    quarter of an in-memory load), into a store file checkpointed as it commits, within a
    memory budget, reconnecting every few batches with the same settings; the settings
    DuckDB had are back after the load, also after a failed one, and a memory limit set by
    hand is left alone."""
    seen: list[tuple[object, ...]] = []
    events: list[str] = []  # batches written and reconnects, in order
    write = BulkLoad.write
    settings = ("SELECT current_setting('threads'), current_setting('checkpoint_threshold'), "
                "current_setting('max_vacuum_tasks'), current_setting('memory_limit')")

    def recording(self: BulkLoad, *args: object, **kwargs: object) -> None:
        seen.append(self.store.con.execute(settings).fetchall()[0])
        events.append("batch")
        write(self, *args, **kwargs)  # type: ignore[arg-type]

    def reconnecting(self: Store) -> bool:
        events.append("reconnect")
        return reconnect(self)

    def reopening(self: Store) -> bool:
        events.append("reopen")
        return reopen(self)

    def evicting(con: duckdb.DuckDBPyConnection, restore: str) -> None:  # DuckDB's cache let go
        events.append("evict")
        evict(con, restore)

    reconnect, reopen, evict = Store.reconnect, Store.reopen, store_memory.evict_cache
    monkeypatch.setattr(BulkLoad, "write", recording)
    monkeypatch.setattr(Store, "reconnect", reconnecting)
    monkeypatch.setattr(Store, "reopen", reopening)
    monkeypatch.setattr(store_memory, "evict_cache", evicting)
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)
    monkeypatch.setattr(store_load, "RECONNECT_BATCHES", 3)
    monkeypatch.setattr(store_load, "REOPEN_BATCHES", 6)
    bad = tmp_path / "bad.json"
    bad.write_text(SAMPLE.read_text().replace('"claims"', '"claims" oops', 1))
    budget = f"{DEFAULT_BULK_LOAD_MEMORY_MB:.1f} MiB"
    with Store(tmp_path / "s.duckdb") as store:
        opened = memory_limit(store.con)
        store.con.execute("SET threads = 3")
        store.con.execute("SET checkpoint_threshold = '32MiB'")
        store.con.execute("SET max_vacuum_tasks = 7")
        load_json_dump(SAMPLE, store, workers=2)
        # the load's settings held through its attaches and reopenings
        assert len(seen) > 6 and set(seen) == {(1, "4.0 MiB", 0, budget)}
        # the database opened again after every sixth batch, the file attached again after
        # the other third ones, and DuckDB's cache evicted after every batch not reopened
        del events[:events.index("batch")]  # the key check's blocks, let go before the first batch
        batches = events.count("batch")
        assert events[:13] == (["batch", "evict"] * 2 + ["batch", "reconnect", "evict"]
                               + ["batch", "evict"] * 2 + ["batch", "reopen"])
        assert events.count("reopen") == batches // 6
        assert events.count("reconnect") == batches // 3 - batches // 6
        assert events.count("evict") == batches - batches // 6
        assert store.con.execute(settings).fetchall()[0] == (3, "32.0 MiB", 7, opened)
        with pytest.raises(BadDumpLine):
            load_json_dump(bad, store, workers=2)
        assert store.con.execute(settings).fetchall()[0] == (3, "32.0 MiB", 7, opened)
        seen.clear()
        events.clear()
        store.con.execute("SET memory_limit = '1GiB'")
        load_json_dump(SAMPLE, store, workers=2)
        assert seen and set(seen) == {(1, "4.0 MiB", 0, "1.0 GiB")}
        assert "evict" not in events  # a limit set by hand bounds the cache itself
        assert store.con.execute(settings).fetchall()[0] == (3, "32.0 MiB", 7, "1.0 GiB")
    seen.clear()
    with Store() as store:  # in memory: nothing to spill, and no batch's rows merged and compressed
        opened = memory_limit(store.con)
        load_json_dump(SAMPLE, store, workers=2)
        assert seen and set(seen) == {(1, "16.0 MiB", 0, opened)}
        assert store.con.execute(settings).fetchall()[0][2] == 100


def test_a_load_into_a_store_file_leaves_nothing_for_its_close_to_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is checkpointed as it commits only once DuckDB's log passes the load's
    threshold, so the last batches could wait in the write-ahead log for the store's close,
    whose checkpoint merges the load's row groups (DuckDB's vacuum, held off during the
    load) unbudgeted: after the 40x synthetic dump's load in batches of 50,000 statements,
    that close peaked at 1.49 GB. A load ends with a checkpoint of its own, under its own
    settings: the log is empty, and DuckDB merged nothing meanwhile."""
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)
    monkeypatch.setattr(store_load, "RECONNECT_BATCHES", 10**6)  # the watched connection stays
    monkeypatch.setattr(store_load, "REOPEN_BATCHES", 10**6)
    wal = tmp_path / "s.duckdb.wal"
    vacuum: list[str] = []
    with Store(tmp_path / "s.duckdb") as store:
        store.con = Watched(store.con, "CHECKPOINT", vacuum, "max_vacuum_tasks")  # type: ignore[assignment]
        load_json_dump(SAMPLE, store, workers=2)
        assert not wal.exists() or wal.stat().st_size == 0
        assert vacuum == ["0"]  # max_vacuum_tasks when the load's checkpoint ran
        assert setting(store.con, "max_vacuum_tasks") == str(STORE_VACUUM_TASKS)  # set back


def test_the_key_check_of_a_store_file_runs_within_its_memory_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass over the keys a store already holds builds hash tables of its statement
    tables: in a store file it runs held to DEFAULT_KEY_CHECK_MEMORY_MB (spilling beyond it),
    and the store's own limit is back afterwards; an in-memory store is left alone."""
    from chaingraph import store_load
    from chaingraph.settings import DEFAULT_KEY_CHECK_MEMORY_MB

    held = f"{DEFAULT_KEY_CHECK_MEMORY_MB:.1f} MiB"
    # the check itself, replaced by one that says whether it ran under the budget
    monkeypatch.setattr(store_load, "_LOOSE_KEYS", f"SELECT current_setting('memory_limit') <> '{held}'")
    with Store(tmp_path / "s.duckdb") as store:
        opened = store.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        assert opened != held
        assert store.bulk_load().unchecked
        assert store.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == opened
    with Store() as store:
        assert not store.bulk_load().unchecked


def test_a_key_check_that_outgrows_its_budget_checks_every_batch_instead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a large store DuckDB's spilling anti-joins can need more than the key check's
    budget (codex-m's 40x store failed at 64 MiB): the load then writes every batch with the
    anti-join against the table, and the store is the one the row-at-a-time loader gives."""
    with Store(tmp_path / "s.duckdb") as store:
        load_json_dump(SAMPLE, store, row_at_a_time=True)
        assert store.bulk_load().unchecked  # the keys are shown within the budget
        monkeypatch.setattr(store_load, "DEFAULT_KEY_CHECK_MEMORY_MB", 1)
        loads = _recorded_loads(monkeypatch)
        load_json_dump(SAMPLE, store, workers=0)
        got = everything(store)
    # out of memory, the check showed nothing: the load wrote every batch checked
    assert len(loads) == 1 and not loads[0].unchecked and loads[0].checked == loads[0].written > 0
    with Store() as store:
        for _ in range(2):
            load_json_dump(SAMPLE, store, row_at_a_time=True)
        assert got == everything(store)


def _entity_with(ident: str, sids: list[str]) -> str:
    claims = [{"id": sid, "rank": "normal", "mainsnak": {"snaktype": "value", "property": "P31",
               "datavalue": {"type": "wikibase-entityid", "value": {"id": "Q5"}}}} for sid in sids]
    return json.dumps({"type": "item", "id": ident, "claims": {"P31": claims}})


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("entities", [
    [("Q1", ["Q1$a", "Q1$a", "Q1$b"]), ("Q2", ["Q2$c"])],  # twice in one entity
    [("Q1", ["Q1$a"]), ("Q2", ["Q2$c"]), ("Q3", ["Q2$c", "Q3$d"])],  # in two entities (another's form)
])
def test_a_statement_id_twice_in_one_entity_or_across_entities_is_stored_once(
        tmp_path: Path, workers: int, entities: list[tuple[str, list[str]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's statement ids are not counted when each part's are distinct and every
    id starts with its entity's: an id repeated inside one entity, or (of another entity's
    form) in two entities of one batch, is still stored once, as row at a time."""
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 64)  # one entity a part, the parts one batch
    dump = tmp_path / "dup.json"
    dump.write_text("[\n" + ",\n".join(_entity_with(*e) for e in entities) + "\n]\n")
    bulk, rows = _both(dump, workers=workers)
    assert bulk == rows
    assert len(bulk["statements"]) == len({sid for _, sids in entities for sid in sids})


@pytest.mark.parametrize("how", ["reconnect", "reopen"])
def test_a_load_that_attaches_or_reopens_after_every_batch_gives_the_same_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Into a store file the load attaches the file again every few batches, and opens its
    database again every few more (here either after each): the store is the one an
    in-memory load gives."""
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10)
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)
    monkeypatch.setattr(store_load, "RECONNECT_BATCHES", 1 if how == "reconnect" else 10**6)
    monkeypatch.setattr(store_load, "REOPEN_BATCHES", 1 if how == "reopen" else 10**6)
    reconnects = []
    reconnect = getattr(Store, how)

    def counting(self: Store) -> bool:
        reconnects.append(reconnect(self))
        return reconnects[-1]

    monkeypatch.setattr(Store, how, counting)
    with Store(tmp_path / "r.duckdb") as store, Store() as here:
        load_json_dump(SAMPLE, store, workers=2)
        assert len(reconnects) > 5 and all(reconnects)
        on_file = len(reconnects)
        load_json_dump(SAMPLE, here, workers=2)
        assert reconnects[on_file:] and not any(reconnects[on_file:])  # in memory: nothing to let go
        loaded, expected = everything(store), everything(here)
        assert loaded["statements"] and loaded == expected


def _entity_writes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of how a load writes entity rows: ``plain`` inserts (``check=False``: the
    table's primary key looks each id up) and ``upsert`` (a join with the whole table in
    DuckDB 2: ``Store._insert_from``'s upsert, or a JSON batch's ``INSERT … ON CONFLICT``).
    Both loaders write entity rows through these two."""
    calls = {"plain": 0, "upsert": 0}
    insert_from, insert_new = Store._insert_from, BulkLoad._insert_new

    def into(self: Store, table: str, *args: object, **kw: bool) -> None:
        if table == "entities":
            calls["plain" if kw.get("check") is False else "upsert"] += 1
        insert_from(self, table, *args, **kw)  # type: ignore[arg-type]

    def upsert(self: BulkLoad, table: str, data: pa.Table) -> list[str]:
        calls["upsert"] += table == "entities"
        return insert_new(self, table, data)

    monkeypatch.setattr(Store, "_insert_from", into)
    monkeypatch.setattr(BulkLoad, "_insert_new", upsert)
    return calls


@pytest.mark.parametrize("dump", ["json", "nt"])
def test_a_dump_loads_its_entities_without_upserts_unless_the_store_holds_them(
        dump: str, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading into a new store file, every batch's (JSON) or chunk's (N-Triples) entity rows
    are plainly inserted. Loaded again, the store holds every entity: DuckDB refuses the plain
    insert, the batch is rolled back and upserted, and the store is the one a single load
    gives."""
    from chaingraph.sources.loaders import load

    monkeypatch.setattr(json_dump, "BULK_ROWS", 5_000)  # several batches
    path = shared_data / "world" / f"codex-s.{dump}.gz"
    calls = _entity_writes(monkeypatch)
    with Store(tmp_path / "once.duckdb") as store:
        load([path], store)
        once = everything(store)
    assert calls["plain"] >= (4 if dump == "json" else 1) and calls["upsert"] == 0
    with Store(tmp_path / "twice.duckdb") as store:
        load([path], store)
        calls.update(plain=0, upsert=0)
        load([path], store)
        assert calls["upsert"] >= 1
        assert everything(store) == once
    assert len(once["entities"]) > 1000


def _scattered_ids_dump(path: Path, entities: int) -> Path:
    """A JSON dump of ``entities`` items with nine-digit ids in no order (one ``P31``
    statement each): each batch's entity-index updates spread over the whole index."""
    import random

    ids = random.Random(5).sample(range(10**8, 10**9), entities)
    lines = []
    for n in ids:
        claim = {"mainsnak": {"snaktype": "value", "property": "P31", "datatype": "wikibase-item",
                              "datavalue": {"type": "wikibase-entityid",
                                            "value": {"entity-type": "item", "numeric-id": 5, "id": "Q5"}}},
                 "type": "statement", "id": f"Q{n}$a", "rank": "normal"}
        label = {"en": {"language": "en", "value": f"e{n}"}}
        lines.append(json.dumps({"type": "item", "id": f"Q{n}", "labels": label, "claims": {"P31": [claim]}}))
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    return path


def _attempts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int | None]]:
    """Each attempt at writing a batch (``BulkLoad._write_once``), as the batches written
    before it and the budget held then (MiB; None without one)."""
    seen: list[tuple[int, int | None]] = []
    write_once = BulkLoad._write_once

    def attempt(self: BulkLoad, *args: Any, **kw: Any) -> None:
        seen.append((self.written, self._budget.held_mb if self._budget is not None else None))
        write_once(self, *args, **kw)

    monkeypatch.setattr(BulkLoad, "_write_once", attempt)
    return seen


def _loaded_as_without_a_budget(dump: Path, tmp_path: Path
                                ) -> tuple[FileReport, dict[str, list[tuple[object, ...]]]]:
    """Load ``dump`` into a new store file and check what a budgeted load must give: the
    store's own limit back afterwards, and the rows a load without a budget (row at a time,
    in memory, never raised) writes. Returns the file's report and the store's rows."""
    with Store(tmp_path / "s.duckdb") as store:
        opened = memory_limit(store.con)
        report = load_json_dump(dump, store, workers=2)
        assert memory_limit(store.con) == opened
        loaded = everything(store)
    with Store() as reference:
        assert load_json_dump(dump, reference, row_at_a_time=True).raised_memory_mb is None
        assert everything(reference) == loaded
    return report, loaded


def test_a_batch_that_does_not_fit_the_load_budget_is_written_again_under_a_larger_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB holds what a transaction changes of the entities' key index in memory; with ids
    in no order a batch's changes spread over all of it, and past some size a batch does not
    fit the load's budget (a JSON dump of 733 k entities in random order did not fit 36 MiB,
    and the load stopped). Held to 2 MiB here, a load of 20,000 such entities has its batch
    rolled back and written again under twice the budget, as often as it needs: every row is
    the one a load without a budget writes, the report says how far the budget went, and the
    store's own limit is back after it."""
    dump = _scattered_ids_dump(tmp_path / "scattered.json", 20_000)
    monkeypatch.setattr(store_load, "DEFAULT_BULK_LOAD_MEMORY_MB", 2)
    attempts = _attempts(monkeypatch)
    report, loaded = _loaded_as_without_a_budget(dump, tmp_path)
    assert report.raised_memory_mb is not None and report.raised_memory_mb > 2
    tried = [held for _, held in attempts]
    assert tried[0] == 2 and tried[-1] == report.raised_memory_mb  # doubled until a batch fitted
    assert all(b in (a, 2 * a) for a, b in itertools.pairwise(tried))
    batches = [written for written, _ in attempts]
    assert len(set(batches)) < len(batches)  # a batch written again
    assert len(loaded["entities"]) == 20_000


def test_a_load_out_of_memory_under_a_limit_set_by_hand_says_so_and_keeps_what_it_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit set by hand is the user's: the load does not raise it. When a batch does not
    fit, the error is DuckDB's out-of-memory error (a relation's query reports it as the
    aborted transaction it leaves, which said nothing of memory), and the batches before it
    stay in the store, whole."""
    from chaingraph.errors import StoreError

    dump = _scattered_ids_dump(tmp_path / "scattered.json", 20_000)
    monkeypatch.setattr(json_dump, "BULK_ENTITIES", 2_000)  # ten batches
    with Store(tmp_path / "s.duckdb") as store:
        store.con.execute("SET memory_limit = '4MiB'")
        # DuckDB runs out inserting the batch or committing it (its index merged then), and a
        # commit says which block it could not pin or allocate
        memory = (r"(Out of Memory Error|TransactionContext Error: Failed to commit: "
                  r"(failed to pin|could not allocate|failed to allocate))")
        with pytest.raises(StoreError, match=rf"^cannot write to store .*s\.duckdb: {memory}") as error:
            load_json_dump(dump, store, workers=2)
        assert "transaction is aborted" not in str(error.value)
        assert out_of_memory(error.value)
    with Store(tmp_path / "s.duckdb") as store:
        entities, statements, subjects = store.con.execute(
            "SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM statements), "
            "(SELECT count(DISTINCT subject) FROM statements)").fetchall()[0]
    assert 0 < entities < 20_000
    assert statements == subjects == entities  # whole batches: each entity with its statement


def test_a_batch_whose_index_holds_most_of_the_budget_raises_it_before_its_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit merges the batch's keys into the entities' index, and a batch whose commit runs
    out cannot be written again (its rows are let go before it): while the index holds more
    than ``INDEX_SHARE`` of the budget, the budget is raised inside the transaction, before the
    commit. With that share made tiny, the sample's first batch raises it, no batch is written
    twice, and the store is the one a load without a budget writes."""
    monkeypatch.setattr(store_load, "INDEX_SHARE", 0.001)
    monkeypatch.setattr(json_dump, "BULK_ROWS", 10)  # several batches
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)
    attempts = _attempts(monkeypatch)
    report, _ = _loaded_as_without_a_budget(SAMPLE, tmp_path)
    assert report.raised_memory_mb is not None and report.raised_memory_mb >= 2 * DEFAULT_BULK_LOAD_MEMORY_MB
    batches = [written for written, _ in attempts]
    assert len(batches) > 1 and batches == list(range(len(batches)))  # each batch once


def test_the_cli_says_when_a_load_held_a_larger_budget(runner: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``chaingraph load`` prints a note on stderr naming the file and the budget it held, and
    ``--format json`` gives it as ``raised_memory_mb`` (null when the load's own budget held)."""
    from chaingraph.cli import cli

    def load(store: str, *options: str) -> Any:
        return runner.invoke(cli, ["load", str(SAMPLE), "--store", str(tmp_path / store), *options])

    plain = load("a.duckdb", "--format", "json")
    assert plain.exit_code == 0 and json.loads(plain.stdout)["files"][0]["raised_memory_mb"] is None
    monkeypatch.setattr(store_load, "INDEX_SHARE", 0.001)  # the index holds too much of any budget
    raised = load("b.duckdb", "--format", "json")
    held = json.loads(raised.stdout)["files"][0]["raised_memory_mb"]
    assert raised.exit_code == 0 and held >= 2 * DEFAULT_BULK_LOAD_MEMORY_MB
    table = load("c.duckdb")
    assert table.exit_code == 0
    assert table.stderr == (f"note: {SAMPLE}: the entities' key index outgrew the load's DuckDB budget "
                            f"(entities out of id order keep all of it in memory); the load held {held} "
                            "MiB instead\n")
