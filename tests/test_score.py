"""§12 metrics on hand-built items (tests/score_story.py), each value computed by hand in
the test's comment: NC, RC, VA-P/VA-R, NVRC, EA/AEBA/GEA, DRI and revisits, with empty
denominators, duplicates, aliases, reversed claims and alternative routes credited or
refused for each of the three reasons."""

from __future__ import annotations

from typing import Any

import pytest
from score_story import GADGET, STICKER, WIDGET, claim, scorer, trajectory, view

from chaingraph.scoring import ItemScore, TaskScorer, score_trajectory
from chaingraph.scoring.visual import Thresholds
from chaingraph.store import Store
from chaingraph.trajectory import parse_trajectory

C1, C2 = "component1", "component2"
W_URL, S_URL = "https://example.org/widget", "https://example.org/springfield"


@pytest.fixture(scope="module")
def sc(story: Store) -> TaskScorer:
    return scorer(story)


def run(sc: TaskScorer, *events: dict[str, Any], th: Thresholds | None = None) -> ItemScore:
    return score_trajectory(sc.task, parse_trajectory(trajectory(*events)), scorer=sc, thresholds=th)


# -- NC / RC ---------------------------------------------------------------------------
def test_the_whole_reference_claimed_covers_every_node_and_edge(sc: TaskScorer) -> None:
    r = run(sc, claim("Q1", "P176", "Q2"), claim("Q2", "P159", "Q3"), claim("Q3", "P17", "Q4"),
            claim("Q20", "P176", "Q2"))
    m = r.metrics
    assert (m.nc, m.rc, m.nodes_required, m.edges_required) == (1.0, 1.0, 5, 4)
    assert r.unmatched_nodes == r.unmatched_edges == r.routes == ()


def test_empty_trajectory_scores_zero_everywhere(sc: TaskScorer) -> None:
    m = run(sc).metrics
    ratios = (m.nc, m.rc, m.ea, m.aeba, m.gea, m.va_p, m.va_r, m.nvrc, m.dri, m.dri_ratio, m.revisit)
    assert ratios == (0,) * 11
    assert m.first_revisit_round is None


def test_alias_matches_a_node_and_a_reversed_claim_does_not_match_its_edge(sc: TaskScorer) -> None:
    # Q10 is P460 "said to be the same as" Acme (Q2); "Q3 P159 Q2" states the HQ the wrong way.
    # V_req = {Q1, Q2, Q3, Q4, Q20}: named Q1, Q10 (= Q2), Q3, Q4 -> NC = 4/5
    # E_req = 4 statements: Q1 P176 Q2 (via the alias), Q3 P17 Q4 -> RC = 2/4
    r = run(sc, claim("Q1", "P176", "Q10"), claim("Q3", "P159", "Q2"), claim("Q3", "P17", "Q4"))
    assert (r.metrics.nc, r.metrics.rc) == (0.8, 0.5)
    assert any("Q10 matched Q2" in a and "P460" in a for a in r.aliases)
    missed = {m.what: m.reason for m in r.unmatched_edges}
    assert missed["Q2 P159 Q3"].startswith("claimed in the reverse direction (event 1)")
    assert missed["Q20 P176 Q2"] == "not claimed"
    assert [m.what for m in r.unmatched_nodes] == ["Q20 (Gadget)"]
    # the reversed claim closes a path Q1-Q2-Q3-Q4, but the graph does not hold it
    (route,) = r.routes
    assert not route.credited and not route.sufficient
    assert "Q3 P159 Q2 is not a statement of the evidence graph" in route.reasons[0]


def test_backward_direction_states_the_statement_the_other_way(sc: TaskScorer) -> None:
    # "from Q2, walking P176 backward, reach Q1" is the statement Q1 P176 Q2
    r = run(sc, claim("Q2", "P176", "Q1", direction="backward"))
    assert r.metrics.edges_matched == 1
    r = run(sc, claim("Q2", "P176", "Q1"))  # the same ends, forward: Acme made by the widget
    assert r.metrics.edges_matched == 0


