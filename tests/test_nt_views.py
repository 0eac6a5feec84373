"""The vectorised N-Triples splitter agrees with the line-by-line regular expression: every
line it takes is a triple with the same three terms, and what it refuses goes the slow way;
blocks prepared on worker threads stage exactly what one block read in order would."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chaingraph.errors import BadDumpLine
from chaingraph.sources.loaders import load, ntriples
from chaingraph.sources.loaders.nt_roles import create_staging, parse_line_slow
from chaingraph.sources.loaders.nt_views import (
    ESCAPED,
    PLAIN,
    split_lines,
    surely_claims,
    surely_entity_values,
    surely_statements,
    views,
)
from chaingraph.sources.loaders.ntriples import _LITERAL, _SUFFIX
from chaingraph.store import Store

_LITERAL_RE, _SUFFIX_RE = re.compile(_LITERAL), re.compile(_SUFFIX)
_CLAIM_S = re.compile(r"<http://www\.wikidata\.org/entity/[QP][1-9][0-9]{0,11}>")
_CLAIM_O = re.compile(r"<http://www\.wikidata\.org/entity/statement/[QPLqpl][0-9]+-[^$]+>")

_IRIS = st.sampled_from(["<http://www.wikidata.org/entity/Q42>", "<http://a>", "<>", "<http://x/é>",
                         "<http://www.wikidata.org/entity/statement/Q42-A-B>", "<a b>", "<a\\u0041>",
                         "<a>b>"])
_BLANKS = st.sampled_from(["_:b0", "_:x", "_x", "_:", "_:a>"])
_LITERALS = st.builds(lambda body, suffix: f'"{body}"{suffix}',
                      st.text(alphabet='ab "\\.@<>é\t', max_size=8),
                      st.sampled_from(["", "@en", "@en-GB", "@", "@1", "^^<http://t>", "^^<a b>", " x"]))
_TERMS = st.one_of(_IRIS, _BLANKS, _LITERALS, st.text(alphabet="<>_: .\"a", max_size=6))
_SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t"])
_ENDS = st.sampled_from([" .", " .", ".", " . ", "", " ..", " .\r"])
_LINES = st.one_of(
    st.builds(lambda s, a, p, b, o, e: f"{s}{a}{p}{b}{o}{e}", st.one_of(_IRIS, _BLANKS), _SEPARATORS,
              _IRIS, _SEPARATORS, _TERMS, _ENDS),
    st.text(alphabet="<>_:. \"a#", max_size=12))


def _fast_terms(data: bytes) -> list[tuple[str, str, str] | None]:
    """What the fast path makes of each line (``None``: left for the slow path), with the
    literal checks the stager runs in DuckDB done here by Python's ``re``."""
    split = split_lines(data)
    out: list[tuple[str, str, str] | None] = []
    for i in range(split.lines):
        if not split.ok[i]:
            out.append(None)
            continue
        row = np.array([i])
        s, p, o = (views(split.buf, a[row], b[row], data).to_pylist()[0] for a, b in (
            (split.s_start, split.s_end), (split.p_start, split.p_end), (split.o_start, split.o_end)))
        suffix = views(split.buf, split.suffix_start[row], split.o_end[row], data).to_pylist()[0]
        bad_suffix = split.literal[i] == PLAIN and suffix and not _SUFFIX_RE.fullmatch(suffix)
        if bad_suffix or (split.literal[i] == ESCAPED and not _LITERAL_RE.fullmatch(o)):
            out.append(None)
        else:
            out.append((s, p, o))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=8))
@example(["<http://a> <http://b> <>> ."])  # an IRI ends at its first '>': the regex reads no triple
@example(["<http://a>> <http://b> <http://c> .", "<http://a> <http://b>> <http://c> ."])
@example(["_:a> <http://b> <http://c> .", "_:a <http://b> <c>d> .", "<a> <b> <c>d> ."])
@example(["<a\tb> <http://b> <http://c> .", "<http://a> <http://b> <c\td> .", '_:b\t<http://b> "x" .'])
def test_every_line_the_fast_path_takes_is_the_triple_the_regex_reads(lines: list[str]) -> None:
    data = "\n".join(lines).encode() + b"\n"
    for line, fast in zip(lines, _fast_terms(data)):
        if fast is not None:
            assert parse_line_slow(line.strip()) == fast, line


