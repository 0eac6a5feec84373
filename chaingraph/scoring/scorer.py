"""NC and RC of a trajectory, with the alternative routes it claimed adjudicated (DESIGN §12).

:class:`TaskScorer` holds what does not depend on the trajectory — the task's reference
routes, mention resolution, alias verdicts, route verdicts (cached per route), support
verdicts — so that many trajectories of one task share it. :func:`coverage` is the graph
half of scoring: the claims resolved, named nodes mapped onto reference nodes (identity or
an accepted alias), each component's route chosen (the reference, or a credited
alternative), and

* ``NC = |V̂ ∩ V_req| / |V_req|`` — ``V̂`` the entities the agent named (claim ends and
  anchors, asserted entities);
* ``RC = |Ê ∩ E_req| / |E_req|`` — a claimed statement matches only with the same ends, the
  same relation (or an equivalent / inverse one) and the same direction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

from chaingraph.graph import EvidenceGraph, per_graph
from chaingraph.merge import SAME_AS, AliasJudge, DefaultJudge, normalise_label
from chaingraph.scoring.claimed import Found, RouteStep, refused, route_of, route_path
from chaingraph.scoring.claims import (
    Evidence,
    GraphJudge,
    Resolved,
    ResolvedClaim,
    SupportJudge,
    resolve_claim,
)
from chaingraph.scoring.records import (
    ClaimRecord,
    Detail,
    Entry,
    ItemClaims,
    Key,
    Named,
    asserted,
    item_claims,
    named,
    node_id,
    read,
    read_bits,
)
from chaingraph.scoring.reference import (
    Reference,
    Relations,
    Resolver,
    Route,
    default_relations,
    reference_for,
)
from chaingraph.scoring.routes import ClaimedRoute, RouteJudge, RouteVerdict
from chaingraph.scoring.routes import claimed_route as route_of_claims
from chaingraph.scoring.visual import RefAnchor
from chaingraph.trajectory import Trajectory

if TYPE_CHECKING:
    from chaingraph.lookups import ValueLookup
    from chaingraph.store import Store
    from chaingraph.tasks import Task

__all__ = ["Coverage", "TaskScorer", "coverage"]


#: the alternative routes an item claimed, each ``(component, route, verdict)``
Verdicts = tuple[tuple[int, ClaimedRoute, RouteVerdict], ...]
#: an alternative route's verdict (as :data:`Verdicts` of one) and the route it credits
#: (``None``: refused); ``None``: no alternative to judge (its statements are all the reference's)
Adjudged = tuple[Verdicts, Route | None] | None

@per_graph
def _same_as(g: EvidenceGraph) -> dict[str, dict[str, str]]:
    """Every ``P460`` pair of ``g``, both ways, with :class:`DefaultJudge`'s reason (read once
    per graph)."""
    got: dict[str, dict[str, str]] = {}
    code = g.property_ids.index(SAME_AS) if SAME_AS in g.property_ids else -1
    for e in np.flatnonzero(g.prop_codes == code).tolist() if code >= 0 else ():  # compact arrays
        s, o = (g.name(v) for v in g.edge_endpoints(e))
        why = f"{SAME_AS} said to be the same as ({g.edge_statement(e)})"
        got.setdefault(s, {}).setdefault(o, why)
        got.setdefault(o, {}).setdefault(s, why)
    return got


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

            self.resolver = R.for_source(self.store, self.graph)
        self.evidence = Evidence(self.graph, self.relations, self.values, self.store)
        self.reference: Reference = reference_for(self.task, self.graph, self.relations, self.values)
        self.routes = RouteJudge(self.task, self.evidence)
        needed = {c.anchor for c in self.task.components}
        self.anchors = tuple(RefAnchor(a.entity, a.region, a.entity in needed)
                             for a in self.task.anchors if a.region is not None)
        self._same: dict[tuple[str, str], str | None] = {}
        self._support: dict[tuple[object, ...], tuple[bool, str]] = {}
        self._ref_nodes = list(dict.fromkeys(n for r in self.reference.routes for n in r.nodes))
        self._ref_set = frozenset(self._ref_nodes)
        self._matches: dict[str, tuple[str, str] | None] = {}
        self._resolved: dict[tuple[str | None, ...], Resolved] = {}
        self._records: dict[Key, ClaimRecord] = {}  # claim mentions -> their record for this task
        self._record_list: list[ClaimRecord] = []  # by id
        self._claimed_routes: dict[tuple[object, ...], ClaimedRoute] = {}  # see ItemClaims.route
        # per component: key of a route claimed.refused refused -> its pending verdict, and the
        # parts of an item's verdicts that are that verdict alone (shared by the items claiming it)
        self._pendings: list[dict[tuple[object, ...], tuple[_Pending, Parts]]] = [
            {} for _ in self.reference.routes]
        # per component: the entries of a route's claims -> claimed._refused
        self._refusals: list[dict[tuple[int, ...], bool]] = [{} for _ in self.reference.routes]
        # per component: the ends of an item's claims a route may use -> claimed._search
        self._searches: list[dict[tuple[int, ...], tuple[tuple[int, ...], list[int]] | None]] = [
            {} for _ in self.reference.routes]
        self._route_steps: dict[int, RouteStep] = {}  # claim number -> claimed._route_step
        # (event, claim number, source, component) -> the claim as a step (claimed._new_route)
        self._route_claims: dict[tuple[int, int, str | None, str | None], ResolvedClaim] = {}
        # property -> the steps forward and backward by it (claimed._new_route)
        self._walks: dict[str, tuple[tuple[str, Literal["forward"]], tuple[str, Literal["backward"]]]] = {}
        # the verdicts of items, one tuple per distinct list (its routes and verdicts are shared)
        self._verdict_lists: dict[tuple[int, ...], Verdicts] = {}
        self._asserted: dict[str, Named] = {}
        self._assertions: dict[str, tuple[str | None, tuple[str, ...]]] = {}
        self._value_targets = any(c.target.value is not None for c in self.task.components)
        self._ref_edges = [frozenset(r.edges) for r in self.reference.routes]
        self._route_ends: dict[str, int] = {}  # a route's start or target -> its bits (records.linked)
        for c, r in enumerate(self.reference.routes):
            for end, bit in ((r.nodes[0], 1 << 2 * c), (r.nodes[-1], 1 << 2 * c + 1)):
                self._route_ends[end] = self._route_ends.get(end, 0) | bit
        self._ids = [self.task.component_id(c) for c in range(len(self.task.components))]
        self._v_req = tuple(dict.fromkeys(n for r in self.reference.routes for n in r.nodes))
        self._e_req = tuple(dict.fromkeys(e for r in self.reference.routes for e in r.edges))
        self._known = self._default_aliases() if type(self.alias_judge) is DefaultJudge else None
        # the claim index (records.index) and the bits it speaks in (records.read)
        self._index: dict[Key, Entry] = {}
        self._entries: list[int] = []  # event, entry of each linked claim of the item coverage() reads
        self._node_ids: dict[str, int] = {}  # records.node_id
        self._mentions: dict[str, int] = {}  # records.mention
        # relation mention -> Relations.orient of its property (() : none)
        self._relation_ids: dict[str, tuple[str, bool] | tuple[()]] = {}
        self._node_names: list[str] = [""]  # by number; 0: none
        self._end_count: list[int] = [0]  # by number: index entries with the node as an end
        self._assert_bits: dict[str, int] = {}
        nv, ne = len(self._v_req), len(self._e_req)
        self._vbit = {n: 1 << i for i, n in enumerate(self._v_req)}
        self._ebit = {e: 1 << nv + i for i, e in enumerate(self._e_req)}
        self._tshift = nv + ne
        self._vmask, self._emask = (1 << nv) - 1, ((1 << ne) - 1) << nv
        self._route_emask = [sum(self._ebit[e] for e in edges) for edges in self._ref_edges]
        self._oshift = self._tshift + 2 * len(self.reference.routes)
        self._linked_bit = 1 << self._oshift + len(self.reference.routes)
        self._hshift = self._oshift + len(self.reference.routes) + 1
        self._low = (1 << self._hshift) - 1
        self._sole: dict[int, Key] = {}  # node number -> the one entry with it as an end
        self._flips = 0  # entries given their linked bits after they were made
        self._route_pairs = [(node_id(self, r.nodes[0]), node_id(self, r.nodes[-1]))
                             for r in self.reference.routes]
        for start, target in self._route_pairs:  # never leaves (claimed.route_path)
            self._end_count[start] = self._end_count[target] = 2
        # per component: its number, reference route, and the bits coverage() tests before a
        # route search: its reference statements, its start and target touched, a linked
        # claim that states what its reference does not (records.linked)
        self._checks = tuple((c, r, self._route_emask[c], 3 << self._tshift + 2 * c, 1 << self._oshift + c)
                             for c, r in enumerate(self.reference.routes))
        # per component: id of a route in _claimed_routes -> its verdict and the route it credits
        self._adjudged: list[dict[int, Adjudged]] = [{} for _ in self.reference.routes]

    def _default_aliases(self) -> dict[str, tuple[dict[str, str], str | None]]:
        """What :class:`DefaultJudge` would say about the reference nodes and anchors, read
        once: their ``P460`` partners (with the reason) and their normalised labels; and,
        for :meth:`_match`, the first reference node each partner and each label points to."""
        g = self.graph
        same_as = _same_as(g)
        out: dict[str, tuple[dict[str, str], str | None]] = {}
        for r in {*self._ref_nodes, *(a.entity for a in self.task.anchors)}:
            label = g.labels.get(r)
            out[r] = (same_as.get(r, {}), normalise_label(label) if label else None)
        self._by_partner: dict[str, tuple[int, str, str]] = {}
        self._by_label: dict[str, tuple[int, str]] = {}
        for i, r in enumerate(self._ref_nodes):
            partners, label = out[r]
            for other, why in partners.items():
                self._by_partner.setdefault(other, (i, r, why))
            if label:
                self._by_label.setdefault(label, (i, r))
        return out

    def _assertion(self, mention: str) -> tuple[str | None, tuple[str, ...]]:
        """The entity an asserted mention names and the reference node it is (cached)."""
        got = self._assertions.get(mention)
        if got is None:
            assert self.resolver is not None
            ent = self.resolver.entity(mention)[0]
            got = self._assertions[mention] = (ent, () if ent is None else self._entity_named(ent)[0])
        return got

    def _entity_named(self, entity: str) -> Named:
        """:func:`~chaingraph.scoring.records.named` of one asserted entity (cached)."""
        got = self._asserted.get(entity)
        if got is None:
            got = self._asserted[entity] = named(self, (entity,))
        return got

    # -- equivalence -------------------------------------------------------------------
    def same(self, a: str, b: str) -> str | None:
        """Why ``a`` and ``b`` are the same entity (``"identical"``), or ``None``."""
        if a == b:
            return "identical"
        key = (a, b) if a < b else (b, a)
        if self._known is not None and (a in self._known or b in self._known):
            known, other = (a, b) if a in self._known else (b, a)
            partners, label = self._known[known]
            if other in partners:
                return partners[other]
            mine = self.graph.labels.get(other)
            if label and mine and normalise_label(mine) == label:
                return f"equal normalised labels {label!r}"
            return None
        if key not in self._same:
            self._same[key] = (self.alias_judge(self.graph, key[0], key[1])
                               if a.startswith("Q") and b.startswith("Q") else None)
        return self._same[key]

    def _match(self, x: str) -> tuple[str, str] | None:
        """The first reference node ``x`` is (itself, or an alias), with the reason; cached."""
        if x not in self._matches:
            found = None
            if x in self._ref_set:
                found = (x, "identical")
            elif self._known is not None:  # what same(x, r) says of the first r, read off indexes
                by_partner = self._by_partner.get(x)
                label = self.graph.labels.get(x)
                key = normalise_label(label) if label else None
                by_label = self._by_label.get(key) if key else None
                if by_partner is not None and (by_label is None or by_partner[0] <= by_label[0]):
                    found = (by_partner[1], by_partner[2])
                elif by_label is not None:
                    found = (by_label[1], f"equal normalised labels {key!r}")
            else:
                for r in self._ref_nodes:
                    why = self.same(x, r)
                    if why is not None:
                        found = (r, why)
                        break
            self._matches[x] = found
        return self._matches[x]

    def _node_map(self, claimed: set[str], claims: list[ResolvedClaim]) -> tuple[dict[str, str], list[str]]:
        from chaingraph.lookups import value_matches

        out: dict[str, str] = {}
        notes = []
        matches = self._matches
        for x in claimed:
            hit = matches[x] if x in matches else self._match(x)
            if hit is not None:
                out[x] = hit[0]
                if hit[0] != x:
                    notes.append(f"{x} matched {hit[0]}: {hit[1]}")
        notes.sort()
        for cl in claims if self._value_targets else ():  # a claimed value matches a value target
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


class Coverage:
    """The graph half of one item's score. What an item read through the claim index does
    not need for NC and RC — its claims, assertions, ``named``, ``node``, ``aliases`` and
    ``claimed``, and the routes and verdicts of the alternative routes it claimed that credit
    nothing (:func:`~chaingraph.scoring.claimed.refused`) — is worked out on first use (a
    scorer holding many items then keeps few containers per item, and NC and RC cost no
    explanation of a refused route)."""

    __slots__ = ("_asserted", "_claims", "_detail", "_pending", "_sc", "_traj", "_verdicts", "e_req",
                 "edges_hit", "nodes_hit", "routes", "v_req")

    def __init__(self, sc: TaskScorer, traj: Trajectory, routes: Sequence[Route],
                 verdicts: Sequence[tuple[int, ClaimedRoute, RouteVerdict]], v_req: tuple[str, ...],
                 e_req: tuple[tuple[str, str, str], ...], nodes_hit: int, edges_hit: int,
                 general: tuple[list[ResolvedClaim], dict[int, str | None], Detail] | None = None) -> None:
        self._sc, self._traj = sc, traj
        self.routes = routes  # per component: the reference, or the credited alternative
        self._verdicts = verdicts or None  # most items have none: keep no empty list per item
        # the verdicts in parts, some routes not yet judged (claimed.refused): made on first read
        self._pending: Sequence[Verdicts | _Pending] | None = None
        self.v_req, self.e_req, self.nodes_hit, self.edges_hit = v_req, e_req, nodes_hit, edges_hit
        self._claims: Sequence[ResolvedClaim] | None
        self._asserted: Mapping[int, str | None] | None
        self._detail: Detail | None
        if general is None:
            self._claims = self._asserted = self._detail = None
        else:
            self._claims, self._asserted, self._detail = general

    @property
    def claims(self) -> Sequence[ResolvedClaim]:
        if self._claims is None:
            self._claims = item_claims(self._sc, self._traj)
        return self._claims

    @property
    def asserted(self) -> Mapping[int, str | None]:
        """Event -> the entity the assertion names (``None``: unresolved)."""
        if self._asserted is None:
            self._asserted = asserted(self._sc, self._traj)
        return self._asserted

    def _details(self) -> Detail:
        if self._detail is None:
            claims = self.claims
            assert isinstance(claims, ItemClaims)
            self._detail = claims.detail(self.asserted)
        return self._detail

    @property
    def verdicts(self) -> Sequence[tuple[int, ClaimedRoute, RouteVerdict]]:
        """Every alternative route adjudicated: ``(component, route, verdict)``."""
        if self._pending is not None:
            self._verdicts, self._pending = _judged(self._sc, self._traj, self._pending) or None, None
        # a list of its own: the tuple is shared by the items that had the same verdicts
        return list(self._verdicts) if self._verdicts is not None else []

    @property
    def named(self) -> AbstractSet[str]:
        """The reference node (or itself) of every entity the agent named."""
        return self._details()[0]

    @property
    def node(self) -> Mapping[str, str]:
        """Named node -> the reference node it is (identity or alias)."""
        return self._details()[1]

    @property
    def aliases(self) -> Sequence[str]:
        return self._details()[2]

    @property
    def claimed(self) -> AbstractSet[tuple[str, str, str]]:
        """Claimed statements, canonical, ends mapped onto reference nodes."""
        return self._details()[3]

    @property
    def nc(self) -> float:
        return self.nodes_hit / len(self.v_req) if self.v_req else 0.0

    @property
    def rc(self) -> float:
        return self.edges_hit / len(self.e_req) if self.e_req else 0.0

    def mapped(self, cl: ResolvedClaim) -> tuple[str, str, str] | None:
        """A claim's statement with its ends mapped onto reference nodes."""
        if cl.statement is None:
            return None
        s, p, o = cl.statement
        node = self.node
        return node.get(s, s), p, node.get(o, o)


