"""Score one trajectory against its task (DESIGN §12): :func:`score_trajectory`.

Graph half, per component: the reference route (:func:`~chaingraph.scoring.reference.reference_for`)
or, when the agent claimed an alternative route that the evidence graph proves sufficient,
non-circular and target-preserving (:mod:`chaingraph.scoring.routes`), that route. Then

* ``NC = |V̂ ∩ V_req| / |V_req|`` — ``V̂`` the entities the agent named (claim ends,
  asserted entities); a node matches by identity or an alias the judge accepts
  (:class:`~chaingraph.merge.DefaultJudge`: ``P460`` or equal normalised labels);
* ``RC = |Ê ∩ E_req| / |E_req|`` — a claimed statement matches a reference statement only
  with the same ends, the same relation (or an equivalent / inverse one) and the same
  direction;
* ``EA = s / n``, ``AEBA = b / s``, ``GEA = b / n`` over the ``n`` claims: ``s`` supported
  (a :class:`~chaingraph.scoring.claims.SupportJudge`), ``b`` supported, citing a source,
  and bound to the component whose (reference or credited) route holds the statement and to
  that component's anchor.

Visual half: :func:`~chaingraph.scoring.visual.visual_metrics`. Every ratio with an
empty denominator is 0; every trajectory counts, whatever its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from chaingraph.merge import AliasJudge, DefaultJudge
from chaingraph.scoring.claims import Evidence, GraphJudge, ResolvedClaim, SupportJudge, resolve_claim
from chaingraph.scoring.reference import (
    Reference,
    Relations,
    Resolver,
    Route,
    default_relations,
    reference_for,
)
from chaingraph.scoring.routes import RouteJudge, claimed_route
from chaingraph.scoring.visual import DEFAULT, RefAnchor, Thresholds, VisualMetrics, visual_metrics
from chaingraph.trajectory import AssertEvent, ClaimEvent, Trajectory

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
    "TaskScorer",
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


@dataclass
class TaskScorer:
    """Everything about one task that does not depend on the trajectory, built once and
    shared by every trajectory of the task (reference routes, adjudicated routes, aliases,
    support verdicts)."""

    task: Task
    graph: EvidenceGraph
    values: ValueLookup | None = None
    store: Store | None = None
    resolver: Resolver | None = None
    relations: Relations | None = None
    judge: SupportJudge = field(default_factory=GraphJudge)
    alias_judge: AliasJudge = field(default_factory=DefaultJudge)

    def __post_init__(self) -> None:
        self.relations = self.relations or default_relations()
        if self.resolver is None:
            from chaingraph.scoring.reference import Resolver as R

            self.resolver = R.from_store(self.store) if self.store is not None else R.from_graph(self.graph)
        self.evidence = Evidence(self.graph, self.relations, self.values, self.store)
        self.reference: Reference = reference_for(self.task, self.graph, self.relations, self.values)
        self.routes = RouteJudge(self.task, self.evidence)
        needed = {c.anchor for c in self.task.components}
        self.anchors = tuple(RefAnchor(a.entity, a.region, a.entity in needed)
                             for a in self.task.anchors if a.region is not None)
        self._same: dict[tuple[str, str], str | None] = {}
        self._support: dict[tuple[object, ...], tuple[bool, str]] = {}
        self._ref_nodes = list(dict.fromkeys(n for r in self.reference.routes for n in r.nodes))

    # -- equivalence -------------------------------------------------------------------
    def same(self, a: str, b: str) -> str | None:
        """Why ``a`` and ``b`` are the same entity (``"identical"``), or ``None``."""
        if a == b:
            return "identical"
        key = (a, b) if a < b else (b, a)
        if key not in self._same:
            self._same[key] = (self.alias_judge(self.graph, a, b) or self.alias_judge(self.graph, b, a)
                               if a.startswith("Q") and b.startswith("Q") else None)
        return self._same[key]

    def _node_map(self, claimed: set[str], claims: list[ResolvedClaim]) -> tuple[dict[str, str], list[str]]:
        from chaingraph.lookups import value_matches

        out: dict[str, str] = {}
        notes = []
        for x in sorted(claimed):
            if x in self._ref_nodes:
                out[x] = x
                continue
            for r in self._ref_nodes:
                why = self.same(x, r)
                if why is not None:
                    out[x] = r
                    notes.append(f"{x} matched {r}: {why}")
                    break
        for cl in claims:  # a claimed value matches a value target at the target's precision
            if cl.value is not None and cl.conclusion is not None and cl.conclusion not in out:
                for c, comp in enumerate(self.task.components):
                    if comp.target.value is not None and value_matches(comp.target.value, cl.value):
                        out[cl.conclusion] = self.reference.targets[c]
        return out, notes

    def supported(self, claim: ResolvedClaim) -> tuple[bool, str]:
        key = (claim.statement, claim.premise, claim.property, claim.value, claim.source)
        if key not in self._support:
            self._support[key] = self.judge(claim, self.evidence)
        return self._support[key]


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
    task, rel, resolver = sc.task, sc.relations, sc.resolver
    assert rel is not None and resolver is not None
    unresolved: list[Unresolved] = []
    claims: list[ResolvedClaim] = []
    asserted: dict[int, str | None] = {}
    for i, ev in enumerate(traj.events):
        if isinstance(ev, ClaimEvent):
            cl = resolve_claim(i, ev, resolver, rel)
            claims.append(cl)
            unresolved += [Unresolved(event=i, reason=p) for p in cl.problems]
        elif isinstance(ev, AssertEvent):
            ent, why = resolver.entity(ev.entity)
            asserted[i] = ent
            if ent is None:
                unresolved.append(Unresolved(event=i, reason=f"entity: {why}"))
    named = {n for cl in claims for n in (cl.premise, cl.conclusion, cl.anchor) if n is not None}
    named |= {e for e in asserted.values() if e is not None}
    node, alias_notes = sc._node_map(named, claims)

    def mapped(cl: ResolvedClaim) -> tuple[str, str, str] | None:
        if cl.statement is None:
            return None
        s, p, o = cl.statement
        return node.get(s, s), p, node.get(o, o)

    claimed_edges = {m for cl in claims if (m := mapped(cl)) is not None}
    routes: list[Route] = []
    route_notes: list[RouteNote] = []
    for c, ref in enumerate(sc.reference.routes):
        cid = task.component_id(c)
        if set(ref.edges) <= claimed_edges:
            routes.append(ref)
            continue
        mine = [cl for cl in claims if cl.component in (None, cid)]
        found = claimed_route(mine, ref.nodes[0], ref.nodes[-1], node)
        if found is None:
            routes.append(ref)
            continue
        alt = sc.routes.as_reference(c, found)
        if set(alt.edges) <= set(ref.edges):
            routes.append(ref)
            continue
        verdict = sc.routes.judge(c, found, ref)
        route_notes.append(RouteNote(component=cid, nodes=found.nodes, credited=verdict.credited,
                                     sufficient=verdict.sufficient, non_circular=verdict.non_circular,
                                     target_preserving=verdict.target_preserving, reasons=verdict.reasons))
        routes.append(alt if verdict.credited else ref)

    v_req = list(dict.fromkeys(n for r in routes for n in r.nodes))
    hit_nodes = {node.get(n, n) for n in named} | {node[x] for x in node}
    e_req = list(dict.fromkeys(e for r in routes for e in r.edges))
    nodes_hit = [n for n in v_req if n in hit_nodes]
    edges_hit = [e for e in e_req if e in claimed_edges]
    miss_nodes, miss_edges = _misses(task, routes, hit_nodes, claimed_edges, claims, mapped, sc)

    notes: list[ClaimNote] = []
    supported = bound = 0
    edge_owner = {e: r.component for r in routes for e in r.edges}
    for cl in claims:
        ok, why = sc.supported(cl)
        b = False
        if ok:
            supported += 1
            b, why = _binding(sc, cl, mapped(cl), edge_owner, why)
            bound += b
        st = None if cl.statement is None else " ".join(cl.statement)
        notes.append(ClaimNote(event=cl.event, statement=st, supported=ok, bound=b, reason=why))

    same: Callable[[str, str], bool] = lambda a, b: sc.same(a, b) is not None  # noqa: E731
    vis: VisualMetrics = visual_metrics(traj, sc.anchors, same, asserted, th)
    n = len(claims)
    metrics = Metrics(
        nc=_ratio(len(nodes_hit), len(v_req)), rc=_ratio(len(edges_hit), len(e_req)),
        va_p=vis.va_p, va_r=vis.va_r, nvrc=vis.nvrc, ea=_ratio(supported, n), aeba=_ratio(bound, supported),
        gea=_ratio(bound, n), dri=vis.dri, dri_ratio=vis.dri_ratio, revisit=float(vis.revisits > 0),
        revisits=vis.revisits, first_revisit_round=vis.first_revisit_round,
        same_anchor_returns=vis.same_anchor_returns, other_anchor_returns=vis.other_anchor_returns,
        nodes_required=len(v_req), nodes_matched=len(nodes_hit), edges_required=len(e_req),
        edges_matched=len(edges_hit), claims=n, supported=supported, bound=bound, anchors=len(sc.anchors),
        predicted_anchors=vis.predicted, matched_anchors=vis.matched)
    extra = [] if sc.anchors else ["the task has no anchor regions: VA, NVRC, DRI and revisits are 0"]
    return ItemScore(task=task.id, trajectory=traj.id, metrics=metrics, unmatched_nodes=tuple(miss_nodes),
                     unmatched_edges=tuple(miss_edges), routes=tuple(route_notes), aliases=tuple(alias_notes),
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


def _misses(task: Task, routes: list[Route], hit_nodes: set[str], claimed: set[tuple[str, str, str]],
            claims: list[ResolvedClaim], mapped: Callable[[ResolvedClaim], tuple[str, str, str] | None],
            sc: TaskScorer) -> tuple[list[Miss], list[Miss]]:
    nodes, edges = [], []
    seen_n: set[str] = set()
    seen_e: set[tuple[str, str, str]] = set()
    for r in routes:
        cid = task.component_id(r.component)
        for n in r.nodes:
            if n not in hit_nodes and n not in seen_n:
                seen_n.add(n)
                label = sc.graph.labels.get(n)
                nodes.append(Miss(component=cid, what=f"{n} ({label})" if label else n,
                                  reason="named in no claim or assertion"))
        for e in r.edges:
            if e in claimed or e in seen_e:
                continue
            seen_e.add(e)
            reason = "not claimed"
            for cl in claims:
                m = mapped(cl)
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