def test_an_inverse_property_read_the_other_way_is_the_same_statement(story: Store) -> None:
    # part of (P361) / has part (P527): "Q4 P527 Q5" is "Q5 P361 Q4"
    from score_story import task

    from chaingraph.graph import EvidenceGraph, TraversalPolicy
    from chaingraph.lookups import StoreValues

    first, second = task().components[0].steps[:2]
    t = task().model_copy(update={"components": (task().components[0].model_copy(update={"steps": (
        first.model_copy(update={"property": "P127", "target": "Q5"}),
        second.model_copy(update={"property": "P361", "source": "Q5", "target": "Q4"}))}),),
        "clues": ()})
    graph = EvidenceGraph.from_store(story, policy=TraversalPolicy(hub_limit=None))
    s = TaskScorer(t, graph, StoreValues(story), story)
    r = score_trajectory(t, parse_trajectory(trajectory(claim("Q1", "owned by", "Holdco"),
                                                        claim("Q4", "P527", "Q5"))), scorer=s)
    assert (r.metrics.rc, r.metrics.ea) == (1.0, 1.0)


def test_labels_resolve_through_labels_and_aliases_and_the_rest_is_reported(sc: TaskScorer) -> None:
    r = run(sc, claim("Widget", "manufacturer", "Acme Inc."),  # label, property label, entity alias
            claim("Acme", "headquarters_location", "Springfield"),  # Springfield: Q3's label, Q40's alias
            claim("Nowhere", "P17", "Q4"))
    assert r.metrics.edges_matched == 1  # only Q1 P176 Q2 resolves completely
    reasons = [(u.event, u.reason) for u in r.unresolved]
    assert (1, "object: 'Springfield' is ambiguous: Q3, Q40") in reasons
    assert (2, "subject: no entity has the label or alias 'Nowhere'") in reasons
    assert r.metrics.claims == 3 and r.metrics.supported == 1


# -- alternative routes ----------------------------------------------------------------
HOLDCO = claim("Q1", "P127", "Q5")


def test_a_sufficient_non_circular_target_preserving_route_is_credited_and_replaces_the_reference(
        sc: TaskScorer) -> None:
    # Q1 -P127-> Q5 -P17-> Q4 is in the graph and with the type clue (a country) singles out Q4.
    # c1 becomes {Q1, Q5, Q4} / 2 edges; c2 stays {Q20, Q2} / 1 edge:
    # V_req = {Q1, Q5, Q4, Q20, Q2}, named Q1, Q5, Q4 -> NC = 3/5; E_req = 3, claimed 2 -> RC = 2/3
    r = run(sc, HOLDCO, claim("Q5", "P17", "Q4"))
    (route,) = r.routes
    assert route.credited and route.nodes == ("Q1", "Q5", "Q4") and route.reasons == ()
    assert (r.metrics.nc, r.metrics.rc) == (0.6, 2 / 3)


def test_a_route_the_graph_does_not_hold_is_refused_as_insufficient(sc: TaskScorer) -> None:
    # Q5 P131 Q4 is not a statement: the reference stays; named Q1, Q5, Q4 -> NC = 2/5, RC = 0/4
    r = run(sc, HOLDCO, claim("Q5", "P131", "Q4"))
    (route,) = r.routes
    assert (route.credited, route.sufficient) == (False, False)
    assert route.reasons == ("not sufficient: Q5 P131 Q4 is not a statement of the evidence graph "
                             "(step 2, event 1)",)
    assert (r.metrics.nc, r.metrics.rc) == (0.4, 0.0)