def test_the_common_shapes_take_the_fast_path() -> None:
    lines = ['<http://a> <http://b> "x y"@en .', "_:b1 <http://b> <http://c> .",
             '<http://a> <http://b> "say \\"hi\\""^^<http://t> .', "<http://a> <http://b> _:c .\r",
             '<http://a> <http://b> "" .']
    data = "\n".join(lines).encode()  # the last line without its newline
    assert _fast_terms(data) == [parse_line_slow(line.strip()) for line in lines]


_IDS = st.one_of(st.sampled_from(["Q42", "P31", "Q0", "X1", "Q", "Q123456789012", "Q1234567890123", "q1",
                                  "Q42-ABC", "Q-A", "Q42-", "Q42-a$b", "L1-F1-x", "Q1234567890123456-x"]),
                 st.text(alphabet="QP0123456789-x$", max_size=16))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_IDS, _IDS), min_size=1, max_size=6))
def test_surely_claims_never_vouches_for_an_id_the_regex_refuses(ids: list[tuple[str, str]]) -> None:
    lines = [f"<http://www.wikidata.org/entity/{e}> <http://www.wikidata.org/prop/P31> "
             f"<http://www.wikidata.org/entity/statement/{s}> ." for e, s in ids]
    data = "\n".join(lines).encode() + b"\n"
    split = split_lines(data)
    rows = np.flatnonzero(split.ok)
    for row, sure in zip(rows, surely_claims(split, rows)):
        s, _, o = parse_line_slow(lines[row]) or ("", "", "")
        exact = bool(_CLAIM_S.fullmatch(s) and _CLAIM_O.fullmatch(o))
        assert not sure or exact, lines[row]
        if ids[row][0] == "Q42" and ids[row][1] == "Q42-ABC":
            assert sure


@pytest.fixture(scope="module")
def codex_s_lines(shared_data: Path) -> list[bytes]:
    return gzip.decompress((shared_data / "world" / "codex-s.nt.gz").read_bytes()).split(b"\n")