def coverage(sc: TaskScorer, traj: Trajectory, *, alternatives: bool = True,
             claims: bool = False) -> Coverage:
    """Resolve ``traj``'s claims, adjudicate the routes it claimed, and count NC and RC
    (``alternatives=False``: against the reference routes only, no route is looked for;
    ``claims``: the caller will read every claim and assertion, so read them on the way)."""
    records: list[int] | None = None
    asserted_: dict[int, str | None] | None = None
    entries = sc._entries  # the scorer's one list, refilled by every read
    entries.clear()
    if claims:
        records, asserted_ = [], {}
        bits = read(sc, traj, records, asserted_, entries)
    else:
        bits = read_bits(sc, traj, entries if alternatives else None)
    if bits is None:  # a claim of a value: the general path
        return _general(sc, traj, alternatives)
    routes: Sequence[Route] = sc.reference.routes
    kept: Verdicts = ()
    parts: Parts | None = None  # with a refused route not yet judged
    credited = False
    for c, ref, mask, ends, others in sc._checks if alternatives else ():
        # nothing to adjudicate when the reference is all claimed, when no claimed path can
        # join anchor and target (both must be ends of linked claims), or when no linked
        # claim states what the reference does not (records.linked)
        if bits & mask == mask or bits & ends != ends or not bits & others:
            continue
        path = route_path(sc, traj, c, entries)
        if path is None:
            continue
        found = sc._claimed_routes.get(path[0])
        if found is None:
            pending = sc._pendings[c].get(path[0])
            if pending is None and refused(sc, traj, c, path):
                # a new route that credits nothing: its ClaimedRoute and verdict are made when
                # the item's verdicts are read (Coverage.verdicts, in the order kept here); the
                # route's key says its claims, events, sources and components, so every item
                # with the key shares the first one's path
                first = _Pending(c, ref, path)
                pending = sc._pendings[c][path[0]] = (first, ((), first))
            if pending is not None:
                parts = pending[1] if parts is None and not kept else (*(parts or (kept,)), pending[0])
                continue
            found = route_of(sc, traj, path)
        got = _adjudged(sc, c, ref, found)
        if got is not None:
            if parts is not None:
                parts = (*parts, got[0])
            else:  # one verdict: its tuple is shared by every item that has it; more: share the list
                kept = got[0] if not kept else _shared(sc, kept + got[0])
            if got[1] is not None:
                if not credited:
                    routes, credited = list(routes), True
                routes[c] = got[1]  # type: ignore[index]
    if not credited:
        cov = Coverage(sc, traj, routes, kept, sc._v_req, sc._e_req, (bits & sc._vmask).bit_count(),
                       (bits & sc._emask).bit_count())
    else:
        v_req = tuple(dict.fromkeys(n for r in routes for n in r.nodes))
        e_req = tuple(dict.fromkeys(e for r in routes for e in r.edges))
        cov = Coverage(sc, traj, routes, kept, v_req, e_req, 0, 0)
    if parts is not None:
        cov._pending = parts
    if records is not None:
        cov._claims, cov._asserted = ItemClaims(sc, traj, tuple(records)), asserted_
    if not credited:
        return cov
    hit, _node, _notes, claimed = cov._details()
    cov.nodes_hit, cov.edges_hit = len(hit.intersection(v_req)), len(claimed.intersection(e_req))
    return cov


