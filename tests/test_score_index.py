"""The claim index (chaingraph/scoring/records.py: ``index``, ``read``, ``claimed_route``):
every entry says what the claim's record says, and a scorer that has indexed many items
says of each item what a fresh scorer reading it by the general path says — with claims on
the reference, on alternative routes, and one-off claims about nodes no other claim names
(the leaves the route search leaves out), some of which later items name again."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from score_story import claim, coverage_fields, general_path, scorer, task, trajectory
from test_score_properties import SETTINGS, events
from test_score_shared import ROUTE

from chaingraph.scoring import TaskScorer, coverage
from chaingraph.scoring.records import entry, index, key, linked, make_record
from chaingraph.scoring.routes import shortest_path, shortest_path_few
from chaingraph.store import Store
from chaingraph.trajectory import ClaimEvent, parse_trajectory

#: nodes no reference or story edge has: a claim about one is a leaf until another names it
LEAVES = ["Q7001", "Q7002", "Q7003"]
#: nodes of the story: reference nodes of both components, the alternative route's Holdco
STORY = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q20", "Q10"]


def _general(sc: TaskScorer, traj: Any, alternatives: bool = True) -> dict[str, Any]:
    """What a scorer that has seen nothing says, reading every claim on its own."""
    fresh = TaskScorer(task(), sc.graph, sc.values, sc.store)
    with general_path(fresh):
        return coverage_fields(coverage(fresh, traj, alternatives=alternatives))


def one_off() -> st.SearchStrategy[dict[str, Any]]:
    """A claim joining a leaf node to a story node or to another leaf, either way round."""
    ends = st.tuples(st.sampled_from(LEAVES), st.sampled_from(STORY + LEAVES)).flatmap(
        lambda p: st.sampled_from([p, p[::-1]]))
    extra = st.fixed_dictionaries({}, optional={"direction": st.sampled_from(["forward", "backward"]),
                                                "component": st.sampled_from(["component1", "component2"])})
    return st.tuples(ends, st.sampled_from(["P17", "P127", "P176", "P1056"]), extra).map(
        lambda t: claim(t[0][0], t[1], t[0][1], **t[2]))


def inverse() -> st.SearchStrategy[dict[str, Any]]:
    """A claim by the inverse of a story property, its statement read the other way round:
    Q2 P1056 Q1 is the reference statement Q1 P176 Q2, Q5 P1830 Q1 is Q1 P127 Q5 of the
    alternative route, Q4 P527 Q5 is Q5 P361 Q4."""
    pairs = [("Q2", "P1056", "Q1"), ("Q2", "P1056", "Q20"), ("Q5", "P1830", "Q1"), ("Q4", "P527", "Q5"),
             ("Q1", "P1056", "Q2")]
    return st.tuples(st.sampled_from(pairs), st.sampled_from(["forward", "backward"])).map(
        lambda t: claim(t[0][0], t[0][1], t[0][2], direction=t[1]))


def dressed() -> st.SearchStrategy[dict[str, Any]]:
    """A claim of a route step with an anchor (an id, a label, or a mention that names
    nothing: the claim then has a problem, yet states its statement), a source, or both —
    what a route's claims carry (claimed.route_of makes them without the record)."""
    extra = st.fixed_dictionaries({}, optional={"anchor": st.sampled_from(["Q1", "Widget", "Q20", "Nobody"]),
                                                "source": st.just("https://example.org/x")})
    return st.tuples(st.sampled_from(ROUTE), extra).map(lambda t: {**t[0], **t[1]})


def items() -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(st.one_of(events(), st.sampled_from(ROUTE), dressed(), one_off(), one_off(), inverse()),
                    max_size=12)


@pytest.fixture(scope="module")
def shared(story: Store) -> TaskScorer:
    return scorer(story)


