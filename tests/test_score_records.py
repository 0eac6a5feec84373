"""The scorer's fast path and its caches (chaingraph/scoring/records.py): claim records are
per task, the fast path says what the general path says, the alias indexes say what
``same()`` says of the first reference node, step edges found by binary search are the ones
the adjacency lists hold, and plain ids resolve as the id patterns say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from score_story import (
    LABELS,
    TASK,
    build_store,
    claim,
    coverage_fields,
    general_path,
    scorer,
    task,
    trajectory,
)
from test_score_properties import SETTINGS, events

from chaingraph.graph import EvidenceGraph
from chaingraph.lookups import StoreValues
from chaingraph.scoring import TaskScorer, coverage, score_trajectory
from chaingraph.scoring.reference import Resolver
from chaingraph.settings import TraversalPolicy
from chaingraph.store import Store
from chaingraph.tasks import Task
from chaingraph.trajectory import AssertEvent, ClaimEvent, SearchEvent, ViewEvent, parse_trajectory


@pytest.fixture(scope="module")
def fast(story: Store) -> TaskScorer:
    return scorer(story)


@pytest.fixture(scope="module")
def general(story: Store) -> TaskScorer:
    return scorer(story)


@SETTINGS
@given(evs=st.lists(events(), max_size=14))
def test_the_record_path_says_what_the_general_path_says(fast: TaskScorer, general: TaskScorer,
                                                         evs: list[dict[str, Any]]) -> None:
    # one scorer per path for every example: the records of earlier items are reused
    traj = parse_trajectory(trajectory(*evs))
    for alternatives in (False, True):
        got = coverage_fields(coverage(fast, traj, alternatives=alternatives))
        with general_path(general):
            want = coverage_fields(coverage(general, traj, alternatives=alternatives))
        assert got == want
    claims = {(e["subject"], e["relation"], e["object"], e.get("direction", "forward"), e.get("anchor"))
              for e in evs if e["kind"] == "claim"}
    assert claims <= fast._records.keys() and not general._records


class _Claim(ClaimEvent):
    """A ClaimEvent of a subclass: the readers must send its item to the general path."""


class _Assert(AssertEvent):
    """A AssertEvent of a subclass: the readers must send its item to the general path."""


class _View(ViewEvent):
    """A ViewEvent of a subclass: the readers must send its item to the general path."""


class _Search(SearchEvent):
    """A SearchEvent of a subclass: the readers must send its item to the general path."""


_SUB: dict[type, type] = {ClaimEvent: _Claim, AssertEvent: _Assert, ViewEvent: _View, SearchEvent: _Search}


@SETTINGS
@given(evs=st.lists(events(), max_size=10), picked=st.sets(st.integers(0, 9)))
def test_events_of_subclasses_are_read_as_their_fields_say(
        fast: TaskScorer, general: TaskScorer, evs: list[dict[str, Any]], picked: set[int]) -> None:
    # the readers tell events apart by their exact type and read a claim's fields from its
    # __dict__; an item with an event of a subclass of an event type says what it says with
    # the event itself (the general path reads it), it is not passed over
    traj = parse_trajectory(trajectory(*evs))
    swapped = tuple(_SUB[type(e)].model_validate(e.model_dump()) if i in picked and type(e) in _SUB else e
                    for i, e in enumerate(traj.events))
    other = traj.model_copy(update={"events": swapped})
    for alternatives in (False, True):
        with general_path(general):
            want = coverage_fields(coverage(general, traj, alternatives=alternatives))
        for claims in (False, True):
            assert coverage_fields(coverage(fast, other, alternatives=alternatives, claims=claims)) == want


def _holdco_task() -> Task:
    """The story's first component by Holdco instead of Acme: Q1 -P127-> Q5 -P17-> Q4 (no Q2)."""
    comp = task().components[0]
    first, second = comp.steps[:2]
    steps = (first.model_copy(update={"property": "P127", "target": "Q5"}),
             second.model_copy(update={"property": "P17", "source": "Q5", "target": "Q4"}))
    return task().model_copy(update={"id": "story/holdco", "clues": (),
                                     "components": (comp.model_copy(update={"steps": steps}),)})


