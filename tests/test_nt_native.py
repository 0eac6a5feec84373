"""The compiled N-Triples loops (nt_scan.c) compute exactly what their numpy versions do:
the same split of every line the fast path takes, the same string views and prefix tests,
the same id checks and predicate numbers, on real dump blocks and on generated hostile
lines and terms; a load gives the same store either way; and the install builds the
library wherever there is a C compiler."""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chaingraph.sources.loaders import load, nt_native
from chaingraph.sources.loaders.nt_views import (
    _ENTITY_IRI,
    _PAD,
    _STATEMENT_IRI,
    Split,
    intern,
    same_terms,
    split_lines,
    starts_with,
    statement_dashes,
    surely_claims,
    surely_entity_values,
    surely_statements,
    views,
)
from chaingraph.store import Store

_FIELDS = ("s_end", "p_end", "o_start", "o_end", "literal", "suffix_start")


@pytest.fixture
def built() -> None:
    if nt_native.library() is None:
        pytest.skip("the compiled library is not built here (see the first test)")


@contextmanager
def numpy_only() -> Iterator[None]:
    """The numpy versions run inside (as without the library)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(nt_native, "library", lambda: None)
        yield


def _arrays(split: Split) -> dict[str, np.ndarray[Any, Any]]:
    return {name: np.copy(getattr(split, name)) for name in ("line_start", "line_end", "ok", *_FIELDS)}


def _assert_same_split(data: bytes) -> dict[str, np.ndarray[Any, Any]]:
    """Split ``data`` both ways, check that they agree, and return the compiled split."""
    native = _arrays(split_lines(data))
    with numpy_only():
        expected = _arrays(split_lines(data))
    for name in ("line_start", "line_end", "ok"):  # every line
        np.testing.assert_array_equal(native[name], expected[name], err_msg=name)
    ok = expected["ok"]
    for name in _FIELDS:  # the terms of the lines the fast path takes (the others mean nothing)
        np.testing.assert_array_equal(native[name][ok], expected[name][ok], err_msg=name)
    return native


def test_the_install_builds_the_library_wherever_there_is_a_c_compiler() -> None:
    compiler = nt_native.compiler()[0]
    if shutil.which(compiler) is None or os.environ.get(nt_native.ENV) == "0":
        pytest.skip(f"no C compiler ({compiler}) or {nt_native.ENV}=0: the loader runs on numpy")
    assert nt_native.library() is not None, f"{nt_native.library_path()} was not built: pip install -e ."


@pytest.mark.parametrize("world", ["codex-m", "wikipeople", "ilpc-large"])
@pytest.mark.usefixtures("built")
def test_real_dump_blocks_split_and_check_the_same(world: str, shared_data: Path) -> None:
    with gzip.open(shared_data / "world" / f"{world}.nt.gz") as stream:
        data = stream.read(4 << 20)
    data = data[: data.rfind(b"\n") + 1]
    assert _assert_same_split(data)["ok"].mean() > 0.99  # real lines: nearly all take the fast path
    split = split_lines(data)
    native = _checks(split)
    with numpy_only():
        expected = _checks(split)
    for name in native:
        np.testing.assert_array_equal(native[name], expected[name], err_msg=name)
    assert native["claims"].sum() > 1000 and native["entity values"].sum() > 1000  # real ids, vouched for
    assert native["same"].sum() > 0 and len(native["terms"]) > 50


def _checks(split: Split) -> dict[str, Any]:
    """The id checks, term comparisons and predicate numbers of every line the fast path took
    (each object against the next line's; all of them, whatever their predicate)."""
    rows = np.flatnonzero(split.ok)
    o0, o1 = split.o_start[rows], split.o_end[rows]
    sure, dash = surely_statements(split, o0, o1)
    length = np.minimum(o1 - o0, 70)[:-1]  # some beyond the compared width
    entry, terms = intern(split.buf, split.p_start[rows], split.p_end[rows], split.data)
    return {"claims": surely_claims(split, rows), "statements": sure, "dashes": dash,
            "node dashes": statement_dashes(split.buf, o0 + len(_STATEMENT_IRI)),
            "entity values": surely_entity_values(split.buf, o0, o1),
            "same": same_terms(split.buf, o0[:-1], o0[1:], length), "entry": entry, "terms": np.array(terms)}


_PIECES = st.sampled_from(["<http://www.wikidata.org/entity/Q42>", "<http://a>", "<>", "<a>b>", "<a b>",
                           "_:b0", "_:", "_x", '"x y"@en', '"a\\"b"', '"a"b"', '"x"^^<http://t>', '""',
                           "<http://www.wikidata.org/prop/direct/P31>", " ", "  ", "\t", ".", " .", "\r",
                           "\\", '"', ">", "<", "_", ":", "#", "é", "a"])


@settings(max_examples=500, deadline=None)
@given(lines=st.lists(st.lists(_PIECES, max_size=9).map("".join), min_size=1, max_size=12),
       newline_at_end=st.booleans())
@example(lines=["<http://a> <http://b> <http://c> .", '_:b <http://p> "x y"@en .\r', "", "# note"],
         newline_at_end=False)
@example(lines=["<a> <b> <c>d> .", "_:a> <b> <c> .", '<a> <b> "x"@en . ', "<a>\t<b> <c> ."],
         newline_at_end=True)
@example(lines=['<a> <b> "' + 'x" \\' * 3000 + '"@en .', '<a> <b> "' + "é " * 5000 + '"@en .',
                '<a> <b> <' + "x" * 9000 + "> .", "<" + "y" * 5000 + "> <b> <c>d> ."],
         newline_at_end=True)  # lines longer than 255 chunks of 16 bytes
@pytest.mark.usefixtures("built")
def test_generated_lines_split_the_same(lines: list[str], newline_at_end: bool) -> None:
    data = "\n".join(lines).encode() + (b"\n" if newline_at_end else b"")
    _assert_same_split(data)


@settings(max_examples=300, deadline=None)
@given(data=st.text(alphabet="ab<>:@ \x00", min_size=1, max_size=64).map(str.encode),
       ranges=st.lists(st.tuples(st.integers(0, 64), st.integers(0, 40)), min_size=1, max_size=20),
       prefix=st.sampled_from([b"", b"a", b"<a:", b"@", b"\x00\x00", b"ab<>:@ ab<>:@ "]))
@pytest.mark.usefixtures("built")
def test_views_and_prefixes_are_the_same(data: bytes, ranges: list[tuple[int, int]], prefix: bytes) -> None:
    buf = np.frombuffer(data + bytes(16), dtype=np.uint8)  # padded, as a Split's buffer is
    start = np.array([min(a, len(data)) for a, _ in ranges], dtype=np.int64)
    end = np.array([min(a + n, len(data)) for a, n in ranges], dtype=np.int64)
    got = (views(buf, start, end, data).to_pylist(), starts_with(buf, start, end, prefix).tolist())
    assert got == ([data[a:b].decode() for a, b in zip(start, end)],
                   [data[a:b].startswith(prefix) for a, b in zip(start, end)])
    with numpy_only():
        assert views(buf, start, end, data).to_pylist() == got[0]
        assert starts_with(buf, start, end, prefix).tolist() == got[1]


_ID_PIECES = st.sampled_from([_ENTITY_IRI, _STATEMENT_IRI, b"<http://www.wikidata.org/",
                              b"Q", b"P", b"L", b"E", b"M", b"q", b"l", b"x", b"0", b"1", b"9",
                              b"12345678901234", b"-", b"$", b">", b"<", b"ABC-DEF", b"\x00"])
#: an id-like term: a namespace, a letter, a digit run, a separator, the rest, the end
_ID_TERMS = st.tuples(
    st.sampled_from([_ENTITY_IRI, _STATEMENT_IRI, b"<http://www.wikidata.org/", b""]),
    st.sampled_from([b"Q", b"P", b"L", b"E", b"M", b"q", b"p", b"l", b"x", b""]),
    st.sampled_from([b"", b"0", b"1", b"42", b"01", b"1x2", b"9" * 12, b"1" * 13, b"1" * 15, b"1" * 16]),
    st.sampled_from([b"", b"-", b"$", b"x"]), st.sampled_from([b"", b"A", b"AB-C", b"A$B", b"-"]),
    st.sampled_from([b">", b"", b">>"])).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(terms=st.lists(st.one_of(_ID_TERMS, st.lists(_ID_PIECES, max_size=6).map(b"".join)), min_size=1,
                      max_size=16),
       pairs=st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15)), min_size=1, max_size=16))