def test_a_route_that_uses_the_target_as_a_premise_is_refused_as_circular(sc: TaskScorer) -> None:
    # "from Freedonia, walking P17 backward, Holdco": the true statement Q5 P17 Q4, reasoned from Q4
    r = run(sc, HOLDCO, claim("Q4", "P17", "Q5", direction="backward"))
    (route,) = r.routes
    assert (route.credited, route.sufficient, route.non_circular, route.target_preserving) == (
        False, True, False, True)
    assert route.reasons == ("circular: step 2 (event 1) uses the target Q4 as a premise",)
    assert (r.metrics.nc, r.metrics.rc) == (0.4, 0.0)


def test_a_route_claimed_before_its_premise_was_reached_is_refused_as_circular(sc: TaskScorer) -> None:
    r = run(sc, claim("Q5", "P17", "Q4"), HOLDCO)
    (route,) = r.routes
    assert not route.credited and not route.non_circular
    assert route.reasons == ("circular: step 2 (event 0) is claimed before its premise Q5 was reached "
                             "(event 1)",)


def test_a_route_that_loses_uniqueness_is_refused_as_not_target_preserving(sc: TaskScorer) -> None:
    # Holdco is part of Freedonia and of Sylvania, both countries: 2 answers
    r = run(sc, HOLDCO, claim("Q5", "P361", "Q4"))
    (route,) = r.routes
    assert (route.credited, route.sufficient, route.non_circular, route.target_preserving) == (
        False, True, True, False)
    assert route.reasons == ("not target-preserving: with the task's other clues the route has 2 answers, "
                             "not only the target (also Q9)",)


def test_route_verdicts_are_cached_per_task_and_route(story: Store) -> None:
    s = scorer(story)
    run(s, HOLDCO, claim("Q5", "P17", "Q4"))
    run(s, HOLDCO, claim("Q5", "P17", "Q4", id="again"))
    assert len(s.routes._cache) == 1


# -- EA / AEBA / GEA -------------------------------------------------------------------
def test_claim_accuracy_and_binding(sc: TaskScorer) -> None:
    # n = 6. supported: e0 (s1 with its reference URL), e1 (s2, no source), e2 (s3 with its URL),
    # e4 (s1 again) -> s = 4; e3 cites a URL s9 lacks, e5 is the reversed s2 -> unsupported.
    # bound: e0 (source, anchor Q1, component1) and e2 (anchor by label) -> b = 2; e1 has no
    # source; e4 names component2 for a component1 statement.
    r = run(sc,
            claim("Q1", "P176", "Q2", source=W_URL, anchor="Q1", component=C1),
            claim("Q2", "P159", "Q3", anchor="Q1", component=C1),
            claim("Q3", "P17", "Q4", source=S_URL, anchor="Widget", component=C1),
            claim("Q20", "P176", "Q2", source="https://example.org/other", anchor="Q20", component=C2),
            claim("Q1", "P176", "Q2", source=W_URL, anchor="Q20", component=C2),
            claim("Q3", "P159", "Q2", source=S_URL, anchor="Q1", component=C1))
    m = r.metrics
    assert (m.claims, m.supported, m.bound) == (6, 4, 2)
    assert (m.ea, m.aeba, m.gea) == (4 / 6, 2 / 4, 2 / 6)
    notes = {c.event: c for c in r.claims}
    assert "no source cited" in notes[1].reason
    assert "none of its references has P854" in notes[3].reason
    assert "bound to component component2, but the statement serves component1" in notes[4].reason


def test_a_claim_bound_to_the_wrong_anchor_gets_no_binding(sc: TaskScorer) -> None:
    r = run(sc, claim("Q1", "P176", "Q2", source=W_URL, anchor="Q20", component=C1))
    assert (r.metrics.ea, r.metrics.aeba, r.metrics.gea) == (1.0, 0.0, 0.0)
    assert "bound to anchor Q20, but component1 starts from Q1" in r.claims[0].reason


