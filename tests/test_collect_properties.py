"""Invariants of the deterministic neighbour cap and the crawl (hypothesis, no network)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.collect import collect
from chaingraph.sources.neighbours import CLASS_PROPERTIES, Neighbour, first_k, keep_neighbours
from chaingraph.sources.store_source import StoreSource
from chaingraph.store import Batch, Store, statement_row
from chaingraph.values import EntityValue

ids = st.integers(1, 40).map(lambda n: f"Q{n}")
props = st.sampled_from(["P17", "P27", "P31", "P279", "P361", "P1001", "P50"])
neighbours = st.lists(st.builds(Neighbour, ids, props, st.uuids().map(str), st.booleans(),
                                st.sampled_from(["preferred", "normal", "deprecated"])), max_size=40)


@settings(max_examples=150, deadline=None)
@given(neighbours, st.integers(0, 15), st.randoms())
def test_cap_is_bounded_clean_and_order_independent(cands: list[Neighbour], k: int, rnd: object) -> None:
    kept = keep_neighbours("Q1", cands, k)
    assert len(kept) <= k and len({n.entity for n in kept}) == len(kept)
    assert all(n in cands and n.rank != "deprecated" and n.property not in CLASS_PROPERTIES
               and n.entity != "Q1" for n in kept)
    shuffled = list(cands)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert keep_neighbours("Q1", shuffled, k) == kept
    eligible = {n.entity for n in cands if n.rank != "deprecated" and n.property not in CLASS_PROPERTIES
                and n.entity != "Q1"}
    assert len(kept) == min(k, len(eligible))
    # a larger cap keeps a prefix-compatible superset
    assert set(kept) <= set(keep_neighbours("Q1", cands, k + 5))


@settings(max_examples=150, deadline=None)
@given(neighbours, st.integers(0, 12))
def test_default_selector_takes_a_prefix(cands: list[Neighbour], k: int) -> None:
    kept = keep_neighbours("Q1", cands, 30)
    assert list(first_k("Q1", kept, k)) == kept[:k]


edges = st.lists(st.tuples(ids, props, ids), min_size=1, max_size=60)


@settings(max_examples=15, deadline=None)
@given(edges, st.integers(0, 3), st.integers(0, 4), st.one_of(st.none(), st.integers(1, 5)))
def test_crawl_respects_caps_and_stores_every_retrieved_edge(triples: list[tuple[str, str, str]], radius: int,
                                                             select: int, budget: int | None) -> None:
    rows = [statement_row(f"{s}${i}", s, p, EntityValue(id=o)) for i, (s, p, o) in enumerate(triples)]
    seed = triples[0][0]  # a seed the graph holds (a fixed "Q1" was absent from most drawn graphs)
    with Store() as source, Store() as target:
        src = source.add_source("fixture", "hypothesis")
        source.write(Batch(statements=rows, statement_sources=[(r[0], src) for r in rows]))
        report = collect([seed], radius, store=target, source=StoreSource(source), max_neighbours=6,
                         select=select, layer_budget=budget)
        seen: set[str] = set()
        for lay in report.layers:
            assert not seen & set(lay.entities)  # nobody is expanded twice
            seen |= set(lay.entities)
            if lay.depth > 0 and budget is not None:
                assert lay.expanded <= budget
        assert report.layers[0].entities == ([seed] if radius > 0 else [])
        expanded = sorted(seen)
        # every statement touching an expanded entity (in-edges minus class properties) was stored
        want = {r[0] for r in rows if r[1] in seen or (r[6] in seen and r[2] not in CLASS_PROPERTIES)}
        got = {e.statement_id for e in target.edges()}
        assert bool(want) == (radius > 0)  # the seed's own statements are wanted
        assert want <= got
        assert got <= {r[0] for r in rows}
        picks = target.con.execute("SELECT entity, count(*) FROM crawl_neighbours WHERE selected "
                                   "GROUP BY entity").fetchall()
        assert all(n <= select for _, n in picks) and {e for e, _ in picks} <= set(expanded)