def _adjudged(sc: TaskScorer, c: int, ref: Route, found: ClaimedRoute) -> Adjudged:
    """:func:`_adjudicate`, once per route the scorer keeps (``found`` is one of
    ``sc._claimed_routes``, so its ``id`` stays its own)."""
    known, rid = sc._adjudged[c], id(found)
    return known[rid] if rid in known else known.setdefault(rid, _adjudicate(sc, c, ref, found))


def _adjudicate(sc: TaskScorer, c: int, ref: Route, found: ClaimedRoute | None) -> Adjudged:
    """The verdict on the route ``found`` for component ``c`` (as a list of one) and, when
    credited, the route that replaces the reference; ``None`` when there is no alternative
    route to judge."""
    if found is None:
        return None
    alt = sc.routes.as_reference(c, found)
    if sc._ref_edges[c].issuperset(alt.edges):
        return None
    verdict = sc.routes.judge(c, found, ref)
    return ((c, found, verdict),), alt if verdict.credited else None


class _Pending(NamedTuple):
    """A claimed route that :func:`~chaingraph.scoring.claimed.refused` says credits
    nothing, found for component ``c`` (reference route ``ref``), not yet judged."""

    c: int
    ref: Route
    path: Found


#: an item's verdicts in parts, some of them routes not yet judged (:func:`_judged`)
Parts = tuple["Verdicts | _Pending", ...]