def test_a_claim_on_a_credited_route_binds_to_its_component(sc: TaskScorer) -> None:
    r = run(sc, claim("Q1", "P127", "Q5", anchor="Q1", component=C1),
            claim("Q5", "P17", "Q4", anchor="Q1", component=C1, source="https://example.org/holdco"))
    # both supported; the second cites s5's reference URL and serves component1 on its credited
    # route; the first cites nothing
    assert r.routes[0].credited
    assert (r.metrics.supported, r.metrics.bound) == (2, 1)
    assert "bound to component1 and its anchor Q1" in r.claims[1].reason


def test_a_custom_judge_decides_support(story: Store) -> None:
    s = scorer(story, judge=lambda claim, evidence: (True, "trusted"))
    r = score_trajectory(s.task, parse_trajectory(trajectory(
        claim("Q3", "P159", "Q2", source="x", anchor="Q1", component=C1))), scorer=s)
    assert (r.metrics.ea, r.metrics.aeba) == (1.0, 0.0)  # supported, but the statement is on no route


# -- visual metrics ----------------------------------------------------------------------
def asserted(box: tuple[float, float, float, float], entity: str) -> dict[str, Any]:
    return {"kind": "assert", "box": list(box), "entity": entity}


def test_anchor_precision_and_recall_with_a_one_to_one_matching(sc: TaskScorer) -> None:
    # predictions: widget box as "Widget" (IoU 1), the same box as Q10 (an alias of Acme, not
    # of the widget: no match), gadget box enlarged to 22x22 (IoU 400/484 = 0.83), a second
    # widget prediction shifted by 4 px (IoU 256/544 = 0.47 < 0.5), and the first one repeated
    # (counted once). Â = 4, M = 2 -> VA-P = 2/4, VA-R = 2/3 (three reference anchors).
    r = run(sc, asserted(WIDGET, "Widget"), asserted(WIDGET, "Q10"), asserted((60, 60, 82, 82), "Q20"),
            asserted((14, 14, 34, 34), "Q1"), asserted(WIDGET, "Widget"))
    m = r.metrics
    assert (m.predicted_anchors, m.matched_anchors, m.va_p, m.va_r) == (4, 2, 0.5, 2 / 3)
    # with IoU >= 0.4 the shifted box also matches the widget, but one-to-one keeps M = 2
    assert run(sc, asserted(WIDGET, "Q1"), asserted((14, 14, 34, 34), "Q1"),
               th=Thresholds(iou=0.4)).metrics.matched_anchors == 1


def test_alias_entity_matches_an_anchor(story: Store) -> None:
    from score_story import task

    from chaingraph.graph import EvidenceGraph, TraversalPolicy

    t = task().model_copy(update={"anchors": (*task().anchors, task().anchors[0].model_copy(
        update={"entity": "Q2", "region": (0.0, 50.0, 20.0, 70.0)}))})
    s = TaskScorer(t, EvidenceGraph.from_store(story, policy=TraversalPolicy(hub_limit=None)), store=story)
    r = score_trajectory(t, parse_trajectory(trajectory(asserted((0, 50, 20, 70), "Acme Corporation"))),
                         scorer=s)
    assert (r.metrics.va_p, r.metrics.va_r) == (1.0, 0.25)


def test_nvrc_counts_eligible_crops_and_a_full_image_view_does_not_count(sc: TaskScorer) -> None:
    # the full image covers every anchor but is not local; the 50x50 crop (25 % of the image)
    # holds the widget and the sticker: NVRC = 2/3; DRI counts necessary anchors only (the
    # sticker serves no component): DRI = 1, DRI/m = 1/3
    r = run(sc, view((0, 0, 100, 100)), view((0, 0, 50, 50)))
    m = r.metrics
    assert (m.nvrc, m.dri, m.dri_ratio) == (2 / 3, 1, 1 / 3)
    assert run(sc, view((0, 0, 100, 100))).metrics.nvrc == 0.0
    # a crop holding 40 % of the gadget does not cover it; one of 75 % does
    assert run(sc, view((60, 60, 80, 68))).metrics.nvrc == 0.0
    assert run(sc, view((55, 55, 80, 75))).metrics.nvrc == 1 / 3