def _content(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    return {t: sorted(store.con.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
            for t in ("statements", "qualifiers", "reference_snaks", "entities", "properties")}


def _append_every(monkeypatch: pytest.MonkeyPatch, size: int | None) -> list[int]:
    """Staged rows go to DuckDB every ``size`` bytes from the first on (``None``: as they do,
    held until :data:`~ntriples.HOLD_BYTES`); returns a list that counts the appends."""
    appends: list[int] = []
    insert = ntriples._Stager._insert

    def counted(self: ntriples._Stager, pending: dict[str, Any]) -> None:
        appends.append(len(pending))
        insert(self, pending)

    monkeypatch.setattr(ntriples._Stager, "_insert", counted)
    if size is not None:
        monkeypatch.setattr(ntriples, "HOLD_BYTES", size)
        monkeypatch.setattr(ntriples, "APPEND_BYTES", size)
    return appends


@pytest.mark.parametrize("append_bytes", [None, 1 << 12])
def test_small_blocks_on_worker_threads_give_the_store_one_block_gives(
        codex_s_lines: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        append_bytes: int | None) -> None:
    """Also whether the staged rows were appended to DuckDB all along (small appends) or held
    and used as they are (the file stages less than HOLD_BYTES): the same store."""
    path = tmp_path / "codex-s.nt"
    path.write_bytes(b"\n".join(codex_s_lines))
    with Store() as store:
        load([path], store)
        whole = _content(store)
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 16)  # ~600 blocks, prepared two at a time
    appends = _append_every(monkeypatch, append_bytes)  # small: appends on their thread all along
    with Store() as store:
        load([path], store)
        assert _content(store) == whole
        assert len(whole["statements"]) == 39_985
        staging = "LIKE '\\_cg\\_%' ESCAPE '\\'"
        left = store.con.execute(f"SELECT view_name FROM duckdb_views() WHERE view_name {staging} UNION ALL "
                                 f"SELECT table_name FROM duckdb_tables() WHERE table_name {staging}"
                                 ).fetchall()
        assert left == []  # the staging is gone, held or not
    assert (len(appends) > 100) if append_bytes else appends == []


def test_staging_holds_a_block_per_worker_and_one_more(codex_s_lines: list[bytes], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks read but not yet committed: one per worker and the next one waiting, so no
    worker waits and no more blocks (with their arrays) are held."""
    path = tmp_path / "codex-s.nt"
    path.write_bytes(b"\n".join(codex_s_lines))
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 16)
    read, committed, most = [0], [0], [0]
    blocks, commit = ntriples.read_blocks_into, ntriples._Stager.commit

    def counted_blocks(*args: Any, **kwargs: Any) -> Any:
        for block in blocks(*args, **kwargs):
            read[0] += 1
            most[0] = max(most[0], read[0] - committed[0])
            yield block

    def counted_commit(self: ntriples._Stager, *args: Any, **kwargs: Any) -> int:
        committed[0] += 1
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(ntriples, "read_blocks_into", counted_blocks)
    monkeypatch.setattr(ntriples._Stager, "commit", counted_commit)
    with Store() as store:
        load([path], store)
        assert store.statement_count() == 39_985
    assert read[0] == committed[0] > 100
    assert most[0] == ntriples.STAGING_THREADS + 1


@pytest.mark.parametrize("append_bytes", [None, 1 << 12])
def test_bad_lines_in_later_blocks_stop_or_count_exactly(codex_s_lines: list[bytes], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        append_bytes: int | None) -> None:
    monkeypatch.setattr(ntriples, "BLOCK_BYTES", 1 << 16)
    _append_every(monkeypatch, append_bytes)
    broken = b"<http://www.wikidata.org/entity/Q1> <broken"
    bad_at = [60_000, 60_001, 150_000]  # 0-based positions in the original lines
    lines = list(codex_s_lines)
    for shift, at in enumerate(bad_at):
        lines.insert(at + shift, broken)
    path = tmp_path / "broken.nt"
    path.write_bytes(b"\n".join(lines))
    before = tmp_path / "before.nt"  # what a load that stops at the first bad line keeps
    before.write_bytes(b"\n".join(codex_s_lines[:bad_at[0]]))
    with Store() as store:
        load([before], store)
        kept = _content(store)
    with Store() as store:
        with pytest.raises(BadDumpLine, match=rf"broken\.nt:{bad_at[0] + 1}:"):
            load([path], store)
        assert _content(store) == kept
    with Store() as store:
        report = load([path], store, skip_bad_lines=True)
        assert report.files[0].bad_lines == 3
        assert [e.split(": ")[0] for e in report.files[0].bad_line_examples] == [
            f"{path}:{at + shift + 1}" for shift, at in enumerate(bad_at)]
        assert store.counts()["statements"] == 39_985


_VALUE = re.compile(r"<http://www\.wikidata\.org/entity/[QPLEM][1-9][0-9]{0,11}(?:-[FS][1-9][0-9]{0,11})?>")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_IDS, st.sampled_from(["L1-F1", "M5", "E12", "Q5>", "Q05"])), min_size=1,
                max_size=6))
def test_surely_entity_values_never_vouches_for_a_value_the_regex_refuses(ids: list[str]) -> None:
    terms = [f"<http://www.wikidata.org/entity/{i}>" for i in ids] + ["<http://www.wikidata.org/entity/Q5>"]
    data = "\n".join(f"_:s <http://www.wikidata.org/prop/statement/P31> {t} ." for t in terms).encode()
    split = split_lines(data)
    rows = np.flatnonzero(split.ok)
    sure = surely_entity_values(split.buf, split.o_start[rows], split.o_end[rows])
    for row, vouched in zip(rows, sure):
        assert not vouched or _VALUE.fullmatch(terms[row]), terms[row]
    assert sure[-1]


@pytest.mark.parametrize("obj", ['"7"', '"5462918"', "<x>", "_:b"])
def test_a_short_object_at_the_end_of_a_block_is_read_inside_the_block(obj: str, tmp_path: Path) -> None:
    """The checks read a term's bytes after the namespace it should start with: for an object
    shorter than that on a block's last line (an external id, say), they read past the block's
    padding and failed with an IndexError. They say "not sure" instead, and a block ending so
    loads."""
    line = (f"<http://www.wikidata.org/entity/statement/Q1-A> <http://www.wikidata.org/prop/statement/P1> "
            f"{obj} .")
    split = split_lines(line.encode())
    rows = np.flatnonzero(split.ok)
    assert not surely_entity_values(split.buf, split.o_start[rows], split.o_end[rows]).any()
    assert not surely_statements(split, split.o_start[rows], split.o_end[rows])[0].any()
    path = tmp_path / "end.nt"
    path.write_text(f"<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/P1> "
                    f"<http://www.wikidata.org/entity/statement/Q1-A> .\n{line}\n")
    store = Store()
    load([path], store)
    assert store.statement_count() == 1


class _CountingConnection:
    """A DuckDB connection that records, at each INSERT run through it, how many rows
    ``held`` (the pending rows of a stager) still holds."""

    def __init__(self, con: Any, held: dict[str, list[Any]]) -> None:
        self.con, self.held, self.inserts = con, held, list[int]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("INSERT"):
            self.inserts.append(sum(t.num_rows for tables in self.held.values() for t in tables))
        return self.con.execute(sql, *args)


def _label_rows(first: int, n: int) -> Any:
    """``n`` staged label rows (an Arrow table), lines ``first`` on."""
    import pyarrow as pa

    return pa.table({"line": pa.array(range(first, first + n), pa.int64()), "k": ["label"] * n,
                     "pid": pa.nulls(n, pa.string()), "s": [f"Q{i:06d}" for i in range(first, first + n)],
                     "o": ['"x"@en'] * n})


def test_held_rows_go_to_duckdb_a_piece_at_a_time_in_file_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first HOLD_BYTES of staged rows are appended APPEND_BYTES an INSERT, and each piece
    is taken out of the held rows as it goes: the held rows and their copy in DuckDB are not
    both whole at once. The rows arrive whole and in order."""
    import duckdb

    from chaingraph.sources.loaders.common import LineGuard

    with duckdb.connect() as raw:
        create_staging(raw, "_cg_t")
        held = [_label_rows(i * 1000, 1000) for i in range(6)]
        monkeypatch.setattr(ntriples, "APPEND_BYTES", 2 * held[0].nbytes)
        pending = {"terms": list(held)}
        con = _CountingConnection(raw, pending)
        stager = ntriples._Stager(lambda: con, "_cg_t", LineGuard("t.nt", skip=False))  # type: ignore[arg-type,return-value]
        stager._insert(pending)
        assert con.inserts == [4000, 2000, 0] and pending == {}  # each piece out before its INSERT
        lines = [r[0] for r in raw.execute("SELECT line FROM _cg_t_terms ORDER BY rowid").fetchall()]
        assert lines == list(range(6000))


@pytest.mark.parametrize(("read", "first_append"), [(0.01, 2), (0.5, 5), (0.9, 8), (None, 8)])
def test_a_file_that_will_stage_much_appends_its_rows_from_the_first_on(
        monkeypatch: pytest.MonkeyPatch, read: float | None, first_append: int) -> None:
    """Staged rows are held until HOLD_BYTES, unless the part of the file read so far says
    that it stages more than LARGE_FILE_HOLDS times that (1 % read): then they go APPEND_BYTES
    at a time from the first on. With half of the file read that shows once 5 of the 8
    pieces HOLD_BYTES takes are held (5 / 0.5 > 8); with 90 % read it never does, and a
    file of unknown size holds them too."""
    import duckdb

    from chaingraph.sources.loaders.common import LineGuard

    size = _label_rows(0, 100).nbytes
    monkeypatch.setattr(ntriples, "APPEND_BYTES", 2 * size)
    monkeypatch.setattr(ntriples, "HOLD_BYTES", 8 * size)
    with duckdb.connect() as con:
        create_staging(con, "_cg_t")
        stager = ntriples._Stager(con, "_cg_t", LineGuard("t.nt", skip=False),
                                  None if read is None else lambda: read)
        appended = []
        for i in range(10):
            stager._hold("terms", _label_rows(100 * i, 100))
            appended.append(con.execute("SELECT count(*) FROM _cg_t_terms").fetchall()[0][0])
        assert next(held for held, rows in enumerate(appended, 1) if rows) == first_append
        stager.append_held()
        lines = [r[0] for r in con.execute("SELECT line FROM _cg_t_terms ORDER BY rowid").fetchall()]
        assert lines == list(range(1000))
