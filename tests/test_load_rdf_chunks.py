"""An N-Triples dump built a chunk at a time gives the store the whole-file build gives, and a
file that is not in a dump's order is loaded again whole (see ``rdf_chunks``)."""

from __future__ import annotations

import gzip
import io
import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chaingraph.errors import BadDumpLine
from chaingraph.sources.loaders import load, ntriples, rdf_chunks, rdf_entities
from chaingraph.sources.loaders.compression import PAUSED, read_blocks_into
from chaingraph.store import Store

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "load"
TABLES = ("entities", "properties", "statements", "qualifiers", "reference_snaks", "statement_sources")
WD, P = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/"
DATETIME = "<http://www.w3.org/2001/XMLSchema#dateTime>"


def contents(store: Store) -> dict[str, list[str]]:
    """Every row of the content tables (provenance by statement: source ids are random)."""
    out = {}
    for table in TABLES:
        columns = "statement_id" if table == "statement_sources" else "*"
        out[table] = sorted(map(repr, store.con.execute(f"SELECT {columns} FROM {table}").fetchall()))
    return out


class Spy:
    """How many chunks were built and whether a load started again whole."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.chunks = 0
        self.undone = 0
        chunk, undo = rdf_chunks.ChunkedBuild.chunk, rdf_chunks.undo

        def counted_chunk(build: rdf_chunks.ChunkedBuild) -> Any:
            self.chunks += 1
            return chunk(build)

        def counted_undo(store: Store) -> None:
            self.undone += 1
            undo(store)

        monkeypatch.setattr(rdf_chunks.ChunkedBuild, "chunk", counted_chunk)
        monkeypatch.setattr(rdf_chunks, "undo", counted_undo)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> Spy:
    """Blocks of a few lines and chunks of 100 rows, so that small files have several (the
    reader reads a ring of blocks ahead of a chunk's end, which go into that chunk)."""
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 512)
    monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 100)
    return Spy(monkeypatch)


def _load(path: Path, store_path: Path) -> dict[str, list[str]]:
    with Store(store_path) as store:
        report = load([path], store)
        assert report.summary.statements == store.statement_count()
        assert not store.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_cg_%'"
                                     ).fetchall()[0][0]  # what the chunks kept is gone
        return contents(store)


def _whole(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    with monkeypatch.context() as m:
        m.setattr(rdf_chunks, "CHUNK_ROWS", 10**12)
        return _load(path, tmp_path / "whole.duckdb")


def _nt(*triples: tuple[str, str, str]) -> str:
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples)


def _item(q: int, *, value: int | None = None, node: str | None = None,
          pid: str = "P31") -> list[tuple[str, str, str]]:
    """An item with a label and one statement (an item value, or a date with value node ``node``)."""
    st = f"<{WD}statement/Q{q}-S{q}>"
    triples = [(f"<{WD}Q{q}>", "<http://www.w3.org/2000/01/rdf-schema#label>", f'"item {q}"@en'),
               (f"<{WD}Q{q}>", f"<{P}{pid}>", st)]
    if node is None:
        triples.append((st, f"<{P}statement/{pid}>", f"<{WD}Q{value or 5}>"))
    else:
        triples += [(st, f"<{P}statement/{pid}>", f'"1900-01-01T00:00:00Z"^^{DATETIME}'),
                    (st, f"<{P}statement/value/{pid}>", f"<http://www.wikidata.org/value/{node}>")]
    return triples


def _time_node(node: str) -> list[tuple[str, str, str]]:
    v, wb = f"<http://www.wikidata.org/value/{node}>", "http://wikiba.se/ontology#"
    return [(v, f"<{wb}timeValue>", f'"1900-01-01T00:00:00Z"^^{DATETIME}'),
            (v, f"<{wb}timePrecision>", '"9"^^<http://www.w3.org/2001/XMLSchema#integer>'),
            (v, f"<{wb}timeTimezone>", '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'),
            (v, f"<{wb}timeCalendarModel>", f"<{WD}Q1985727>")]


#: items between the triples a test keeps apart: ~450 staged rows in ~110 blocks of 512 bytes,
#: several chunks even with the blocks the reader reads ahead of a chunk's end
FILL = 150


def _filler(first: int, count: int) -> list[tuple[str, str, str]]:
    return [t for q in range(first, first + count) for t in _item(q)]


