"""Claimed routes over the claim index (:mod:`chaingraph.scoring.records`): the route an
item claimed for a component, found from the entries of its linked claims
(:func:`route_path`), whether it credits anything (:func:`refused`), and its
:class:`~chaingraph.scoring.routes.ClaimedRoute` (:func:`route_of`), made only when the
route credits or its verdict is read.

A route search depends only on the ends of the claims it may use, and whether a route
credits only on its claims and the order of their events, so a task's scorer keeps both
(``sc._searches``, ``sc._refusals``): many items claim the same route at other events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, cast

from chaingraph.scoring.claims import ResolvedClaim
from chaingraph.scoring.records import _NODE, Entry, key, make_record
from chaingraph.scoring.routes import ClaimedRoute, shortest_path, shortest_path_few

if TYPE_CHECKING:
    from chaingraph.scoring.scorer import TaskScorer
    from chaingraph.trajectory import ClaimEvent, Trajectory

__all__ = ["Found", "RouteStep", "claimed_route", "refused", "route_of", "route_path"]

_ENDS = (1 << 64) - 1
_FEW = 24  # up to this many claims, a route search scans them (routes.shortest_path_few)
#: a claimed route found over the index, before its :class:`ClaimedRoute` is made: its key
#: in ``sc._claimed_routes``, its nodes (numbers), and per step the event and the index entry
#: of the claim that made it (:func:`route_path`)
Found = tuple[tuple[object, ...], tuple[int, ...], list[int], list[Entry]]


def claimed_route(sc: TaskScorer, traj: Trajectory, c: int,
                  entries: Sequence[Entry] | None = None) -> ClaimedRoute | None:
    """:func:`route_path` and :func:`route_of`: the claimed route of component ``c`` of an
    item :func:`~chaingraph.scoring.records.read` read, or ``None``."""
    found = route_path(sc, traj, c, entries)
    return None if found is None else route_of(sc, traj, found)


def route_path(sc: TaskScorer, traj: Trajectory, c: int,
               entries: Sequence[Entry] | None = None) -> Found | None:
    """:func:`~chaingraph.scoring.routes.claimed_route` over the claims of an item
    :func:`~chaingraph.scoring.records.read` read (their entries are in the index) that serve component
    ``c`` (or none), from its reference route's start to its target; ``None`` also when
    every claim it could be made of states a statement of the reference route (such a
    route is no alternative: nothing to adjudicate), which the entries' bits say without a
    search.

    A claim with an end that no other entry of the task has (``sc._end_count`` 1; a route's
    start and target count 2 from the start) is left out of the search: in the item that
    end is a leaf, which a breadth-first search reaches along its one edge and leaves without
    discovering anything, so the first shortest path is the same without the claim (an
    item's one-off wrong claim touches the anchor that way; without it many items are seen
    to have no route before any search). Items whose route is made of the same
    claims at the same events (with the same sources) share one :class:`ClaimedRoute` (kept
    by the task's scorer). ``entries``: what :func:`~chaingraph.scoring.records.read` gave of
    the item's linked claims (else they are looked up again)."""
    shift, flag = sc._hshift, sc._linked_bit
    at: list[int] = []  # the events of the claims kept
    kept: list[Entry] = []  # their entries
    ends_kept: list[int] = []  # their ends' numbers, both in one int (see Entry)
    seen = 0  # the or-ed entries of the claims kept: which route ends they touch
    other = False  # does a claim kept state what the reference route does not?
    component, events, own = sc._ids[c], traj.events, sc._route_emask[c]
    if entries is None:
        index, entries = sc._index, []
        for i, ev in enumerate(events):
            if ev.kind == "claim":
                got = index[(ev.subject, ev.relation, ev.object, ev.direction, ev.anchor)]
                if got & flag:
                    entries += (i, got)
    pairs = iter(entries)
    for i, got in zip(pairs, pairs):  # the linked claims (read): a claim that is not linked has
        # no statement, is a loop, or has a leaf end (one only its entry has; a route's start
        # and target count 2 from the start: they are never leaves)
        serves = events[i].component  # type: ignore[union-attr]
        if serves is not None and serves != component:
            continue
        seen |= got
        if not got & own:
            other = True
        at.append(i)
        kept.append(got)
        ends_kept.append(got >> shift & _ENDS)
    if not other or seen >> sc._tshift + 2 * c & 3 != 3:
        return None
    searches = sc._searches[c]
    sig = tuple(ends_kept)
    path = searches[sig] if sig in searches else searches.setdefault(sig, _search(sc, c, ends_kept))
    if path is None:
        return None
    used = path[1]
    # the key: per step its event, claim (its number in the index), source and component;
    # flat, so that hashing it hashes no inner tuples
    rkey: list[object] = [path[0][0]]  # the start
    for j in used:
        ev = events[at[j]]
        rkey += (at[j], kept[j] >> shift + 64, ev.source, ev.component)  # type: ignore[union-attr]
    return tuple(rkey), path[0], [at[j] for j in used], [kept[j] for j in used]


def _search(sc: TaskScorer, c: int, ends: list[int]) -> tuple[tuple[int, ...], list[int]] | None:
    """The first shortest path from component ``c``'s start to its target over claims with
    these ``ends`` (each its two ends' numbers in one int, as in an :data:`Entry`): the
    nodes, and the positions in ``ends`` of the claims that made its steps; or ``None``. It
    depends on nothing else, so the task's scorer keeps it per ``c`` and ``ends``
    (``sc._searches``): many items claim routes over the same ends (a claim stated the
    wrong way round has the ends of the right one)."""
    start, target = sc._route_pairs[c]
    pairs = [(e & _NODE, e >> 32) for e in ends]
    # the touches say start and target are ends of claims kept
    return (shortest_path_few if len(pairs) <= _FEW else shortest_path)(pairs, start, target)


def route_of(sc: TaskScorer, traj: Trajectory, found: Found) -> ClaimedRoute:
    """The :class:`ClaimedRoute` of a path :func:`route_path` found in ``traj`` (one per
    key, kept by the task's scorer)."""
    known = sc._claimed_routes
    route = known.get(found[0])
    if route is None:
        route = known[found[0]] = _new_route(sc, traj, found[1], found[2], found[3])
    return route


def refused(sc: TaskScorer, traj: Trajectory, c: int, found: Found) -> bool:
    """Does the route of ``found`` (:func:`route_path`, component ``c``) credit nothing?
    What :meth:`~chaingraph.scoring.routes.RouteJudge.judge` would say, from its parts that
    NC and RC need: a step that is not sufficient (:meth:`RouteJudge.held
    <chaingraph.scoring.routes.RouteJudge.held>`), a circular one (a premise that is not
    the node the route has reached, or a step claimed before an earlier one), or else a
    route that is not target-preserving (:meth:`RouteJudge.graph_half
    <chaingraph.scoring.routes.RouteJudge.graph_half>`, shared with the judge). Neither the
    route's :class:`ClaimedRoute` nor its verdict is made. But for the order of the steps'
    events, all that depends only on the claims of the steps (their entries: the route's
    nodes follow from them), so the task's scorer keeps it per component and those claims
    (``sc._refusals``): items claim the same route at other events."""
    last = -1
    for i in found[2]:
        if i < last:  # a step claimed before the step before it: circular
            return True
        last = i
    known, kept = sc._refusals[c], tuple(found[3])
    got = known.get(kept)
    if got is None:
        got = known[kept] = _refused(sc, traj, c, found)
    return got


def _refused(sc: TaskScorer, traj: Trajectory, c: int, found: Found) -> bool:
    """:func:`refused` but for the order of the steps' events."""
    names, shift, events, cache = sc._node_names, sc._hshift, traj.events, sc._route_steps
    judge, walks = sc.routes, sc._walks
    path, at, kept = found[1], found[2], found[3]
    nodes = tuple([names[x] for x in path])
    steps: list[tuple[str, Literal["forward", "backward"]]] = []
    for n, (i, got) in enumerate(zip(at, kept)):
        number = got >> shift + 64
        step = cache.get(number)
        if step is None:
            ends = got >> shift
            step = cache[number] = _route_step(sc, cast("ClaimEvent", events[i]), names[ends & _NODE],
                                               names[ends >> 32 & _NODE])
        a = nodes[n]
        if step[8] != a:  # its premise is not the node the route has reached: circular
            return True
        p = step[6]
        ways = walks.get(p)
        if ways is None:
            ways = walks[p] = ((p, "forward"), (p, "backward"))
        way = ways[0] if step[7] == a else ways[1]
        if judge.held(c, a, nodes[n + 1], p, way[1]) is None:
            return True
        steps.append(way)
    sufficient, preserving, _failed, _why = judge.graph_half(c, nodes, tuple(steps), sc.reference.routes[c])
    return not (sufficient and preserving)


def _new_route(sc: TaskScorer, traj: Trajectory, path: Sequence[int], at: list[int],
               kept: list[Entry]) -> ClaimedRoute:
    """The :class:`ClaimedRoute` of a path found over the index (node numbers ``path``; per
    step the event ``at`` and the index entry ``kept`` of the claim that made it). A step's
    :class:`ResolvedClaim` is shared by the routes that have the claim at the same event
    with the same source and component, and a step ``(property, direction)`` by every route
    (kept by the task's scorer: fewer objects for the collector to scan)."""
    names, shift, events = sc._node_names, sc._hshift, traj.events
    nodes = tuple([names[x] for x in path])
    steps: list[tuple[str, Literal["forward", "backward"]]] = []
    made: list[ResolvedClaim] = []
    premises: list[str] = []
    cache, claims, walks = sc._route_steps, sc._route_claims, sc._walks
    for n, (i, got) in enumerate(zip(at, kept)):
        ev = cast("ClaimEvent", events[i])  # a claim: read() indexed it
        number = got >> shift + 64
        step = cache.get(number)
        if step is None:
            ends = got >> shift
            step = cache[number] = _route_step(sc, ev, names[ends & _NODE], names[ends >> 32 & _NODE])
        subj, obj, prop, statement, anchor, problems, p, subject, premise = step
        source, component = ev.source, ev.component
        cl = claims.get((i, number, source, component))
        if cl is None:
            cl = claims[i, number, source, component] = ResolvedClaim(
                i, subj, obj, prop, None, statement, source, anchor, component, problems)
        made.append(cl)
        # the walk nodes[n] -> nodes[n+1] is forward when nodes[n] is the statement's subject
        ways = walks.get(p)
        if ways is None:
            ways = walks[p] = ((p, "forward"), (p, "backward"))
        steps.append(ways[0] if subject == nodes[n] else ways[1])
        premises.append(premise)
    return ClaimedRoute(nodes, tuple(steps), tuple(made), tuple(premises))


#: what a claim on a claimed route is as a step (claimed._route_step)
RouteStep = tuple[str | None, str | None, str | None, "tuple[str, str, str] | None", str | None,
                  tuple[str, ...], str, str, str]


def _route_step(sc: TaskScorer, ev: ClaimEvent, first: str, second: str) -> RouteStep:
    """A linked claim (its ends mapped onto ``first`` and ``second``) as a step of a claimed
    route, kept per claim by the task's scorer: the fields of its :class:`ResolvedClaim` that
    its mentions decide (premise, conclusion, property, statement, anchor, problems), its
    statement's property, the mapped end that is the statement's subject, and its premise
    (``first``). Made from the mentions without the claim's record, which the route never
    needs whole (named nodes, aliases, notes), unless a mention does not resolve (the record
    then says why)."""
    resolver, rel = sc.resolver, sc.relations
    assert resolver is not None and rel is not None and ev.object is not None
    anchor = None if ev.anchor is None else resolver.entity(ev.anchor)[0]
    subj, obj = resolver.entity(ev.subject)[0], resolver.entity(ev.object)[0]
    prop = resolver.relation(ev.relation)[0]
    if subj is None or obj is None or prop is None or (ev.anchor is not None and anchor is None):
        rec = sc._records.get(key(ev)) or make_record(sc, ev)
        assert rec.mapped is not None and rec.ends is not None
        return (rec.premise, rec.conclusion, rec.property, rec.statement, rec.anchor, rec.problems,
                rec.mapped[1], rec.mapped[0], rec.ends[0])
    p, swapped = rel.orient(prop)
    # Relations.key of the claim in its direction: subject-first unless backward xor an inverse
    subject_first = (ev.direction == "forward") != swapped
    statement = (subj, p, obj) if subject_first else (obj, p, subj)
    return subj, obj, prop, statement, anchor, (), p, first if subject_first else second, first