@SETTINGS
@given(evs=items())
def test_an_indexed_scorer_says_what_a_fresh_general_scorer_says(shared: TaskScorer,
                                                                 evs: list[dict[str, Any]]) -> None:
    # one scorer for every example (its index, and each node's count of entries, grows), and
    # one that has indexed this item only (counts of 1 and 2 decide what the search leaves out)
    traj = parse_trajectory(trajectory(*evs))
    alone = TaskScorer(task(), shared.graph, shared.values, shared.store)
    for alternatives in (True, False):
        want = _general(shared, traj, alternatives)
        for claims in (False, True):  # claims and assertions read later, or on the way
            assert coverage_fields(coverage(shared, traj, alternatives=alternatives, claims=claims)) == want
        assert coverage_fields(coverage(alone, traj, alternatives=alternatives)) == want


@SETTINGS
@given(runs=st.lists(items(), max_size=4))
def test_an_entry_is_linked_while_both_its_ends_are_named_by_another(
        shared: TaskScorer, runs: list[list[dict[str, Any]]]) -> None:
    # after some items: the linked bits of every entry follow the counts of its ends
    sc = TaskScorer(task(), shared.graph, shared.values, shared.store)
    for evs in runs:
        coverage(sc, parse_trajectory(trajectory(*evs)))
    region = (1 << sc._hshift) - (1 << sc._tshift)
    for got in sc._index.values():
        ends = got >> sc._hshift
        a, b = ends & (1 << 32) - 1, ends >> 32 & (1 << 32) - 1
        is_linked = a != b and sc._end_count[a] > 1 and sc._end_count[b] > 1
        assert got & region == (linked(sc, got) if is_linked else 0)


@SETTINGS
@given(evs=items())
def test_every_index_entry_says_what_the_claims_record_says(story: Store, evs: list[dict[str, Any]]) -> None:
    sc = scorer(story)
    numbers: dict[int, tuple[object, ...]] = {}
    for ev in parse_trajectory(trajectory(*evs)).events:
        if isinstance(ev, ClaimEvent) and ev.value is None:
            got = sc._index.get(key(ev))
            if got is None:  # (an entry may be 0: the first claim, naming nothing it could)
                got = index(sc, ev, key(ev))
            # below the claim's number (distinct per claim): bits, linked bits and ends
            assert got & (1 << sc._hshift + 64) - 1 & ~(linked(sc, got)) == entry(sc, make_record(sc, ev)), ev
            assert numbers.setdefault(got >> sc._hshift + 64, key(ev)) == key(ev)


# beside one-off claims: the alternative route Q1 -P127-> Q5 -P17-> Q4 (credited), or one
# through a node only this item names (found, and refused: the graph does not hold it)
CASES = {
    "the start and target each named by one claim only": ([ROUTE[0], ROUTE[1]], [True]),
    "a leaf claim at the anchor, one at the target": ([claim("Q7001", "P17", "Q1"), ROUTE[0], ROUTE[1],
                                                        claim("Q4", "P17", "Q7002")], [True]),
    "a node two claims name is not a leaf": ([claim("Q1", "P127", "Q7001"), claim("Q7001", "P17", "Q4")],
                                             [False]),
    "a leaf between two leaves": ([claim("Q7001", "P17", "Q7002"), claim("Q7002", "P17", "Q7003"),
                                   *ROUTE[:2]], [True]),
}


@pytest.mark.parametrize("name", CASES)
def test_routes_through_nodes_few_claims_name_are_found(story: Store, name: str) -> None:
    sc = scorer(story)  # fresh: each node's count is this item's own
    evs, credited = CASES[name]
    traj = parse_trajectory(trajectory(*evs))
    got = coverage(sc, traj)
    assert coverage_fields(got) == _general(sc, traj)
    assert [v.credited for _c, _r, v in got.verdicts] == credited


@SETTINGS
@given(ends=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)).filter(lambda e: e[0] != e[1]),
                    max_size=10), start=st.integers(0, 5), target=st.integers(0, 5))
def test_the_scan_for_few_claims_finds_the_first_shortest_path(ends: list[tuple[int, int]], start: int,
                                                                target: int) -> None:
    touched = {x for e in ends for x in e}
    assume(start in touched and target in touched)  # what the route search makes sure of first
    assert shortest_path_few(ends, start, target) == shortest_path(ends, start, target)