def test_duplicate_crops_count_once(sc: TaskScorer) -> None:
    one = run(sc, view(WIDGET)).metrics
    two = run(sc, view(WIDGET), view(WIDGET), view((5, 5, 35, 35))).metrics
    assert (one.nvrc, one.dri) == (two.nvrc, two.dri) == (1 / 3, 1)


def test_revisits_same_anchor_other_anchor_and_what_does_not_count(sc: TaskScorer) -> None:
    search = {"kind": "search", "query": "widget maker", "results": ["https://example.org/widget"]}
    empty = {"kind": "search", "query": "nothing", "results": []}
    fetch = {"kind": "retrieve", "url": "https://example.org/gadget"}
    m = run(sc,
            view(WIDGET),        # 0 inspect the widget
            search,              # 1 evidence
            view(WIDGET),        # 2 revisit, same anchor (round 3)
            view(WIDGET),        # 3 immediate duplicate: ignored
            empty,               # 4 a search without results produces no evidence
            view(GADGET),        # 5 inspection, but no evidence since 2: not a revisit
            fetch,               # 6 evidence
            view(GADGET),        # 7 revisit, same anchor
            search,              # 8 evidence
            view(WIDGET),        # 9 revisit: the widget is another, still unresolved necessary anchor
            ).metrics
    assert (m.revisits, m.revisit, m.first_revisit_round) == (3, 1.0, 3)
    assert (m.same_anchor_returns, m.other_anchor_returns) == (2, 1)


def test_an_immediate_duplicate_crop_is_not_a_revisit(sc: TaskScorer) -> None:
    assert run(sc, view(WIDGET), view(WIDGET)).metrics.revisits == 0


def test_returning_to_a_resolved_or_unneeded_anchor_is_not_a_revisit(sc: TaskScorer) -> None:
    search = {"kind": "search", "results": ["u"]}
    # the gadget was resolved (asserted correctly) before the return, so looking at it after
    # inspecting the widget is no revisit; the sticker is not necessary
    m = run(sc, asserted(GADGET, "Q20"), view(WIDGET), search, view(GADGET), search, view(STICKER)).metrics
    assert m.revisits == 0
    # unresolved, the gadget return counts (other anchor); the round is the event's own
    m = run(sc, view(WIDGET), search, {**view(GADGET), "round": 7}).metrics
    assert (m.revisits, m.other_anchor_returns, m.first_revisit_round) == (1, 1, 7)


def test_a_full_image_view_is_no_inspection_for_revisits(sc: TaskScorer) -> None:
    search = {"kind": "search", "results": ["u"]}
    assert run(sc, view((0, 0, 100, 100)), search, view((0, 0, 100, 100))).metrics.revisits == 0


def test_thresholds_are_parameters(sc: TaskScorer) -> None:
    crop = view((0, 0, 60, 60))  # 36 % of the image, holds the widget and the sticker
    assert run(sc, crop).metrics.nvrc == 2 / 3
    assert run(sc, crop, th=Thresholds(max_share=0.3)).metrics.nvrc == 0.0
    assert run(sc, view((10, 10, 30, 22)), th=Thresholds(coverage=0.6)).metrics.nvrc == 1 / 3
    assert run(sc, view((10, 10, 30, 22)), th=Thresholds(coverage=0.7)).metrics.nvrc == 0.0


def test_coverage_against_the_reference_only_looks_for_no_route(sc: TaskScorer) -> None:
    from chaingraph.scoring import coverage

    run_ = parse_trajectory(trajectory(HOLDCO, claim("Q5", "P17", "Q4")))
    cov = coverage(sc, run_, alternatives=False)
    assert (cov.nc, cov.rc, cov.verdicts) == (0.4, 0.0, [])
    assert (coverage(sc, run_).nc, coverage(sc, run_).rc) == (0.6, 2 / 3)