@pytest.mark.parametrize("name", ["values.nt", "codex-s"])
def test_a_dump_built_in_chunks_gives_the_whole_file_store(name: str, small_chunks: Spy, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           shared_data: Path) -> None:
    """Hand-written values (qualifiers, references, every value type) and a world dump
    (entities whose terms come at the end of the file, value nodes written once per use)."""
    path = {"values.nt": FIXTURES / "values.nt", "codex-s": shared_data / "world" / "codex-s.nt.gz"}[name]
    if name == "codex-s":
        monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 20)
        monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 5000)
    else:  # a small file: a chunk every few rows
        monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 4)
    chunked = _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 2 and small_chunks.undone == 0
    assert chunked == _whole(path, tmp_path, monkeypatch)



def test_a_chunked_load_opens_its_database_again_every_few_chunks(small_chunks: Spy, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every REOPEN_CHUNKS chunks the store's database is closed and opened again (what DuckDB
    keeps for as long as a database is open goes with it), and the store file is attached
    again after the others. Each time it is a new database, with the settings the load holds
    (its vacuum tasks), and the store is the whole file's."""
    from chaingraph import store_memory
    from chaingraph.store_load import VACUUM_TASKS

    monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 4)
    monkeypatch.setattr(rdf_chunks, "REOPEN_CHUNKS", 2)
    opened: list[tuple[bool, str]] = []
    reopen = store_memory.reopen

    def spy(con: Any) -> Any:
        new_con, new = reopen(con)
        opened.append((new, store_memory.setting(new_con, "max_vacuum_tasks")))
        return new_con, new

    monkeypatch.setattr(store_memory, "reopen", spy)
    chunked = _load(FIXTURES / "values.nt", tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 4 and len(opened) == small_chunks.chunks // 2
    assert opened == [(True, str(VACUUM_TASKS))] * len(opened)
    assert chunked == _whole(FIXTURES / "values.nt", tmp_path, monkeypatch)

def test_a_chunked_dump_gathers_its_entities_a_range_of_ids_at_a_time(
        small_chunks: Spy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_data: Path) -> None:
    """Passes of ~300 entities (codex-s: ~2,000, so several ranges), each gathered on the
    store file attached again, within the end's budget, and written before the next is
    gathered: the store is the one-pass store, and the items go in in id order."""
    from chaingraph.settings import DEFAULT_LOAD_END_MEMORY_MB
    from chaingraph.store_memory import memory_limit

    path = shared_data / "world" / "codex-s.nt.gz"
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 20)
    monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 5000)
    one_pass = _load(path, tmp_path / "one.duckdb")
    passes: list[tuple[str | None, str | None]] = []
    steps: list[str] = []
    limits: list[str] = []
    written: list[str] = []
    gather, write, reconnect = rdf_entities.gather_entities, rdf_entities.write_entities, Store.reconnect

    def spy_gather(store: Store, t: str, ids: tuple[str | None, str | None] = (None, None)) -> dict[str, int]:
        passes.append(ids)
        steps.append("gather")
        limits.append(memory_limit(store.con))
        return gather(store, t, ids)

    def spy_write(store: Store) -> None:
        written.extend(r[0] for r in store.con.execute("SELECT id FROM _cg_ent WHERE id[1] = 'Q' "
                                                       "ORDER BY rowid").fetchall())
        steps.append("write")
        write(store)

    def spy_reconnect(store: Store) -> bool:
        attached = reconnect(store)
        steps.append("attach" if attached else "not attached")
        return attached

    monkeypatch.setattr(rdf_entities, "ENTITIES_PER_PASS", 300)
    monkeypatch.setattr(rdf_entities, "gather_entities", spy_gather)
    monkeypatch.setattr(rdf_entities, "write_entities", spy_write)
    monkeypatch.setattr(Store, "reconnect", spy_reconnect)
    assert _load(path, tmp_path / "passes.duckdb") == one_pass
    assert len(passes) >= 4 and passes[0][0] is None and passes[-1][1] is None
    assert all(a[1] == b[0] for a, b in itertools.pairwise(passes))  # the ranges tile the ids
    first = steps.index("gather") - 1
    assert steps[first:first + 3 * len(passes)] == ["attach", "gather", "write"] * len(passes)
    assert len(written) == len(one_pass["entities"]) and written == sorted(written)
    assert set(limits) == {f"{float(DEFAULT_LOAD_END_MEMORY_MB)} MiB"}


def test_real_exports_built_in_chunks_give_the_whole_file_store(
        small_chunks: Spy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_data: Path) -> None:
    """Real WDQS exports (references, shared value nodes, each entity's statements after
    its links) in blocks of 64 KiB: they chunk as a dump does."""
    path = shared_data / "entities_full" / "wikidata_entities_rdf.nt.gz"
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 16)
    monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 5000)
    chunked = _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 2 and small_chunks.undone == 0
    assert chunked == _whole(path, tmp_path, monkeypatch)


