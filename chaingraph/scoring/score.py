"""Score one trajectory against its task (DESIGN §12): :func:`score_trajectory`.

The graph half — NC and RC with alternative routes adjudicated — is
:func:`~chaingraph.scoring.scorer.coverage`. On top of it:

* ``EA = s / n``, ``AEBA = b / s``, ``GEA = b / n`` over the ``n`` claims: ``s`` supported
  (a :class:`~chaingraph.scoring.claims.SupportJudge`), ``b`` supported, citing a source,
  and bound to the component whose (reference or credited) route holds the statement and to
  that component's anchor;
* the visual half: :func:`~chaingraph.scoring.visual.visual_metrics`;
* an explanation of every reference node and statement the trajectory missed.

Every ratio with an empty denominator is 0; every trajectory counts, whatever its answer.

>>> from chaingraph.graph import EvidenceGraph, TraversalPolicy
>>> from chaingraph.tasks import Task
>>> from chaingraph.trajectory import parse_trajectory
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P176", "Q2"), ("s2", "Q2", "P17", "Q3")],
...                              policy=TraversalPolicy(hub_limit=None))
>>> task = Task.model_validate({"id": "t", "anchors": [{"entity": "Q1", "region": [0, 0, 10, 10]}],
...     "target": {"entity": "Q3"}, "components": [{"anchor": "Q1", "target": {"entity": "Q3"},
...     "steps": [{"property": "P176"}, {"property": "P17"}]}]})
>>> run = parse_trajectory({"task": "t", "image_size": [100, 100], "events": [
...     {"kind": "view", "box": [0, 0, 20, 20]},
...     {"kind": "claim", "subject": "Q1", "relation": "P176", "object": "Q2"},
...     {"kind": "claim", "subject": "Q3", "relation": "P17", "object": "Q2"}]})  # the wrong way round
>>> item = score_trajectory(task, run, g)
>>> m = item.metrics
>>> m.nc, m.rc, m.nvrc, m.ea
(1.0, 0.5, 1.0, 0.5)
>>> item.unmatched_edges[0].reason
'claimed in the reverse direction (event 2): Q3 P17 Q2'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from chaingraph.merge import AliasJudge, DefaultJudge
from chaingraph.scoring.claims import GraphJudge, ResolvedClaim, SupportJudge
from chaingraph.scoring.scorer import Coverage, TaskScorer, coverage
from chaingraph.scoring.visual import DEFAULT, Thresholds, VisualMetrics, visual_metrics
from chaingraph.trajectory import AssertEvent, Trajectory

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.lookups import ValueLookup
    from chaingraph.store import Store
    from chaingraph.tasks import Task

__all__ = [
    "ClaimNote",
    "ItemScore",
    "Metrics",
    "Miss",
    "RouteNote",
    "Unresolved",
    "score_trajectory",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Metrics(BaseModel):
    """The §12 metrics of one item (ratios in [0, 1]) and the counts behind them."""

    model_config = _FROZEN
    nc: float
    rc: float
    va_p: float
    va_r: float
    nvrc: float
    ea: float
    aeba: float
    gea: float
    dri: int
    dri_ratio: float
    revisit: float  # 1.0 when the item has at least one revisit
    revisits: int
    first_revisit_round: int | None
    same_anchor_returns: int
    other_anchor_returns: int
    nodes_required: int
    nodes_matched: int
    edges_required: int
    edges_matched: int
    claims: int
    supported: int
    bound: int
    anchors: int
    predicted_anchors: int
    matched_anchors: int


class Miss(BaseModel):
    """A reference node or statement the trajectory did not match, and why."""

    model_config = _FROZEN
    component: str
    what: str
    reason: str


class RouteNote(BaseModel):
    """An alternative route the agent claimed, and the verdict on it."""

    model_config = _FROZEN
    component: str
    nodes: tuple[str, ...]
    credited: bool
    sufficient: bool
    non_circular: bool
    target_preserving: bool
    reasons: tuple[str, ...]


class Unresolved(BaseModel):
    model_config = _FROZEN
    event: int
    reason: str


class ClaimNote(BaseModel):
    model_config = _FROZEN
    event: int
    statement: str | None
    supported: bool
    bound: bool
    reason: str


class ItemScore(BaseModel):
    """One trajectory's scores with the explanation of every miss and route verdict."""

    model_config = _FROZEN
    task: str
    trajectory: str | None = None
    file: str | None = None
    item: int | None = None
    metrics: Metrics
    unmatched_nodes: tuple[Miss, ...] = ()
    unmatched_edges: tuple[Miss, ...] = ()
    routes: tuple[RouteNote, ...] = ()
    aliases: tuple[str, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    claims: tuple[ClaimNote, ...] = ()
    notes: tuple[str, ...] = ()


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def score_trajectory(task: Task, trajectory: Trajectory, graph: EvidenceGraph | None = None, *,
                     scorer: TaskScorer | None = None, values: ValueLookup | None = None,
                     store: Store | None = None, thresholds: Thresholds | None = None,
                     judge: SupportJudge | None = None, alias_judge: AliasJudge | None = None) -> ItemScore:
    """Score ``trajectory`` against ``task`` on ``graph`` (or through a prepared ``scorer``,
    which many trajectories of one task should share: it caches route verdicts)."""
    if scorer is None:
        if graph is None:
            raise TypeError("score_trajectory needs the evidence graph or a TaskScorer")
        scorer = TaskScorer(task, graph, values, store, judge=judge or GraphJudge(),
                            alias_judge=alias_judge or DefaultJudge())
    return _score(scorer, trajectory, thresholds or DEFAULT)


def _score(sc: TaskScorer, traj: Trajectory, th: Thresholds) -> ItemScore:
    task = sc.task
    cov = coverage(sc, traj, claims=True)
    unresolved = [Unresolved(event=cl.event, reason=p) for cl in cov.claims for p in cl.problems]
    for i, ent in cov.asserted.items():
        if ent is None:
            ev = traj.events[i]
            assert isinstance(ev, AssertEvent) and sc.resolver is not None
            unresolved.append(Unresolved(event=i, reason=f"entity: {sc.resolver.entity(ev.entity)[1]}"))
    unresolved.sort(key=lambda u: u.event)
    route_notes = [RouteNote(component=task.component_id(c), nodes=found.nodes, credited=v.credited,
                             sufficient=v.sufficient, non_circular=v.non_circular,
                             target_preserving=v.target_preserving, reasons=v.reasons)
                   for c, found, v in cov.verdicts]
    miss_nodes, miss_edges = _misses(sc, cov)
    notes: list[ClaimNote] = []
    supported = bound = 0
    edge_owner = {e: r.component for r in cov.routes for e in r.edges}
    for cl in cov.claims:
        ok, why = sc.supported(cl)
        b = False
        if ok:
            supported += 1
            b, why = _binding(sc, cl, cov.mapped(cl), edge_owner, why)
            bound += b
        st = None if cl.statement is None else " ".join(cl.statement)
        notes.append(ClaimNote(event=cl.event, statement=st, supported=ok, bound=b, reason=why))

    same: Callable[[str, str], bool] = lambda a, b: sc.same(a, b) is not None  # noqa: E731
    vis: VisualMetrics = visual_metrics(traj, sc.anchors, same, cov.asserted, th)
    n = len(cov.claims)
    metrics = Metrics(
        nc=cov.nc, rc=cov.rc, va_p=vis.va_p, va_r=vis.va_r, nvrc=vis.nvrc, ea=_ratio(supported, n),
        aeba=_ratio(bound, supported), gea=_ratio(bound, n), dri=vis.dri, dri_ratio=vis.dri_ratio,
        revisit=float(vis.revisits > 0), revisits=vis.revisits, first_revisit_round=vis.first_revisit_round,
        same_anchor_returns=vis.same_anchor_returns, other_anchor_returns=vis.other_anchor_returns,
        nodes_required=len(cov.v_req), nodes_matched=cov.nodes_hit, edges_required=len(cov.e_req),
        edges_matched=cov.edges_hit, claims=n, supported=supported, bound=bound, anchors=len(sc.anchors),
        predicted_anchors=vis.predicted, matched_anchors=vis.matched)
    extra = [] if sc.anchors else ["the task has no anchor regions: VA, NVRC, DRI and revisits are 0"]
    return ItemScore(task=task.id, trajectory=traj.id, metrics=metrics, unmatched_nodes=tuple(miss_nodes),
                     unmatched_edges=tuple(miss_edges), routes=tuple(route_notes), aliases=tuple(cov.aliases),
                     unresolved=tuple(unresolved), claims=tuple(notes),
                     notes=(*sc.reference.notes, *extra))


def _binding(sc: TaskScorer, cl: ResolvedClaim, key: tuple[str, str, str] | None,
             owner: dict[tuple[str, str, str], int], why: str) -> tuple[bool, str]:
    task = sc.task
    if cl.source is None:
        return False, f"{why}; no source cited, so no grounding credit"
    if cl.anchor is None or cl.component is None:
        return False, f"{why}; no anchor/component assigned, so no grounding credit"
    c = owner.get(key) if key is not None else None
    if c is None:
        return False, f"{why}; the statement is on no component's route"
    cid = task.component_id(c)
    if cl.component != cid:
        return False, f"{why}; bound to component {cl.component}, but the statement serves {cid}"
    anchor = task.components[c].anchor
    if sc.same(cl.anchor, anchor) is None:
        return False, f"{why}; bound to anchor {cl.anchor}, but {cid} starts from {anchor}"
    return True, f"{why}; bound to {cid} and its anchor {anchor}"


def _misses(sc: TaskScorer, cov: Coverage) -> tuple[list[Miss], list[Miss]]:
    nodes, edges = [], []
    seen_n: set[str] = set()
    seen_e: set[tuple[str, str, str]] = set()
    for r in cov.routes:
        cid = sc.task.component_id(r.component)
        for n in r.nodes:
            if n not in cov.named and n not in seen_n:
                seen_n.add(n)
                label = sc.graph.labels.get(n)
                nodes.append(Miss(component=cid, what=f"{n} ({label})" if label else n,
                                  reason="named in no claim or assertion"))
        for e in r.edges:
            if e in cov.claimed or e in seen_e:
                continue
            seen_e.add(e)
            reason = "not claimed"
            for cl in cov.claims:
                m = cov.mapped(cl)
                if m is None:
                    continue
                if (m[2], m[1], m[0]) == e:
                    reason = f"claimed in the reverse direction (event {cl.event}): {' '.join(m)}"
                    break
                if {m[0], m[2]} == {e[0], e[2]}:
                    reason = f"claimed with another relation (event {cl.event}): {' '.join(m)}"
                    break
            edges.append(Miss(component=cid, what=" ".join(e), reason=reason))
    return nodes, edges
