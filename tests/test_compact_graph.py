"""The compact graph against the rule it implements, written out in plain Python."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_chains_properties import World, build, worlds

from chaingraph.graph import EvidenceGraph
from chaingraph.keysort import argsort_keys, sort_keys


def _expected_neighbours(g: EvidenceGraph, v: int) -> list[tuple[str, str, str, bool]]:
    """(neighbour id, property, statement id, forward), sorted as DESIGN's deterministic order."""
    out = []
    for e in range(g.ecount()):
        s, o = g.edge_endpoints(e)
        if s == v:
            out.append((g.name(o), g.edge_property(e), g.edge_statement(e), True))
        if o == v:
            out.append((g.name(s), g.edge_property(e), g.edge_statement(e), False))
    return sorted(out)


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_neighbours_follow_id_property_statement_direction_order(world: World) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    for v in range(g.vcount()):
        got = [(g.name(u), g.edge_property(e), g.edge_statement(e), f) for u, e, f in g.neighbours(v)]
        assert got == _expected_neighbours(g, v)


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_edges_are_the_policy_steps_in_subject_property_object_statement_order(world: World) -> None:
    edges, literals, policy = world
    g = build(edges, literals, policy)
    items = sorted((s, p, o, sid) for sid, s, p, o in edges if policy.allows(p))
    lits = sorted((s, p, sid) for sid, s, p in literals if policy.allows(p) and policy.include_literals)
    got = [(g.name(a), g.edge_property(e), g.name(b), g.edge_statement(e))
           for e, (a, b) in ((e, g.edge_endpoints(e)) for e in range(g.ecount()))]
    assert got == [*items, *((s, p, f"{sid}#value", sid) for s, p, sid in lits)]
    assert sorted(n for n in (g.name(v) for v in range(g.vcount()))) == [g.name(v) for v in range(g.vcount())]


def test_mutual_statements_between_two_items_order_by_statement_id() -> None:
    g = EvidenceGraph.from_edges([("Q2$b", "Q2", "P26", "Q1"), ("Q1$c", "Q1", "P26", "Q2"),
                                  ("Q1$a", "Q1", "P26", "Q2")])
    assert [(g.edge_statement(e), f) for _u, e, f in g.neighbours(g.vertex("Q1"))] == [
        ("Q1$a", True), ("Q1$c", True), ("Q2$b", False)]


def test_arrays_in_and_tuples_in_build_the_same_graph() -> None:
    rows = [("s3", "Q3", "P1", "Q1"), ("s1", "Q1", "P2", "Q2"), ("s2", "Q1", "P31", "Q5")]
    a = EvidenceGraph.from_edges(rows)
    cols = [pa.array(c) for c in zip(*rows)]
    b = EvidenceGraph.from_arrays(*cols)
    assert [a.neighbours(v) for v in range(a.vcount())] == [b.neighbours(v) for v in range(b.vcount())]
    assert a.classes == b.classes == {"Q1": ("Q5",)}
    assert b.relation_codes.shape == (b.ecount(),)


@pytest.mark.parametrize("widths", [(3,), (20, 20, 6, 25), (62,), (40, 1, 62, 7)])
def test_argsort_keys_is_a_stable_lexsort_however_wide_the_keys(widths: tuple[int, ...]) -> None:
    rng = np.random.default_rng(sum(widths))
    n = 50_000
    # few distinct values per key, so that rows tie on some keys and stability shows
    keys = [rng.choice(rng.integers(0, 2**w, 40, dtype=np.int64), n) for w in widths]
    assert argsort_keys(keys).tolist() == np.lexsort(keys[::-1]).tolist()


def test_argsort_keys_takes_int32_keys_as_they_are() -> None:
    rng = np.random.default_rng(3)
    keys = [rng.integers(0, 2**31 - 1, 20_000).astype(np.int32), rng.integers(0, 5, 20_000).astype(np.int32)]
    assert argsort_keys(keys).tolist() == np.lexsort(keys[::-1]).tolist()


@pytest.mark.parametrize("widths", [(3,), (20, 20, 6), (24, 20, 6), (12, 40), (20, 20, 6, 25), (30, 30),
                                    (62,), (40, 1, 62, 7)])