def _judged(sc: TaskScorer, traj: Trajectory, parts: Sequence[Verdicts | _Pending]) -> Verdicts:
    """The verdicts of an item whose refused routes were left to be judged (what
    :func:`coverage` would have kept judging each at once)."""
    kept: Verdicts = ()
    for part in parts:
        if isinstance(part, _Pending):
            found = route_of(sc, traj, part.path)
            got = _adjudged(sc, part.c, part.ref, found)
            if got is None:
                continue
            if got[1] is not None:
                raise AssertionError(f"a route claimed.refused refused is credited: {found}")
            part = got[0]
        if part:
            kept = part if not kept else _shared(sc, kept + part)
    return kept


def _shared(sc: TaskScorer, verdicts: Verdicts) -> Verdicts:
    """One tuple per distinct list of shared verdicts."""
    ids = tuple(id(v) for v in verdicts)
    got = sc._verdict_lists.get(ids)
    return got if got is not None else sc._verdict_lists.setdefault(ids, verdicts)


def _general(sc: TaskScorer, traj: Trajectory, alternatives: bool) -> Coverage:
    """:func:`coverage` of any trajectory: every claim resolved on its own (the path for
    claims of values, and the oracle of the claim index in the tests)."""
    claims, asserted_, detail = _read_general(sc, traj)
    hit, node, _notes, claimed = detail
    routes: Sequence[Route] = sc.reference.routes
    verdicts: list[tuple[int, ClaimedRoute, RouteVerdict]] = []
    credited = False
    touched = {x for e in claimed for x in (e[0], e[2])}
    for c, ref in enumerate(sc.reference.routes if alternatives else ()):
        if claimed.issuperset(sc._ref_edges[c]) or not touched.issuperset((ref.nodes[0], ref.nodes[-1])):
            continue
        cid = sc._ids[c]
        found = route_of_claims([cl for cl in claims if cl.component is None or cl.component == cid],
                                ref.nodes[0], ref.nodes[-1], node)
        got = _adjudicate(sc, c, ref, found)
        if got is not None:
            verdicts += got[0]
            if got[1] is not None:
                if not credited:
                    routes, credited = list(routes), True
                routes[c] = got[1]  # type: ignore[index]
    if credited:
        v_req = tuple(dict.fromkeys(n for r in routes for n in r.nodes))
        e_req = tuple(dict.fromkeys(e for r in routes for e in r.edges))
    else:
        v_req, e_req = sc._v_req, sc._e_req
    return Coverage(sc, traj, routes, tuple(verdicts), v_req, e_req, len(hit.intersection(v_req)),
                    len(claimed.intersection(e_req)), general=(claims, asserted_, detail))


def _read_general(sc: TaskScorer, traj: Trajectory) -> tuple[list[ResolvedClaim], dict[int, str | None],
                                                              Detail]:
    """:func:`~chaingraph.scoring.records.read` for any trajectory: every claim resolved on
    its own, claimed values matched against value targets."""
    rel, resolver = sc.relations, sc.resolver
    assert rel is not None and resolver is not None
    claims: list[ResolvedClaim] = []
    asserted: dict[int, str | None] = {}
    for i, ev in enumerate(traj.events):
        if ev.kind == "claim":
            claims.append(resolve_claim(i, ev, resolver, rel, sc._resolved))
        elif ev.kind == "assert":
            asserted[i] = resolver.entity(ev.entity)[0]
    named = {n for cl in claims for n in (cl.premise, cl.conclusion, cl.anchor) if n is not None}
    named |= {e for e in asserted.values() if e is not None}
    node, alias_notes = sc._node_map(named, claims)
    claimed = set()
    for cl in claims:
        if cl.statement is not None:
            s, p, o = cl.statement
            claimed.add((node.get(s, s), p, node.get(o, o)))
    return claims, asserted, ({node.get(n, n) for n in named}, node, alias_notes, claimed)