@example(terms=[_STATEMENT_IRI + b"Q42-ABC-DEF>", _STATEMENT_IRI + b"Q42-AB$C>",
                _ENTITY_IRI + b"Q42>", _ENTITY_IRI + b"Q1234567890123>",
                _STATEMENT_IRI + b"Q123456789012345-A>", _ENTITY_IRI + b"M0>", b"x",
                _STATEMENT_IRI + b"Q1->", _ENTITY_IRI + b"Q1x2>", _STATEMENT_IRI + b"x1-A>"],
         pairs=[(2, 0), (3, 0), (2, 1), (5, 4), (0, 0), (6, 6), (8, 7), (2, 9)])
@pytest.mark.usefixtures("built")
def test_id_checks_term_comparisons_and_numbers_are_the_same(terms: list[bytes],
                                                            pairs: list[tuple[int, int]]) -> None:
    """Hostile terms (cut namespaces, long digit runs, ``$``, NUL bytes), the last right at
    the block's end (its checks read into the padding): subject and object of each pair."""
    data = b" ".join(terms)
    buf = np.frombuffer(data + bytes(_PAD), dtype=np.uint8)  # padded, as a Split's buffer is
    starts = np.cumsum([0] + [len(t) + 1 for t in terms[:-1]]).astype(np.int64)
    ends = starts + np.array([len(t) for t in terms], dtype=np.int64)
    si = np.array([i % len(terms) for i, _ in pairs], dtype=np.int64)
    oi = np.array([j % len(terms) for _, j in pairs], dtype=np.int64)
    unused = np.zeros(len(pairs), dtype=np.int64)
    split = Split(data=data, buf=buf, line_start=unused, line_end=unused, ok=unused == 0,
                  s_start=starts[si], s_end=ends[si], p_start=starts[oi], p_end=ends[oi], o_start=starts[oi],
                  o_end=ends[oi], literal=np.zeros(len(pairs), dtype=np.int8), suffix_start=ends[oi])
    rows = np.arange(len(pairs))

    def checks() -> list[Any]:
        length = ends[oi] - starts[oi]
        entry, numbered = intern(buf, starts[oi], ends[oi], data)
        sure, dash = surely_statements(split, starts, ends)
        same = same_terms(buf, starts[si], starts[oi], np.minimum(length, ends[si] - starts[si]), width=8)
        return [surely_claims(split, rows).tolist(), sure.tolist(), dash.tolist(),
                statement_dashes(buf, starts + len(_STATEMENT_IRI)).tolist(),
                surely_entity_values(buf, starts, ends).tolist(), same.tolist(), entry.tolist(), numbered]

    native = checks()
    with numpy_only():
        assert checks() == native
    first: dict[bytes, int] = {}  # the numbering, plainly
    for j in oi:
        first.setdefault(terms[j], len(first))
    assert native[-2:] == [[first[terms[j]] for j in oi], [t.decode() for t in first]]