def test_claim_records_are_per_task_an_alias_of_one_reference_is_not_one_of_another(story: Store) -> None:
    # Q10 is P460 the same as Acme (Q2): in the story task "Q1 P176 Q10" is its reference
    # statement Q1 P176 Q2; the Holdco task has no Q2, so there the claim stays Q1 P176 Q10.
    graph = EvidenceGraph.from_store(story, policy=TraversalPolicy(hub_limit=None))
    acme, holdco = scorer(story), TaskScorer(_holdco_task(), graph, StoreValues(story), story)
    run = parse_trajectory(trajectory(claim("Q1", "P176", "Q10"), claim("Q1", "P127", "Q5")))
    a, h = coverage(acme, run), coverage(holdco, run)
    assert ("Q1", "P176", "Q2") in a.claimed and a.node["Q10"] == "Q2"
    assert ("Q1", "P176", "Q10") in h.claimed and "Q10" not in h.node and h.aliases == []
    fresh = TaskScorer(_holdco_task(), graph, StoreValues(story), story)
    assert coverage_fields(h) == coverage_fields(coverage(fresh, run))
    key = ("Q1", "P176", "Q10", "forward", None)
    assert acme._records[key].mapped != holdco._records[key].mapped


def test_the_alias_index_names_the_first_reference_node_same_would(story: Store) -> None:
    sc = scorer(story)
    for x in [*LABELS, "Q99"]:
        brute = next(((r, why) for r in sc._ref_nodes if (why := sc.same(x, r)) is not None), None)
        assert sc._match(x) == brute, x


def test_a_label_alias_of_an_earlier_reference_node_wins_over_a_later_p460_partner() -> None:
    # reference a -> b -> c; x is P460 the same as c and has b's label: b comes first
    edges = [("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"), ("s3", "Q9", "P460", "Q3"),
             ("s4", "Q8", "P460", "Q1")]
    labels = {"Q1": "Alpha", "Q2": "Bravo", "Q3": "Charlie", "Q9": "bravo", "Q8": "Charlie"}
    graph = EvidenceGraph.from_edges(edges, labels=labels, policy=TraversalPolicy(hub_limit=None))
    t = Task.model_validate({"id": "t", "anchors": [{"entity": "Q1"}], "target": {"entity": "Q3"},
                             "components": [
        {"anchor": "Q1", "target": {"entity": "Q3"}, "steps": [
            {"property": "P1", "source": "Q1", "target": "Q2"},
            {"property": "P2", "source": "Q2", "target": "Q3"}]}]})
    sc = TaskScorer(t, graph)
    assert sc._match("Q9") == ("Q2", "equal normalised labels 'bravo'")
    assert sc._match("Q8") == ("Q1", "P460 said to be the same as (s4)")  # Q1's partner before Charlie
    for x in ("Q1", "Q2", "Q3", "Q8", "Q9", "Q7"):
        brute = next(((r, why) for r in sc._ref_nodes if (why := sc.same(x, r)) is not None), None)
        assert sc._match(x) == brute, x


@SETTINGS
@given(edges=st.lists(st.tuples(st.integers(1, 6), st.sampled_from(["P1", "P2", "P3"]), st.integers(1, 6)),
                      min_size=1, max_size=25))
def test_step_edges_between_two_nodes_are_the_adjacency_lists_own(edges: list[tuple[int, str, int]]) -> None:
    graph = EvidenceGraph.from_edges([(f"s{i}", f"Q{s}", p, f"Q{o}") for i, (s, p, o) in enumerate(edges)],
                                     policy=TraversalPolicy(hub_limit=None))
    for a in range(graph.vcount()):
        for b in range(graph.vcount()):
            want = [(e, fwd) for u, e, fwd in graph.neighbours(a) if u == b]
            assert graph.arcs_between(a, b) == want


