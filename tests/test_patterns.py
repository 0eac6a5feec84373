"""Path patterns on tiny graphs: SPARQL semantics (repeats allowed), the traversal policy
(class edges, hubs, literals), type closure through P279*, value matching, and — as a
property test — answer sets and match counts equal to brute-force enumeration."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.graph import EvidenceGraph
from chaingraph.patterns import (
    EmbeddedValues,
    PathPattern,
    Step,
    TypeConstraint,
    ValueConstraint,
    evaluate,
    to_sparql,
    value_key,
    value_matches,
)
from chaingraph.settings import TraversalPolicy
from chaingraph.values import EntityValue, QuantityValue, StringValue, TimeValue

FREE = TraversalPolicy(hub_limit=None)


def graph(edges: Sequence[tuple[str, str, str]], policy: TraversalPolicy = FREE, **kw) -> EvidenceGraph:  # type: ignore[no-untyped-def]
    stmts = [(f"s{i}", s, p, o) for i, (s, p, o) in enumerate(edges)]
    return EvidenceGraph.from_edges(stmts, policy=policy, **kw)


def test_repeated_nodes_are_solutions_as_in_sparql() -> None:
    g = graph([("Q1", "P1", "Q2"), ("Q3", "P1", "Q2")])
    r = evaluate(g, PathPattern((Step("P1", "forward"), Step("P1", "backward")), anchor="Q1"), target="Q1")
    assert r.answers == ("Q1", "Q3") and not r.unique  # x2 = x0 is a match
    assert r.witness is not None and not r.witness.simple and r.witness.hops == 0


def test_witness_prefers_a_simple_match() -> None:
    g = graph([("Q1", "P1", "Q2"), ("Q2", "P1", "Q3"), ("Q3", "P1", "Q4"), ("Q1", "P1", "Q4")])
    r = evaluate(g, PathPattern((Step(), Step(), Step()), anchor="Q1"), target="Q4")
    # walks Q1-Q2-Q1-Q4 and Q1-Q4-Q1-Q4 come first in id order, but repeat a node
    assert r.witness is not None and r.witness.nodes == ("Q1", "Q2", "Q3", "Q4") and r.witness.simple
    assert r.witness.steps == (("P1", "forward", "s0"), ("P1", "forward", "s1"), ("P1", "forward", "s2"))
    assert r.paths == 4 and r.witness.hops == 3


def test_class_edges_are_not_steps_but_type_nodes_through_subclass_closure() -> None:
    g = graph([("Q1", "P1", "Q2"), ("Q1", "P1", "Q3"), ("Q2", "P31", "Q10"), ("Q3", "P31", "Q11"),
               ("Q10", "P279", "Q12"), ("Q12", "P279", "Q13")])
    base = PathPattern((Step(),), anchor="Q1")
    assert evaluate(g, base).answers == ("Q2", "Q3")  # no step along P31/P279
    assert evaluate(g, base.with_type(1, "Q13"), target="Q2").unique  # Q10 ⊑ Q12 ⊑ Q13
    assert evaluate(g, base.with_type(1, "Q12")).answers == ("Q2",)
    assert evaluate(g, base.with_type(1, "Q11")).answers == ("Q3",)
    assert evaluate(g, base.with_type(0, "Q10")).answer_count == 0


def test_hubs_may_end_or_start_a_match_but_not_be_passed() -> None:
    edges = [("Q1", "P1", "Q9"), *[(f"Q{20 + i}", "P1", "Q9") for i in range(3)], ("Q9", "P2", "Q5")]
    hubby = graph(edges, TraversalPolicy(hub_limit=3))
    assert evaluate(hubby, PathPattern((Step("P1", "forward"),), anchor="Q1")).answers == ("Q9",)
    two = PathPattern((Step("P1", "forward"), Step("P2", "forward")), anchor="Q1")
    assert evaluate(hubby, two).answer_count == 0
    assert evaluate(graph(edges), two).answers == ("Q5",)
    assert evaluate(hubby, PathPattern((Step("P2", "backward"),), anchor="Q5")).answers == ("Q9",)
    start = PathPattern((Step("P2", "forward"),), anchor="Q9")  # a hub can be x0
    assert evaluate(hubby, start).answers == ("Q5",)


def test_literals_are_terminal_answers_keyed_by_value() -> None:
    y = TimeValue.make
    lits = [("t1", "Q1", "P569", y(1901, 5, 12, precision=11)),
            ("t2", "Q2", "P569", y(1901, 1, 2, precision=11)),
            ("t3", "Q3", "P569", y(1903, precision=9))]
    g = graph([("Q1", "P1", "Q0"), ("Q2", "P1", "Q0"), ("Q3", "P1", "Q0")],
              TraversalPolicy(hub_limit=None, include_literals=True),
              literals=[(sid, s, p) for sid, s, p, _v in lits])
    values = EmbeddedValues(lits)
    p = PathPattern((Step("P1", "backward"), Step("P569", "forward")), anchor="Q0")
    r = evaluate(g, p, values=values, target=y(1901, precision=9))
    assert r.answers == ("1901", "1903") and r.target_in and not r.unique and r.paths == 2
    day = evaluate(g, p, values=values, target=y(1901, 5, 12, precision=11))
    assert day.answers == ("1901-01-02", "1901-05-12", "1903") and day.paths == 1
    assert evaluate(g, PathPattern((Step("P569", "backward"),), anchor="Q1"), values=values).answer_count == 0
    assert evaluate(g, PathPattern((Step(), Step()), anchor="Q0"), values=values).answer_count == 4


def test_value_constraints_read_item_edges_class_edges_and_literals() -> None:
    g = graph([("Q1", "P1", "Q2"), ("Q1", "P1", "Q3"), ("Q2", "P27", "Q30"), ("Q3", "P31", "Q5")],
              TraversalPolicy(hub_limit=None, excluded_properties=frozenset({"P27"})))
    values = EmbeddedValues([("x", "Q2", "P27", EntityValue(id="Q30")),
                             ("y", "Q3", "P1082", QuantityValue(amount="+1200"))])
    base = PathPattern((Step("P1", "forward"),), anchor="Q1")
    assert evaluate(g, base).answers == ("Q2", "Q3")
    excluded = PathPattern(base.steps, "Q1", values=(ValueConstraint(1, "P27", EntityValue(id="Q30")),))
    assert evaluate(g, excluded, values=values).answers == ("Q2",)  # not a step, still a fact
    assert evaluate(g, excluded).answer_count == 0  # ... that only the value lookup knows
    typed = PathPattern(base.steps, "Q1", values=(ValueConstraint(1, "P31", EntityValue(id="Q5")),))
    assert evaluate(g, typed).answers == ("Q3",)
    pop = PathPattern(base.steps, "Q1", values=(ValueConstraint(1, "P1082", QuantityValue(amount="1200.0")),))
    assert evaluate(g, pop, values=values).answers == ("Q3",)


def test_value_matching_rules() -> None:
    assert value_matches(TimeValue.make(1950, precision=8), TimeValue.make(1957, 3, 1, precision=11))
    assert not value_matches(TimeValue.make(1950, precision=8), TimeValue.make(1961, precision=9))
    assert not value_matches(TimeValue.make(1950, precision=9),
                             TimeValue.make(1950, precision=9, calendar="Q1985786"))
    assert value_matches(StringValue(text="a"), StringValue(text="a"))
    assert not value_matches(StringValue(text="1"), QuantityValue(amount="1"))
    assert value_key(TimeValue.make(-44, precision=9)) == "-44"


def test_to_sparql_writes_wildcards_types_values_and_hubs() -> None:
    p = PathPattern((Step("P1", "forward"), Step(), Step("P2", "backward")),
                    types=(TypeConstraint(1, "Q5"),),
                    values=(ValueConstraint(2, "P27", EntityValue(id="Q30")),))
    q = to_sparql(p, ["P2", "P1"], blocked=["Q9", "Q10"])
    assert "{ ?x1 ?p2 ?x2 . } UNION { ?x2 ?p2 ?x1 . }" in q and "VALUES ?p2 { wdt:P1 wdt:P2 }" in q
    assert "?x3 wdt:P2 ?x2 ." in q and "?x1 wdt:P31/wdt:P279* wd:Q5 ." in q and "?x2 wdt:P27 wd:Q30 ." in q
    assert "FILTER(?x1 NOT IN (wd:Q10, wd:Q9))" in q and "FILTER(isIRI(?x0))" in q


# -- brute force ----------------------------------------------------------------------
NODES = [f"Q{i}" for i in range(1, 7)]
PROPS = ["P1", "P2", "P3"]


def brute(edges: list[tuple[str, str, str]], p: PathPattern, classes: dict[str, str],
          passable: set[str]) -> tuple[set[str], dict[str, int]]:
    """Enumerate every node sequence and (property, direction) per step: the definition."""
    triples = set(edges)
    nodes = sorted({s for s, _p, _o in triples} | {o for _s, _p, o in triples})
    answers: set[str] = set()
    counts: dict[str, int] = {}
    for seq in itertools.product(nodes, repeat=p.k + 1):
        if p.anchor is not None and seq[0] != p.anchor:
            continue
        if any(v not in passable for v in seq[1:-1]):
            continue
        if any(classes.get(seq[t.variable]) != t.class_id for t in p.types):
            continue
        ways = 1
        for i, stp in enumerate(p.steps):
            a, b = seq[i], seq[i + 1]
            n = 0
            for prop in PROPS:
                if stp.property not in (None, prop):
                    continue
                if stp.direction in (None, "forward") and (a, prop, b) in triples:
                    n += 1
                if stp.direction in (None, "backward") and (b, prop, a) in triples:
                    n += 1
            ways *= n
        if ways:
            answers.add(seq[-1])
            counts[seq[-1]] = counts.get(seq[-1], 0) + ways
    return answers, counts


edge_st = st.tuples(st.sampled_from(NODES), st.sampled_from(PROPS), st.sampled_from(NODES))
step_st = st.builds(Step, st.sampled_from([None, *PROPS]), st.sampled_from([None, "forward", "backward"]))


@settings(max_examples=60, deadline=None)
@given(edges=st.lists(edge_st, min_size=1, max_size=14), steps=st.lists(step_st, min_size=1, max_size=3),
       anchor=st.sampled_from([None, *NODES]), typed=st.sampled_from([None, 0, 1, 2, 3]),
       hub_limit=st.sampled_from([None, 3, 5]), dup=st.booleans())
def test_answers_and_match_counts_equal_brute_force(edges, steps, anchor, typed, hub_limit, dup) -> None:  # type: ignore[no-untyped-def]
    classes = {n: ("Q100" if i % 2 else "Q200") for i, n in enumerate(NODES)}
    stmts = [*edges, *(edges[:1] if dup else [])]  # a repeated statement of one triple counts once
    g = graph([*stmts, *((n, "P31", c) for n, c in classes.items())], TraversalPolicy(hub_limit=hub_limit))
    if anchor is not None and anchor not in g:
        anchor = None
    types = (TypeConstraint(typed, "Q100"),) if typed is not None and typed <= len(steps) else ()
    p = PathPattern(tuple(steps), anchor, types)
    passable = {g.name(v) for v in range(g.vcount()) if g.passable(v)}
    want, counts = brute(edges, p, classes, passable)
    assert set(evaluate(g, p).answers) == want
    assert evaluate(g, p).answer_count == len(want)
    for target in sorted(want)[:3]:
        r = evaluate(g, p, target=target)
        assert r.target_in and r.paths == counts[target]
        assert r.unique == (want == {target})
        w = r.witness
        assert w is not None and w.nodes[-1] == target and len(w.steps) == p.k
        assert anchor is None or w.nodes[0] == anchor
        # the witness is itself a match: each step an edge the pattern allows, the
        # intermediate nodes passable, the typed variable of its type
        for i, (stp, (prop, way, _sid)) in enumerate(zip(p.steps, w.steps, strict=True)):
            a, b = w.nodes[i], w.nodes[i + 1]
            assert stp.property in (None, prop) and stp.direction in (None, way)
            assert ((a, prop, b) if way == "forward" else (b, prop, a)) in set(edges)
        assert all(v in passable for v in w.nodes[1:-1])
        assert all(classes.get(w.nodes[t.variable]) == t.class_id for t in p.types)


def test_match_counts_stay_exact_beyond_float_precision() -> None:
    """A layered graph: anchor Q1, eleven layers of 31 items each fully joined to the next,
    then one target. Every 12-step forward P361 match picks one item per layer, so there
    are exactly 31**11 = 25,408,476,896,404,831 of them: an odd number above 2**54, which no
    float can hold (a float count would come back rounded). It must be that exact integer."""
    from chaingraph.graph import EvidenceGraph
    from chaingraph.patterns import PathPattern, Step, evaluate
    from chaingraph.settings import TraversalPolicy

    width, inner = 31, 11
    layers = [["Q1"]] + [[f"Q{1000 * layer + i}" for i in range(width)] for layer in range(1, inner + 1)]
    layers.append(["Q2"])
    edges = [(f"s{n}", a, "P361", b) for n, (a, b) in enumerate(
        (a, b) for left, right in itertools.pairwise(layers) for a in left for b in right)]
    graph = EvidenceGraph.from_edges(edges, policy=TraversalPolicy(hub_limit=None))
    pattern = PathPattern(steps=tuple(Step("P361", "forward") for _ in range(inner + 1)), anchor="Q1")
    result = evaluate(graph, pattern, target="Q2")
    assert float(31**11) != 31**11  # the premise: a float cannot represent this count
    assert result.paths == 31**11 and isinstance(result.paths, int)
    assert result.unique and result.answers == ("Q2",)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 40), max_size=60))
def test_a_frontiers_sorted_unique_is_numpys_unique(values: list[int]) -> None:
    """The frontier's dedup (sort and neighbour compare) says what ``np.unique`` says, and
    leaves its input as it was (a frontier may be the index's own array)."""
    import numpy as np

    from chaingraph.frontier_index import sorted_unique

    a = np.array(values, dtype=np.int64)
    before = a.copy()
    got = sorted_unique(a)
    assert got.dtype == a.dtype and got.tolist() == np.unique(a).tolist()
    assert a.tolist() == before.tolist()