def test_sort_keys_is_a_stable_lexsort_and_gives_the_keys_in_order(widths: tuple[int, ...],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """One word, one word per bucket of the first key's top bits, two words (rows by the
    first sort, then stable by rank) and wider keys, element-wise passes over blocks that
    do not divide the rows."""
    import chaingraph.keysort as keysort

    monkeypatch.setattr(keysort, "_BLOCK", 997)
    rng = np.random.default_rng(sum(widths))
    n = 50_000
    keys = [rng.choice(rng.integers(0, 2**w, 40, dtype=np.int64), n) for w in widths]
    keys[-1] = keys[-1].astype(np.int32) if widths[-1] < 31 else keys[-1]
    given = list(keys)
    order, ordered = sort_keys(given)
    expected = np.lexsort(keys[::-1])
    assert given == [] and order.tolist() == expected.tolist()
    for k, got in zip(keys, ordered, strict=True):
        assert got.dtype == k.dtype and np.array_equal(got, k[expected])


@pytest.mark.parametrize("widths", [(20, 20, 6), (24, 20, 6), (30, 30, 1), (62, 3)])
def test_sort_rows_can_write_the_sorted_keys_over_the_keys_it_read(widths: tuple[int, ...],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``out`` the keys themselves, each kept key comes back in its own array, sorted,
    as a new array would hold it (one word, buckets, two words, too wide for two)."""
    import chaingraph.keysort as keysort
    from chaingraph.keysort import sort_rows

    monkeypatch.setattr(keysort, "_BLOCK", 997)
    rng = np.random.default_rng(sum(widths) + 1)
    n = 30_000
    keys = [rng.choice(rng.integers(0, 2**w, 40, dtype=np.int64), n) for w in widths]
    expected = np.lexsort(keys[::-1])
    want = [k[expected] for k in keys]
    given = [k.copy() for k in keys]
    arrays = list(given)
    order, kept, _ = sort_rows(given, out=arrays)
    assert order.tolist() == expected.tolist()
    for a, got, w in zip(arrays, kept, want, strict=True):
        assert got is a and np.array_equal(got, w)


@pytest.mark.parametrize(("widths", "buckets"), [((3, 2), False), ((20, 20, 6), False), ((24, 20, 6), True),
                                                  ((28, 20, 6), True), ((30, 30, 1), False),
                                                  ((62, 3), False)])
def test_sort_rows_takes_interleaved_keys_keeps_what_is_asked_and_finds_the_ties(
        widths: tuple[int, ...], buckets: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys given as two interleaved halves sort as their interleaving; only the kept keys
    come back; the ties are every sorted position equal to the next on all keys (one word,
    one word per bucket, two words, too wide for two; blocks that do not divide the rows,
    nor in two)."""
    import chaingraph.keysort as keysort
    from chaingraph.keysort import Key, sort_rows

    monkeypatch.setattr(keysort, "_BLOCK", 997)
    calls = []
    pack_buckets = keysort._pack_buckets
    monkeypatch.setattr(keysort, "_pack_buckets", lambda *a: calls.append(1) or pack_buckets(*a))
    rng = np.random.default_rng(sum(widths))
    half = 25_000
    pairs = [(rng.choice(rng.integers(0, 2**w, 30, dtype=np.int64), half),
              rng.choice(rng.integers(0, 2**w, 30, dtype=np.int64), half)) for w in widths]
    plain = []
    for a, b in pairs:
        k = np.empty(2 * half, dtype=np.int64)
        k[0::2], k[1::2] = a, b
        plain.append(k)
    keep = tuple(j % 2 == 1 for j in range(len(widths)))
    given: list[Key] = [pairs[0], *plain[1:]]
    order, kept, ties = sort_rows(given, keep=keep)
    expected = np.lexsort(plain[::-1])
    assert order.tolist() == expected.tolist()
    for k, want, got in zip(plain, keep, kept, strict=True):
        assert got is None if not want else got is not None and np.array_equal(got, k[expected])
    same = np.ones(2 * half - 1, dtype=bool)
    for k in plain:
        same &= k[expected][1:] == k[expected][:-1]
    assert ties.tolist() == np.flatnonzero(same).tolist() and len(ties) > 0
    assert bool(calls) == buckets


def _chunked(values: list[str], cuts: list[int]) -> pa.ChunkedArray:
    bounds = [0, *cuts, len(values)]
    return pa.chunked_array([pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(bounds)],
                            type=pa.string())


@pytest.mark.parametrize("cuts", [[0], [7], [50, 50, 51], [1, 200, 399]])
def test_columns_in_several_chunks_build_the_arrays_of_one_chunk(cuts: list[int]) -> None:
    """Statement ids are taken chunk by chunk when few rows are asked for (ties) and from one
    joined copy when most are; both give what one chunk gives, byte for byte."""
    from chaingraph.compact import build_arrays

    rng = np.random.default_rng(len(cuts))
    m = 400
    s = [f"Q{v}" for v in rng.integers(1, 30, m)]
    o = [f"Q{v}" for v in rng.integers(1, 30, m)]
    p = [f"P{v}" for v in rng.choice([1, 2, 31, 279], m)]
    sid = [f"{a}${i:03d}" for i, a in enumerate(s)]
    order = rng.permutation(m).tolist()  # statement ids out of order, so ties need their strings
    sid = [sid[i] for i in order]
    lits = dict(literal_statement_id=pa.array([f"L{i}" for i in range(9)]),
                literal_subject=pa.array([f"Q{i}" for i in range(9)]), literal_property=pa.array(["P5"] * 9))
    kw = dict(class_properties=frozenset({"P31", "P279"}), allows=lambda q: q != "P279", **lits)
    one = build_arrays(*(pa.array(c, pa.string()) for c in (sid, s, p, o)), **kw)  # type: ignore[arg-type]
    many = build_arrays(*(_chunked(c, cuts) for c in (sid, s, p, o)), **kw)  # type: ignore[arg-type]
    for name in one.__dataclass_fields__:
        a, b = getattr(one, name), getattr(many, name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), name
        elif isinstance(a, pa.Table):
            assert a.to_pydict() == b.to_pydict(), name
        else:
            assert a == b or a.to_pylist() == b.to_pylist(), name


@st.composite
def id_lists(draw: st.DrawFn) -> list[str]:
    """Item ids, dense (no number above the count) unless drawn otherwise, maybe with one
    string that only looks like an id."""
    n = draw(st.integers(1, 80))
    top = draw(st.sampled_from([n, n, 10 * n + 7]))
    ids = [f"Q{i}" for i in draw(st.lists(st.integers(1, top), min_size=n, max_size=n))]
    odd = draw(st.sampled_from([None, "Q0", "Q01", "Q+3", "Q 4", "Q5 ", "P7", "Q", "Q1$x#value", "q3"]))
    if odd is not None:
        ids[draw(st.integers(0, n - 1))] = odd
    return ids


@settings(max_examples=200, deadline=None)
@given(id_lists(), st.integers(1, 3))
def test_dense_item_ids_are_numbered_as_a_string_sort_numbers_them(ids: list[str], chunks: int) -> None:
    """The dense item-id path gives the sorted distinct strings and codes of the general
    one, and declines anything that is not exactly ``Q`` + digits without a leading zero."""
    from chaingraph.compact import _sorted_codes
    from chaingraph.id_codes import item_codes

    cut = len(ids) // chunks
    values = pa.chunked_array([pa.array(ids[:cut], pa.string()), pa.array(ids[cut:], pa.string())])
    fast = item_codes(values)
    names, codes = _sorted_codes(values)
    valid = all(re.fullmatch(r"Q[1-9][0-9]*", i) for i in ids)
    assert (fast is not None) == (valid and max(int(i[1:]) for i in ids) <= len(ids))
    if fast is not None:
        assert fast[0].to_pylist() == names.to_pylist() and fast[1].tolist() == codes.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(1, 10**10).map(lambda v: f"Q{v}"),
                          st.integers(1, 10**10).map(lambda v: f"P{v}"),
                          st.sampled_from(["Q0", "Q01", "P007", "Q+1", "Q 2", "Q3 ", "Q", "Q١", "q4"]),
                          st.text(alphabet="Q0123456789x ١+-", max_size=11)), min_size=1, max_size=40),
       st.sampled_from(["Q", "P"]), st.integers(0, 3))