IDS = re.compile(r"(?:wd:)?(Q[1-9][0-9]*)"), re.compile(r"(?:wdt:|p:|ps:)?(P[1-9][0-9]*)")


@SETTINGS
@given(mention=st.one_of(st.from_regex(r"[QP][0-9]{0,4}", fullmatch=True),
                         st.text(alphabet="QP019²١ :wd", min_size=1, max_size=6)))
def test_plain_ids_resolve_as_the_id_patterns_say(mention: str) -> None:
    r = Resolver({"Q5": "P17"})
    # the one label is an entity's: a relation that is no id resolves to nothing
    for resolve, pattern, labelled in ((r.relation, IDS[1], (None,)), (r.entity, IDS[0], (None, "Q5"))):
        m = pattern.fullmatch(mention.strip())
        if m:
            assert resolve(mention) == (m.group(1), "")
        else:
            assert resolve(mention)[0] in labelled


def test_a_mention_resolved_as_a_relation_is_resolved_afresh_as_an_entity() -> None:
    r = Resolver({"Q5": "P17"})
    assert r.relation("P17") == ("P17", "")
    assert r.entity("P17") == ("Q5", "")  # the entity labelled "P17", not the cached relation
    assert r.relation("P17") == ("P17", "")


def test_a_cached_route_verdict_cites_each_items_own_events(story: Store) -> None:
    # the same insufficient route (Q5 P131 Q4 is no statement) claimed at event 1, then at event 2:
    # the graph half is cached per route, but each item's reasons name its own event
    s = scorer(story)
    view = {"kind": "view", "box": [0, 0, 10, 10]}
    first = score_trajectory(s.task, parse_trajectory(trajectory(claim("Q1", "P127", "Q5"),
                                                                 claim("Q5", "P131", "Q4"))), scorer=s)
    second = score_trajectory(s.task, parse_trajectory(trajectory(view, claim("Q1", "P127", "Q5"),
                                                                  claim("Q5", "P131", "Q4"))), scorer=s)
    assert first.routes[0].reasons == ("not sufficient: Q5 P131 Q4 is not a statement of the evidence graph "
                                       "(step 2, event 1)",)
    assert second.routes[0].reasons == ("not sufficient: Q5 P131 Q4 is not a statement of the evidence graph "
                                        "(step 2, event 2)",)
    assert len(s.routes._cache) == 1


def test_score_files_reads_a_stores_names_once_for_all_its_tasks(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from chaingraph.scoring import score_files
    from chaingraph.scoring.reference import Resolver

    build_store(str(tmp_path / "story.duckdb")).close()
    holdco = _holdco_task().model_dump(mode="json", by_alias=True, exclude_none=True)
    holdco["store"] = "story.duckdb"
    (tmp_path / "tasks.json").write_text(json.dumps([{**TASK, "store": "story.duckdb"}, holdco]))
    run = [claim("Widget", "P176", "Q10"), claim("Q1", "owned by", "Holdco")]
    (tmp_path / "runs.jsonl").write_text("\n".join(json.dumps(trajectory(*run, task=t)) for t in
                                                   (TASK["id"], "story/holdco")))
    made: list[object] = []
    real = Resolver.from_store

    def counted(store: Any) -> Resolver:
        made.append(store)
        return real(store)

    monkeypatch.setattr(Resolver, "from_store", counted)
    report = score_files(tmp_path / "tasks.json", [tmp_path / "runs.jsonl"], sensitivity=False)
    assert len(made) == 1 and not report.failures
    acme, hold = report.items
    # Widget -> Q1 through the shared resolver; Q10 is Acme's alias in the story task only
    assert (acme.metrics.edges_matched, hold.metrics.edges_matched) == (1, 1)
    assert acme.aliases and not hold.aliases
