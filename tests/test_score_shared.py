"""Shared route objects (chaingraph/scoring/records.py, routes.py, scorer.py): items that claim
the same route at the same events share one claimed route, one verdict, one verdict list,
and routes by the same steps share one pattern answer. A scorer that has seen many items
must say of each item what a fresh scorer reading it by the general path says, whether its
route is credited or refused for any of the three reasons."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from score_story import claim, coverage_fields, general_path, scorer, task, trajectory
from test_score_properties import SETTINGS, events

from chaingraph.scoring import TaskScorer, coverage
from chaingraph.scoring.claimed import refused, route_of, route_path
from chaingraph.scoring.records import read_bits
from chaingraph.scoring.routes import ClaimedRoute
from chaingraph.scoring.scorer import Coverage
from chaingraph.store import Store
from chaingraph.trajectory import parse_trajectory

# Q1 P127 Q5 P17 Q4 is credited; over P361 Q5 also reaches Sylvania (not target-preserving);
# Q5 P131 Q4 is no statement (not sufficient); Q4 as the premise of Q5 P17 Q4 is circular
ROUTE = [claim("Q1", "P127", "Q5"), claim("Q5", "P17", "Q4"), claim("Q5", "P361", "Q4"),
         claim("Q5", "P131", "Q4"), claim("Q4", "P17", "Q5", direction="backward"),
         claim("Widget", "owned by", "Holdco", component="component1"), claim("Q1", "P176", "Q2"),
         claim("Q2", "P159", "Q3"), claim("Q20", "P176", "Q10", component="component2")]
OUTCOMES = {"credited", "not sufficient", "circular", "not target-preserving"}


@pytest.fixture(scope="module")
def shared(story: Store) -> TaskScorer:
    return scorer(story)


def _fresh(shared: TaskScorer, traj: Any) -> dict[str, Any]:
    """What a scorer that has seen nothing says, reading every claim on its own."""
    sc = TaskScorer(task(), shared.graph, shared.values, shared.store)
    with general_path(sc):
        return coverage_fields(coverage(sc, traj))


def _outcomes(cov: Coverage) -> list[str]:
    """Per verdict: credited, or the first reason against it (an insufficient route is never
    target-preserving: its pattern is not looked at)."""
    return ["credited" if v.credited else "not sufficient" if not v.sufficient else
            "circular" if not v.non_circular else "not target-preserving" for _c, _r, v in cov.verdicts]


def route_claims() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(events(), st.sampled_from(ROUTE))


@SETTINGS
@given(evs=st.lists(route_claims(), max_size=10))
def test_a_scorer_that_has_seen_many_items_says_what_a_fresh_one_says(shared: TaskScorer,
                                                                    evs: list[dict[str, Any]]) -> None:
    traj = parse_trajectory(trajectory(*evs))
    assert coverage_fields(coverage(shared, traj)) == _fresh(shared, traj)


CASES = [([ROUTE[0], ROUTE[1]], "credited"), ([ROUTE[0], ROUTE[2]], "not target-preserving"),
         ([ROUTE[0], ROUTE[3]], "not sufficient"),
         ([ROUTE[0], ROUTE[4]], "circular"),  # the target as a premise
         ([ROUTE[1], ROUTE[0]], "circular")]  # a step claimed before its premise was reached


@pytest.mark.parametrize(("evs", "outcome"), CASES)
def test_each_outcome_is_the_same_shared_or_fresh_and_items_share_the_route_objects(
        story: Store, evs: list[dict[str, Any]], outcome: str) -> None:
    sc = scorer(story)
    view = {"kind": "view", "box": [0, 0, 10, 10]}
    items = [parse_trajectory(trajectory(*evs)), parse_trajectory(trajectory(view, *evs)),
             parse_trajectory(trajectory(*evs, view))]
    covs = [coverage(sc, t) for t in items]
    for cov, traj in zip(covs, items):
        assert coverage_fields(cov) == _fresh(sc, traj)
    assert _outcomes(covs[0]) == [outcome]
    first, moved, same = (c.verdicts for c in covs)
    # the same route at the same events: one shared tuple of shared objects
    assert covs[2]._verdicts is covs[0]._verdicts and same[0][1] is first[0][1] and same[0][2] is first[0][2]
    assert moved is not first and moved[0][1] is not first[0][1]  # other events: its own route
    assert moved[0][1].nodes == first[0][1].nodes


def test_the_cases_above_cover_credit_and_every_refusal() -> None:
    assert {outcome for _evs, outcome in CASES} == OUTCOMES


def test_routes_by_the_same_steps_share_one_pattern_answer(story: Store) -> None:
    # the pattern (anchor, steps, clues on the nodes shared with the reference) is the cache key:
    # two routes through different middle nodes ask it once
    sc = scorer(story)
    ref = sc.reference.routes[0]
    walk: tuple[tuple[str, Literal["forward", "backward"]], ...] = (("P127", "forward"), ("P17", "forward"))
    routes = [ClaimedRoute(("Q1", mid, "Q4"), walk, (), ("Q1", mid)) for mid in ("Q5", "Q40")]
    assert [sc.routes._preserving(0, r.nodes, walk, ref, None) for r in routes] == [(True, "")] * 2
    assert len(sc.routes._answers) == 1


def test_a_route_claim_is_shared_only_at_the_same_event_with_the_same_source_and_component(
        story: Store) -> None:
    # the same credited route claimed at the same events: the first step's claim cites another
    # source, or names its component, in each item; each item's route must carry its own, and
    # the second step's claim (alike in all of them) is one object
    sc = scorer(story)
    a, b = "https://example.org/a", "https://example.org/b"
    first = [ROUTE[0], {**ROUTE[0], "source": a}, {**ROUTE[0], "source": b},
             {**ROUTE[0], "component": "component1"}]
    items = [parse_trajectory(trajectory(step, ROUTE[1])) for step in first]
    covs = [coverage(sc, t) for t in items]
    for cov, traj in zip(covs, items):
        assert coverage_fields(cov) == _fresh(sc, traj)
    routes = [cov.verdicts[0][1] for cov in covs]
    assert [r.claims[0].source for r in routes] == [None, a, b, None]
    assert [r.claims[0].component for r in routes] == [None, None, None, "component1"]
    assert all(r.claims[1] is routes[0].claims[1] for r in routes)


@pytest.mark.parametrize(("evs", "outcome"), CASES)
def test_a_refused_route_is_judged_only_when_its_verdicts_are_read(story: Store, evs: list[dict[str, Any]],
                                                                   outcome: str) -> None:
    # claimed.refused decides, without the route's objects, what the judge says of its credit;
    # a refused route's ClaimedRoute and verdict are made when the item's verdicts are read
    sc = scorer(story)
    traj = parse_trajectory(trajectory(*evs))
    cov = coverage(sc, traj)
    path = route_path(sc, traj, 0, sc._entries)  # the scorer's entries are this item's
    assert path is not None
    assert refused(sc, traj, 0, path) == (outcome != "credited")
    assert (path[0] in sc._claimed_routes) == (outcome == "credited")  # judged at once only if credited
    assert _outcomes(cov) == [outcome] and path[0] in sc._claimed_routes


@SETTINGS
@given(evs=st.lists(route_claims(), max_size=10))
def test_records_refused_says_what_the_judge_says_of_credit(shared: TaskScorer,
                                                            evs: list[dict[str, Any]]) -> None:
    traj = parse_trajectory(trajectory(*evs))
    entries: list[int] = []
    if read_bits(shared, traj, entries) is None:  # a claim of a value: the general path
        return
    for c, ref in enumerate(shared.reference.routes):
        path = route_path(shared, traj, c, entries)
        if path is None:
            continue
        verdict = shared.routes.judge(c, route_of(shared, traj, path), ref)
        assert refused(shared, traj, c, path) == (not verdict.credited), (evs, verdict)


def test_one_scorer_refuses_each_route_as_the_judge_does_whatever_it_saw_before(story: Store) -> None:
    # claimed.refused keeps its answer per component and the entries of a route's claims: every
    # outcome, one after another in one scorer, either way round (routes of the same length, of
    # the same nodes, claimed at the same events)
    for cases in (CASES, CASES[::-1]):
        sc = scorer(story)
        for evs, outcome in cases:
            traj = parse_trajectory(trajectory(*evs))
            coverage(sc, traj)
            path = route_path(sc, traj, 0, sc._entries)
            assert path is not None and refused(sc, traj, 0, path) == (outcome != "credited"), outcome