@example(["Q100000000", "Q0"], "Q", 0)  # "Q0" in a block long enough for Arrow's parse
def test_id_numbers_read_ids_as_python_reads_them(strings: list[str], prefix: str, skip: int) -> None:
    """The byte-level reading of ``prefix`` + digits (up to 8 digits in one word, more by
    Arrow) gives Python's numbers, and declines exactly what is not such an id (leading
    zero, sign, space, other digits, another prefix, too long), in a slice of a buffer."""
    from chaingraph.id_codes import id_numbers

    longest = 11
    block = pa.array(["Q1"] * skip + strings, pa.string()).slice(skip)
    got = id_numbers(block, prefix, longest)
    valid = all(re.fullmatch(rf"{prefix}[1-9][0-9]*", s, flags=re.ASCII) and len(s) <= longest
                for s in strings)
    assert (got is not None) == valid, strings
    if got is not None:
        assert got.tolist() == [int(s[1:]) for s in strings]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=40), st.lists(st.integers(0, 40), max_size=4),
       st.integers(0, 3), st.randoms(use_true_random=False))
def test_strings_gathered_from_chunks_equal_arrows_take(values: list[str], cuts: list[int], skip: int,
                                                        rnd: object) -> None:
    """The byte-level gather of a chunked string column gives what Arrow's ``take`` gives:
    any lengths (empty, multi-byte), chunks sliced off a larger buffer, rows repeated."""
    from chaingraph.compact import _gather_strings

    cuts = sorted(min(c, len(values)) for c in cuts)
    bounds = [0, *cuts, len(values)]
    padded = pa.array(["pad"] * skip + values, pa.string())  # a chunk that starts inside its buffer
    chunks = [padded.slice(skip + a, b - a) for a, b in itertools.pairwise(bounds)]
    column = pa.chunked_array(chunks, type=pa.string())
    rows = np.asarray([rnd.randrange(len(values)) for _ in range(len(values) * 2)], dtype=np.int64)  # type: ignore[attr-defined]
    got = _gather_strings(column, rows)
    assert got is not None and got.to_pylist() == [values[r] for r in rows]
    got.validate(full=True)
