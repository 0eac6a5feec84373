"""Invariants of the §12 metrics on random trajectories over the story world: every ratio is
in [0, 1]; event ids never matter; a crop repeated right after itself changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from score_story import EDGES, build_store, scorer, trajectory

from chaingraph.scoring import Metrics, TaskScorer, score_trajectory
from chaingraph.trajectory import parse_trajectory

RATIOS = ("nc", "rc", "va_p", "va_r", "nvrc", "ea", "aeba", "gea", "dri_ratio", "revisit")
ENTITIES = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q9", "Q10", "Q20", "Q30", "Widget", "Acme Inc.", "Springfield",
            "Nope"]
PROPERTIES = ["P176", "P159", "P17", "P127", "P361", "P131", "manufacturer", "owned_by"]


@pytest.fixture(scope="module")
def sc() -> Iterator[TaskScorer]:
    store = build_store()
    yield scorer(store)
    store.close()


@st.composite
def boxes(draw: st.DrawFn) -> list[float]:
    x0, y0 = draw(st.integers(0, 95)), draw(st.integers(0, 95))
    return [x0, y0, draw(st.integers(x0 + 1, 100)), draw(st.integers(y0 + 1, 100))]


def claims() -> st.SearchStrategy[dict[str, Any]]:
    true = st.sampled_from(EDGES).map(lambda e: {"subject": e[1], "relation": e[2], "object": e[3]})
    free = st.fixed_dictionaries({"subject": st.sampled_from(ENTITIES),
                                  "relation": st.sampled_from(PROPERTIES),
                                  "object": st.sampled_from(ENTITIES)})
    extra = st.fixed_dictionaries({}, optional={
        "direction": st.sampled_from(["forward", "backward"]),
        "source": st.sampled_from(["https://example.org/widget", "https://example.org/holdco", "x"]),
        "anchor": st.sampled_from(["Q1", "Q20", "Widget"]),
        "component": st.sampled_from(["component1", "component2", "other"])})
    return st.tuples(st.one_of(true, free), extra).map(lambda p: {"kind": "claim", **p[0], **p[1]})


def events() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        boxes().map(lambda b: {"kind": "view", "box": b}),
        st.tuples(boxes(), st.sampled_from(ENTITIES)).map(
            lambda p: {"kind": "assert", "box": p[0], "entity": p[1]}),
        st.lists(st.just("https://example.org/x"), max_size=2).map(
            lambda r: {"kind": "search", "results": r}),
        st.just({"kind": "retrieve", "url": "https://example.org/y"}),
        claims())


def score(sc: TaskScorer, evs: list[dict[str, Any]]) -> Metrics:
    return score_trajectory(sc.task, parse_trajectory(trajectory(*evs)), scorer=sc).metrics


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(evs=st.lists(events(), max_size=14))
def test_every_ratio_is_between_zero_and_one(sc: TaskScorer, evs: list[dict[str, Any]]) -> None:
    m = score(sc, evs)
    for name in RATIOS:
        assert 0.0 <= getattr(m, name) <= 1.0, name
    assert m.bound <= m.supported <= m.claims
    assert m.matched_anchors <= min(m.predicted_anchors, m.anchors)


@SETTINGS
@given(evs=st.lists(events(), max_size=14), ids=st.lists(st.text(max_size=5), min_size=14, max_size=14))
def test_event_ids_do_not_matter(sc: TaskScorer, evs: list[dict[str, Any]], ids: list[str]) -> None:
    renamed = [{**e, "id": i} for e, i in zip(evs, ids)]
    assert score(sc, renamed) == score(sc, evs)


@SETTINGS
@given(evs=st.lists(events(), min_size=1, max_size=14), data=st.data())
def test_a_crop_repeated_right_after_itself_changes_nothing(sc: TaskScorer, evs: list[dict[str, Any]],
                                                            data: st.DataObject) -> None:
    views = [i for i, e in enumerate(evs) if e["kind"] == "view"]
    if not views:
        evs = [*evs, {"kind": "view", "box": [0, 0, 40, 40]}]
        views = [len(evs) - 1]
    i = data.draw(st.sampled_from(views))
    doubled = [*evs[: i + 1], {**evs[i], "id": "copy"}, *evs[i + 1:]]
    assert score(sc, doubled) == score(sc, evs)