def test_a_node_written_once_serves_later_chunks(small_chunks: Spy, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A dump writes a value node once: a statement chunks later that uses it gets its
    precision all the same."""
    path = tmp_path / "shared.nt"
    path.write_text(_nt(*_item(1, node="t1"), *_time_node("t1"), *_filler(100, FILL), *_item(2, node="t1")))
    chunked = _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 2 and small_chunks.undone == 0
    assert chunked == _whole(path, tmp_path, monkeypatch)
    # the year precision (9) and calendar come from the node the first chunk defined
    year = "'+1900-00-00T00:00:00Z', 9, 'Q1985727'"
    assert any("Q2$S2" in row and year in row for row in chunked["statements"])


@pytest.mark.parametrize("case", ["statement split", "node after its use", "statement twice",
                                  "statement twice, ids checked in parts"])
def test_a_file_not_in_dump_order_is_loaded_again_whole(case: str, small_chunks: Spy, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement's triple chunks away from its ``p:`` triple, a value node defined after a
    chunk used it, a statement written twice (found also where the ids are grouped in parts,
    as a large dump's are): the chunks cannot give the whole-file store, so the file is
    loaded again whole, into the store as it was."""
    from chaingraph import store_writes as store_module

    late = _item(1, node="t1")
    triples = {"statement split": [*late[:2], *_filler(100, FILL), *late[2:], *_time_node("t1")],
               "node after its use": [*late, *_filler(100, FILL), *_item(2, node="t1"), *_time_node("t1")],
               "statement twice": [*_item(1), *_filler(100, FILL), *_item(1)]}[case.split(",")[0]]
    parts: list[int] = []  # of each check of the store's statement ids
    repeats = store_module.repeats

    def counted_repeats(con: Any, relation: str, key: str, parts_: int = 1) -> bool:
        parts.append(parts_)
        return repeats(con, relation, key, parts_)

    monkeypatch.setattr(store_module, "repeats", counted_repeats)
    if case.endswith("in parts"):  # FILL + 2 statements: seven parts
        monkeypatch.setattr(store_module, "REPEAT_ROWS_PER_PART", 25)
    path = tmp_path / "unordered.nt"
    path.write_text(_nt(*triples))
    chunked = _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 1 and small_chunks.undone == 1
    if case.startswith("statement twice"):  # found by the check of the chunks' ids
        assert parts and parts[0] == (7 if case.endswith("in parts") else 1), parts
    assert chunked == _whole(path, tmp_path, monkeypatch)


def test_truthy_triples_across_chunks_count_as_in_the_whole_file(small_chunks: Spy, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``wdt:`` triple chunks away from the ``p:`` triple of its entity and property makes no
    statement, whether that one has a value (its statement is kept) or none (nothing is)."""
    wdt = f"{P}direct/"
    valueless = f"<{WD}statement/Q1-V>"
    path = tmp_path / "truthy.nt"
    path.write_text(_nt(
        (f"<{WD}Q1>", f"<{wdt}P31>", f"<{WD}Q5>"), (f"<{WD}Q1>", f"<{wdt}P40>", f"<{WD}Q6>"),
        (f"<{WD}Q1>", f"<{wdt}P19>", f"<{WD}Q7>"),  # truthy only: a statement of its own
        *_filler(100, FILL),
        *_item(1),  # P31 with a value
        (f"<{WD}Q1>", f"<{P}P40>", valueless),  # P40 without one
        (valueless, "<http://wikiba.se/ontology#rank>", "<http://wikiba.se/ontology#PreferredRank>")))
    chunked = _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 2 and small_chunks.undone == 0
    assert chunked == _whole(path, tmp_path, monkeypatch)
    truthy = [row for row in chunked["statements"] if "TRUTHY" in row]
    assert len(truthy) == 1 and "'P19'" in truthy[0]


def test_a_bad_line_in_a_later_chunk_keeps_every_line_before_it(small_chunks: Spy, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bad.nt"
    path.write_text(_nt(*_filler(100, FILL)) + "<http://a> not a triple\n" + _nt(*_filler(200, 3)))
    with pytest.raises(BadDumpLine, match=r"bad\.nt"):
        _load(path, tmp_path / "chunked.duckdb")
    assert small_chunks.chunks >= 2
    with Store(tmp_path / "chunked.duckdb") as store:
        chunked = contents(store)
    with monkeypatch.context() as m:
        m.setattr(rdf_chunks, "CHUNK_ROWS", 10**12)
        with pytest.raises(BadDumpLine), Store(tmp_path / "whole.duckdb") as store:
            load([path], store)
    with Store(tmp_path / "whole.duckdb") as store:
        assert chunked == contents(store) and store.statement_count() == FILL


def test_an_in_memory_store_or_one_with_statements_is_built_whole(small_chunks: Spy, tmp_path: Path) -> None:
    """A file that chunks into a new store file is built whole into an in-memory store and
    into a store file that has statements already."""
    path = tmp_path / "dump.nt"
    path.write_text(_nt(*_filler(100, FILL)))
    load([path], Store())
    assert small_chunks.chunks == 0
    with Store(tmp_path / "s.duckdb") as store:
        load([FIXTURES / "values.nt"], store)
        chunks = small_chunks.chunks
        load([path], store)
        assert small_chunks.chunks == chunks and store.statement_count() == 8 + FILL
    with Store(tmp_path / "new.duckdb") as store:  # the same file into a new store file does chunk
        load([path], store)
        assert small_chunks.chunks > chunks


def _blocks(gate: threading.Event) -> Iterator[Any]:
    data = gzip.compress(b"".join(b"line %d\n" % i for i in range(40)))
    with gzip.open(io.BytesIO(data)) as stream:
        yield from read_blocks_into(stream, 64, gate=gate)


def test_reading_pauses_after_the_blocks_read_and_goes_on() -> None:
    """Cleared, the gate stops the reader before its next block: what it read comes first,
    then PAUSED; set again, the rest of the stream follows, every line once."""
    gate = threading.Event()
    gate.set()
    seen: list[bytes] = []
    paused = 0
    for block in _blocks(gate):
        if block is PAUSED:
            paused += 1
            gate.set()
            continue
        seen.append(bytes(block))
        if len(seen) == 2:
            gate.clear()
    assert paused == 1
    assert b"".join(seen) == b"".join(b"line %d\n" % i for i in range(40))


def test_duckdb_appends_staged_rows_on_one_thread_and_builds_on_all(small_chunks: Spy, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """While a file is staged DuckDB only appends, beside the staging workers: on one thread
    (:data:`~chaingraph.sources.loaders.rdf.STAGING_DUCKDB_THREADS`); each chunk's build and
    the end get the threads the store had, and so does the store after the load."""
    from chaingraph.sources.loaders import rdf
    from chaingraph.store_memory import setting

    monkeypatch.setattr(rdf_chunks, "CHUNK_ROWS", 4)
    monkeypatch.setattr(ntriples, "HOLD_BYTES", 0)  # appended as staged, not held to the end
    monkeypatch.setattr(ntriples, "APPEND_BYTES", 0)
    seen: list[tuple[str, str]] = []
    insert, build = ntriples._Stager._insert, rdf._build_statements

    def inserting(stager: ntriples._Stager, pending: dict[str, Any]) -> None:
        seen.append(("append", setting(stager.con, "threads")))
        insert(stager, pending)

    def building(store: Store, *args: Any, **kwargs: Any) -> dict[str, int]:
        seen.append(("build", setting(store.con, "threads")))
        return build(store, *args, **kwargs)

    monkeypatch.setattr(ntriples._Stager, "_insert", inserting)
    monkeypatch.setattr(rdf, "_build_statements", building)
    with Store(tmp_path / "s.duckdb") as store:
        store.con.execute("SET threads = 3")
        load([FIXTURES / "values.nt"], store)
        assert setting(store.con, "threads") == "3"
    assert small_chunks.chunks >= 2
    assert {kind for kind, _ in seen} == {"append", "build"}
    assert all(threads == ("1" if kind == "append" else "3") for kind, threads in seen), seen


def test_a_load_attaches_the_store_file_again_within_its_budget(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The end of a file's load attaches the store file again (what DuckDB keeps of the row
    groups written goes), which checkpoints what DuckDB's log holds: under the load's memory
    budget, as the rest of the load. After the budget that checkpoint ran within the memory
    the store was opened with, and now and then peaked above the whole load. The store has its
    own limit back afterwards."""
    from chaingraph.settings import DEFAULT_LOAD_MEMORY_MB
    from chaingraph.store_memory import memory_limit

    limits: list[str] = []
    reconnect = Store.reconnect

    def reconnecting(store: Store) -> bool:
        limits.append(memory_limit(store.con))
        return reconnect(store)

    monkeypatch.setattr(Store, "reconnect", reconnecting)
    with Store(tmp_path / "s.duckdb") as store:
        opened = memory_limit(store.con)
        load([FIXTURES / "values.nt"], store)
        assert memory_limit(store.con) == opened
    assert limits and limits[-1] == f"{float(DEFAULT_LOAD_MEMORY_MB)} MiB" != opened, limits