@pytest.fixture(scope="module")
def numpy_store(shared_data: Path) -> Iterator[Store]:
    with Store() as store:
        with numpy_only():
            load([shared_data / "world" / "codex-s.nt.gz"], store)
        yield store


@pytest.mark.usefixtures("built")
def test_a_load_gives_the_same_store_either_way(numpy_store: Store, shared_data: Path) -> None:
    with Store() as store:
        load([shared_data / "world" / "codex-s.nt.gz"], store)
        assert store.counts()["statements"] == numpy_store.counts()["statements"] > 39_000
        for table in ("statements", "qualifiers", "reference_snaks", "entities", "properties"):
            query = f"SELECT * FROM {table} ORDER BY ALL"
            assert store.con.execute(query).fetchall() == numpy_store.con.execute(query).fetchall(), table


def test_a_failed_build_says_which_compiler_and_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CC", "false")
    with pytest.raises(nt_native.BuildFailed, match=r"cannot compile nt_scan\.c with false"):
        nt_native.compile_library(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left


@pytest.mark.usefixtures("built")
def test_a_library_of_another_source_is_never_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A library is found by the hash of the source it was built from: after the source
    changes, the library built before is not loaded (numpy runs until it is built again)."""
    source = tmp_path / "nt_scan.c"
    source.write_bytes(nt_native.SOURCE.read_bytes())
    monkeypatch.setattr(nt_native, "SOURCE", source)
    built = nt_native.compile_library()
    assert built.parent == tmp_path / "_native"
    assert nt_native.library.__wrapped__() is not None  # (uncached) the library of this source
    source.write_bytes(source.read_bytes() + b"\n/* changed */\n")
    assert nt_native.library_path() != built and built.exists()
    assert nt_native.library.__wrapped__() is None


def test_the_compiler_is_cc_when_set_else_one_that_is_installed(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("CC", "ccache gcc -m64")
    assert nt_native.compiler() == ["ccache", "gcc", "-m64"]
    monkeypatch.delenv("CC")
    clang = tmp_path / "clang"  # the only compiler installed: Python's (gcc here) is not
    clang.write_text("#!/bin/sh\n")
    clang.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(nt_native.sysconfig, "get_config_var", lambda name: "gcc -pthread")
    assert nt_native.compiler() == ["clang"]
    monkeypatch.setattr(nt_native.sysconfig, "get_config_var", lambda name: "clang -pthread")
    assert nt_native.compiler() == ["clang", "-pthread"]  # Python's, installed: with its flags
    monkeypatch.setenv("PATH", "")  # none installed: the plain name, which then fails to run
    assert nt_native.compiler() == ["cc"]
